/* SPDX-License-Identifier: MIT */
/*
 * Device tests of a publisher's counters (issue 36, items 2 and 9):
 * msga_pub_stats() and msga_pub_conn_stats() against what each test
 * itself sent, refused and disconnected, over rdma:// and ud://, and the
 * refusals of mcast:// (no subscribers known) and of iWARP (no UD).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define N 50u
#define LEN 100u

static struct msga_pub_stats pub_stats(const struct msga_pub *pub)
{
	struct msga_pub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_pub_stats(pub, &st), 0);
	return st;
}

static void poll_all(struct msga_ctx **ctxs, int n)
{
	for (int i = 0; i < n; i++)
		msga_ctx_poll(ctxs[i], 64);
}

/* Send one message, polling ctxs while back-pressured: its -EAGAINs. */
static uint64_t send_counting(struct msga_pub *pub, uint32_t topic,
			      uint64_t seq, struct msga_ctx **ctxs, int n)
{
	char buf[LEN];
	uint64_t again = 0, end = dp_now_ms() + 20000;
	int ret;

	dp_fill(buf, sizeof(buf), topic, seq);
	while ((ret = msga_pub_send(pub, topic, buf, sizeof(buf))) == -EAGAIN) {
		again++;
		cr_assert_lt(dp_now_ms(), end, "back-pressured for 20 s");
		poll_all(ctxs, n);
	}
	cr_assert_geq(ret, 0, "msga_pub_send = %d", ret);
	return again;
}

/* The slot of connection conn_id, or -1 (and *st its figures). */
static int find_conn(const struct msga_pub *pub, uint32_t conn_id,
		     struct msga_pub_conn_stats *st)
{
	struct msga_pub_stats ps = pub_stats(pub);

	for (uint32_t i = 0; i < ps.conn_slots; i++) {
		*st = (struct msga_pub_conn_stats){ .size = sizeof(*st) };
		if (!msga_pub_conn_stats(pub, i, st) && st->conn_id == conn_id)
			return (int)i;
	}
	return -1;
}

static void poll_until_gone(struct msga_pub *pub, struct msga_ctx **ctxs,
			    int n, int subs)
{
	uint64_t end = dp_now_ms() + 20000;

	while (msga_pub_subscribers(pub) != subs) {
		cr_assert_lt(dp_now_ms(), end, "%d subscribers, not %d",
			     msga_pub_subscribers(pub), subs);
		poll_all(ctxs, n);
	}
}

Test(pub_stats, argument_errors_and_the_callers_size, .timeout = 60)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct dp_rec ev = { 0 };
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_pub_stats st = { .size = sizeof(st) };
	struct msga_pub_conn_stats cs = { .size = sizeof(cs) };
	unsigned char raw[sizeof(st) + 8];

	cr_expect_eq(msga_pub_stats(NULL, &st), -EINVAL);
	cr_expect_eq(msga_pub_stats(pub, NULL), -EINVAL);
	st.size = offsetof(struct msga_pub_stats, spoofed);
	cr_expect_eq(msga_pub_stats(pub, &st), -EINVAL, "below 0.10's size");
	cr_expect_eq(msga_pub_conn_stats(NULL, 0, &cs), -EINVAL);
	cr_expect_eq(msga_pub_conn_stats(pub, 0, NULL), -EINVAL);
	cs.size = 8;
	cr_expect_eq(msga_pub_conn_stats(pub, 0, &cs), -EINVAL);
	cs.size = sizeof(cs);
	cr_expect_eq(msga_pub_conn_stats(pub, 0, &cs), -ENOENT, "no one");
	cr_expect_eq(msga_pub_conn_stats(pub, UINT32_MAX, &cs), -ENOENT);
	/* a larger size gets ours, and nothing past it is written */
	memset(raw, 0xa5, sizeof(raw));
	((struct msga_pub_stats *)(void *)raw)->size = sizeof(raw);
	cr_expect_eq(msga_pub_stats(pub, (void *)raw), 0);
	cr_expect_eq(((struct msga_pub_stats *)(void *)raw)->size, sizeof(st));
	cr_expect_eq(raw[sizeof(st)], 0xa5);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

