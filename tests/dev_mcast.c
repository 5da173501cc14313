/* SPDX-License-Identifier: MIT */
/*
 * Multicast publish/subscribe on the device under test. On RoCE every
 * scenario runs for real over UD and a multicast group: fan-out to several
 * subscribers, several groups at once, fragmentation, a gap provoked by
 * starving a subscriber's receive queue and reported exactly, late join,
 * self-delivery filtering, and a real rdma-core peer (mckey). On iWARP,
 * which has no UD and no multicast, each scenario checks the documented
 * refusal instead.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

extern char **environ;

/* Groups from the administratively scoped 239.255/16, one per test. */
#define G_FANOUT "mcast://239.255.10.1"
#define G_RANGE "mcast://239.255.128.0/20"
#define G_FRAG "mcast://239.255.10.3"
#define G_GAP "mcast://239.255.10.4"
#define G_LATE "mcast://239.255.10.5"
#define G_LOCAL "mcast://239.255.10.6"
#define G_MCKEY "239.255.10.7"
#define G_ERRORS "mcast://239.255.10.8"

/* Events a multicast subscriber saw. */
struct mc_events {
	struct dp_rec rec;          /* messages, order and payload checks */
	int gaps, dups, reorders;
	uint64_t gap_seq, gap_count;
	char gap_topic[MSGA_TOPIC_MAX + 1];
	uint64_t first_seq;         /* of the first message delivered */
	int held;                   /* hold a one-datagram message */
	struct msga_msg held_msg;
	int hold_ret;
	struct msga_sub *sub;
};

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

static void mc_on_msg(const struct msga_msg *m, void *user)
{
	struct mc_events *e = user;

	if (!e->first_seq)
		e->first_seq = m->seq;
	if (e->held == 1) {
		e->hold_ret = msga_msg_hold(m);
		if (!e->hold_ret) {
			e->held_msg = *m;
			e->held = 2;
		}
	}
	dp_on_msg(m, &e->rec);
}

static void mc_on_event(const struct msga_event *ev, void *user)
{
	struct mc_events *e = user;

	switch (ev->type) {
	case MSGA_EVENT_GAP:
		e->gaps++;
		e->gap_seq = ev->seq;
		e->gap_count = ev->count;
		snprintf(e->gap_topic, sizeof(e->gap_topic), "%s", ev->topic);
		break;
	case MSGA_EVENT_DUPLICATE:
		e->dups++;
		break;
	case MSGA_EVENT_REORDER:
		e->reorders++;
		break;
	default:
		dp_on_event(ev, &e->rec);
	}
}

static struct msga_sub *mc_sub(struct msga_ctx *ctx, const char *pattern,
			       uint32_t flags, struct mc_events *e)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = pattern, .on_msg = mc_on_msg,
				   .on_event = mc_on_event, .user = e };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	e->sub = sub;
	return sub;
}

/* Why a receiver is short: its counters and connection events. */
static const char *why(const struct mc_events *e)
{
	static char buf[256];
	struct msga_sub_stats st = { .size = sizeof(st) };

	msga_sub_stats(e->sub, &st);
	snprintf(buf, sizeof(buf), "msgs %llu foreign %llu filtered %llu "
		 "local %llu gaps %llu reasm_drops %llu; connected %d failed "
		 "%d disconnected %d status %d", (unsigned long long)st.msgs,
		 (unsigned long long)st.foreign,
		 (unsigned long long)st.filtered,
		 (unsigned long long)st.local, (unsigned long long)st.gaps,
		 (unsigned long long)st.reasm_drops, e->rec.connected, e->rec.failed, e->rec.disconnected,
		 e->rec.last_status);
	return buf;
}

/* Join and wait for the CONNECTED event. */
static int mc_join(struct msga_sub *sub, const char *uri, struct mc_events *e,
		   struct msga_ctx **ctxs, int nctx)
{
	int want = e->rec.connected + 1;
	int id = dp_connect_id(sub, uri);

	cr_assert_geq(id, 0, "msga_sub_connect(%s) = %d: %s", uri, id,
		      msga_ctx_last_error(ctxs[nctx - 1]));
	cr_assert(dp_poll_until(ctxs, nctx, &e->rec.connected, want, 10000),
		  "no join event for %s (failed %d, status %d)", uri,
		  e->rec.failed, e->rec.last_status);
	return id;
}

