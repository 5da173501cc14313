/* SPDX-License-Identifier: MIT */
/*
 * A subscriber that stops polling (issue 35, repair at scale) on the
 * device under test. A MSGA_PUB_RELIABLE publisher sends a 3-topic feed
 * as fast as it is let; one context holds the publisher, another the
 * subscriber, and the subscriber's context is not polled for ST_STALL_MS
 * of wall time while the feed goes on (a stall mid-feed ends sooner if
 * the feed would run out in it: ST_AFTER): its receive ring keeps a few
 * hundred datagrams and the device drops the rest, thousands of them.
 * With the default retention every one of them is still kept, so the
 * subscriber must deliver every number of every topic once and in order,
 * with no MSGA_EVENT_LOSS, and mostly by RDMA READ (or, with
 * MSGA_SUB_REPAIR_BY_NAK, by NAK alone). With the smallest retention it
 * must report exactly what is no longer kept: each number delivered once
 * or inside one MSGA_EVENT_LOSS, and a LOSS only for numbers its
 * publisher no longer keeps when it is reported. With
 * MSGA_SUB_RECOVERY_BOUND, the age bound gives up what is still kept.
 * On iWARP, which has no multicast, the documented refusal is checked
 * instead (dp_iwarp_refuses).
 *
 * Single-threaded, like dev_mcast_read.c: the test polls the publisher's
 * context always and the subscriber's except during the stall.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "mcast.h"
#include "pubsub.h"
#include "retain.h"

#define G_MID "mcast://239.255.15.1"
#define G_END "mcast://239.255.15.2"
#define G_NAK "mcast://239.255.15.3"
#define G_SMALL "mcast://239.255.15.4"
#define G_BOUND "mcast://239.255.15.5"

#define ST_TOPICS 3
/*
 * The feed: 20 000 messages round-robin over the topics, 64 bytes each
 * (the size of a quote, as the other multicast tests). Kept all together
 * they take 1.7 MiB (88-byte records) of the default 8 MiB retention, so
 * nothing of it can leave the buffer: any loss in the default cases is
 * the library's. Under TCG, in the ASan build, the publisher took about
 * 4 500 a second (2026-11-27), so a 2 s stall covers some 9 000, many
 * times the subscriber's receive ring (MSGA_SUB_RX_DEPTH_DEFAULT).
 */
#define ST_MSGS 20000u
#define ST_PER_TOPIC ((ST_MSGS + ST_TOPICS - 1) / ST_TOPICS)
#define ST_LEN 64u
/* less lost than this and the stall tested nothing */
#define ST_MIN_LOST (4u * MSGA_SUB_RX_DEPTH_DEFAULT)
/*
 * The stall of the report: a subscriber not polled for 2 s. A
 * build too slow to send ST_STALL_MIN_SENT in that time (valgrind) stalls
 * longer, up to ST_STALL_MAX_MS: under the peer timeout, so that the
 * stall stays a stall and not a subscriber dropped as gone. All three
 * are scaled like the peer timeout (devtest_scale_ms).
 */
#define ST_STALL_MS 2000u
#define ST_STALL_MAX_MS 4000u
#define ST_STALL_MIN_SENT (ST_MIN_LOST + MSGA_SUB_RX_DEPTH_DEFAULT)
/* the mid-feed stall starts after a third of the feed */
#define ST_MID_AT (ST_MSGS / 3)
/* the end stall starts this many messages before the feed ends */
#define ST_TAIL 3000u
_Static_assert(ST_TAIL >= ST_STALL_MIN_SENT, "the tail can lose enough");
/*
 * A mid-feed stall ends early, once it has lost enough, rather than eat
 * the last ST_AFTER messages of the feed: the retention cases check what
 * is delivered after a stall. Since a multicast publisher sends a small
 * message inline from the caller's buffer (2026-12-07), the ASan build on
 * an idle host sent the whole rest of the feed, 13 333 messages, within
 * the 2 s stall, and nothing was left to come after it.
 */
#define ST_AFTER 2000u
_Static_assert(ST_MID_AT + ST_STALL_MIN_SENT + ST_AFTER <= ST_MSGS,
	       "a mid-feed stall can lose enough and leave ST_AFTER");
/*
 * Outside the stall the subscriber's context is polled after every this
 * many sends, as a subscriber in its own thread would keep up: so that
 * the only loss is the stall's.
 */