/*
 * rdma://: two subscribers, one of a pattern that matches none of the
 * topics; what each was sent, what the publisher counts, and the one
 * that leaves.
 */
Test(pub_stats, rc_counts_what_the_test_sent, .timeout = 120)
{
	struct msga_ctx *pctx = devtest_open_ctx();
	struct msga_ctx *sctx = devtest_open_ctx();
	struct msga_ctx *ctxs[] = { pctx, sctx };
	struct dp_rec ev = { 0 }, r1 = { 0 }, r2 = { 0 };
	struct msga_pub *pub = dp_pub(pctx, 0, &ev);
	struct msga_sub *s1 = dp_sub(sctx, "a.*", &r1);
	struct msga_sub *s2 = dp_sub(sctx, "zzz", &r2);
	struct msga_pub_conn_stats c1, c2;
	struct msga_pub_stats st;
	uint64_t again = 0;
	uint32_t ta, tb;

	cr_assert_eq(msga_pub_topic(pub, "a.x", &ta), 0);
	cr_assert_eq(msga_pub_topic(pub, "b.y", &tb), 0);
	dp_connect(s1, pub, ctxs, 2, 1);
	dp_connect(s2, pub, ctxs, 2, 2);
	st = pub_stats(pub);
	cr_expect_eq(st.subscribers, 2);
	cr_expect_eq(st.subscribed, 2);
	cr_expect_eq(st.unmatched, 1, "zzz matches neither a.x nor b.y");
	for (uint64_t i = 1; i <= N; i++)
		again += send_counting(pub, ta, i, ctxs, 2);
	dp_wait_total(ctxs, 2, &r1, s1, N);
	st = pub_stats(pub);
	cr_expect_eq(st.msgs, N);
	cr_expect_eq(st.bytes, (uint64_t)N * LEN);
	cr_expect_eq(st.deliveries, N, "one subscriber matched");
	cr_expect_eq(st.eagain, again);
	cr_expect_eq(st.blocked_ns, 0);
	cr_expect_eq(st.gone_clean + st.gone_reset + st.gone_timeout +
		     st.gone_slow + st.gone_other, 0);
	cr_assert_geq(find_conn(pub, 0, &c1), 0);
	cr_assert_geq(find_conn(pub, 1, &c2), 0);
	cr_expect_str_eq(c1.pattern, "a.*");
	cr_expect_eq(c1.topics, 1);
	cr_expect_eq(c1.msgs, N);
	cr_expect_eq(c1.bytes, (uint64_t)N * LEN);
	cr_expect_str_eq(c1.identity, "", "no keys");
	cr_expect_neq(c1.peer[0], '\0');
	cr_expect_str_eq(c2.pattern, "zzz");
	cr_expect_eq(c2.topics, 0);
	cr_expect_eq(c2.msgs, 0);
	/* the one that matched leaves: an RC subscriber's leave */
	msga_sub_destroy(s1);
	poll_until_gone(pub, ctxs, 2, 1);
	st = pub_stats(pub);
	cr_expect_eq(st.subscribers, 1);
	cr_expect_eq(st.subscribed, 2);
	cr_expect_eq(st.gone_clean + st.gone_reset, 1, "clean %llu reset %llu",
		     (unsigned long long)st.gone_clean,
		     (unsigned long long)st.gone_reset);
	cr_expect_eq(st.unmatched, 1);
	cr_expect_lt(find_conn(pub, 0, &c1), 0, "gone");
	msga_sub_destroy(s2);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}

/*
 * A subscriber whose context is never polled again holds the stream up:
 * the -EAGAINs the test saw, its stall, then with MSGA_PUB_BLOCK the
 * wait that ends when the slow-consumer rule drops it (-ENOBUFS).
 */