static void wait_pub_group(struct dp_rec *pe, int groups,
			   struct msga_ctx **ctxs, int nctx)
{
	cr_assert(dp_poll_until(ctxs, nctx, &pe->connected, groups, 10000),
		  "publisher joined %d of %d groups (failed %d, status %d)",
		  pe->connected, groups, pe->failed, pe->last_status);
}

/*
 * The usual bed: a publisher's context and the subscribers' context on the
 * device, a publisher on uri with one topic, its group joined.
 */
static struct msga_pub *mc_setup_hb(struct msga_ctx **ctx, const char *uri,
				    const char *topic_name, uint32_t *topic,
				    struct dp_rec *pe, uint32_t heartbeat_ms)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri,
				   .on_event = dp_on_event, .user = pe,
				   .heartbeat_ms = heartbeat_ms };
	struct msga_pub *pub = NULL;

	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	cr_assert_eq(msga_pub_create(ctx[0], &a, &pub), 0, "%s",
		     msga_ctx_last_error(ctx[0]));
	cr_assert_eq(msga_pub_topic(pub, topic_name, topic), 0);
	wait_pub_group(pe, 1, ctx, 2);
	return pub;
}

static struct msga_pub *mc_setup(struct msga_ctx **ctx, const char *uri,
				 const char *topic_name, uint32_t *topic,
				 struct dp_rec *pe)
{
	return mc_setup_hb(ctx, uri, topic_name, topic, pe, 0);
}

/*
 * A publisher whose heartbeats (a minute apart) stay out of a test that
 * counts datagrams or idle wake-ups exactly.
 */
static struct msga_pub *mc_setup_quiet(struct msga_ctx **ctx, const char *uri,
				       const char *topic_name, uint32_t *topic,
				       struct dp_rec *pe)
{
	return mc_setup_hb(ctx, uri, topic_name, topic, pe,
			   MSGA_HEARTBEAT_MAX_MS);
}

static void mc_teardown(struct msga_ctx **ctx)
{
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/* Send, then poll until every receiver counted it: no loss by overrun. */
static void send_paced(struct msga_pub *pub, uint32_t topic, uint64_t seq,
		       size_t len, struct msga_ctx **ctxs, int nctx,
		       struct mc_events **recs, int nrec)
{
	uint64_t want[8];

	cr_assert_leq(nrec, 8);
	for (int i = 0; i < nrec; i++)
		want[i] = recs[i]->rec.total + 1;
	dp_send(pub, topic, seq, len, ctxs, nctx);
	for (int i = 0; i < nrec; i++)
		cr_assert(dp_poll_until64(ctxs, nctx, &recs[i]->rec.total,
					  want[i], 10000),
			  "receiver %d did not get seq %llu: %s", i,
			  (unsigned long long)seq, why(recs[i]));
}

/* iWARP: the documented refusal, for publishers and subscribers. */
static void check_iwarp_refusal(const char *uri)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri };
	struct msga_pub *pub = (struct msga_pub *)1;
	struct mc_events e = { 0 };
	struct msga_sub *sub = mc_sub(ctx, "md.x", 0, &e);

	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EOPNOTSUPP);
	cr_assert_null(pub);
	cr_assert(strstr(msga_ctx_last_error(ctx), "iWARP"),
		  "error text: '%s'", msga_ctx_last_error(ctx));
	cr_assert_eq(msga_sub_connect(sub, uri, NULL), -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

Test(mcast, one_publisher_to_three_subscribers, .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct mc_events e[3] = { 0 };
	struct mc_events *recs[3] = { &e[0], &e[1], &e[2] };
	struct dp_rec pe = { 0 };
	struct msga_sub *sub[3];
	struct msga_pub *pub;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_FANOUT);
	pub = mc_setup(ctx, G_FANOUT, "md.IBM", &topic, &pe);
	for (int i = 0; i < 3; i++) {
		e[i].rec.strict = 1;
		sub[i] = mc_sub(ctx[1], "md.*", 0, &e[i]);
		mc_join(sub[i], G_FANOUT, &e[i], ctx, 2);
	}
	for (uint64_t s = 1; s <= 2000; s++)
		send_paced(pub, topic, s, 64 + s % 200, ctx, 2, recs, 3);
	for (int i = 0; i < 3; i++) {
		struct msga_sub_stats st = { .size = sizeof(st) };

		cr_assert_eq(e[i].rec.bad, 0, "sub %d: %s", i,
			     e[i].rec.first_bad);
		cr_assert_eq(e[i].rec.total, 2000);
		cr_assert_eq(e[i].gaps + e[i].dups + e[i].reorders, 0);
		cr_assert_eq(msga_sub_stats(sub[i], &st), 0);
		cr_assert_eq(st.msgs, 2000);
		cr_assert_eq(st.streams, 1);
		cr_assert_eq(st.gaps + st.missing + st.dups + st.foreign, 0);
		cr_assert_eq(st.bytes, e[i].rec.bytes);
	}
	mc_teardown(ctx);
}

