/* SPDX-License-Identifier: MIT */
/*
 * Device tests of batching under the caller's control (issue 36, item
 * 6): MSGA_COMMIT_MORE holds a message's sends back until the next plain
 * commit or send, msga_pub_doorbell(), a poll of the publisher's context,
 * msga_pub_flush() or a lingering msga_pub_destroy() rings them; on every
 * transport (RC ring and SEND/RECV, ud://, mcast://, reliable mcast://).
 * What is held back is never posted, so "not delivered yet" is checked
 * without a race: only the subscriber's context is polled meanwhile,
 * never the publisher's (a poll would ring). The coalescing default sends
 * an idle publisher's message at once, and nothing it holds is stranded.
 * Each documented error of the three calls is checked here but
 * msga_pub_doorbell's -ENETDOWN (a UD endpoint failing at the post),
 * which dev_ud_hardening provokes on a real queue pair.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define K 8u          /* messages under MSGA_COMMIT_MORE per step */
#define LEN 64u
#define G_BATCH "mcast://239.255.36.1"
#define G_BATCH_REL "mcast://239.255.36.2"

enum kind { RC_RING, RC_SEND, UD, MCAST, MCAST_REL };

struct bed {
	struct msga_ctx *ctx[2]; /* publisher's, subscriber's */
	struct msga_pub *pub;
	struct msga_sub *sub;
	struct dp_rec ev, r;
	uint32_t t;
	uint64_t seq;
};

static const char *kind_uri(enum kind k)
{
	return k == MCAST ? G_BATCH : k == MCAST_REL ? G_BATCH_REL :
	       k == UD ? dp_ud_uri(0) : dp_uri(0);
}

static void wait_subscribed(struct bed *b, enum kind k)
{
	int port = msga_pub_port(b->pub);
	const char *uri = k == UD ? dp_ud_uri(port) :
			  k == MCAST || k == MCAST_REL ? kind_uri(k) :
			  dp_uri((uint16_t)port);
	uint64_t end = dp_now_ms() + 10000;

	cr_assert_eq(msga_sub_connect(b->sub, uri, NULL), 0);
	if (k == MCAST || k == MCAST_REL) {
		cr_assert(dp_poll_until(b->ctx, 2, &b->ev.connected, 1, 10000),
			  "the publisher never joined");
		cr_assert(dp_poll_until(b->ctx, 2, &b->r.connected, 1, 10000),
			  "the subscriber never joined");
		return;
	}
	while (msga_pub_subscribers(b->pub) < 1) {
		cr_assert_lt(dp_now_ms(), end, "no subscriber after 10 s");
		msga_ctx_poll(b->ctx[0], 64);
		msga_ctx_poll(b->ctx[1], 64);
	}
}

static void bed_open(struct bed *b, enum kind k, uint32_t pub_flags)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = kind_uri(k),
				   .flags = pub_flags, .on_event = dp_on_event,
				   .user = &b->ev, .linger_ms = 30000 };

	memset(b, 0, sizeof(*b));
	b->r.strict = k != MCAST && k != MCAST_REL;
	if (k == MCAST_REL)
		a.flags |= MSGA_PUB_RELIABLE;
	b->ctx[0] = devtest_open_ctx();
	b->ctx[1] = devtest_open_ctx();
	cr_assert_eq(msga_pub_create(b->ctx[0], &a, &b->pub), 0, "%s",
		     msga_ctx_last_error(b->ctx[0]));
	cr_assert_eq(msga_pub_topic(b->pub, "b", &b->t), 0);
	b->sub = dp_sub_flags(b->ctx[1], "b",
			      k == RC_SEND ? MSGA_SUB_NO_RING : 0, &b->r);
	wait_subscribed(b, k);
}

static void bed_close(struct bed *b)
{
	cr_expect_eq(b->r.bad, 0, "%s", b->r.first_bad);
	msga_sub_destroy(b->sub);
	msga_pub_destroy(b->pub);
	msga_ctx_close(b->ctx[1]);
	msga_ctx_close(b->ctx[0]);
}

