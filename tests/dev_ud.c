/* SPDX-License-Identifier: MIT */
/*
 * Unicast UD publish/subscribe ("ud://IP:PORT") on the device under test:
 * subscribers found through rdma_cm's SIDR, topic filtering at the
 * publisher, fragmentation, and both sides noticing a peer that leaves or
 * vanishes. iWARP has no UD: there each test checks the refusal.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

/*
 * How long a test waits for a silent peer to be reported: twice the peer
 * timeout devtest_open_ctx() gives (scaled under valgrind, like it).
 */
static int silence_wait_ms(void)
{
	return (int)devtest_scale_ms(2 * MSGA_PEER_TIMEOUT_DEFAULT_MS);
}

static struct msga_pub *ud_pub(struct msga_ctx *ctx, struct dp_rec *ev)
{
	struct msga_pub *pub = dp_pub_at(ctx, dp_ud_uri(0), 0, ev);

	cr_assert_gt(msga_pub_port(pub), 0);
	return pub;
}

static void ud_connect(struct msga_sub *sub, struct dp_rec *rec,
		       struct msga_pub *pub, int nsubs,
		       struct msga_ctx **ctx, int nctx)
{
	int want = rec->connected + 1;
	int id = dp_connect_id(sub, dp_ud_uri(msga_pub_port(pub)));

	cr_assert_geq(id, 0, "msga_sub_connect = %d", id);
	cr_assert(dp_poll_until(ctx, nctx, &rec->connected, want, 15000),
		  "not subscribed (failed %d, status %d)", rec->failed,
		  rec->last_status);
	for (uint64_t end = dp_now_ms() + 5000;
	     msga_pub_subscribers(pub) < nsubs;) {
		cr_assert_lt(dp_now_ms(), end, "publisher sees %d of %d",
			     msga_pub_subscribers(pub), nsubs);
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[nctx - 1], 64);
	}
}

/* Two contexts on the device (publisher's, subscribers') and a publisher. */
static struct msga_pub *ud_setup(struct msga_ctx **ctx, struct dp_rec *pe)
{
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	return ud_pub(ctx[0], pe);
}

static void ud_teardown(struct msga_ctx **ctx)
{
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

static void refused(void)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_ud_uri(0) };
	struct msga_pub *pub = NULL;
	struct dp_rec rec = { 0 };
	struct msga_sub *sub = dp_sub(ctx, "md.*", &rec);

	cr_assert_eq(msga_pub_create(ctx, &a, &pub), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(sub, dp_ud_uri(18999), NULL),
		     -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

/* Send, then poll until each of recs counted one more than before. */
static void send_wait(struct msga_pub *pub, uint32_t topic, uint64_t seq,
		      size_t len, struct msga_ctx **ctx,
		      struct dp_rec **recs, const int *gets, int nrec)
{
	uint64_t want[4];

	for (int i = 0; i < nrec; i++)
		want[i] = recs[i]->total + (uint64_t)gets[i];
	dp_send(pub, topic, seq, len, ctx, 2);
	for (int i = 0; i < nrec; i++)
		cr_assert(dp_poll_until64(ctx, 2, &recs[i]->total, want[i],
					  10000), "sub %d missed seq %llu", i,
			  (unsigned long long)seq);
}

Test(ud, publisher_filters_topics_per_subscriber, .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, all = { .strict = 1 }, one = { .strict = 1 };
	struct dp_rec *recs[2] = { &all, &one };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_sub *s_all, *s_one;
	struct msga_pub *pub;
	uint32_t ta, tb;

	if (dp_is_iwarp())
		return refused();
	pub = ud_setup(ctx, &pe);
	cr_assert_eq(msga_pub_topic(pub, "md.A", &ta), 0);
	cr_assert_eq(msga_pub_topic(pub, "md.B", &tb), 0);
	s_all = dp_sub(ctx[1], "md.*", &all);
	s_one = dp_sub(ctx[1], "md.A", &one);
	ud_connect(s_all, &all, pub, 1, ctx, 2);
	ud_connect(s_one, &one, pub, 2, ctx, 2);
	cr_assert_eq(pe.connected, 2);
	for (uint64_t s = 1; s <= 500; s++) {
		static const int both[2] = { 1, 1 }, first[2] = { 1, 0 };

		send_wait(pub, ta, s, 64 + s % 300, ctx, recs, both, 2);
		send_wait(pub, tb, s, 64, ctx, recs, first, 2);
	}
	cr_assert_eq(all.bad + one.bad, 0, "%s%s", all.first_bad,
		     one.first_bad);
	cr_assert_eq(all.total, 1000);
	cr_assert_eq(one.total, 500, "md.B is not sent to a md.A subscriber");
	cr_assert_eq(msga_sub_stats(s_one, &st), 0);
	cr_assert_eq(st.streams, 1);
	cr_assert_eq(st.gaps + st.missing, 0);
	ud_teardown(ctx);
}

Test(ud, large_messages_are_fragmented, .timeout = 120)
{
	static const size_t sizes[] = { 2000, 4072, 10000, 300000, 1u << 20 };
	static const int one[1] = { 1 };
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { .strict = 1 };
	struct dp_rec *recs[1] = { &rec };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t t;

	if (dp_is_iwarp())
		return refused();
	pub = ud_setup(ctx, &pe);
	cr_assert_eq(msga_pub_topic(pub, "big", &t), 0);
	sub = dp_sub(ctx[1], "big", &rec);
	ud_connect(sub, &rec, pub, 1, ctx, 2);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		send_wait(pub, t, i + 1, sizes[i], ctx, recs, one, 1);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(rec.total, sizeof(sizes) / sizeof(sizes[0]));
	ud_teardown(ctx);
}

Test(ud, unsubscribe_is_seen_at_once, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;
	int id;

	if (dp_is_iwarp())
		return refused();
	pub = ud_setup(ctx, &pe);
	sub = dp_sub(ctx[1], "x", &rec);
	ud_connect(sub, &rec, pub, 1, ctx, 2);
	id = (int)rec.last_conn;
	cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)id), 0);
	cr_assert(dp_poll_until(ctx, 2, &pe.disconnected, 1, 3000),
		  "publisher did not see the UNSUBSCRIBE");
	cr_assert_eq(pe.last_status, 0);
	cr_assert_eq(msga_pub_subscribers(pub), 0);
	ud_teardown(ctx);
}