Test(mcast, several_groups_each_subscriber_gets_its_topic, .timeout = 120)
{
	static const char *const names[3] = { "md.AAPL", "md.MSFT", "md.ORCL" };
	struct msga_ctx *ctx[2];
	struct mc_events e[3] = { 0 };
	struct dp_rec pe = { 0 };
	struct msga_sub *sub[3];
	struct msga_pub *pub;
	uint32_t topic[3];
	uint64_t end;

	if (is_iwarp())
		return check_iwarp_refusal(G_RANGE);
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = dp_pub_at(ctx[0], G_RANGE, 0, &pe);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(msga_pub_topic(pub, names[i], &topic[i]), 0);
	wait_pub_group(&pe, 3, ctx, 2);
	for (int i = 0; i < 3; i++) {
		e[i].rec.strict = 1;
		sub[i] = mc_sub(ctx[1], names[i], 0, &e[i]);
		mc_join(sub[i], G_RANGE, &e[i], ctx, 2);
	}
	for (uint64_t s = 1; s <= 300; s++) {
		for (int t = 0; t < 3; t++)
			dp_send(pub, topic[t], s, 100, ctx, 2);
		/* at most 3 in flight per subscriber: no overrun */
		end = dp_now_ms() + 10000;
		while (e[0].rec.total < s || e[1].rec.total < s ||
		       e[2].rec.total < s) {
			cr_assert_lt(dp_now_ms(), end, "seq %llu missing",
				     (unsigned long long)s);
			msga_ctx_poll(ctx[0], 64);
			msga_ctx_poll(ctx[1], 64);
		}
	}
	for (int i = 0; i < 3; i++) {
		struct msga_stream_stats ss = { .size = sizeof(ss) };

		cr_assert_eq(e[i].rec.bad, 0, "%s", e[i].rec.first_bad);
		cr_assert_eq(e[i].rec.total, 300, "sub %s got %llu", names[i],
			     (unsigned long long)e[i].rec.total);
		cr_assert_str_eq(e[i].rec.topic_name[e[i].rec.last_conn %
						     DP_CONNS][0], names[i]);
		cr_assert_eq(msga_sub_stream_stats(sub[i], 0, &ss), 0);
		cr_assert_str_eq(ss.topic, names[i]);
		cr_assert_eq(ss.msgs, 300);
		cr_assert_eq(ss.first_seq, 1);
		cr_assert_eq(ss.last_seq, 300);
		cr_assert_eq(msga_sub_stream_stats(sub[i], 1, &ss), -ENOENT,
			     "only its own topic reached it");
	}
	mc_teardown(ctx);
}

Test(mcast, large_messages_are_fragmented_and_reassembled, .timeout = 180)
{
	static const size_t sizes[] = { 900, 2000, 4072, 10000, 100000,
					1u << 20 };
	struct msga_ctx *ctx[2];
	struct mc_events e = { .rec.strict = 1 };
	struct mc_events *recs[1] = { &e };
	struct dp_rec pe = { 0 };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_claim claim = { .size = sizeof(claim) };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t topic;
	uint64_t seq = 0;

	if (is_iwarp())
		return check_iwarp_refusal(G_FRAG);
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = dp_pub_at(ctx[0], G_FRAG, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "big", &topic), 0);
	cr_assert_eq(msga_pub_claim(pub, topic, MSGA_MSG_MAX + 1, &claim),
		     -EMSGSIZE);
	wait_pub_group(&pe, 1, ctx, 2);
	sub = mc_sub(ctx[1], "big", 0, &e);
	mc_join(sub, G_FRAG, &e, ctx, 2);
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			send_paced(pub, topic, ++seq, sizes[i], ctx, 2, recs,
				   1);
	/* a reassembled message cannot be held: it is not in the ring */
	e.held = 1;
	send_paced(pub, topic, ++seq, 10000, ctx, 2, recs, 1);
	cr_assert_eq(e.hold_ret, -EOPNOTSUPP);
	cr_assert_eq(e.rec.bad, 0, "%s", e.rec.first_bad);
	cr_assert_eq(e.rec.total, seq);
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_assert_eq(st.msgs, seq);
	cr_assert_eq(st.reasm_drops + st.gaps, 0);
	mc_teardown(ctx);
}

