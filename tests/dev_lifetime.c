/* SPDX-License-Identifier: MIT */
/*
 * Object lifetime against the progress engine (lib/poll.c), on the device
 * under test: a callback that destroys a publisher or subscriber of its
 * own context, or disconnects a connection, must leave no dangling
 * pointer behind (ASan in the VM sees any use after free) and must hear
 * nothing more from what it destroyed. Publisher, subscribers and their
 * connections share one context, so that the engine's walk over the
 * context's connections is on the stack when the callback runs.
 * Every wait has a deadline.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define LEN 64

enum victim {
	OTHER_SUB,      /* (a) another subscriber on the same context */
	THE_PUB,        /* (b) the publisher */
	SELF,           /* (c) the subscriber whose callback runs */
	OTHER_CONN,     /* (d) another connection of the same subscriber */
};

struct life {
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	struct msga_sub *sub[2];
	int conn[2];           /* OTHER_CONN: sub[0]'s two connections */
	enum victim victim;
	int done;              /* the callback destroyed its victim */
	int after;             /* callbacks from the victim after that */
	int got[2];            /* messages per subscriber */
	int gone;              /* sub[0] heard DISCONNECTED */
};

struct who {
	struct life *l;
	int k;
};

static void act(struct life *l)
{
	switch (l->victim) {
	case OTHER_SUB:
		msga_sub_destroy(l->sub[1]);
		break;
	case THE_PUB:
		msga_pub_destroy(l->pub);
		break;
	case SELF:
		msga_sub_destroy(l->sub[0]);
		break;
	case OTHER_CONN:
		cr_assert_eq(msga_sub_disconnect(l->sub[0],
						 (uint32_t)l->conn[1]), 0);
		break;
	}
	l->done = 1;
}

static int from_victim(const struct life *l, int k, uint32_t conn_id)
{
	switch (l->victim) {
	case OTHER_SUB:
		return k == 1;
	case SELF:
		return k == 0;
	case OTHER_CONN:
		return k == 0 && conn_id == (uint32_t)l->conn[1];
	default:
		return 0;
	}
}

static void on_msg(const struct msga_msg *m, void *user)
{
	struct who *w = user;
	struct life *l = w->l;

	if (l->done && from_victim(l, w->k, m->conn_id))
		l->after++;
	l->got[w->k]++;
	if (!l->done && w->k == 0 &&
	    (l->victim != OTHER_CONN || m->conn_id == (uint32_t)l->conn[0]))
		act(l);
}

static void on_sub_event(const struct msga_event *ev, void *user)
{
	struct who *w = user;

	if (w->l->done && from_victim(w->l, w->k, ev->conn_id))
		w->l->after++;
	if (w->k == 0 && ev->type == MSGA_EVENT_DISCONNECTED)
		w->l->gone = 1;
}

static void on_pub_event(const struct msga_event *ev, void *user)
{
	struct life *l = user;

	(void)ev;
	if (l->done && l->victim == THE_PUB)
		l->after++;
}

static struct msga_sub *sub_of(struct life *l, struct who *w, uint32_t flags)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = "t", .on_msg = on_msg,
				   .on_event = on_sub_event, .user = w };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(l->ctx, &a, &sub), 0);
	return sub;
}

/* Poll until *v >= want; 1 if reached before the hang deadline. */
static int poll_for(struct life *l, const int *v, int want)
{
	uint64_t end = dp_now_ms() + devtest_scale_ms(20000);

	while (*v < want && dp_now_ms() < end) {
		int ret = msga_ctx_poll(l->ctx, 64);

		cr_assert_geq(ret, 0, "msga_ctx_poll = %d: %s", ret,
			      msga_ctx_last_error(l->ctx));
	}
	return *v >= want;
}

static void send_some(struct life *l, uint32_t topic, int n)
{
	for (int i = 0; i < n; i++) {
		char buf[LEN] = "x";
		uint64_t end = dp_now_ms() + devtest_scale_ms(20000);
		int ret;

		while ((ret = msga_pub_send(l->pub, topic, buf, LEN)) ==
		       -EAGAIN && dp_now_ms() < end)
			msga_ctx_poll(l->ctx, 64);
		cr_assert_geq(ret, 0, "msga_pub_send = %d", ret);
	}
}

static void run(enum victim victim, uint32_t sub_flags)
{
	struct life l = { .victim = victim };
	struct who w[2] = { { &l, 0 }, { &l, 1 } };
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = dp_uri(0),
				    .on_event = on_pub_event, .user = &l };
	const char *uri;
	uint32_t topic;
	int nsubs = 2, got0;

	l.ctx = devtest_open_ctx();
	cr_assert_eq(msga_pub_create(l.ctx, &pa, &l.pub), 0);
	cr_assert_eq(msga_pub_topic(l.pub, "t", &topic), 0);
	uri = dp_uri((uint16_t)msga_pub_port(l.pub));
	l.sub[0] = sub_of(&l, &w[0], sub_flags);
	/* Both connections before the first poll: adjacent on the
	 * context's list, so the victim's is the walk's next. */
	l.conn[0] = dp_connect_id(l.sub[0], uri);
	cr_assert_geq(l.conn[0], 0);
	if (victim == OTHER_CONN) {
		l.conn[1] = dp_connect_id(l.sub[0], uri);
		cr_assert_geq(l.conn[1], 0);
	} else {
		l.sub[1] = sub_of(&l, &w[1], sub_flags);
		cr_assert_geq(msga_sub_connect(l.sub[1], uri, NULL), 0);
	}
	{
		uint64_t end = dp_now_ms() + devtest_scale_ms(20000);

		while (msga_pub_subscribers(l.pub) < nsubs) {
			cr_assert_lt(dp_now_ms(), end, "connect: %s",
				     msga_ctx_last_error(l.ctx));
			msga_ctx_poll(l.ctx, 64);
		}
	}
	send_some(&l, topic, 8);
	cr_assert(poll_for(&l, &l.done, 1), "no message reached sub 0");
	/* What is left goes on working, and the victim stays silent. */
	got0 = l.got[0];
	if (victim == THE_PUB) {
		l.pub = NULL;
		cr_assert(poll_for(&l, &l.gone, 1),
			  "sub 0 never heard its publisher go");
	} else if (victim == OTHER_SUB || victim == OTHER_CONN) {
		send_some(&l, topic, 8);
		cr_assert(poll_for(&l, &l.got[0], got0 + 8),
			  "sub 0 got %d of %d", l.got[0], got0 + 8);
		if (victim == OTHER_SUB)
			l.sub[1] = NULL;
	} else {
		l.sub[0] = NULL;
		send_some(&l, topic, 8);
		cr_assert(poll_for(&l, &l.got[1], 16),
			  "sub 1 got %d of 16", l.got[1]);
	}
	cr_assert_eq(l.after, 0, "%d callbacks after the destroy", l.after);
	msga_sub_destroy(l.sub[0]);
	msga_sub_destroy(l.sub[1]);
	msga_pub_destroy(l.pub);
	msga_ctx_close(l.ctx);
}

