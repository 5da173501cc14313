/* SPDX-License-Identifier: MIT */
/*
 * Device tests of msga_pub_flush() and msga_pub_attr.linger_ms (issue 36,
 * item 4): a flush returns 0 only once the subscriber's device has every
 * committed message (the publisher, a child process, dies right after
 * it, and the subscriber still counts them all), -ETIMEDOUT while a
 * subscriber that stops polling keeps a message from going out, and a
 * destroy that lingers delivers the tail. A reliable multicast
 * publisher's flush returns 0 only once its subscriber has repaired what
 * it lost (the publisher dies right after it, and the subscriber, whose
 * small receive queue lost much of the burst, still has every message);
 * it looks only at NAKs, so a subscriber that stops polling does not
 * hold it up (UD has no acknowledgement), and a look without waiting
 * (timeout 0) sees 0 once the publisher has been quiet long enough.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define BIG (200u * 1024u) /* fragments: out only as the subscriber reads */
#define NBIG 6u
#define NSMALL 50u
#define G_FLUSH "mcast://239.255.27.1"
#define G_FLUSH_LOOK "mcast://239.255.27.2"
#define NMCAST 400u /* small messages, a burst into 16 receives */
#define FLUSH_HB_MS 250u /* the quiet period: 2 x 250 + 40 ms */
#define TAIL_HB_MS 1000u /* the tail's test: 2 x 1000 + 40 ms */

Test(pub_flush, argument_errors, .timeout = 60)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .linger_ms = MSGA_LINGER_MAX_MS + 1 };
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;

	cr_expect_eq(msga_pub_create(ctx, &a, &pub), -EINVAL);
	cr_expect_null(pub);
	pub = dp_pub(ctx, 0, &ev);
	cr_expect_eq(msga_pub_flush(NULL, 0), -EINVAL);
	cr_expect_eq(msga_pub_flush(pub, -2), -EINVAL);
	cr_expect_eq(msga_pub_flush(pub, 0), 0, "nothing committed");
	cr_expect_eq(msga_pub_flush(pub, -1), 0);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

static void send_one(struct msga_pub *pub, uint32_t t, uint64_t seq,
		     size_t len, struct msga_ctx **ctxs, int n)
{
	struct msga_claim c = { .size = sizeof(c) };
	int ret;

	while ((ret = msga_pub_claim(pub, t, len, &c)) == -EAGAIN)
		for (int i = 0; i < n; i++)
			msga_ctx_poll(ctxs[i], 64);
	cr_assert_eq(ret, 0, "claim = %d", ret);
	dp_fill(c.data, len, t, seq);
	cr_assert_geq(msga_pub_commit(pub, &c), 0);
}

/* A flush from a callback of its context cannot poll. */
struct in_cb {
	struct msga_pub *pub;
	int waited, looked;
};

static void flush_in_cb(const struct msga_msg *m, void *user)
{
	struct in_cb *c = user;

	(void)m;
	c->waited = msga_pub_flush(c->pub, 10);
	c->looked = msga_pub_flush(c->pub, 0);
}

/*
 * The subscriber stops polling: a message larger than its ring (or its
 * receive credits) cannot go out, and the flush times out; once it polls
 * again the flush returns 0, and the message is there.
 */