#define ST_POLL_EVERY 16u
/* the whole repair, from resume to the last number, at most */
#define ST_REPAIR_MS 30000u

/* A subscriber's view of the feed: per topic, each number's fate. */
struct sv {
	struct dp_rec rec;          /* strict: from 1, once, in order */
	int use_rec;                /* 0: losses expected, rec unusable */
	/* [seq]: delivered + inside a LOSS (here, not allocated: nothing
	 * leaks when an assertion ends the test) */
	uint8_t mark[ST_TOPICS][ST_PER_TOPIC + 1];
	uint64_t next[ST_TOPICS];   /* the next number due, from 1 */
	uint64_t delivered[ST_TOPICS], lost[ST_TOPICS];
	uint64_t loss_events[ST_TOPICS];
	uint64_t after_stall[ST_TOPICS]; /* delivered, sent after the stall */
	uint64_t stall_end[ST_TOPICS];   /* last seq sent in the stall */
	uint64_t bad;
	char first_bad[200];
	int gaps, losses, dups, reorders, connected, failed, status;
	struct msga_sub *sub;
	/* the publisher, to see what it still keeps when a LOSS comes */
	const struct msga_pub *pub;
	const uint32_t *pub_topic;  /* its ids for st.t0..2 */
	int kept_loss_ok;           /* the age bound: a kept loss is fine */
	uint64_t kept_losses;       /* numbers given up while still kept */
};

static void sv_bad(struct sv *v, const char *what, int t, uint64_t seq)
{
	if (!v->bad++)
		snprintf(v->first_bad, sizeof(v->first_bad),
			 "topic %d seq %llu: %s", t, (unsigned long long)seq,
			 what);
}

static int topic_index(const char *name)
{
	if (!name || strncmp(name, "st.t", 4) || name[4] < '0' ||
	    name[4] >= '0' + ST_TOPICS || name[5])
		return -1;
	return name[4] - '0';
}

static void sv_on_msg(const struct msga_msg *m, void *user)
{
	struct sv *v = user;
	int t = topic_index(m->topic);

	if (v->use_rec)
		dp_on_msg(m, &v->rec);
	if (t < 0 || !m->seq || m->seq > ST_PER_TOPIC) {
		sv_bad(v, "not sent", t, m->seq);
		return;
	}
	if (m->seq != v->next[t])
		sv_bad(v, "out of order", t, m->seq);
	if (dp_check(m->data, m->len, m->topic_id, m->seq))
		sv_bad(v, "bad payload", t, m->seq);
	if (v->mark[t][m->seq]++)
		sv_bad(v, "delivered twice, or also lost", t, m->seq);
	v->next[t] = m->seq + 1;
	v->delivered[t]++;
	if (v->stall_end[t] && m->seq > v->stall_end[t])
		v->after_stall[t]++;
}

/*
 * Whether number seq of topic t has left the publisher's retention (the
 * test polls both ends in one thread: what the publisher keeps now, it
 * kept when the subscriber last asked).
 */
static int left_retention(const struct sv *v, int t, uint64_t seq)
{
	uint64_t oldest, newest;

	if (msga__retain_range(&v->pub->ud.retain, v->pub_topic[t], &oldest,
			       &newest) <= 0)
		return 1; /* nothing of the topic kept */
	return seq < oldest;
}

static void sv_on_loss(struct sv *v, const struct msga_event *ev)
{
	int t = topic_index(ev->topic);

	v->losses++;
	if (t < 0 || !ev->count || ev->seq + ev->count - 1 > ST_PER_TOPIC) {
		sv_bad(v, "loss of numbers never sent", t, ev->seq);
		return;
	}
	if (ev->seq != v->next[t])
		sv_bad(v, "loss not where the stream stands", t, ev->seq);
	if (!left_retention(v, t, ev->seq + ev->count - 1)) {
		v->kept_losses += ev->count;
		if (!v->kept_loss_ok)
			sv_bad(v, "given up while its publisher still keeps it",
			       t, ev->seq + ev->count - 1);
	}
	for (uint64_t s = ev->seq; s < ev->seq + ev->count; s++)
		if (v->mark[t][s]++)
			sv_bad(v, "lost and delivered, or lost twice", t, s);
	v->next[t] = ev->seq + ev->count;
	v->lost[t] += ev->count;
	v->loss_events[t]++;
}