Test(mcast, a_message_is_held_past_its_callback, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct mc_events e = { .rec.strict = 1, .held = 1 };
	struct mc_events *recs[1] = { &e };
	struct dp_rec pe = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_FRAG);
	pub = mc_setup(ctx, G_FRAG, "held", &topic, &pe);
	sub = mc_sub(ctx[1], "held", 0, &e);
	mc_join(sub, G_FRAG, &e, ctx, 2);
	send_paced(pub, topic, 1, 64, ctx, 2, recs, 1);
	cr_assert_eq(e.hold_ret, 0);
	cr_assert_eq(e.held, 2);
	cr_assert_eq(msga_msg_hold(&e.held_msg), -EALREADY);
	/* the held buffer still holds message 1 while 300 more arrive */
	for (uint64_t s = 2; s <= 300; s++)
		send_paced(pub, topic, s, 64, ctx, 2, recs, 1);
	cr_assert_eq(dp_check(e.held_msg.data, e.held_msg.len, topic, 1), 0);
	msga_msg_release(&e.held_msg);
	send_paced(pub, topic, 301, 64, ctx, 2, recs, 1);
	cr_assert_eq(e.rec.bad, 0, "%s", e.rec.first_bad);
	mc_teardown(ctx);
}

/*
 * A subscriber that does not poll while 600 messages go out keeps only
 * what its receive ring holds; the device drops the rest, the tail of the
 * stream. No later message comes to reveal it: the publisher's heartbeat
 * must (0.6), as one gap event naming exactly the numbers never got, and
 * the counters must add up to what was sent. The next message is then
 * simply the next one.
 */
Test(mcast, starved_receiver_reports_the_gap_exactly, .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct mc_events tol = { 0 }, stop = { 0 };
	struct dp_rec pe = { 0 };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_sub *s_tol, *s_stop;
	struct msga_pub *pub;
	uint64_t last;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_GAP);
	pub = mc_setup(ctx, G_GAP, "md.gap", &topic, &pe);
	s_tol = mc_sub(ctx[1], "md.gap", 0, &tol);
	s_stop = mc_sub(ctx[1], "md.gap", MSGA_SUB_STOP_ON_GAP, &stop);
	mc_join(s_tol, G_GAP, &tol, ctx, 2);
	mc_join(s_stop, G_GAP, &stop, ctx, 2);
	/* only the publisher's context is polled: receivers starve */
	for (uint64_t s = 1; s <= 600; s++)
		dp_send(pub, topic, s, 64, ctx, 1);
	cr_assert(dp_poll_until(ctx, 2, &tol.gaps, 1, 10000),
		  "no heartbeat revealed the lost tail: %s", why(&tol));
	cr_assert(dp_poll_until(ctx, 2, &stop.rec.disconnected, 1, 10000),
		  "stop-on-gap subscriber did not stop");
	last = tol.rec.total;
	cr_assert_gt(last, 0);
	cr_assert_lt(last, 600, "the ring (%llu) should have overflowed",
		     (unsigned long long)last);
	cr_assert_str_eq(tol.gap_topic, "md.gap");
	cr_assert_eq(tol.gap_seq, last + 1);
	cr_assert_eq(tol.gap_count, 600 - last);
	dp_send(pub, topic, 601, 64, ctx, 2);
	cr_assert(dp_poll_until64(ctx, 2, &tol.rec.total, last + 1, 10000));
	cr_assert_eq(tol.gaps, 1, "601 is the next number, not a gap");
	cr_assert_eq(msga_sub_stats(s_tol, &st), 0);
	cr_assert_eq(st.gaps, 1);
	cr_assert_eq(st.msgs + st.missing, 601);
	cr_assert_eq(st.msgs, tol.rec.total);
	cr_assert_geq(st.heartbeats, 1);
	/* the stop-on-gap subscriber: same gap, then stopped with -EPIPE */
	cr_assert_eq(stop.gaps, 1);
	cr_assert_eq(stop.gap_seq, stop.rec.total + 1);
	cr_assert_eq(stop.rec.last_status, -EPIPE);
	cr_assert_lt(stop.rec.total, 601, "a stopped membership gets nothing");
	mc_teardown(ctx);
}