Test(pub_flush, times_out_while_a_subscriber_stops_polling, .timeout = 120)
{
	struct msga_ctx *pctx = devtest_open_ctx();
	struct msga_ctx *sctx = devtest_open_ctx();
	struct msga_ctx *ctxs[] = { pctx, sctx };
	struct dp_rec ev = { 0 }, r = { 0 };
	struct msga_pub *pub = dp_pub(pctx, 0, &ev);
	struct msga_sub *sub = dp_sub(sctx, "t", &r);
	struct in_cb cb = { .pub = pub, .waited = 1, .looked = 1 };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "t",
				    .on_msg = flush_in_cb, .user = &cb };
	struct msga_sub *cb_sub = NULL;
	uint64_t end = dp_now_ms() + 30000;
	uint32_t t;
	int ret;

	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(sub, pub, ctxs, 2, 1);
	send_one(pub, t, 1, 1u << 20, ctxs, 2);
	cr_expect_eq(msga_pub_flush(pub, 0), -ETIMEDOUT);
	cr_expect_eq(msga_pub_flush(pub, 300), -ETIMEDOUT,
		     "1 MiB cannot reach a subscriber that does not poll");
	cr_expect_eq(r.total, 0);
	for (;;) {
		msga_ctx_poll(sctx, 64);
		ret = msga_pub_flush(pub, 10);
		if (ret != -ETIMEDOUT)
			break;
		cr_assert_lt(dp_now_ms(), end, "the flush never ended");
	}
	cr_expect_eq(ret, 0);
	/* its device has it all; the subscriber takes it when it polls */
	cr_assert(dp_poll_until64(&sctx, 1, &r.total, 1, 10000));
	cr_expect_eq(r.bad, 0, "%s", r.first_bad);
	/* a subscriber of the publisher's own context calls it inside */
	cr_assert_eq(msga_sub_create(pctx, &sa, &cb_sub), 0);
	dp_connect(cb_sub, pub, ctxs, 2, 2);
	send_one(pub, t, 2, 64, ctxs, 2);
	while (cb.waited == 1) {
		cr_assert_lt(dp_now_ms(), end, "no message in the callback");
		msga_ctx_poll(pctx, 64);
		msga_ctx_poll(sctx, 64);
	}
	cr_expect_eq(cb.waited, -EDEADLK);
	cr_expect(cb.looked == 0 || cb.looked == -ETIMEDOUT, "%d", cb.looked);
	msga_sub_destroy(cb_sub);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}

/* The child waits (polling) for the parent's byte on fd go. */
static void wait_go(struct msga_ctx *ctx, int go)
{
	struct pollfd pfd = { .fd = go, .events = POLLIN };
	uint64_t end = dp_now_ms() + 60000;
	char c;

	while (poll(&pfd, 1, 0) == 0 && dp_now_ms() < end)
		msga_ctx_poll(ctx, 64);
	if (read(go, &c, 1) != 1)
		_exit(2);
}

/*
 * The child publishes NBIG large and NSMALL small messages to the one
 * subscriber, then flushes (or, linger, destroys with linger_ms) and
 * dies at once with _exit(): what it had not sent is lost with it. It
 * tells the parent the flush's result first.
 */
static void child_publisher(int out, int linger, int go)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .linger_ms = linger ? 60000 : 0 };
	struct msga_pub *pub = NULL;
	uint64_t end = dp_now_ms() + 30000;
	uint32_t t;
	int port, ret;

	if (go >= 0) { /* reliable multicast: the subscriber says when */
		a.uri = G_FLUSH;
		a.flags = MSGA_PUB_RELIABLE;
		a.heartbeat_ms = TAIL_HB_MS;
	}
	if (msga_pub_create(ctx, &a, &pub) || msga_pub_topic(pub, "t", &t))
		_exit(2);
	port = go >= 0 ? 0 : msga_pub_port(pub);
	if (write(out, &port, sizeof(port)) != sizeof(port))
		_exit(2);
	if (go >= 0)
		wait_go(ctx, go);
	while (go < 0 && msga_pub_subscribers(pub) < 1 && dp_now_ms() < end)
		msga_ctx_poll(ctx, 64);
	for (uint64_t i = 1; go < 0 && i <= NBIG + NSMALL; i++)
		send_one(pub, t, i, i <= NBIG ? BIG : 100, &ctx, 1);
	for (uint64_t i = 1; go >= 0 && i <= NMCAST; i++)
		send_one(pub, t, i, 100, &ctx, 1);
	if (linger) {
		msga_pub_destroy(pub);
		ret = 0;
	} else {
		ret = msga_pub_flush(pub, 60000);
	}
	if (write(out, &ret, sizeof(ret)) != sizeof(ret))
		_exit(2);
	_exit(0); /* no destroy, no close: as a crash would */
}