static void sv_on_event(const struct msga_event *ev, void *user)
{
	struct sv *v = user;

	switch (ev->type) {
	case MSGA_EVENT_LOSS:
		sv_on_loss(v, ev);
		break;
	case MSGA_EVENT_GAP:
		v->gaps++;
		break;
	case MSGA_EVENT_DUPLICATE:
		v->dups++;
		break;
	case MSGA_EVENT_REORDER:
		v->reorders++;
		break;
	case MSGA_EVENT_CONNECTED:
		v->connected++;
		break;
	case MSGA_EVENT_CONNECT_FAILED:
		v->failed++;
		v->status = ev->status;
		break;
	default:
		break;
	}
}

/* A rig: the publisher's context [0] and the subscriber's [1]. */
struct rig {
	struct msga_ctx *ctx[2];
	struct dp_rec pe;
	struct msga_pub *pub;
	uint32_t t[ST_TOPICS];
	uint64_t sent;              /* messages of the feed sent */
	uint64_t stall_sent;        /* of them, while the subscriber starved */
	uint64_t stall_ms;          /* the stall's wall time, measured */
	uint64_t keep_after;        /* a mid-feed stall's ST_AFTER, else 0 */
	struct sv v;
};

/* The subscriber's recovery_ms (0: the default). */
static uint32_t st_recovery_ms;

static void rig_up(struct rig *g, const char *uri, uint64_t retain_bytes,
		   uint32_t sub_flags)
{
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri,
				    .flags = MSGA_PUB_RELIABLE,
				    .on_event = dp_on_event, .user = &g->pe,
				    .retransmit_bytes = retain_bytes };
	struct msga_sub_attr sa = { .size = sizeof(sa), .flags = sub_flags,
				    .pattern = "st.*", .on_msg = sv_on_msg,
				    .on_event = sv_on_event, .user = &g->v,
				    .recovery_ms = st_recovery_ms };
	char name[16];
	int ret;

	_Static_assert(offsetof(struct sv, rec) == 0, "rec first");
	memset(g, 0, sizeof(*g));
	g->v.rec.strict = 1;
	g->v.use_rec = 1;
	for (int i = 0; i < ST_TOPICS; i++)
		g->v.next[i] = 1;
	g->ctx[0] = devtest_open_ctx();
	g->ctx[1] = devtest_open_ctx();
	ret = msga_pub_create(g->ctx[0], &pa, &g->pub);
	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(g->ctx[0]));
	g->v.pub = g->pub;
	g->v.pub_topic = g->t;
	for (int i = 0; i < ST_TOPICS; i++) {
		snprintf(name, sizeof(name), "st.t%d", i);
		cr_assert_eq(msga_pub_topic(g->pub, name, &g->t[i]), 0);
	}
	cr_assert(dp_poll_until(g->ctx, 2, &g->pe.connected, 1, 15000),
		  "the publisher did not join its group");
	ret = msga_sub_create(g->ctx[1], &sa, &g->v.sub);
	cr_assert_eq(ret, 0, "msga_sub_create = %d", ret);
	cr_assert_geq(msga_sub_connect(g->v.sub, uri, NULL), 0);
	cr_assert(dp_poll_until(g->ctx, 2, &g->v.connected, 1, 15000),
		  "not joined (failed %d, status %d)", g->v.failed,
		  g->v.status);
}

static void rig_down(struct rig *g)
{
	msga_ctx_close(g->ctx[0]);
	msga_ctx_close(g->ctx[1]);
}

static void poll_ctx(struct msga_ctx *ctx)
{
	int ret = msga_ctx_poll(ctx, 64);

	cr_assert_geq(ret, 0, "msga_ctx_poll = %d", ret);
}

/*
 * Send the feed's next message (topic sent % 3, its next number) as soon
 * as the publisher takes it: back-pressured (-EAGAIN), poll the
 * publisher's context (and the subscriber's unless it starves) and retry.
 */
