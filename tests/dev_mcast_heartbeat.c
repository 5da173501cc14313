/* SPDX-License-Identifier: MIT */
/*
 * Heartbeats and end of stream on UD (issue 25, deliverable 1), on the
 * device under test: an idle stream sends heartbeats that back off, carry
 * its last sequence number and so reveal a lost tail and place a late
 * joiner; destroying a publisher ends each stream it sent on; a publisher
 * killed outright is reported gone, stream by stream, after the peer
 * timeout. Multicast and unicast UD alike. On iWARP, which has no UD, the
 * attribute check still runs and the rest is the documented refusal.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define G_IDLE "mcast://239.255.12.1"
#define G_LATE "mcast://239.255.12.2"
#define G_END "mcast://239.255.12.3"
#define G_KILL "mcast://239.255.12.4"
#define G_CHECK "mcast://239.255.12.5"

/* A subscriber's view: messages (dp_rec) and stream events. */
struct hb_rec {
	struct dp_rec rec;
	int gaps;
	uint64_t gap_seq, gap_count;
	int ended[2], silent[2];       /* per topic "a", "b" */
	uint64_t end_seq[2];
	int other_stream_events;
	struct msga_sub *sub;
};

static int topic_index(const char *topic)
{
	if (!strcmp(topic, "hb.a"))
		return 0;
	if (!strcmp(topic, "hb.b"))
		return 1;
	return -1;
}

static void hb_on_msg(const struct msga_msg *m, void *user)
{
	dp_on_msg(m, &((struct hb_rec *)user)->rec);
}

static void hb_on_event(const struct msga_event *ev, void *user)
{
	struct hb_rec *r = user;
	int i;

	if (ev->type == MSGA_EVENT_GAP) {
		r->gaps++;
		r->gap_seq = ev->seq;
		r->gap_count = ev->count;
		return;
	}
	if (ev->type != MSGA_EVENT_DISCONNECTED || !ev->topic) {
		dp_on_event(ev, &r->rec);
		return;
	}
	i = topic_index(ev->topic);
	if (i < 0) {
		r->other_stream_events++;
		return;
	}
	if (ev->status == 0) {
		r->ended[i]++;
		r->end_seq[i] = ev->seq;
	} else if (ev->status == -ETIMEDOUT) {
		r->silent[i]++;
		r->end_seq[i] = ev->seq;
	} else {
		r->other_stream_events++;
	}
	dp_on_event(ev, &r->rec); /* counted as stream_ended / _silent */
}

static struct msga_sub *hb_sub(struct msga_ctx *ctx, struct hb_rec *r)
{
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "hb.*",
				   .on_msg = hb_on_msg,
				   .on_event = hb_on_event, .user = r };

	cr_assert_eq(msga_sub_create(ctx, &a, &r->sub), 0);
	return r->sub;
}