/* A child publisher: its pid; *rd the pipe it reports on, *go (mcast
 * only, else NULL) the one it waits on. */
static pid_t fork_publisher(int linger, int *rd, int *go)
{
	int pfds[2], gfds[2] = { -1, -1 };
	struct pollfd pfd;
	pid_t pid;

	cr_assert_eq(pipe(pfds), 0);
	if (go)
		cr_assert_eq(pipe(gfds), 0);
	pid = fork(); /* before this process opens any device */
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pfds[0]);
		if (go)
			close(gfds[1]);
		child_publisher(pfds[1], linger, gfds[0]);
	}
	close(pfds[1]);
	if (go) {
		close(gfds[0]);
		*go = gfds[1];
	}
	*rd = pfds[0];
	pfd = (struct pollfd){ .fd = pfds[0], .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 30000), 1, "child publisher did not start");
	return pid;
}

static void tail_arrives(int linger)
{
	struct dp_rec r = { .strict = 1 };
	struct msga_sub *sub;
	struct msga_ctx *ctx;
	int rd, port, ret = 1, status;
	pid_t pid = fork_publisher(linger, &rd, NULL);

	cr_assert_eq(read(rd, &port, sizeof(port)), sizeof(port));
	ctx = devtest_open_ctx();
	sub = dp_sub(ctx, "t", &r);
	cr_assert_geq(msga_sub_connect(sub, dp_uri((uint16_t)port), NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &r.disconnected, 1, 90000),
		  "the publisher never went away");
	cr_assert_eq(read(rd, &ret, sizeof(ret)), sizeof(ret));
	cr_expect_eq(ret, 0, "the flush returned %d", ret);
	cr_expect_eq(r.total, NBIG + NSMALL, "got %llu of %u",
		     (unsigned long long)r.total, NBIG + NSMALL);
	cr_expect_eq(r.bad, 0, "%s", r.first_bad);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && !WEXITSTATUS(status));
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
	close(rd);
}

Test(pub_flush, returns_once_the_subscriber_has_it_all, .timeout = 180)
{
	tail_arrives(0);
}

Test(pub_flush, a_lingering_destroy_delivers_the_tail, .timeout = 180)
{
	tail_arrives(1);
}

/* ------------------------------------------------- reliable multicast */

/*
 * The child publishes a burst of NMCAST messages into a subscriber whose
 * receive queue is the smallest allowed,
 * so that much of it is lost and repaired by NAK; flushes; and dies at
 * once. Whatever the subscriber has not repaired by then it never will:
 * so once the flush returned 0 it must have everything. The heartbeat
 * right behind the burst is lost with its tail; the flush's own
 * announcements of the tail reveal it. A subscriber must run within the
 * quiet period to NAK: under TCG a busy VM may not run it for hundreds
 * of milliseconds, so this publisher's heartbeat interval, and with it
 * the quiet period (2 x TAIL_HB_MS + 40 ms), is long.
 */