static void send_next(struct rig *g, int starving)
{
	uint32_t i = (uint32_t)(g->sent % ST_TOPICS);
	uint64_t seq = g->sent / ST_TOPICS + 1, end = 0;
	struct msga_claim c = { .size = sizeof(c) };
	int ret;

	while ((ret = msga_pub_claim(g->pub, g->t[i], ST_LEN, &c)) == -EAGAIN) {
		if (!end)
			end = dp_now_ms() + 20000;
		cr_assert_lt(dp_now_ms(), end, "back-pressured for 20 s at "
			     "message %llu", (unsigned long long)g->sent);
		poll_ctx(g->ctx[0]);
		if (!starving)
			poll_ctx(g->ctx[1]);
	}
	cr_assert_eq(ret, 0, "msga_pub_claim = %d", ret);
	dp_fill(c.data, ST_LEN, g->t[i], seq);
	ret = msga_pub_commit(g->pub, &c);
	cr_assert_geq(ret, 0, "msga_pub_commit = %d", ret);
	g->sent++;
	if (g->sent % ST_POLL_EVERY == 0) {
		poll_ctx(g->ctx[0]);
		if (!starving)
			poll_ctx(g->ctx[1]);
	}
}

/* The last number of topic i among the first n messages of the feed. */
static uint64_t last_seq_of(uint64_t n, int i)
{
	return n > (uint64_t)i ? (n - 1 - (uint64_t)i) / ST_TOPICS + 1 : 0;
}

/*
 * The stall goes on: ST_STALL_MS, and enough sent in it, or its cap; a
 * mid-feed stall that has sent enough ends where only keep_after is left.
 */
static int stalling(const struct rig *g, uint64_t start)
{
	uint64_t el = dp_now_ms() - start;

	if (el >= devtest_scale_ms(ST_STALL_MAX_MS))
		return 0;
	if (g->keep_after && g->stall_sent >= ST_STALL_MIN_SENT &&
	    g->sent + g->keep_after >= ST_MSGS)
		return 0;
	return el < devtest_scale_ms(ST_STALL_MS) ||
	       (g->stall_sent < ST_STALL_MIN_SENT && g->sent < ST_MSGS);
}

/*
 * The feed, all ST_MSGS of it, the subscriber starving from message
 * stall_at for ST_STALL_MS of wall time (stalling()): the feed goes on
 * meanwhile, and when it is all sent the publisher idles (heartbeats)
 * until the stall ends.
 */
static void run_feed(struct rig *g, uint64_t stall_at)
{
	uint64_t start;

	g->keep_after = stall_at + ST_TAIL < ST_MSGS ? ST_AFTER : 0;
	while (g->sent < stall_at)
		send_next(g, 0);
	start = dp_now_ms();
	while (stalling(g, start)) {
		if (g->sent < ST_MSGS) {
			send_next(g, 1);
			g->stall_sent++;
		} else {
			poll_ctx(g->ctx[0]);
		}
	}
	g->stall_ms = dp_now_ms() - start;
	for (int i = 0; i < ST_TOPICS; i++)
		g->v.stall_end[i] = last_seq_of(g->sent, i);
	while (g->sent < ST_MSGS)
		send_next(g, 0);
}

/* Every number of every topic delivered or lost, or fail saying where. */
static void wait_accounted(struct rig *g)
{
	uint64_t end = dp_now_ms() + devtest_scale_ms(ST_REPAIR_MS), n;
	struct msga_sub_stats st;

	for (;;) {
		n = 0;
		for (int i = 0; i < ST_TOPICS; i++)
			n += g->v.delivered[i] + g->v.lost[i];
		if (n >= ST_MSGS || dp_now_ms() > end)
			break;
		poll_ctx(g->ctx[0]);
		poll_ctx(g->ctx[1]);
	}
	if (n >= ST_MSGS)
		return;
	st = dp_sub_stats(g->v.sub);
	cr_assert_fail("after %u ms, %llu of %u messages delivered or lost: "
		       "per topic %llu/%llu/%llu delivered, %llu/%llu/%llu "
		       "lost; recovered %llu, READs %llu, NAKs %llu, "
		       "fallbacks %llu, unrecoverable %llu", ST_REPAIR_MS,
		       (unsigned long long)n, ST_MSGS,
		       (unsigned long long)g->v.delivered[0],
		       (unsigned long long)g->v.delivered[1],
		       (unsigned long long)g->v.delivered[2],
		       (unsigned long long)g->v.lost[0],
		       (unsigned long long)g->v.lost[1],
		       (unsigned long long)g->v.lost[2],
		       (unsigned long long)st.recovered,
		       (unsigned long long)st.reads,
		       (unsigned long long)st.naks,
		       (unsigned long long)st.read_fallbacks,
		       (unsigned long long)st.unrecoverable);
}

