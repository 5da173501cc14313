/* SPDX-License-Identifier: MIT */
/*
 * Event mode: a real libev loop drives msgaccel through msgaccel_ev.h.
 * The publisher sends from an ev_timer, the subscriber receives from the
 * ev_io watcher on msga_ctx_fd(); a second ev_timer is the deadline.
 */
#include <errno.h>
#include <poll.h>

#include <ev.h>
#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "msgaccel_ev.h"

#define MSG 64
#define TOTAL 20000

static struct dp_rec rec, ev_rec;
static struct msga_pub *pub;
static struct msga_sub *sub;
static uint32_t topic;
static uint64_t seq, eagain;
static int timed_out;

static void publish_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	uint8_t buf[MSG];

	(void)revents;
	if (msga_pub_subscribers(pub) < 1)
		return;
	while (seq < TOTAL) {
		int ret;

		dp_fill(buf, MSG, topic, seq + 1);
		ret = msga_pub_send(pub, topic, buf, MSG);
		if (ret == -EAGAIN) {
			eagain++;
			return; /* the loop polls; try again next tick */
		}
		cr_assert_eq(ret, 1, "send = %d", ret);
		seq++;
	}
	ev_timer_stop(loop, w);
}

static void check_done(struct ev_loop *loop, ev_prepare *w, int revents)
{
	(void)w;
	(void)revents;
	if (rec.total >= TOTAL)
		ev_break(loop, EVBREAK_ALL);
}

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)w;
	(void)revents;
	timed_out = 1;
	ev_break(loop, EVBREAK_ALL);
}

Test(pubsub_ev, libev_loop_drives_pub_and_sub, .timeout = 90)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_ev mev;
	ev_timer tick, deadline;
	ev_prepare prep;
	int fd;

	cr_assert_not_null(loop);
	pub = dp_pub(ctx, 0, &ev_rec);
	cr_assert_eq(msga_pub_topic(pub, "ev", &topic), 0);
	rec.strict = 1;
	sub = dp_sub(ctx, "ev", &rec);
	cr_assert_eq(msga_ev_attach(&mev, loop, ctx), 0);
	fd = msga_ctx_fd(ctx);
	cr_expect_geq(fd, 0);
	cr_expect_eq(msga_ctx_fd(ctx), fd, "one fd per context");
	/* the connection itself happens inside the loop */
	cr_assert_geq(msga_sub_connect(sub, dp_uri((uint16_t)msga_pub_port(pub)), NULL),
		      0);
	ev_timer_init(&tick, publish_cb, 0.001, 0.001);
	ev_timer_start(loop, &tick);
	ev_timer_init(&deadline, deadline_cb, 60.0, 0);
	ev_timer_start(loop, &deadline);
	ev_prepare_init(&prep, check_done);
	ev_prepare_start(loop, &prep);
	ev_run(loop, 0);
	cr_expect_not(timed_out, "deadline: sent %llu, got %llu",
		      (unsigned long long)seq, (unsigned long long)rec.total);
	cr_expect_eq(rec.connected, 1);
	cr_expect_eq(ev_rec.connected, 1);
	cr_expect_eq(rec.total, TOTAL);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(mev.last_error, 0);
	cr_log_info("event mode: %llu messages, %llu EAGAIN",
		    (unsigned long long)rec.total, (unsigned long long)eagain);
	msga_ev_detach(&mev);
	ev_timer_stop(loop, &tick);
	ev_timer_stop(loop, &deadline);
	ev_prepare_stop(loop, &prep);
	msga_ctx_close(ctx);
	ev_loop_destroy(loop);
}

/* Poll until a msga_ctx_poll() finds nothing (CQs armed); 1 if it did. */
static int dp_poll_quiet(struct msga_ctx *ctx, int max)
{
	for (int i = 0; i < max; i++)
		if (msga_ctx_poll(ctx, 64) == 0)
			return 1;
	return 0;
}

/*
 * The fd really sleeps until there is work: idle, poll(2) times out. (A
 * minute's peer timeout puts keepalives 12 s apart, out of the way; that
 * the timer wakes for them is dev_liveness's business.)
 */
Test(pubsub_ev, fd_is_quiet_when_idle_and_wakes_on_traffic, .timeout = 60)
{
	static struct dp_rec r, e;
	struct msga_ctx *ctx = devtest_open_ctx_timeout(60000);
	struct msga_pub *p = dp_pub(ctx, 0, &e);
	struct msga_sub *s = dp_sub(ctx, "q", &r);
	int fd = msga_ctx_fd(ctx);
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint8_t buf[MSG];
	uint32_t t;

	cr_assert_geq(fd, 0);
	cr_assert_eq(msga_pub_topic(p, "q", &t), 0);
	dp_connect(s, p, &ctx, 1, 1);
	/* let in-flight completions (credits, signalled sends) land */
	for (uint64_t end = dp_now_ms() + 300; dp_now_ms() < end;)
		msga_ctx_poll(ctx, 64);
	cr_assert(dp_poll_quiet(ctx, 1000), "never went idle");
	cr_expect_eq(poll(&pfd, 1, 200), 0, "readable with nothing to do");
	dp_fill(buf, MSG, t, 1);
	cr_assert_eq(msga_pub_send(p, t, buf, MSG), 1);
	cr_expect_eq(poll(&pfd, 1, 5000), 1, "no wake-up for a message");
	cr_assert(dp_poll_until64(&ctx, 1, &r.total, 1, 5000));
	msga_ctx_close(ctx);
}