/* One message with flags, never polling the publisher's context. */
static void send_flags(struct bed *b, unsigned int flags, int by_claim)
{
	char buf[LEN];
	struct msga_claim c = { .size = sizeof(c) };
	int ret;

	b->seq++;
	if (!by_claim) {
		dp_fill(buf, LEN, b->t, b->seq);
		ret = msga_pub_send_flags(b->pub, b->t, buf, LEN, flags);
	} else {
		ret = msga_pub_claim(b->pub, b->t, LEN, &c);
		cr_assert_eq(ret, 0, "claim = %d", ret);
		dp_fill(c.data, LEN, b->t, b->seq);
		ret = msga_pub_commit_flags(b->pub, &c, flags);
	}
	cr_assert_geq(ret, 0, "commit/send = %d", ret);
}

/* K messages under MORE; the subscriber, polled alone, gets none. */
static void held_back(struct bed *b, int by_claim)
{
	uint64_t before = b->r.total, end = dp_now_ms() + 200;

	for (uint32_t i = 0; i < K; i++)
		send_flags(b, MSGA_COMMIT_MORE, by_claim && i % 2);
	while (dp_now_ms() < end)
		msga_ctx_poll(b->ctx[1], 64);
	cr_assert_eq(b->r.total, before, "%llu held messages arrived",
		     (unsigned long long)(b->r.total - before));
}

/* ... and then all of them, polling the subscriber's context alone. */
static void arrive(struct bed *b, uint64_t want, const char *by)
{
	cr_assert(dp_poll_until64(&b->ctx[1], 1, &b->r.total, want, 10000),
		  "%s: %llu of %llu arrived", by,
		  (unsigned long long)b->r.total, (unsigned long long)want);
}

/* Let credits and completions come back between the steps. */
static void settle(struct bed *b)
{
	cr_assert_eq(msga_pub_flush(b->pub, 10000), 0);
	for (int i = 0; i < 8; i++) {
		msga_ctx_poll(b->ctx[0], 64);
		msga_ctx_poll(b->ctx[1], 64);
	}
}

static void more_is_rung(enum kind k)
{
	struct bed b;

	if ((k == UD || k == MCAST || k == MCAST_REL) &&
	    dp_iwarp_refuses(kind_uri(k)))
		return;
	bed_open(&b, k, 0);
	/* an idle publisher's plain message goes at once */
	send_flags(&b, 0, 0);
	arrive(&b, 1, "an idle publisher's message");
	settle(&b);
	held_back(&b, 0);
	cr_expect_eq(msga_pub_doorbell(b.pub), 0);
	arrive(&b, b.seq, "msga_pub_doorbell");
	settle(&b);
	held_back(&b, 1);
	send_flags(&b, 0, 1); /* a plain commit rings them with it */
	arrive(&b, b.seq, "the next plain commit");
	settle(&b);
	held_back(&b, 0);
	msga_ctx_poll(b.ctx[0], 64); /* a poll rings them */
	arrive(&b, b.seq, "a poll");
	settle(&b);
	held_back(&b, 1);
	cr_expect_eq(msga_pub_flush(b.pub, 10000), 0);
	arrive(&b, b.seq, "msga_pub_flush");
	settle(&b);
	held_back(&b, 0);
	msga_pub_destroy(b.pub); /* lingers: rung, and out */
	b.pub = NULL;
	arrive(&b, b.seq, "a lingering msga_pub_destroy");
	bed_close(&b);
}

Test(batch, more_rc_ring, .timeout = 120) { more_is_rung(RC_RING); }
Test(batch, more_rc_send_recv, .timeout = 120) { more_is_rung(RC_SEND); }
Test(batch, more_ud, .timeout = 120) { more_is_rung(UD); }
Test(batch, more_mcast, .timeout = 120) { more_is_rung(MCAST); }
Test(batch, more_mcast_reliable, .timeout = 120)
{
	more_is_rung(MCAST_REL);
}