Test(mcast, a_late_joiner_starts_at_the_live_position, .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct mc_events a = { .rec.strict = 1 }, b = { 0 };
	struct mc_events *both[2] = { &a, &b };
	struct dp_rec pe = { 0 };
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct msga_sub *sa, *sb;
	struct msga_pub *pub;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_LATE);
	pub = mc_setup(ctx, G_LATE, "md.late", &topic, &pe);
	sa = mc_sub(ctx[1], "md.late", 0, &a);
	mc_join(sa, G_LATE, &a, ctx, 2);
	for (uint64_t s = 1; s <= 50; s++)
		send_paced(pub, topic, s, 64, ctx, 2, both, 1);
	sb = mc_sub(ctx[1], "md.late", 0, &b);
	mc_join(sb, G_LATE, &b, ctx, 2);
	for (uint64_t s = 51; s <= 100; s++)
		send_paced(pub, topic, s, 64, ctx, 2, both, 2);
	cr_assert_eq(a.rec.total, 100);
	cr_assert_eq(b.rec.total, 50);
	cr_assert_eq(b.first_seq, 51);
	cr_assert_eq(b.gaps, 0, "messages before the join are not lost");
	cr_assert_eq(msga_sub_stream_stats(sb, 0, &ss), 0);
	cr_assert_eq(ss.first_seq, 51);
	cr_assert_eq(ss.missing, 0);
	cr_assert_eq(b.rec.bad + a.rec.bad, 0);
	mc_teardown(ctx);
}

Test(mcast, no_local_filters_this_hosts_publishers, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct mc_events all = { .rec.strict = 1 }, nolocal = { 0 };
	struct mc_events *recs[1] = { &all };
	struct dp_rec pe = { 0 };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_sub *s_all, *s_nolocal;
	struct msga_pub *pub;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_LOCAL);
	pub = mc_setup_quiet(ctx, G_LOCAL, "md.self", &topic, &pe);
	s_all = mc_sub(ctx[1], "md.*", 0, &all);
	s_nolocal = mc_sub(ctx[1], "md.*", MSGA_SUB_NO_LOCAL, &nolocal);
	mc_join(s_all, G_LOCAL, &all, ctx, 2);
	mc_join(s_nolocal, G_LOCAL, &nolocal, ctx, 2);
	for (uint64_t s = 1; s <= 100; s++)
		send_paced(pub, topic, s, 64, ctx, 2, recs, 1);
	/* both QPs received the same datagrams: compare the counters */
	cr_assert(dp_poll_until64(ctx, 2, &nolocal.rec.total, 1, 300) == 0,
		  "a local message got through MSGA_SUB_NO_LOCAL");
	cr_assert_eq(msga_sub_stats(s_nolocal, &st), 0);
	cr_assert_eq(st.local, 100);
	cr_assert_eq(st.msgs, 0);
	cr_assert_eq(all.rec.total, 100);
	mc_teardown(ctx);
}

Test(mcast, documented_errors)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "md.x",
				    .on_msg = mc_on_msg,
				    .flags = 1u << 7 };
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_pub_attr pa = { .size = sizeof(pa) };
	struct mc_events e = { 0 };
	struct msga_sub *sub = NULL, *prefix;
	struct msga_pub *pub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL,
		     "unknown flag");
	sub = mc_sub(ctx, "md.x", 0, &e);
	prefix = mc_sub(ctx, "md.*", 0, &e);
	cr_assert_eq(msga_sub_stats(NULL, &st), -EINVAL);
	cr_assert_eq(msga_sub_stats(sub, NULL), -EINVAL);
	st.size = 8;
	cr_assert_eq(msga_sub_stats(sub, &st), -EINVAL);
	cr_assert_eq(msga_sub_stream_stats(NULL, 0, &ss), -EINVAL);
	cr_assert_eq(msga_sub_stream_stats(sub, 0, NULL), -EINVAL);
	cr_assert_eq(msga_sub_stream_stats(sub, 0, &ss), -ENOENT);
	if (is_iwarp()) {
		msga_ctx_close(ctx);
		return check_iwarp_refusal(G_ERRORS);
	}
	/* not multicast, link-local control block, bad prefix, garbage */
	cr_assert_eq(msga_sub_connect(sub, "mcast://10.1.2.3", NULL), -EINVAL);
	cr_assert_eq(msga_sub_connect(sub, "mcast://224.0.0.5", NULL), -EINVAL);
	cr_assert_eq(msga_sub_connect(sub, "mcast://239.1.0.0/33", NULL),
		     -EINVAL);
	cr_assert_eq(msga_sub_connect(sub, "mcast://", NULL), -EINVAL);
	/* a prefix pattern cannot name its group inside a range */
	cr_assert_eq(msga_sub_connect(prefix, "mcast://239.255.0.0/16", NULL),
		     -EINVAL);
	pa.uri = "mcast://10.1.2.3";
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL);
	pa.uri = G_ERRORS;
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), 0);
	cr_assert_eq(msga_pub_port(pub), -EOPNOTSUPP);
	cr_assert_eq(msga_pub_subscribers(pub), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_disconnect(sub, 12345), -ENOENT);
	msga_ctx_close(ctx);
}