static struct msga_pub *hb_pub(struct msga_ctx *ctx, const char *uri,
			       uint32_t heartbeat_ms, struct dp_rec *pe)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri,
				   .on_event = dp_on_event, .user = pe,
				   .heartbeat_ms = heartbeat_ms };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &a, &pub);

	cr_assert_eq(ret, 0, "msga_pub_create(%s) = %d: %s", uri, ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

static struct msga_sub_stats stats_of(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

/* Poll ctxs for ms milliseconds, whatever happens. */
static void poll_for(struct msga_ctx **ctx, int nctx, uint64_t ms)
{
	for (uint64_t end = dp_now_ms() + ms; dp_now_ms() < end;)
		for (int i = 0; i < nctx; i++)
			msga_ctx_poll(ctx[i], 64);
}

/* Poll until the subscriber has taken at least n heartbeats. */
static void wait_heartbeats(struct msga_ctx **ctx, int nctx,
			    const struct msga_sub *sub, uint64_t n)
{
	for (uint64_t end = dp_now_ms() + 15000;
	     stats_of(sub).heartbeats < n;) {
		cr_assert_lt(dp_now_ms(), end, "%llu of %llu heartbeats",
			     (unsigned long long)stats_of(sub).heartbeats,
			     (unsigned long long)n);
		for (int i = 0; i < nctx; i++)
			msga_ctx_poll(ctx[i], 64);
	}
}

/* A publisher and a subscriber joined (mcast) or subscribed (ud://). */
struct rig {
	struct msga_ctx *ctx[2];
	struct dp_rec pe;
	struct hb_rec r;
	struct msga_pub *pub;
	uint32_t a, b;
};

static void rig_up(struct rig *g, const char *uri, uint32_t heartbeat_ms,
		   uint32_t sub_timeout_ms)
{
	int unicast = !strncmp(uri, "ud://", 5);

	g->ctx[0] = devtest_open_ctx();
	g->ctx[1] = devtest_open_ctx_timeout(sub_timeout_ms);
	g->pub = hb_pub(g->ctx[0], uri, heartbeat_ms, &g->pe);
	cr_assert_eq(msga_pub_topic(g->pub, "hb.a", &g->a), 0);
	cr_assert_eq(msga_pub_topic(g->pub, "hb.b", &g->b), 0);
	hb_sub(g->ctx[1], &g->r);
	if (!unicast)
		cr_assert(dp_poll_until(g->ctx, 2, &g->pe.connected, 1,
					15000), "publisher not joined");
	cr_assert_geq(msga_sub_connect(g->r.sub, unicast ?
		      dp_ud_uri(msga_pub_port(g->pub)) : uri, NULL), 0);
	cr_assert(dp_poll_until(g->ctx, 2, &g->r.rec.connected, 1, 15000),
		  "subscriber not joined (failed %d, status %d)",
		  g->r.rec.failed, g->r.rec.last_status);
}

static void rig_down(struct rig *g)
{
	msga_ctx_close(g->ctx[0]);
	msga_ctx_close(g->ctx[1]);
}

/* Send n paced messages on topic t from seq first: none lost to overrun. */
static void send_n(struct rig *g, uint32_t t, uint64_t first, uint64_t n)
{
	for (uint64_t s = first; s < first + n; s++) {
		uint64_t want = g->r.rec.total + 1;

		dp_send(g->pub, t, s, 64, g->ctx, 2);
		cr_assert(dp_poll_until64(g->ctx, 2, &g->r.rec.total, want,
					  10000), "message %llu not delivered",
			  (unsigned long long)s);
	}
}

/* heartbeat_ms outside MSGA_HEARTBEAT_MIN_MS..MAX: -EINVAL, any device. */
Test(heartbeat, heartbeat_ms_out_of_range_is_einval, .timeout = 60)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = G_CHECK,
				   .heartbeat_ms = MSGA_HEARTBEAT_MAX_MS + 1 };
	struct msga_pub *pub = (struct msga_pub *)1;

	cr_assert_eq(msga_pub_create(ctx, &a, &pub), -EINVAL);
	cr_assert_null(pub);
	cr_assert_neq(strstr(msga_ctx_last_error(ctx), "heartbeat_ms"), NULL,
		      "last error: %s", msga_ctx_last_error(ctx));
	a.heartbeat_ms = MSGA_HEARTBEAT_MAX_MS;
	cr_assert_eq(msga_pub_create(ctx, &a, &pub),
		     dp_is_iwarp() ? -EOPNOTSUPP : 0);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

/*
 * An idle stream heartbeats with its last sequence number, less and less
 * often: at 20 ms and a 1 s cap, 2 s of idling give 6 or so, not 100. A
 * topic that never sent says nothing.
 */
static void idle_stream_heartbeats(const char *uri)
{
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct msga_sub_stats st;
	struct rig g = { 0 };
	uint64_t before;

	rig_up(&g, uri, 20, 0);
	send_n(&g, g.a, 1, 5);
	wait_heartbeats(g.ctx, 2, g.r.sub, 1);
	before = stats_of(g.r.sub).heartbeats;
	poll_for(g.ctx, 2, 2000);
	st = stats_of(g.r.sub);
	cr_log_info("%s: %llu heartbeats in 2 s of idling", uri,
		    (unsigned long long)(st.heartbeats - before));
	cr_assert_geq(st.heartbeats - before, 2, "heartbeats stopped");
	cr_assert_leq(st.heartbeats - before, 15, "no backoff");
	cr_assert_eq(st.streams, 1, "only hb.a ever sent");
	cr_assert_eq(msga_sub_stream_stats(g.r.sub, 0, &ss), 0);
	cr_assert_str_eq(ss.topic, "hb.a");
	cr_assert_eq(ss.last_seq, 5);
	cr_assert_eq(st.gaps + st.missing, 0);
	cr_assert_eq(g.r.rec.stream_silent + g.r.rec.stream_ended, 0);
	rig_down(&g);
}

Test(heartbeat, an_idle_mcast_stream_heartbeats_and_backs_off, .timeout = 120)
{
	if (dp_is_iwarp())
		return;
	idle_stream_heartbeats(G_IDLE);
}

Test(heartbeat, an_idle_ud_stream_heartbeats_and_backs_off, .timeout = 120)
{
	if (dp_is_iwarp())
		return;
	idle_stream_heartbeats(dp_ud_uri(0));
}

/*
 * A subscriber that joins an idle stream learns its position from a
 * heartbeat: nothing before it is lost, and the next message is the next.
 */
Test(heartbeat, a_late_joiner_is_placed_by_a_heartbeat, .timeout = 120)
{
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct dp_rec pe = { 0 };
	struct msga_ctx *ctx[2];
	struct hb_rec r = { 0 };
	struct msga_sub_stats st;
	struct msga_pub *pub;
	uint32_t a;

	if (dp_is_iwarp())
		return;
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = hb_pub(ctx[0], G_LATE, 20, &pe);
	cr_assert_eq(msga_pub_topic(pub, "hb.a", &a), 0);
	cr_assert(dp_poll_until(ctx, 2, &pe.connected, 1, 15000));
	for (uint64_t s = 1; s <= 10; s++)
		dp_send(pub, a, s, 64, ctx, 2);
	poll_for(ctx, 2, 100); /* all ten out before anyone listens */
	hb_sub(ctx[1], &r);
	cr_assert_geq(msga_sub_connect(r.sub, G_LATE, NULL), 0);
	cr_assert(dp_poll_until(ctx, 2, &r.rec.connected, 1, 15000));
	wait_heartbeats(ctx, 2, r.sub, 1);
	cr_assert_eq(msga_sub_stream_stats(r.sub, 0, &ss), 0);
	cr_assert_eq(ss.first_seq, 11, "joined after 10, at %llu",
		     (unsigned long long)ss.first_seq);
	cr_assert_eq(ss.msgs, 0);
	r.rec.strict = 0;
	dp_send(pub, a, 11, 64, ctx, 2);
	dp_send(pub, a, 12, 64, ctx, 2);
	cr_assert(dp_poll_until64(ctx, 2, &r.rec.total, 2, 10000));
	cr_assert_eq(r.rec.bad, 0, "%s", r.rec.first_bad);
	st = stats_of(r.sub);
	cr_assert_eq(st.gaps + st.missing + st.dups, 0);
	cr_assert_eq(r.gaps, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * Destroying a publisher ends each stream that sent anything: one
 * DISCONNECTED per stream, status 0, with its last sequence number; the
 * membership goes on, and nothing is reported silent afterwards.
 */
static void destroy_ends_streams(const char *uri)
{
	struct msga_sub_stats st;
	struct rig g = { 0 };
	uint32_t never;

	rig_up(&g, uri, 0, 1000);
	cr_assert_eq(msga_pub_topic(g.pub, "hb.never", &never), 0);
	send_n(&g, g.a, 1, 7);
	send_n(&g, g.b, 1, 3);
	msga_pub_destroy(g.pub);
	g.pub = NULL;
	for (uint64_t end = dp_now_ms() + 10000;
	     g.r.ended[0] + g.r.ended[1] < 2;) {
		cr_assert_lt(dp_now_ms(), end, "ended a %d, b %d",
			     g.r.ended[0], g.r.ended[1]);
		msga_ctx_poll(g.ctx[1], 64);
	}
	cr_assert_eq(g.r.ended[0], 1);
	cr_assert_eq(g.r.ended[1], 1);
	cr_assert_eq(g.r.end_seq[0], 7);
	cr_assert_eq(g.r.end_seq[1], 3);
	/* past the subscriber's 1 s peer timeout: no stream is "silent" */
	poll_for(g.ctx, 2, 2000);
	cr_assert_eq(g.r.silent[0] + g.r.silent[1], 0);
	cr_assert_eq(g.r.other_stream_events, 0, "hb.never sent nothing");
	cr_assert_eq(g.r.gaps, 0);
	st = stats_of(g.r.sub);
	cr_assert_eq(st.ended, 2);
	cr_assert_eq(st.silent, 0);
	cr_assert_eq(st.msgs, 10);
	rig_down(&g);
}

Test(heartbeat, destroying_an_mcast_publisher_ends_its_streams, .timeout = 120)
{
	if (dp_is_iwarp())
		return;
	destroy_ends_streams(G_END);
}

Test(heartbeat, destroying_a_ud_publisher_ends_its_streams, .timeout = 120)
{
	if (dp_is_iwarp())
		return;
	destroy_ends_streams(dp_ud_uri(0));
}

/*
 * The publisher of the kill test, in a child process: open, join, say
 * ready, then send 20 messages on each of two topics when told, and idle
 * (heartbeating) until killed. It never returns into Criterion.
 */
static void killed_publisher(int go_fd, int ready_fd)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct dp_rec pe = { 0 };
	struct msga_pub *pub = hb_pub(ctx, G_KILL, 50, &pe);
	uint32_t t[2];
	char c = 'r';

	if (msga_pub_topic(pub, "hb.a", &t[0]) ||
	    msga_pub_topic(pub, "hb.b", &t[1]) ||
	    !dp_poll_until(&ctx, 1, &pe.connected, 1, 15000) ||
	    write(ready_fd, &c, 1) != 1 || read(go_fd, &c, 1) != 1)
		_exit(1);
	for (uint64_t s = 1; s <= 20; s++)
		for (int i = 0; i < 2; i++) {
			dp_send(pub, t[i], s, 64, &ctx, 1);
			poll_for(&ctx, 1, 5);
		}
	for (;;)
		msga_ctx_poll(ctx, 64);
}

/*
 * A publisher killed outright sends no END: each of its streams is
 * reported gone with -ETIMEDOUT once silent for the subscriber's peer
 * timeout (1 s here; its heartbeats at 50 ms and a 1 s cap are well
 * inside), once per stream, naming the last sequence number; everything
 * sent before the kill was delivered, and the membership goes on.
 */
Test(heartbeat, a_killed_publisher_is_reported_gone_per_stream,
     .timeout = 120)
{
	struct msga_ctx *ctx[1];
	struct hb_rec r = { 0 };
	struct msga_sub_stats st;
	int go[2], ready[2], status;
	uint64_t killed_ms, gone_ms;
	pid_t pid;
	char c = 'g';

	if (dp_is_iwarp())
		return;
	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(ready), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0)
		killed_publisher(go[0], ready[1]);
	cr_assert_eq(read(ready[0], &c, 1), 1, "the publisher did not start");
	ctx[0] = devtest_open_ctx_timeout(1000);
	hb_sub(ctx[0], &r);
	cr_assert_geq(msga_sub_connect(r.sub, G_KILL, NULL), 0);
	cr_assert(dp_poll_until(ctx, 1, &r.rec.connected, 1, 15000));
	cr_assert_eq(write(go[1], &c, 1), 1);
	cr_assert(dp_poll_until64(ctx, 1, &r.rec.total, 40, 20000),
		  "%llu of 40 messages", (unsigned long long)r.rec.total);
	wait_heartbeats(ctx, 1, r.sub, 2);
	cr_assert_eq(kill(pid, SIGKILL), 0);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	killed_ms = dp_now_ms();
	for (uint64_t end = killed_ms + 20000;
	     r.silent[0] + r.silent[1] < 2;) {
		cr_assert_lt(dp_now_ms(), end, "silent a %d, b %d",
			     r.silent[0], r.silent[1]);
		msga_ctx_poll(ctx[0], 64);
	}
	gone_ms = dp_now_ms() - killed_ms;
	cr_log_info("both streams reported gone %llu ms after the kill",
		    (unsigned long long)gone_ms);
	/* a second report would need the stream heard again */
	poll_for(ctx, 1, 500);
	cr_assert_eq(r.silent[0], 1);
	cr_assert_eq(r.silent[1], 1);
	cr_assert_eq(r.end_seq[0], 20);
	cr_assert_eq(r.end_seq[1], 20);
	cr_assert_eq(r.ended[0] + r.ended[1] + r.other_stream_events, 0);
	cr_assert_eq(r.rec.disconnected, 0, "the membership goes on");
	cr_assert_eq(r.rec.bad, 0, "%s", r.rec.first_bad);
	st = stats_of(r.sub);
	cr_assert_eq(st.silent, 2);
	cr_assert_eq(st.msgs, 40);
	cr_assert_eq(st.gaps + st.missing, 0);
	msga_ctx_close(ctx[0]);
}