/* What the run did, in the test's output (the figures). */
static struct msga_sub_stats report(struct rig *g, const char *name)
{
	struct msga_sub_stats st = dp_sub_stats(g->v.sub);
	uint64_t lost = g->v.lost[0] + g->v.lost[1] + g->v.lost[2];

	cr_log_info("%s: stall %llu ms over %llu of %llu messages; "
		    "delivered %llu, lost %llu in %d LOSS events; recovered "
		    "%llu by %llu READs (%llu fallbacks) and %llu NAKs; the "
		    "publisher resent %llu messages for %llu NAKs taken", name,
		    (unsigned long long)g->stall_ms,
		    (unsigned long long)g->stall_sent,
		    (unsigned long long)g->sent,
		    (unsigned long long)(g->v.delivered[0] + g->v.delivered[1] +
					 g->v.delivered[2]),
		    (unsigned long long)lost, g->v.losses,
		    (unsigned long long)st.recovered,
		    (unsigned long long)st.reads,
		    (unsigned long long)st.read_fallbacks,
		    (unsigned long long)st.naks,
		    (unsigned long long)g->pub->ud.retx_msgs,
		    (unsigned long long)g->pub->ud.naks_taken);
	fprintf(stderr, "dev_mcast_stall %s: stall_ms=%llu stall_sent=%llu "
		"lost=%llu loss_events=%d recovered=%llu reads=%llu "
		"fallbacks=%llu naks=%llu retx_msgs=%llu\n", name,
		(unsigned long long)g->stall_ms,
		(unsigned long long)g->stall_sent, (unsigned long long)lost,
		g->v.losses, (unsigned long long)st.recovered,
		(unsigned long long)st.reads,
		(unsigned long long)st.read_fallbacks,
		(unsigned long long)st.naks,
		(unsigned long long)g->pub->ud.retx_msgs);
	return st;
}

/*
 * One case: the rig on uri (retention retain_bytes, 0: the default; the
 * subscriber's sub_flags), the feed with its stall from message stall_at,
 * and the wait until every number is delivered or lost. Returns the
 * subscriber's counters, reported.
 */
static struct msga_sub_stats run_case(struct rig *g, const char *uri,
				      uint64_t retain_bytes,
				      uint32_t sub_flags, uint64_t stall_at,
				      const char *name)
{
	rig_up(g, uri, retain_bytes, sub_flags);
	/* a retention that loses skips numbers: then sv alone checks order */
	g->v.use_rec = !retain_bytes;
	run_feed(g, stall_at);
	wait_accounted(g);
	return report(g, name);
}

/*
 * Each number of each topic delivered or inside a LOSS exactly once, the
 * counts adding up to what was sent; returns the numbers lost in all.
 */
static uint64_t assert_each_once(const struct rig *g)
{
	uint64_t lost = 0;

	for (int i = 0; i < ST_TOPICS; i++) {
		uint64_t n = last_seq_of(ST_MSGS, i);

		cr_assert_eq(g->v.delivered[i] + g->v.lost[i], n,
			     "topic %d: %llu delivered + %llu lost, %llu sent",
			     i, (unsigned long long)g->v.delivered[i],
			     (unsigned long long)g->v.lost[i],
			     (unsigned long long)n);
		for (uint64_t s = 1; s <= n; s++)
			cr_assert_eq(g->v.mark[i][s], 1, "topic %d seq %llu: "
				     "%u times delivered or lost", i,
				     (unsigned long long)s, g->v.mark[i][s]);
		lost += g->v.lost[i];
	}
	return lost;
}

/* Every number of every topic delivered exactly once, in order. */
static void assert_all_delivered(struct rig *g)
{
	cr_assert_eq(g->v.losses, 0, "%d MSGA_EVENT_LOSS: %llu/%llu/%llu "
		     "numbers given up per topic", g->v.losses,
		     (unsigned long long)g->v.lost[0],
		     (unsigned long long)g->v.lost[1],
		     (unsigned long long)g->v.lost[2]);
	cr_assert_eq(g->v.bad, 0, "%s", g->v.first_bad);
	cr_assert_eq(g->v.rec.bad, 0, "%s", g->v.rec.first_bad);
	cr_assert_eq(g->v.rec.total, ST_MSGS);
	for (int i = 0; i < ST_TOPICS; i++)
		cr_assert_eq(g->v.delivered[i], last_seq_of(ST_MSGS, i),
			     "topic %d", i);
	cr_assert_eq(g->v.gaps + g->v.dups + g->v.reorders, 0,
		     "gap %d, duplicate %d, reorder %d events", g->v.gaps,
		     g->v.dups, g->v.reorders);
}

