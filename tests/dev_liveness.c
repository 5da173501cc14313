/* SPDX-License-Identifier: MIT */
/*
 * Device tests of RC liveness (lib/liveness.h, lib/rc_keepalive.c):
 * keepalives keep an idle connection up, and a peer that stops polling is
 * reported gone with -ETIMEDOUT, over the ring and over SEND/RECV,
 * busy-polled and in event mode.
 *
 * A peer that stops polling is what a vanished host or a wedged process
 * looks like from the other side, and here it is the harder case: the
 * peer is a context of this process that the test stops polling, so its
 * kernel still acknowledges every packet at the transport level and
 * nothing but the library's own timeout can notice.
 */
#include <errno.h>
#include <poll.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define TIMEOUT_MS 1000u /* peer timeout here: keepalives every 200 ms */
#define BIG 256          /* fills a ring in about a thousand messages */

/* The timeout as the library has it (scaled under valgrind). */
static uint64_t timeout_ms(void)
{
	return devtest_scale_ms(TIMEOUT_MS);
}

static struct msga_ctx *open_ctx(void)
{
	return devtest_open_ctx_timeout(TIMEOUT_MS);
}

static void poll_for(struct msga_ctx **ctxs, int n, uint64_t ms)
{
	for (uint64_t end = dp_now_ms() + ms; dp_now_ms() < end;)
		for (int i = 0; i < n; i++)
			cr_assert_geq(msga_ctx_poll(ctxs[i], 64), 0);
}

static void send_and_receive(struct msga_pub *pub, uint32_t t, uint64_t seq,
			     struct dp_rec *rec, struct msga_ctx **ctxs, int n)
{
	uint64_t want = rec->total + 1;

	dp_send(pub, t, seq, BIG, ctxs, n);
	cr_assert(dp_poll_until64(ctxs, n, &rec->total, want, 10000),
		  "message %llu did not arrive", (unsigned long long)seq);
}

/*
 * Idle for four timeouts, polled: only keepalives can keep both sides
 * from timing each other out, on the ring and on SEND/RECV.
 */
Test(liveness, idle_connections_stay_up_on_keepalives, .timeout = 60)
{
	static struct dp_rec pe, ring, sr;
	struct msga_ctx *cp = open_ctx(), *cs = open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &pe);
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(cs, "t", 0, &ring), pub, both, 2, 1);
	dp_connect(dp_sub_flags(cs, "t", MSGA_SUB_NO_RING, &sr), pub, both, 2,
		   2);
	send_and_receive(pub, t, 1, &ring, both, 2);
	poll_for(both, 2, 4 * timeout_ms());
	cr_expect_eq(pe.disconnected, 0, "the publisher dropped a live "
		     "subscriber (status %d)", pe.last_status);
	cr_expect_eq(ring.disconnected, 0, "ring: status %d", ring.last_status);
	cr_expect_eq(sr.disconnected, 0, "SEND/RECV: status %d",
		     sr.last_status);
	cr_expect_eq(msga_pub_subscribers(pub), 2);
	send_and_receive(pub, t, 2, &sr, both, 2);
	cr_expect_eq(ring.total, 2);
	cr_expect_eq(ring.bad + sr.bad, 0, "%s%s", ring.first_bad,
		     sr.first_bad);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

/*
 * The publisher's context stops being polled: its subscriber hears
 * nothing more and must say so within about the timeout (not before most
 * of it: the publisher's last keepalive left at most an interval before).
 */
static void silent_publisher(uint32_t sub_flags)
{
	static struct dp_rec pe, rec;
	struct msga_ctx *cp = open_ctx(), *cs = open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &pe);
	uint64_t t0, took;
	uint32_t t;

	pe = (struct dp_rec){ 0 };
	rec = (struct dp_rec){ .strict = 1 };
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(cs, "t", sub_flags, &rec), pub, both, 2, 1);
	for (uint64_t seq = 1; seq <= 10; seq++)
		send_and_receive(pub, t, seq, &rec, both, 2);
	t0 = dp_now_ms();
	cr_assert(dp_poll_until(&cs, 1, &rec.disconnected, 1,
				(int)(10 * timeout_ms())),
		  "a silent publisher was not reported in 10 timeouts");
	took = dp_now_ms() - t0;
	cr_log_info("silent publisher reported after %llu ms",
		    (unsigned long long)took);
	cr_expect_eq(rec.last_status, -ETIMEDOUT, "status %d (%s)",
		     rec.last_status, msga_strerror(rec.last_status));
	cr_expect_geq(took, timeout_ms() / 2, "reported after only %llu ms",
		      (unsigned long long)took);
	cr_expect_eq(rec.total, 10);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	/* The publisher wakes up to find its subscriber gone. */
	cr_assert(dp_poll_until(&cp, 1, &pe.disconnected, 1,
				(int)(10 * timeout_ms())),
		  "the publisher never saw its subscriber go");
	cr_expect_eq(msga_pub_subscribers(pub), 0);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

DP_TEST_RC_PATHS(liveness, silent_publisher_is_reported_over_the_ring,
		 silent_publisher_is_reported_over_send_recv, silent_publisher,
		 60)

/*
 * One of two subscribers stops polling. Its ring fills, and without a
 * timeout the publisher would be pushed back forever: a wedged subscriber
 * would stop the feed for everyone. It is dropped instead (-ETIMEDOUT),
 * and the other subscriber gets every message, in order.
 */