Test(pub_flush, reliable_mcast_returns_once_the_tail_is_repaired,
     .timeout = 240)
{
	struct dp_rec r = { .strict = 1 };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "t",
				    .flags = MSGA_SUB_REPAIR_BY_NAK,
				    .on_msg = dp_on_msg,
				    .on_event = dp_on_event, .user = &r,
				    .rx_depth = MSGA_SUB_RX_DEPTH_MIN };
	struct msga_sub *sub = NULL;
	struct msga_sub_stats st;
	struct msga_ctx *ctx;
	int rd, go, port, ret = 1, status;
	struct pollfd pfd;
	uint64_t end;
	pid_t pid;

	if (dp_iwarp_refuses(G_FLUSH))
		return; /* (no multicast on iWARP: the refusal instead) */
	pid = fork_publisher(0, &rd, &go);
	cr_assert_eq(read(rd, &port, sizeof(port)), sizeof(port));
	ctx = devtest_open_ctx();
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	cr_assert_eq(msga_sub_connect(sub, G_FLUSH, NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &r.connected, 1, 15000), "no join");
	cr_assert_eq(write(go, "g", 1), 1);
	pfd = (struct pollfd){ .fd = rd, .events = POLLIN };
	end = dp_now_ms() + 180000;
	while (!poll(&pfd, 1, 0)) { /* the subscriber polls all along */
		cr_assert_lt(dp_now_ms(), end, "the flush never returned");
		msga_ctx_poll(ctx, 64);
	}
	cr_assert_eq(read(rd, &ret, sizeof(ret)), sizeof(ret));
	cr_expect_eq(ret, 0, "the flush returned %d", ret);
	cr_assert_eq(waitpid(pid, &status, 0), pid); /* gone: no more repair */
	cr_expect(WIFEXITED(status) && !WEXITSTATUS(status));
	cr_expect(dp_poll_until64(&ctx, 1, &r.total, NMCAST, 10000),
		  "got %llu of %u after the flush",
		  (unsigned long long)r.total, NMCAST);
	cr_expect_eq(r.bad, 0, "%s", r.first_bad);
	st = dp_sub_stats(sub);
	cr_log_info("lost in the burst and repaired: %llu (%llu NAKs, %llu "
		    "heartbeats heard)", (unsigned long long)st.recovered,
		    (unsigned long long)st.naks,
		    (unsigned long long)st.heartbeats);
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
	close(rd);
	close(go);
}

/*
 * A reliable multicast publisher sees NAKs, not subscribers: one that
 * stops polling does not hold its flush up (its device took the
 * datagrams; it reads them when it polls again). A look without waiting
 * says -ETIMEDOUT while the quiet period runs, and 0 once it is over,
 * across calls (so that a callback can ask).
 */
Test(pub_flush, reliable_mcast_sees_naks_not_subscribers, .timeout = 120)
{
	struct msga_ctx *pctx, *sctx, *ctxs[2];
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = G_FLUSH_LOOK,
				    .flags = MSGA_PUB_RELIABLE,
				    .heartbeat_ms = FLUSH_HB_MS };
	struct dp_rec r = { .strict = 1 };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub;
	uint64_t end;
	uint32_t t;
	int ret;

	if (dp_iwarp_refuses(G_FLUSH_LOOK))
		return; /* (no multicast on iWARP: the refusal instead) */
	pctx = ctxs[0] = devtest_open_ctx();
	sctx = ctxs[1] = devtest_open_ctx();
	cr_assert_eq(msga_pub_create(pctx, &pa, &pub), 0);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	sub = dp_sub(sctx, "t", &r);
	cr_assert_eq(msga_sub_connect(sub, G_FLUSH_LOOK, NULL), 0);
	cr_assert(dp_poll_until(ctxs, 2, &r.connected, 1, 15000), "no join");
	send_one(pub, t, 1, 100, &pctx, 1);
	cr_expect_eq(msga_pub_flush(pub, 0), -ETIMEDOUT, "quiet at once");
	/* the subscriber does not poll: the flush does not wait for it */
	cr_expect_eq(msga_pub_flush(pub, 60000), 0);
	cr_expect_eq(r.total, 0);
	cr_assert(dp_poll_until64(&sctx, 1, &r.total, 1, 10000));
	/* looks without waiting, polling between them, end in 0 */
	send_one(pub, t, 2, 100, &pctx, 1);
	end = dp_now_ms() + 60000;
	while ((ret = msga_pub_flush(pub, 0)) == -ETIMEDOUT &&
	       dp_now_ms() < end)
		for (int i = 0; i < 2; i++)
			msga_ctx_poll(ctxs[i], 64);
	cr_expect_eq(ret, 0, "a look never saw the quiet: %d", ret);
	cr_assert(dp_poll_until64(&sctx, 1, &r.total, 2, 10000));
	cr_expect_eq(r.bad, 0, "%s", r.first_bad);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}