Test(pub_stats, rc_back_pressure_stalls_and_slow_consumer, .timeout = 120)
{
	struct msga_ctx *pctx = devtest_open_ctx();
	struct msga_ctx *sctx = devtest_open_ctx();
	struct msga_ctx *ctxs[] = { pctx, sctx };
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .slow_consumer_ms =
					   (uint32_t)devtest_scale_ms(300) };
	struct dp_rec ev = { 0 }, r = { 0 };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub = dp_sub(sctx, "*", &r);
	struct msga_pub_conn_stats cs;
	struct msga_pub_stats st;
	char buf[LEN] = { 0 };
	uint64_t again = 0, sent = 0;
	uint32_t t;
	int ret;

	a.on_event = dp_on_event;
	a.user = &ev;
	cr_assert_eq(msga_pub_create(pctx, &a, &pub), 0);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(sub, pub, ctxs, 2, 1);
	/* (one poll of the subscriber takes the topic's name) */
	for (int i = 0; i < 100; i++)
		poll_all(ctxs, 2);
	while ((ret = msga_pub_send(pub, t, buf, sizeof(buf))) >= 0 &&
	       sent < 100000)
		sent++;
	cr_assert_eq(ret, -EAGAIN, "the ring or credits ran out");
	again++;
	for (int i = 0; i < 10; i++)
		again += msga_pub_send(pub, t, buf, sizeof(buf)) == -EAGAIN;
	st = pub_stats(pub);
	cr_expect_eq(st.eagain, again);
	cr_expect_eq(st.msgs, sent);
	cr_expect_eq(st.stalls, 1, "one subscriber, one stall so far");
	cr_assert_geq(find_conn(pub, 0, &cs), 0);
	cr_expect_eq(cs.stalls, 1);
	cr_expect_eq(cs.msgs, sent);
	/* MSGA_PUB_BLOCK: the publisher alone is polled, it waits */
	msga_pub_destroy(pub);
	msga_sub_destroy(sub);
	ev = (struct dp_rec){ 0 };
	a.flags = MSGA_PUB_BLOCK;
	cr_assert_eq(msga_pub_create(pctx, &a, &pub), 0);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	sub = dp_sub(sctx, "*", &r);
	dp_connect(sub, pub, ctxs, 2, 1);
	for (int i = 0; i < 100; i++)
		poll_all(ctxs, 2);
	sent = 0;
	while (msga_pub_subscribers(pub) == 1) {
		cr_assert_geq(msga_pub_send(pub, t, buf, sizeof(buf)), 0);
		sent++;
	}
	st = pub_stats(pub);
	cr_expect_eq(st.eagain, 0, "a blocking publisher returns none");
	cr_expect_gt(st.blocked_ns, 0);
	cr_expect_eq(st.gone_slow, 1, "dropped as a slow consumer");
	cr_expect_geq(st.stalls, 1);
	cr_expect_eq(st.msgs, sent);
	cr_expect_eq(ev.last_status, -ENOBUFS);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}

/* max_conns 1: the second subscriber is refused, and counted so. */
Test(pub_stats, rc_refusals_and_keepalives, .timeout = 120)
{
	struct msga_ctx *pctx = devtest_open_ctx_timeout(1000);
	struct msga_ctx *sctx = devtest_open_ctx_timeout(1000);
	struct msga_ctx *ctxs[] = { pctx, sctx };
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .max_conns = 1 };
	struct dp_rec r1 = { 0 }, r2 = { 0 };
	struct msga_pub *pub = NULL;
	struct msga_sub *s1 = dp_sub(sctx, "*", &r1);
	struct msga_sub *s2 = dp_sub(sctx, "*", &r2);
	struct msga_pub_stats st;
	uint64_t end;

	cr_assert_eq(msga_pub_create(pctx, &a, &pub), 0);
	dp_connect(s1, pub, ctxs, 2, 1);
	cr_assert_geq(msga_sub_connect(s2, dp_uri((uint16_t)
						  msga_pub_port(pub)), NULL),
		      0);
	cr_assert(dp_poll_until(ctxs, 2, &r2.failed, 1, 20000));
	st = pub_stats(pub);
	cr_expect_eq(st.refused_limits, 1);
	cr_expect_eq(st.refused_keys + st.refused_allow + st.refused_timeout,
		     0);
	cr_expect_eq(st.subscribed, 1);
	/* idle: keepalives go out, a fifth of the peer timeout apart */
	end = dp_now_ms() + 20000;
	while (!pub_stats(pub).keepalives) {
		cr_assert_lt(dp_now_ms(), end, "no keepalive in 20 s");
		poll_all(ctxs, 2);
	}
	msga_sub_destroy(s1);
	msga_sub_destroy(s2);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}