/*
 * Event mode: a subscriber's context sleeps in poll(2) on msga_ctx_fd()
 * and wakes when a multicast datagram lands in its membership's CQ.
 */
Test(mcast, the_context_fd_wakes_for_a_datagram, .timeout = 60)
{
	struct msga_ctx *ctx[2];
	struct mc_events e = { .rec.strict = 1 };
	struct dp_rec pe = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;
	struct pollfd pfd;
	uint32_t topic;

	if (is_iwarp())
		return check_iwarp_refusal(G_LATE);
	pub = mc_setup_quiet(ctx, G_LATE, "md.ev", &topic, &pe);
	pfd.fd = msga_ctx_fd(ctx[1]);
	pfd.events = POLLIN;
	cr_assert_geq(pfd.fd, 0);
	sub = mc_sub(ctx[1], "md.ev", 0, &e);
	mc_join(sub, G_LATE, &e, ctx, 2);
	for (uint64_t s = 1; s <= 20; s++) {
		/* drain until a poll finds nothing: every CQ is armed */
		for (int i = 0; i < 100 && msga_ctx_poll(ctx[1], 64); i++)
			;
		cr_assert_eq(poll(&pfd, 1, 100), 0, "readable while idle");
		dp_send(pub, topic, s, 64, ctx, 1);
		cr_assert_eq(poll(&pfd, 1, 5000), 1, "no wake-up for seq %llu",
			     (unsigned long long)s);
		cr_assert(dp_poll_until64(&ctx[1], 1, &e.rec.total, s, 5000));
	}
	cr_assert_eq(e.rec.bad, 0, "%s", e.rec.first_bad);
	mc_teardown(ctx);
}

/*
 * rdma-core's mckey as a real receiver: it joins with its own code and
 * counts datagrams of up to -S bytes; it exits 0 after -C of them.
 */
Test(mcast, mckey_receives_our_publisher, .timeout = 120)
{
	char bind_arg[64];
	char *argv[] = { "mckey", "-m", G_MCKEY, "-b", bind_arg, "-C", "20",
			 "-S", "512", NULL };
	struct msga_ctx *ctx;
	struct dp_rec pe = { 0 };
	struct msga_pub *pub;
	uint32_t topic;
	pid_t pid;
	int status = -1;
	uint64_t end, seq = 0;

	if (is_iwarp())
		return check_iwarp_refusal("mcast://" G_MCKEY);
	snprintf(bind_arg, sizeof(bind_arg), "%s", devtest_env()->addr);
	cr_assert_eq(posix_spawnp(&pid, "mckey", NULL, NULL, argv, environ),
		     0, "mckey (rdmacm-utils) must be installed");
	ctx = devtest_open_ctx();
	pub = dp_pub_at(ctx, "mcast://" G_MCKEY, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "mckey", &topic), 0);
	wait_pub_group(&pe, 1, &ctx, 1);
	/* UD: keep sending until mckey has counted its 20 */
	end = dp_now_ms() + 60000;
	while (waitpid(pid, &status, WNOHANG) == 0) {
		if (dp_now_ms() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			cr_assert_fail("mckey got fewer than 20 in 60 s");
		}
		dp_send(pub, topic, ++seq, 64, &ctx, 1);
		for (uint64_t t = dp_now_ms() + 20; dp_now_ms() < t;)
			msga_ctx_poll(ctx, 64);
	}
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "mckey status %d", status);
	msga_ctx_close(ctx);
}