/*
 * The coalescing default and MSGA_PUB_NO_COALESCE: a burst larger than
 * the send queue, never polled but for room, all arrives once the
 * publisher flushes (nothing held back is stranded).
 */
static void burst(uint32_t pub_flags)
{
	struct bed b;

	bed_open(&b, RC_RING, pub_flags);
	for (uint32_t i = 0; i < 2000; i++)
		dp_send(b.pub, b.t, ++b.seq, LEN, b.ctx, 2);
	cr_assert_eq(msga_pub_flush(b.pub, 30000), 0);
	arrive(&b, b.seq, "a burst");
	bed_close(&b);
}

Test(batch, coalescing_burst_arrives_whole, .timeout = 120) { burst(0); }
Test(batch, no_coalesce_burst_arrives_whole, .timeout = 120)
{
	burst(MSGA_PUB_NO_COALESCE);
}

Test(batch, documented_errors, .timeout = 60)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct dp_rec ev = { 0 };
	struct msga_pub *pub = dp_pub(ctx, MSGA_PUB_NO_COALESCE, &ev);
	struct msga_claim c = { .size = sizeof(c) };
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "e", &t), 0);
	cr_expect_eq(msga_pub_doorbell(NULL), -EINVAL);
	cr_expect_eq(msga_pub_doorbell(pub), 0, "nothing held: 0");
	cr_expect_eq(msga_pub_commit_flags(NULL, &c, 0), -EINVAL);
	cr_expect_eq(msga_pub_send_flags(NULL, t, "x", 1, 0), -EINVAL);
	cr_expect_eq(msga_pub_send_flags(pub, t, "x", 1, 1u << 1), -EINVAL);
	cr_expect_eq(msga_pub_send_flags(pub, t, NULL, 1, MSGA_COMMIT_MORE),
		     -EINVAL);
	cr_expect_eq(msga_pub_send_flags(pub, t + 1, "x", 1,
					 MSGA_COMMIT_MORE), -EINVAL);
	cr_assert_eq(msga_pub_claim(pub, t, 8, &c), 0);
	cr_expect_eq(msga_pub_commit_flags(pub, &c, ~0u), -EINVAL);
	cr_expect_eq(msga_pub_commit_flags(pub, NULL, MSGA_COMMIT_MORE),
		     -EINVAL);
	/* the claim stayed: it can still be committed */
	cr_expect_eq(msga_pub_commit_flags(pub, &c, MSGA_COMMIT_MORE), 0,
		     "no subscriber: 0");
	cr_expect_eq(msga_pub_doorbell(pub), 0);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

/* A publisher destroyed in a callback: its doorbell says so. */
struct in_cb {
	struct msga_pub *pub;
	int rung;
};

static void destroy_in_cb(const struct msga_msg *m, void *user)
{
	struct in_cb *c = user;

	(void)m;
	if (c->rung != 1)
		return;
	msga_pub_destroy(c->pub);
	c->rung = msga_pub_doorbell(c->pub);
}

Test(batch, doorbell_of_a_publisher_destroyed_in_a_callback, .timeout = 60)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct dp_rec ev = { 0 };
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct in_cb cb = { .pub = pub, .rung = 1 };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "d",
				    .on_msg = destroy_in_cb, .user = &cb };
	struct msga_sub *sub = NULL;
	uint64_t end = dp_now_ms() + 20000;
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "d", &t), 0);
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	dp_connect(sub, pub, &ctx, 1, 1);
	cr_assert_geq(msga_pub_send_flags(pub, t, "x", 1, 0), 0);
	while (cb.rung == 1) {
		cr_assert_lt(dp_now_ms(), end, "the message never came");
		msga_ctx_poll(ctx, 64);
	}
	cr_expect_eq(cb.rung, -ESHUTDOWN);
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
}