/*
 * The stall lost thousands, and they came back. Each resend the
 * publisher made for a NAK is one message at most that did not come by
 * READ (retx_msgs counts every resend, repeats too), so recovered -
 * retx_msgs is a lower bound of what READs brought: at least 90 % of it.
 */
static void assert_repaired_by_read(struct rig *g,
				    const struct msga_sub_stats *st)
{
	uint64_t by_read = st->recovered > g->pub->ud.retx_msgs ?
			   st->recovered - g->pub->ud.retx_msgs : 0;

	cr_assert_geq(g->stall_sent, ST_MIN_LOST, "the stall covered only "
		      "%llu messages: nothing tested",
		      (unsigned long long)g->stall_sent);
	cr_assert_geq(st->recovered * 2, g->stall_sent, "recovered %llu of "
		      "the %llu sent in the stall: the ring kept the rest?",
		      (unsigned long long)st->recovered,
		      (unsigned long long)g->stall_sent);
	cr_assert_gt(st->reads, 0, "no READ: %llu recovered by %llu NAKs",
		     (unsigned long long)st->recovered,
		     (unsigned long long)st->naks);
	cr_log_info("at least %llu of %llu recovered by READ (%.1f %%)",
		    (unsigned long long)by_read,
		    (unsigned long long)st->recovered,
		    100.0 * (double)by_read / (double)st->recovered);
	cr_assert_gt(by_read * 10, st->recovered * 9, "only %llu of %llu "
		     "recovered by READ at least: the publisher resent %llu "
		     "for %llu NAKs", (unsigned long long)by_read,
		     (unsigned long long)st->recovered,
		     (unsigned long long)g->pub->ud.retx_msgs,
		     (unsigned long long)st->naks);
	cr_assert_lt(st->naks * 64, st->recovered, "%llu NAKs for %llu "
		     "recovered", (unsigned long long)st->naks,
		     (unsigned long long)st->recovered);
}

/*
 * a. The case: a 2 s stall a third of the way into the feed.
 * Everything comes, once, in order, mostly by READ.
 */
Test(stall, a_2s_stall_mid_feed_is_repaired_by_read, .timeout = 60)
{
	struct msga_sub_stats st;
	struct rig g;

	if (dp_iwarp_refuses(G_MID))
		return;
	st = run_case(&g, G_MID, 0, 0, ST_MID_AT, "mid-feed stall, READ");
	assert_all_delivered(&g);
	assert_repaired_by_read(&g, &st);
	cr_assert_eq(st.unrecoverable, 0);
	rig_down(&g);
}

/*
 * b. The stall starts during the feed's last ST_TAIL messages, and the
 * publisher then idles: the subscriber learns of the lost tail from the
 * streams' heartbeats, and repairs it all, mostly by READ.
 */
Test(stall, a_2s_stall_at_the_end_is_repaired_by_read, .timeout = 60)
{
	struct msga_sub_stats st;
	struct rig g;

	if (dp_iwarp_refuses(G_END))
		return;
	st = run_case(&g, G_END, 0, 0, ST_MSGS - ST_TAIL, "end stall, READ");
	cr_assert_eq(g.stall_sent, ST_TAIL, "the feed outlasted the stall: "
		     "no idle tail");
	assert_all_delivered(&g);
	/* the tail is all the stall can lose */
	cr_assert_geq(g.stall_sent, ST_MIN_LOST);
	assert_repaired_by_read(&g, &st);
	cr_assert_eq(st.unrecoverable, 0);
	rig_down(&g);
}

/*
 * c. (a) with MSGA_SUB_REPAIR_BY_NAK: all of it by NAK, no READ. (On the
 * code of 2026-11-27, given a recovery_ms long enough, the NAKs repaired
 * some 3 500 in 13 s, with 26 000 resends: hence a longer limit.)
 */