Test(liveness, silent_subscriber_is_dropped_and_publishing_goes_on,
     .timeout = 120)
{
	static struct dp_rec pe, r1, r2;
	struct msga_ctx *cp = open_ctx(), *c1 = open_ctx(), *c2 = open_ctx();
	struct msga_ctx *all[3] = { cp, c1, c2 }, *live[2] = { cp, c1 };
	struct msga_pub *pub = dp_pub(cp, 0, &pe);
	uint64_t seq = 0, dropped_at = 0;
	uint64_t end = dp_now_ms() + devtest_scale_ms(30000);
	uint32_t t;

	r1.strict = r2.strict = 1;
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(c1, "t", 0, &r1), pub, all, 3, 1);
	dp_connect(dp_sub_flags(c2, "t", 0, &r2), pub, all, 3, 2);
	/* c2 is never polled again until the end */
	while (!dropped_at || seq < dropped_at + 5000) {
		cr_assert_lt(dp_now_ms(), end, "still pushed back after %d s "
			     "(seq %llu)", devtest_wait_s(30),
			     (unsigned long long)seq);
		dp_send(pub, t, ++seq, BIG, live, 2);
		if (!dropped_at && pe.disconnected)
			dropped_at = seq;
	}
	cr_log_info("dropped the silent subscriber at message %llu",
		    (unsigned long long)dropped_at);
	cr_expect_eq(pe.disconnected, 1);
	cr_expect_eq(pe.last_status, -ETIMEDOUT, "status %d (%s)",
		     pe.last_status, msga_strerror(pe.last_status));
	cr_expect_eq(msga_pub_subscribers(pub), 1);
	cr_assert(dp_poll_until64(live, 2, &r1.total, seq, 20000),
		  "the live subscriber got %llu of %llu",
		  (unsigned long long)r1.total, (unsigned long long)seq);
	cr_expect_eq(r1.bad, 0, "%s", r1.first_bad);
	cr_expect_eq(r1.disconnected, 0);
	/* The silent one resumes: what it had is in order, then it is told. */
	cr_assert(dp_poll_until(all, 3, &r2.disconnected, 1,
				(int)(10 * timeout_ms())),
		  "the dropped subscriber was never told");
	cr_expect_leq(r2.total, dropped_at);
	cr_expect_eq(r2.bad, 0, "%s", r2.first_bad);
	msga_ctx_close(c2);
	msga_ctx_close(c1);
	msga_ctx_close(cp);
}

/* Wait on fd for up to ms, polling cp (busy) meanwhile; 1 if it woke. */
static int wait_fd(int fd, struct msga_ctx *cp, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int ret;

	if (cp)
		cr_assert_geq(msga_ctx_poll(cp, 64), 0);
	ret = poll(&pfd, 1, ms);
	cr_assert_geq(ret, 0);
	return ret;
}

/*
 * Event mode: the subscriber sleeps in poll(2) on msga_ctx_fd(). While
 * the publisher is polled, the subscriber's timer wakes it to send its
 * keepalives (and the publisher's arrive), a few times per interval and
 * not more; once the publisher falls silent nothing arrives to wake it,
 * and the timer must, to report the silence.
 */
Test(liveness, event_mode_wakes_for_keepalives_and_a_silent_publisher,
     .timeout = 60)
{
	static struct dp_rec pe, rec;
	struct msga_ctx *cp = open_ctx(), *cs = open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &pe);
	int fd = msga_ctx_fd(cs), wakes = 0, idle_wakes;
	uint64_t end;
	uint32_t t;

	cr_assert_geq(fd, 0, "msga_ctx_fd = %d", fd);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(cs, "t", 0, &rec), pub, both, 2, 1);
	send_and_receive(pub, t, 1, &rec, both, 2);
	/* three timeouts idle, the publisher busy-polled */
	for (end = dp_now_ms() + 3 * timeout_ms(); dp_now_ms() < end;) {
		if (!wait_fd(fd, cp, 1))
			continue;
		wakes++;
		cr_assert_geq(msga_ctx_poll(cs, 64), 0);
	}
	idle_wakes = wakes;
	cr_log_info("%d wake-ups in three idle timeouts", idle_wakes);
	cr_expect_eq(rec.disconnected + pe.disconnected, 0,
		     "a live peer was timed out (status %d / %d)",
		     rec.last_status, pe.last_status);
	/* 15 keepalive intervals each way: their sends and arrivals */
	cr_expect_geq(idle_wakes, 5, "the timer never woke the subscriber");
	cr_expect_leq(idle_wakes, 100, "woke %d times: spinning", idle_wakes);
	/* now the publisher falls silent */
	wakes = 0;
	for (end = dp_now_ms() + 10 * timeout_ms(); !rec.disconnected;) {
		cr_assert_lt(dp_now_ms(), end,
			     "the silent publisher was never reported");
		if (wait_fd(fd, NULL, (int)timeout_ms())) {
			wakes++;
			cr_assert_geq(msga_ctx_poll(cs, 64), 0);
		}
	}
	cr_expect_eq(rec.last_status, -ETIMEDOUT, "status %d",
		     rec.last_status);
	cr_log_info("%d wake-ups until the silence was reported", wakes);
	cr_expect_leq(wakes, 20, "woke %d times in one timeout", wakes);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}
