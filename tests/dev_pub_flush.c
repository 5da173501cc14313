/* SPDX-License-Identifier: MIT */
/*
 * Device tests of msga_pub_flush() and msga_pub_attr.linger_ms (issue 36,
 * item 4): a flush returns 0 only once the subscriber's device has every
 * committed message (the publisher, a child process, dies right after
 * it, and the subscriber still counts them all), -ETIMEDOUT while a
 * subscriber that stops polling keeps a message from going out, and a
 * destroy that lingers delivers the tail.
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

/*
 * The child publishes NBIG large and NSMALL small messages to the one
 * subscriber, then flushes (or, linger, destroys with linger_ms) and
 * dies at once with _exit(): what it had not sent is lost with it. It
 * tells the parent the flush's result first.
 */
static void child_publisher(int out, int linger)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .linger_ms = linger ? 60000 : 0 };
	struct msga_pub *pub = NULL;
	uint64_t end = dp_now_ms() + 30000;
	uint32_t t;
	int port, ret;

	if (msga_pub_create(ctx, &a, &pub) || msga_pub_topic(pub, "t", &t))
		_exit(2);
	port = msga_pub_port(pub);
	if (write(out, &port, sizeof(port)) != sizeof(port))
		_exit(2);
	while (msga_pub_subscribers(pub) < 1 && dp_now_ms() < end)
		msga_ctx_poll(ctx, 64);
	for (uint64_t i = 1; i <= NBIG + NSMALL; i++)
		send_one(pub, t, i, i <= NBIG ? BIG : 100, &ctx, 1);
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

static void tail_arrives(int linger)
{
	struct dp_rec r = { .strict = 1 };
	struct msga_sub *sub;
	struct msga_ctx *ctx;
	struct pollfd pfd;
	int pfds[2], port, ret = 1, status;
	pid_t pid;

	cr_assert_eq(pipe(pfds), 0);
	pid = fork(); /* before this process opens any device */
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pfds[0]);
		child_publisher(pfds[1], linger);
	}
	close(pfds[1]);
	pfd = (struct pollfd){ .fd = pfds[0], .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 30000), 1, "child publisher did not start");
	cr_assert_eq(read(pfds[0], &port, sizeof(port)), sizeof(port));
	ctx = devtest_open_ctx();
	sub = dp_sub(ctx, "t", &r);
	cr_assert_geq(msga_sub_connect(sub, dp_uri((uint16_t)port), NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &r.disconnected, 1, 90000),
		  "the publisher never went away");
	cr_assert_eq(read(pfds[0], &ret, sizeof(ret)), sizeof(ret));
	cr_expect_eq(ret, 0, "the flush returned %d", ret);
	cr_expect_eq(r.total, NBIG + NSMALL, "got %llu of %u",
		     (unsigned long long)r.total, NBIG + NSMALL);
	cr_expect_eq(r.bad, 0, "%s", r.first_bad);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_expect(WIFEXITED(status) && !WEXITSTATUS(status));
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
	close(pfds[0]);
}

Test(pub_flush, returns_once_the_subscriber_has_it_all, .timeout = 180)
{
	tail_arrives(0);
}

Test(pub_flush, a_lingering_destroy_delivers_the_tail, .timeout = 180)
{
	tail_arrives(1);
}