/* Each case on both RC data paths: the ring, then SEND/RECV. */
static void run_both_paths(enum victim victim)
{
	run(victim, 0);
	run(victim, MSGA_SUB_NO_RING);
}

Test(lifetime, destroy_other_subscriber_in_callback, .timeout = 120)
{
	run_both_paths(OTHER_SUB);
}

Test(lifetime, destroy_publisher_in_callback, .timeout = 120)
{
	run_both_paths(THE_PUB);
}

Test(lifetime, destroy_own_subscriber_in_callback, .timeout = 120)
{
	run_both_paths(SELF);
}

Test(lifetime, disconnect_other_connection_in_callback, .timeout = 120)
{
	run_both_paths(OTHER_CONN);
}

/* Closing the context from its own callback is refused (msga_ctx_close(3)). */
static void close_in_cb(const struct msga_msg *m, void *user)
{
	struct msga_ctx *ctx = *(struct msga_ctx **)user;

	(void)m;
	msga_ctx_close(ctx);
}

Test(lifetime, close_in_callback_is_refused, .timeout = 120)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "t",
				   .on_msg = close_in_cb, .user = &ctx };
	struct msga_pub *pub;
	struct msga_sub *sub = NULL;
	struct dp_rec rec = { 0 };
	uint64_t end;
	char buf[LEN] = "x";
	uint32_t topic;

	pub = dp_pub(ctx, 0, &rec);
	cr_assert_eq(msga_pub_topic(pub, "t", &topic), 0);
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	dp_connect(sub, pub, &ctx, 1, 1);
	end = dp_now_ms() + devtest_scale_ms(20000);
	while (msga_pub_send(pub, topic, buf, LEN) == -EAGAIN &&
	       dp_now_ms() < end)
		msga_ctx_poll(ctx, 64);
	while (!strstr(msga_ctx_last_error(ctx), "msga_ctx_close")) {
		cr_assert_lt(dp_now_ms(), end, "no callback ran");
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	}
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

/*
 * msga_sub_connect() from a callback (issue 36, item 9): the subscriber's
 * CONNECTED event for publisher A connects it to publisher B, on the same
 * context, inside the engine's walk; B's subscriber comes, and B's
 * message arrives.
 */
struct chain {
	struct msga_sub *sub;
	const char *next_uri;
	int connected, id, got;
};

static void chain_on_event(const struct msga_event *ev, void *user)
{
	struct chain *c = user;

	if (ev->type != MSGA_EVENT_CONNECTED)
		return;
	if (!c->connected++)
		c->id = dp_connect_id(c->sub, c->next_uri);
}

static void chain_on_msg(const struct msga_msg *m, void *user)
{
	(void)m;
	((struct chain *)user)->got++;
}

Test(lifetime, connect_in_callback, .timeout = 120)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct dp_rec ev = { 0 };
	struct msga_pub *pa = dp_pub(ctx, 0, &ev), *pb = dp_pub(ctx, 0, &ev);
	struct chain c = { .id = -1 };
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "t",
				   .on_msg = chain_on_msg,
				   .on_event = chain_on_event, .user = &c };
	char uri_b[128], buf[LEN] = "x";
	uint64_t end = dp_now_ms() + devtest_scale_ms(20000);
	uint32_t topic;

	snprintf(uri_b, sizeof(uri_b), "%s", dp_uri((uint16_t)
						     msga_pub_port(pb)));
	c.next_uri = uri_b;
	cr_assert_eq(msga_pub_topic(pb, "t", &topic), 0);
	cr_assert_eq(msga_sub_create(ctx, &a, &c.sub), 0);
	dp_connect(c.sub, pa, &ctx, 1, 1);
	while (msga_pub_subscribers(pb) < 1) {
		cr_assert_lt(dp_now_ms(), end, "B got no subscriber");
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	}
	cr_assert_geq(c.id, 1, "the callback's connect = %d", c.id);
	while (msga_pub_send(pb, topic, buf, LEN) == -EAGAIN)
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	while (!c.got) {
		cr_assert_lt(dp_now_ms(), end, "B's message never came");
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	}
	cr_expect_eq(c.connected, 2);
	msga_sub_destroy(c.sub);
	msga_pub_destroy(pb);
	msga_pub_destroy(pa);
	msga_ctx_close(ctx);
}