/* ud://: the same figures per subscriber; mcast:// has none. */
Test(pub_stats, ud_counts_and_mcast_has_no_conns, .timeout = 120)
{
	struct msga_ctx *pctx, *sctx;
	struct msga_ctx *ctxs[2];
	struct dp_rec ev = { 0 }, r1 = { 0 }, r2 = { 0 }, mev = { 0 };
	struct msga_pub *pub, *mpub;
	struct msga_sub *s1, *s2;
	struct msga_pub_conn_stats c1, c2;
	struct msga_pub_stats st;
	uint32_t ta;
	int id1, id2;

	if (dp_iwarp_refuses(dp_ud_uri(0)))
		return; /* (asserted -EOPNOTSUPP there) */
	pctx = devtest_open_ctx();
	sctx = devtest_open_ctx();
	ctxs[0] = pctx;
	ctxs[1] = sctx;
	pub = dp_pub_at(pctx, dp_ud_uri(0), 0, &ev);
	cr_assert_eq(msga_pub_topic(pub, "a.x", &ta), 0);
	s1 = dp_sub(sctx, "a.*", &r1);
	s2 = dp_sub(sctx, "zzz", &r2);
	id1 = dp_connect_id(s1, dp_ud_uri(msga_pub_port(pub)));
	id2 = dp_connect_id(s2, dp_ud_uri(msga_pub_port(pub)));
	cr_assert_geq(id1, 0);
	cr_assert_geq(id2, 0);
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 2, 20000));
	cr_assert(dp_poll_until(ctxs, 2, &r1.connected, 1, 20000));
	for (uint64_t i = 1; i <= N; i++)
		send_counting(pub, ta, i, ctxs, 2);
	dp_wait_total(ctxs, 2, &r1, s1, N);
	st = pub_stats(pub);
	cr_expect_eq(st.msgs, N);
	cr_expect_eq(st.bytes, (uint64_t)N * LEN);
	cr_expect_eq(st.deliveries, N);
	cr_expect_eq(st.subscribers, 2);
	cr_expect_eq(st.subscribed, 2);
	cr_expect_eq(st.unmatched, 1);
	cr_expect_eq(st.conn_slots, 64);
	cr_expect_eq(st.spoofed, 0);
	cr_assert_geq(find_conn(pub, 0, &c1), 0);
	cr_assert_geq(find_conn(pub, 1, &c2), 0);
	if (strcmp(c1.pattern, "a.*")) {
		struct msga_pub_conn_stats t = c1;

		c1 = c2;
		c2 = t;
	}
	cr_expect_str_eq(c1.pattern, "a.*");
	cr_expect_eq(c1.msgs, N);
	cr_expect_eq(c1.bytes, (uint64_t)N * LEN);
	cr_expect_eq(c1.topics, 1);
	cr_expect_str_eq(c2.pattern, "zzz");
	cr_expect_eq(c2.msgs, 0);
	cr_expect_eq(c2.topics, 0);
	/* a ud:// subscriber that leaves says so: a clean leave */
	cr_assert_eq(msga_sub_disconnect(s1, (uint32_t)id1), 0);
	poll_until_gone(pub, ctxs, 2, 1);
	st = pub_stats(pub);
	cr_expect_eq(st.gone_clean, 1);
	cr_expect_eq(st.unmatched, 1);

	/* mcast://: its group's join completing is its CONNECTED event */
	mpub = dp_pub_at(pctx, "mcast://239.1.36.2", 0, &mev);
	cr_assert(dp_poll_until(ctxs, 2, &mev.connected, 1, 20000),
		  "no CONNECTED for the group's join");
	cr_expect_eq(mev.last_status, 0);
	cr_expect_eq(mev.last_conn, 0, "the publisher's first group");
	c1.size = sizeof(c1);
	cr_expect_eq(msga_pub_conn_stats(mpub, 0, &c1), -EOPNOTSUPP);
	st = pub_stats(mpub);
	cr_expect_eq(st.conn_slots, 0);
	cr_expect_eq(st.subscribers, 0);
	msga_pub_destroy(mpub);
	msga_sub_destroy(s1);
	msga_sub_destroy(s2);
	msga_pub_destroy(pub);
	msga_ctx_close(sctx);
	msga_ctx_close(pctx);
}