Test(stall, a_2s_stall_mid_feed_is_repaired_by_nak_only, .timeout = 90)
{
	struct msga_sub_stats st;
	struct rig g;

	if (dp_iwarp_refuses(G_NAK))
		return;
	st = run_case(&g, G_NAK, 0, MSGA_SUB_REPAIR_BY_NAK, ST_MID_AT,
		      "mid-feed stall, NAK only");
	assert_all_delivered(&g);
	cr_assert_geq(g.stall_sent, ST_MIN_LOST, "nothing tested");
	cr_assert_geq(st.recovered * 2, g.stall_sent);
	cr_assert_gt(st.naks, 0);
	cr_assert_eq(st.reads, 0, "a NAK-only subscriber read");
	cr_assert_geq(g.pub->ud.retx_msgs, st.recovered,
		      "every repair was a resend");
	cr_assert_eq(st.unrecoverable, 0);
	rig_down(&g);
}

/*
 * d. The smallest retention (MSGA_RETRANSMIT_MIN_BYTES: some 700 of these
 * messages, all topics together) against the same mid-feed stall: what
 * left the buffer is reported, as MSGA_EVENT_LOSS, and nothing else is
 * missing: per topic, each number delivered once or inside one LOSS, in
 * order, every topic losing some and delivering the feed after the stall;
 * and each LOSS names only numbers the publisher no longer kept when it
 * came (sv_on_loss).
 */
Test(stall, a_retention_too_small_reports_exactly_what_left_it,
     .timeout = 60)
{
	struct msga_sub_stats st;
	uint64_t lost;
	struct rig g;

	if (dp_iwarp_refuses(G_SMALL))
		return;
	st = run_case(&g, G_SMALL, MSGA_RETRANSMIT_MIN_BYTES, 0, ST_MID_AT,
		      "mid-feed stall, 64 KiB retention");
	cr_assert_geq(g.stall_sent, ST_MIN_LOST, "nothing tested");
	cr_assert_eq(g.v.bad, 0, "%s", g.v.first_bad);
	lost = assert_each_once(&g);
	for (int i = 0; i < ST_TOPICS; i++) {
		cr_assert_gt(g.v.loss_events[i], 0, "topic %d lost nothing",
			     i);
		cr_assert_gt(g.v.after_stall[i], 0, "topic %d delivered "
			     "nothing after the stall", i);
	}
	cr_assert_eq(st.unrecoverable, lost, "the counter says the events");
	cr_assert_eq(g.v.gaps + g.v.dups + g.v.reorders, 0);
	rig_down(&g);
}

/*
 * MSGA_SUB_RECOVERY_BOUND (0.9) keeps the rule before 0.9: a gap is given
 * up once it has waited recovery_ms, however its repair is going. NAK
 * repair is paced (at most 256 numbers per 20 ms), so the thousands of
 * numbers a 2 s stall loses take far longer than a 100 ms bound: gaps
 * the publisher still keeps are given up, each number still delivered
 * or lost exactly once and in order, where without the bound (the NAK
 * case above) everything is repaired.
 */
Test(stall, the_age_bound_gives_up_what_is_still_kept, .timeout = 60)
{
	struct msga_sub_stats st;
	uint64_t lost;
	struct rig g;

	if (dp_iwarp_refuses(G_BOUND))
		return;
	st_recovery_ms = 100;
	rig_up(&g, G_BOUND, 0, MSGA_SUB_REPAIR_BY_NAK | MSGA_SUB_RECOVERY_BOUND);
	st_recovery_ms = 0;
	g.v.use_rec = 0; /* losses are expected */
	g.v.kept_loss_ok = 1;
	run_feed(&g, ST_MID_AT);
	wait_accounted(&g);
	st = report(&g, "mid-feed stall, NAK only, 100 ms bound");
	cr_assert_geq(g.stall_sent, ST_MIN_LOST, "nothing tested");
	cr_assert_eq(g.v.bad, 0, "%s", g.v.first_bad);
	lost = assert_each_once(&g);
	cr_assert_gt(g.v.kept_losses, 0, "the bound gave up nothing the "
		     "publisher still kept: nothing tested");
	cr_assert_eq(st.unrecoverable, lost, "the counter says the events");
	cr_assert_eq(st.reads, 0);
	rig_down(&g);
}