/*
 * A subscriber process that exits without a goodbye: only silence. It is
 * forked before the parent opens a device (verbs and fork do not mix), and
 * learns the publisher's port through a pipe.
 */
static void vanishing_subscriber(int rfd)
{
	struct msga_ctx *c;
	struct dp_rec rec = { 0 };
	struct msga_sub *sub;
	uint64_t end;
	int port;

	if (read(rfd, &port, sizeof(port)) != (ssize_t)sizeof(port))
		_exit(2);
	c = devtest_open_ctx();
	sub = dp_sub(c, "x", &rec);
	msga_sub_connect(sub, dp_ud_uri(port), NULL);
	for (end = dp_now_ms() + 15000; !rec.connected && dp_now_ms() < end;)
		msga_ctx_poll(c, 64);
	_exit(rec.connected ? 0 : 1); /* no unsubscribe, no cleanup */
}

Test(ud, a_vanished_subscriber_times_out, .timeout = 60)
{
	struct msga_ctx *ctx;
	struct dp_rec pe = { 0 };
	struct msga_pub *pub;
	int status, port, fds[2];
	pid_t pid;

	if (dp_is_iwarp())
		return refused();
	cr_assert_eq(pipe(fds), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		vanishing_subscriber(fds[0]);
	ctx = devtest_open_ctx();
	pub = ud_pub(ctx, &pe);
	port = msga_pub_port(pub);
	cr_assert_eq(write(fds[1], &port, sizeof(port)), (ssize_t)sizeof(port));
	cr_assert(dp_poll_until(&ctx, 1, &pe.connected, 1, 15000),
		  "the child never subscribed");
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	cr_assert(dp_poll_until(&ctx, 1, &pe.disconnected, 1,
				silence_wait_ms()),
		  "the publisher never noticed");
	cr_assert_eq(pe.last_status, -ETIMEDOUT);
	cr_assert_eq(msga_pub_subscribers(pub), 0);
	msga_ctx_close(ctx);
}

Test(ud, a_vanished_publisher_is_reported, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;

	if (dp_is_iwarp())
		return refused();
	pub = ud_setup(ctx, &pe);
	sub = dp_sub(ctx[1], "x", &rec);
	ud_connect(sub, &rec, pub, 1, ctx, 2);
	msga_pub_destroy(pub); /* as if its process died: no message */
	cr_assert(dp_poll_until(&ctx[1], 1, &rec.disconnected, 1,
				silence_wait_ms()),
		  "the subscriber never noticed");
	cr_assert_eq(rec.last_status, -ETIMEDOUT);
	ud_teardown(ctx);
}

/*
 * The same in event mode: the program sleeps in poll(2) on msga_ctx_fd(),
 * and after the publisher's last datagram nothing arrives to wake it; the
 * library's timer must, for keepalives and the 5 s silence. And only for
 * those: over the 5 s a keepalive is due each second, so a dozen wake-ups
 * allow for its send completions too, where a fixed 100 ms tick (as the
 * library had) would wake 50 times.
 */
Test(ud, a_vanished_publisher_wakes_an_event_mode_subscriber, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint64_t end;
	int fd, wakes = 0;

	if (dp_is_iwarp())
		return refused();
	pub = ud_setup(ctx, &pe);
	fd = msga_ctx_fd(ctx[1]);
	cr_assert_geq(fd, 0, "msga_ctx_fd = %d", fd);
	sub = dp_sub(ctx[1], "x", &rec);
	ud_connect(sub, &rec, pub, 1, ctx, 2);
	msga_pub_destroy(pub); /* as if its process died: no message */
	for (end = dp_now_ms() + silence_wait_ms(); !rec.disconnected;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - dp_now_ms());

		cr_assert_gt(left, 0, "the subscriber never noticed");
		cr_assert_geq(poll(&pfd, 1, left), 0);
		wakes++;
		while (msga_ctx_poll(ctx[1], 64) > 0)
			;
	}
	cr_assert_eq(rec.last_status, -ETIMEDOUT);
	cr_log_info("%d wake-ups until the silence was reported", wakes);
	cr_expect_leq(wakes, 12, "woke %d times in 5 s of silence", wakes);
	ud_teardown(ctx);
}

Test(ud, nobody_listening_fails_to_connect, .timeout = 60)
{
	struct msga_ctx *ctx;
	struct dp_rec rec = { 0 };
	struct msga_sub *sub;

	if (dp_is_iwarp())
		return refused();
	ctx = devtest_open_ctx();
	sub = dp_sub(ctx, "x", &rec);
	cr_assert_geq(msga_sub_connect(sub, dp_ud_uri(18997), NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &rec.failed, 1, 15000),
		  "no CONNECT_FAILED");
	cr_assert_lt(rec.last_status, 0);
	cr_assert_eq(msga_sub_connect(sub, "ud://not-an-ip:1", NULL), -EINVAL);
	msga_ctx_close(ctx);
}
