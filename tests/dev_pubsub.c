/* SPDX-License-Identifier: MIT */
/*
 * Publish/subscribe on the device under test: topics and patterns,
 * fan-out and fan-in, zero-copy claim/commit and hold/release,
 * back-pressure from a stalled subscriber, reconnects, a killed publisher,
 * fragmentation, bad arguments, and destroy with traffic in flight.
 * Every wait has a deadline.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define MSG 64

static uint32_t topic(struct msga_pub *pub, const char *name)
{
	uint32_t id = UINT32_MAX;
	int ret = msga_pub_topic(pub, name, &id);

	cr_assert_eq(ret, 0, "msga_pub_topic(%s) = %d", name, ret);
	return id;
}

Test(pubsub, topics_and_patterns, .timeout = 60)
{
	static struct dp_rec md, fx, all, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	const char *names[] = { "md.AAPL", "md.MSFT", "fx.EURUSD", "md.IBM" };
	uint32_t ids[5];
	struct msga_sub *s_md, *s_fx, *s_all;

	md.strict = fx.strict = all.strict = 1;
	for (int i = 0; i < 4; i++)
		ids[i] = topic(pub, names[i]);
	cr_expect_eq(topic(pub, "md.MSFT"), ids[1], "same name, same id");
	s_md = dp_sub(ctx, "md.*", &md);
	s_fx = dp_sub(ctx, "fx.EURUSD", &fx);
	s_all = dp_sub(ctx, "*", &all);
	dp_connect(s_md, pub, &ctx, 1, 1);
	dp_connect(s_fx, pub, &ctx, 1, 2);
	dp_connect(s_all, pub, &ctx, 1, 3);
	cr_expect_eq(md.connected, 1);
	cr_expect_eq(ev.connected, 3, "publisher saw 3 subscriptions");
	/* registered after the subscribers: still announced in time */
	ids[4] = topic(pub, "md.late");
	for (uint64_t seq = 1; seq <= 200; seq++)
		for (int t = 0; t < 5; t++)
			dp_send(pub, ids[t], seq, MSG + t * 100, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &all.total, 1000, 10000),
		  "'*' got %llu of 1000", (unsigned long long)all.total);
	cr_assert(dp_poll_until64(&ctx, 1, &md.total, 800, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &fx.total, 200, 10000));
	for (int i = 0; i < 20; i++)
		msga_ctx_poll(ctx, 64);
	cr_expect_eq(md.total, 800, "md.* gets md.AAPL, MSFT, IBM, late");
	cr_expect_eq(fx.total, 200);
	cr_expect_eq(all.total, 1000);
	cr_expect_eq(md.got[0][ids[2]], 0, "no fx for md.*");
	cr_expect_eq(md.got[0][ids[4]], 200);
	cr_expect_str_eq(md.topic_name[0][ids[4]], "md.late");
	cr_expect_str_eq(fx.topic_name[0][ids[2]], "fx.EURUSD");
	cr_expect_eq(md.bad + fx.bad + all.bad, 0, "%s%s%s", md.first_bad,
		     fx.first_bad, all.first_bad);
	msga_ctx_close(ctx);
}

Test(pubsub, one_publisher_four_subscribers, .timeout = 120)
{
	static struct dp_rec rec[4], ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	uint32_t a = topic(pub, "a"), b = topic(pub, "b");
	const uint64_t n = 20000;

	for (int i = 0; i < 4; i++) {
		rec[i].strict = 1;
		dp_connect(dp_sub(ctx, "*", &rec[i]), pub, &ctx, 1, i + 1);
	}
	for (uint64_t seq = 1; seq <= n; seq++) {
		dp_send(pub, a, seq, MSG, &ctx, 1);
		dp_send(pub, b, seq, 200, &ctx, 1);
	}
	for (int i = 0; i < 4; i++) {
		cr_assert(dp_poll_until64(&ctx, 1, &rec[i].total, 2 * n, 20000),
			  "subscriber %d got %llu of %llu", i,
			  (unsigned long long)rec[i].total,
			  (unsigned long long)(2 * n));
		cr_expect_eq(rec[i].got[0][a], n);
		cr_expect_eq(rec[i].got[0][b], n);
		cr_expect_eq(rec[i].bad, 0, "sub %d: %s", i, rec[i].first_bad);
	}
	msga_ctx_close(ctx);
}

Test(pubsub, four_publishers_one_subscriber, .timeout = 120)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub *sub = dp_sub(ctx, "feed.*", &rec);
	struct msga_pub *pub[4];
	uint32_t t[4];
	const uint64_t n = 10000;

	rec.strict = 1;
	for (int i = 0; i < 4; i++) {
		char name[32];

		pub[i] = dp_pub(ctx, 0, &ev);
		snprintf(name, sizeof(name), "feed.%d", i);
		t[i] = topic(pub[i], name);
		dp_connect(sub, pub[i], &ctx, 1, 1);
	}
	cr_expect_eq(rec.connected, 4);
	for (uint64_t seq = 1; seq <= n; seq++)
		for (int i = 0; i < 4; i++)
			dp_send(pub[i], t[i], seq, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 4 * n, 20000),
		  "got %llu of %llu", (unsigned long long)rec.total,
		  (unsigned long long)(4 * n));
	for (int i = 0; i < 4; i++)
		cr_expect_eq(rec.got[i][t[i]], n, "publisher %d", i);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_ctx_close(ctx);
}

/* The subscriber's context is not polled: its receives run out. */
Test(pubsub, stalled_subscriber_back_pressures_without_loss, .timeout = 60)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "t");
	uint64_t seq = 0, eagain = 0;
	struct msga_claim claim = { .size = sizeof(claim) };
	int ret;

	rec.strict = 1;
	dp_connect(dp_sub(cs, "t", &rec), pub, both, 2, 1);
	for (uint64_t end = dp_now_ms() + 10000; dp_now_ms() < end;) {
		ret = msga_pub_claim(pub, t, MSG, &claim);
		if (ret == -EAGAIN) {
			eagain++;
			if (eagain == 1000)
				break;
			msga_ctx_poll(cp, 64);
			continue;
		}
		cr_assert_eq(ret, 0, "claim = %d", ret);
		dp_fill(claim.data, MSG, t, ++seq);
		cr_assert_eq(msga_pub_commit(pub, &claim), 1);
	}
	cr_assert_eq(eagain, 1000, "a stalled subscriber must push back");
	cr_expect_eq(msga_pub_send(pub, t, claim.data, MSG), -EAGAIN);
	cr_expect_eq(rec.total, 0, "nothing is delivered without polling");
	cr_log_info("stalled after %llu messages", (unsigned long long)seq);
	/* resume: the backlog and more arrive, all in order */
	for (uint64_t i = 0; i < 3000; i++)
		dp_send(pub, t, ++seq, MSG, both, 2);
	cr_assert(dp_poll_until64(both, 2, &rec.total, seq, 20000),
		  "got %llu of %llu", (unsigned long long)rec.total,
		  (unsigned long long)seq);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

static struct msga_msg held, late, held2;
static int hold_ret, hold_again_ret, hold2_ret = 1;
static struct dp_rec hold_rec;

static void hold_first(const struct msga_msg *m, void *user)
{
	if (m->seq == 1) {
		hold_ret = msga_msg_hold(m);
		hold_again_ret = msga_msg_hold(m);
		held = *m;
	}
	if (m->seq == 2)
		late = *m;
	if (m->seq == 1500) { /* likely inside a coalesced batch */
		hold2_ret = msga_msg_hold(m);
		held2 = *m;
	}
	dp_on_msg(m, user);
}

Test(pubsub, claim_commit_abort_hold_release, .timeout = 60)
{
	static struct dp_rec ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "z",
				   .on_msg = hold_first,
				   .on_event = dp_on_event, .user = &hold_rec };
	struct msga_claim c1 = { .size = sizeof(c1) }, c2 = c1;
	struct msga_sub *sub;
	uint32_t t = topic(pub, "z");
	uint8_t copy[MSG];

	hold_rec.strict = 1;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	dp_connect(sub, pub, &ctx, 1, 1);
	cr_assert_eq(msga_pub_claim(pub, t, MSG, &c1), 0);
	cr_expect_not_null(c1.data);
	cr_expect_eq(msga_pub_claim(pub, t, MSG, &c2), -EBUSY,
		     "one claim at a time");
	cr_expect_eq(msga_pub_send(pub, t, copy, MSG), -EBUSY);
	dp_fill(c1.data, MSG, t, 1);
	cr_assert_eq(msga_pub_commit(pub, &c1), 1, "sent to 1 subscriber");
	cr_expect_eq(msga_pub_commit(pub, &c1), -EINVAL, "commit twice");
	cr_expect_eq(msga_pub_abort(pub, &c1), -EINVAL, "abort committed");
	/* an aborted claim uses no sequence number */
	cr_assert_eq(msga_pub_claim(pub, t, MSG, &c2), 0);
	cr_assert_eq(msga_pub_abort(pub, &c2), 0);
	cr_assert(dp_poll_until64(&ctx, 1, &hold_rec.total, 1, 10000));
	cr_expect_eq(hold_ret, 0, "hold inside the callback");
	cr_expect_eq(hold_again_ret, -EALREADY);
	cr_expect_eq(msga_msg_hold(&held), -EALREADY, "still held");
	cr_expect_eq(msga_msg_hold(NULL), -EINVAL);
	memcpy(copy, held.data, MSG);
	/* far more than the receive ring: the held buffer is not reused */
	for (uint64_t seq = 2; seq <= 2000; seq++)
		dp_send(pub, t, seq, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &hold_rec.total, 2000, 20000));
	cr_expect_eq(msga_msg_hold(&late), -EINVAL, "hold after the callback");
	cr_expect_arr_eq(held.data, copy, MSG, "held data changed");
	cr_expect_eq(dp_check(held.data, held.len, t, 1), 0);
	cr_expect_eq(held.seq, 1);
	cr_expect_str_eq(held.topic, "z");
	cr_expect_gt(held.rx_time_ns, 0);
	cr_expect_eq(hold2_ret, 0);
	cr_expect_eq(dp_check(held2.data, held2.len, t, 1500), 0);
	msga_msg_release(&held);
	msga_msg_release(&held); /* second release is a no-op */
	msga_msg_release(&held2);
	for (uint64_t seq = 2001; seq <= 3000; seq++)
		dp_send(pub, t, seq, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &hold_rec.total, 3000, 20000));
	cr_expect_eq(hold_rec.bad, 0, "%s", hold_rec.first_bad);
	msga_ctx_close(ctx);
}

static uint64_t stamp_last, stamp_count;

static void keep_stamp(const struct msga_msg *m, void *user)
{
	stamp_last = m->rx_time_ns;
	stamp_count++;
	dp_on_msg(m, user);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * rx_time_ns is CLOCK_MONOTONIC when the message was polled: each stamp
 * lies within clock_gettime() reads taken around the msga_ctx_poll() that
 * delivered it, and stamps never go back. 400 ms covers the receive
 * clock's first rate (20 ms) and many re-anchorings (every 10 ms), so in
 * the VM, whose clocksource is the TSC, most stamps come from the TSC.
 * The slack (50 us) is far above the clock's error and far below what a
 * wrong rate or anchor gives.
 */
Test(pubsub, rx_time_is_clock_monotonic, .timeout = 60)
{
	const uint64_t slack = 50000;
	static struct dp_rec ev, rec;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "clk",
				   .on_msg = keep_stamp,
				   .on_event = dp_on_event, .user = &rec };
	uint64_t start, prev = 0, seq = 0;
	struct msga_sub *sub;
	uint32_t t = topic(pub, "clk");

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	dp_connect(sub, pub, &ctx, 1, 1);
	start = mono_ns();
	while (mono_ns() - start < 400000000u) {
		uint64_t before, after, had = stamp_count;

		dp_send(pub, t, ++seq, MSG, &ctx, 1);
		do {
			before = mono_ns();
			cr_assert_geq(msga_ctx_poll(ctx, 1), 0);
			after = mono_ns();
			cr_assert_lt(after - start, 10000000000ull, "no delivery");
		} while (stamp_count == had);
		cr_assert_eq(stamp_count, had + 1);
		cr_assert(stamp_last + slack >= before &&
			  stamp_last <= after + slack,
			  "message %llu stamped %lld ns from [0, %lld]",
			  (unsigned long long)seq,
			  (long long)(stamp_last - before),
			  (long long)(after - before));
		cr_assert_geq(stamp_last, prev);
		prev = stamp_last;
	}
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_log_info("%llu messages stamped", (unsigned long long)seq);
	msga_ctx_close(ctx);
}

Test(pubsub, block_flag_waits_instead_of_eagain, .timeout = 60)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, MSGA_PUB_BLOCK, &ev);
	uint32_t t = topic(pub, "blk");
	uint8_t buf[MSG];

	rec.strict = 1;
	dp_connect(dp_sub(ctx, "blk", &rec), pub, &ctx, 1, 1);
	/* no polling here: the blocking send drives the context itself */
	for (uint64_t seq = 1; seq <= 5000; seq++) {
		dp_fill(buf, MSG, t, seq);
		cr_assert_eq(msga_pub_send(pub, t, buf, MSG), 1, "seq %llu",
			     (unsigned long long)seq);
	}
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 5000, 10000));
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_ctx_close(ctx);
}

Test(pubsub, fragmentation_up_to_1MiB, .timeout = 120)
{
	static struct dp_rec r1, r2, ev;
	static const size_t sizes[] = { MSGA_FRAG_MAX, MSGA_FRAG_MAX + 1,
					100000, MSG, MSGA_MSG_MAX, 16,
					MSGA_MSG_MAX - 1 };
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	uint32_t t = topic(pub, "big");
	struct msga_claim claim = { .size = sizeof(claim) };
	uint64_t seq = 0;

	r1.strict = r2.strict = 1;
	dp_connect(dp_sub(ctx, "big", &r1), pub, &ctx, 1, 1);
	dp_connect(dp_sub(ctx, "b*", &r2), pub, &ctx, 1, 2);
	cr_expect_eq(msga_pub_claim(pub, t, MSGA_MSG_MAX + 1, &claim),
		     -EMSGSIZE);
	cr_expect_eq(msga_pub_send(pub, t, &claim, MSGA_MSG_MAX + 1),
		     -EMSGSIZE);
	for (int rep = 0; rep < 3; rep++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
			dp_send(pub, t, ++seq, sizes[i], &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &r1.total, seq, 60000),
		  "got %llu of %llu", (unsigned long long)r1.total,
		  (unsigned long long)seq);
	cr_assert(dp_poll_until64(&ctx, 1, &r2.total, seq, 60000));
	cr_expect_eq(r1.bad + r2.bad, 0, "%s %s", r1.first_bad, r2.first_bad);
	msga_ctx_close(ctx);
}

static void connect_expect_failure(struct msga_ctx *ctx, const char *uri)
{
	static struct dp_rec rec;
	struct msga_sub *sub;
	int id, st;

	memset(&rec, 0, sizeof(rec));
	sub = dp_sub(ctx, "*", &rec);
	id = dp_connect_id(sub, uri);
	if (id >= 0) {
		cr_assert(dp_poll_until(&ctx, 1, &rec.failed, 1, 30000),
			  "%s: no CONNECT_FAILED within 30 s", uri);
		st = rec.last_status;
		cr_expect_eq((uint32_t)id, rec.last_conn);
	} else {
		st = id;
	}
	cr_expect(st == -ECONNREFUSED || st == -EHOSTUNREACH ||
		  st == -ETIMEDOUT, "%s: %d (%s)", uri, st, msga_strerror(st));
	cr_expect_eq(rec.connected, 0);
	cr_log_info("%s: %s", uri, msga_strerror(st));
	msga_sub_destroy(sub);
}

Test(pubsub, unreachable_addresses_fail_with_documented_errors,
     .timeout = 90)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	static struct dp_rec ev;
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	char uri[128];
	int port = msga_pub_port(pub);

	msga_pub_destroy(pub); /* a port nobody listens on any more */
	connect_expect_failure(ctx, dp_uri((uint16_t)port));
	/* an address in the test range that no host has */
	snprintf(uri, sizeof(uri), "rdma://198.19.254.254:%d", port);
	connect_expect_failure(ctx, uri);
	msga_ctx_close(ctx);
}

Test(pubsub, bad_arguments, .timeout = 60)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = dp_uri(0) };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "*",
				    .on_msg = dp_on_msg, .user = &rec };
	struct msga_pub *pub = NULL, *pub2;
	struct msga_sub *sub = NULL;
	struct msga_claim claim = { .size = sizeof(claim) };
	char name[80];
	uint32_t id;

	cr_expect_eq(msga_pub_create(NULL, &pa, &pub), -EINVAL);
	cr_expect_eq(msga_pub_create(ctx, NULL, &pub), -EINVAL);
	cr_expect_eq(msga_pub_create(ctx, &pa, NULL), -EINVAL);
	pa.size = 4;
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL, "short attr");
	pa.size = sizeof(pa);
	pa.flags = 0x100;
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL, "bad flags");
	pa.flags = 0;
	/* 0.10: reserved fields must be 0, and the last error says so */
	pa.reserved = 1;
	msga_ctx_clear_error(ctx);
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL, "reserved");
	cr_expect(strstr(msga_ctx_last_error(ctx), "reserved"), "%s",
		  msga_ctx_last_error(ctx));
	pa.reserved = 0;
	pa.reserved3 = 1;
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL, "reserved3");
	pa.reserved3 = 0;
	{
		const char *bad[] = { NULL, "", "tcp://1.2.3.4:5",
				      "rdma://", "rdma://1.2.3.4",
				      "rdma://1.2.3.4:", "rdma://1.2.3.4:99999",
				      "rdma://host.name:1", "rdma://1.2.3.4:x" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			pa.uri = bad[i];
			cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL,
				     "uri %s", bad[i] ? bad[i] : "NULL");
			cr_expect_null(pub);
		}
	}
	pub = dp_pub(ctx, 0, &ev);
	snprintf(name, sizeof(name), "rdma://%s:%d", devtest_env()->addr,
		 msga_pub_port(pub));
	pa.uri = name;
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub2), -EADDRINUSE);

	cr_expect_eq(msga_pub_topic(NULL, "a", &id), -EINVAL);
	cr_expect_eq(msga_pub_topic(pub, NULL, &id), -EINVAL);
	cr_expect_eq(msga_pub_topic(pub, "a", NULL), -EINVAL);
	cr_expect_eq(msga_pub_topic(pub, "", &id), -EINVAL);
	cr_expect_eq(msga_pub_topic(pub, "a b", &id), -EINVAL);
	cr_expect_eq(msga_pub_topic(pub, "a*", &id), -EINVAL);
	memset(name, 'n', MSGA_TOPIC_MAX + 1);
	name[MSGA_TOPIC_MAX + 1] = '\0';
	cr_expect_eq(msga_pub_topic(pub, name, &id), -EINVAL, "64 chars");
	name[MSGA_TOPIC_MAX] = '\0';
	cr_expect_eq(msga_pub_topic(pub, name, &id), 0, "63 chars");
	for (int i = 1; i < MSGA_PUB_TOPICS_MAX; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		cr_assert_eq(msga_pub_topic(pub, name, &id), 0);
	}
	cr_expect_eq(msga_pub_topic(pub, "one.too.many", &id), -ENOSPC);

	cr_expect_eq(msga_pub_claim(NULL, 0, 1, &claim), -EINVAL);
	cr_expect_eq(msga_pub_claim(pub, 0, 1, NULL), -EINVAL);
	claim.size = 4; /* 0.10: the caller sets .size */
	cr_expect_eq(msga_pub_claim(pub, 0, 1, &claim), -EINVAL, "claim size");
	claim.size = sizeof(claim);
	cr_expect_eq(msga_pub_claim(pub, MSGA_PUB_TOPICS_MAX, 1, &claim),
		     -EINVAL, "unknown topic id");
	cr_expect_eq(msga_pub_claim(pub, 0, MSGA_MSG_MAX + 1, &claim),
		     -EMSGSIZE);
	cr_expect_eq(msga_pub_send(pub, 0, name, (size_t)MSGA_MSG_MAX + 1),
		     -EMSGSIZE);
	cr_expect_eq(msga_pub_send(pub, 0, NULL, 5), -EINVAL);
	cr_expect_eq(msga_pub_commit(pub, NULL), -EINVAL);
	memset(&claim, 0, sizeof(claim));
	cr_expect_eq(msga_pub_commit(pub, &claim), -EINVAL, "no claim");
	cr_expect_eq(msga_pub_abort(pub, &claim), -EINVAL, "no claim");
	cr_expect_eq(msga_pub_send(pub, 0, name, 10), 0,
		     "no subscribers: sent to none");
	cr_expect_eq(msga_pub_port(NULL), -EINVAL);
	cr_expect_eq(msga_pub_subscribers(NULL), -EINVAL);

	cr_expect_eq(msga_sub_create(NULL, &sa, &sub), -EINVAL);
	cr_expect_eq(msga_sub_create(ctx, NULL, &sub), -EINVAL);
	cr_expect_eq(msga_sub_create(ctx, &sa, NULL), -EINVAL);
	sa.pattern = "a*b";
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL, "bad pattern");
	sa.pattern = NULL;
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL);
	sa.pattern = "*";
	sa.on_msg = NULL;
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL, "no on_msg");
	sa.on_msg = dp_on_msg;
	sa.flags = 1u << 7; /* 1 and 2 are MSGA_SUB_NO_LOCAL, STOP_ON_GAP */
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL, "bad flags");
	sa.flags = 0;
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	cr_expect_eq(msga_sub_connect(sub, "rdma://nope:1", NULL), -EINVAL);
	id = 77; /* 0.10: the id goes out only on success */
	cr_expect_eq(msga_sub_connect(sub, "rdma://nope:1", &id), -EINVAL);
	cr_expect_eq(id, 77);
	cr_expect_eq(msga_sub_connect(sub, NULL, NULL), -EINVAL);
	cr_expect_eq(msga_sub_connect(NULL, dp_uri(1), NULL), -EINVAL);
	cr_expect_eq(msga_sub_disconnect(sub, 12345), -ENOENT);
	cr_expect_eq(msga_sub_disconnect(NULL, 0), -EINVAL);

	cr_expect_eq(msga_ctx_poll(NULL, 1), -EINVAL);
	cr_expect_eq(msga_ctx_poll(ctx, 0), -EINVAL);
	cr_expect_eq(msga_ctx_fd(NULL), -EINVAL);
	msga_pub_destroy(NULL);
	msga_sub_destroy(NULL);
	msga_msg_release(NULL);
	msga_ctx_close(ctx);
}

Test(pubsub, ctx_fd_needs_events, .timeout = 30)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .flags = MSGA_CTX_NO_EVENTS };
	struct msga_ctx *ctx;

	attr.dev_name = devtest_env()->dev;
	cr_assert_eq(msga_ctx_open(&attr, &ctx), 0);
	cr_expect_eq(msga_ctx_fd(ctx), -ENOTSUP);
	msga_ctx_close(ctx);
}

Test(pubsub, subscriber_reconnects_while_publishing, .timeout = 120)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_sub *keep, *sub;
	static struct dp_rec krec;
	uint32_t t = topic(pub, "r");
	uint64_t seq = 0;

	krec.strict = 1;
	keep = dp_sub(ctx, "r", &krec);
	dp_connect(keep, pub, &ctx, 1, 1);
	sub = dp_sub(ctx, "r", &rec);
	for (int round = 0; round < 5; round++) {
		uint64_t before = rec.total;
		int id = dp_connect_id(sub, dp_uri((uint16_t)msga_pub_port(pub)));
		uint64_t end = dp_now_ms() + 10000;

		cr_assert_geq(id, 0);
		/*
		 * Keep publishing while the subscriber (re)connects, and poll
		 * after each send: dp_send polls only when back-pressured, and
		 * on a slow host (valgrind) the connect's CM events would
		 * otherwise wait behind a whole ring of sends.
		 */
		while (msga_pub_subscribers(pub) < 2) {
			cr_assert_lt(dp_now_ms(), end, "round %d: no reconnect",
				     round);
			dp_send(pub, t, ++seq, MSG, &ctx, 1);
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		}
		for (int i = 0; i < 500; i++)
			dp_send(pub, t, ++seq, MSG, &ctx, 1);
		cr_assert(dp_poll_until64(&ctx, 1, &rec.total, before + 500,
					  10000), "round %d", round);
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)id), 0);
		cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), -ENOENT);
		end = dp_now_ms() + 10000;
		while (msga_pub_subscribers(pub) > 1) {
			cr_assert_lt(dp_now_ms(), end,
				     "round %d: publisher missed the leave",
				     round);
			dp_send(pub, t, ++seq, MSG, &ctx, 1);
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		}
	}
	cr_expect_geq(ev.disconnected, 5);
	cr_assert(dp_poll_until64(&ctx, 1, &krec.total, seq, 20000),
		  "steady subscriber got %llu of %llu",
		  (unsigned long long)krec.total, (unsigned long long)seq);
	cr_expect_eq(krec.bad, 0, "%s", krec.first_bad);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_ctx_close(ctx);
}

static void child_publisher(int wfd)
{
	struct msga_ctx *ctx = NULL;
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct msga_pub_attr pa = { .size = sizeof(pa) };
	struct msga_pub *pub;
	uint8_t buf[MSG];
	uint32_t t;
	uint64_t seq = 0;
	int port;

	attr.dev_name = devtest_env()->dev;
	pa.uri = dp_uri(0);
	if (msga_ctx_open(&attr, &ctx) || msga_pub_create(ctx, &pa, &pub) ||
	    msga_pub_topic(pub, "k", &t))
		_exit(2);
	port = msga_pub_port(pub);
	if (write(wfd, &port, sizeof(port)) != sizeof(port))
		_exit(3);
	for (;;) { /* until SIGKILL */
		dp_fill(buf, MSG, t, seq + 1);
		if (msga_pub_send(pub, t, buf, MSG) >= 0)
			seq++;
		msga_ctx_poll(ctx, 64);
	}
}

Test(pubsub, killed_publisher_gives_disconnect_event, .timeout = 60)
{
	static struct dp_rec rec;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	struct pollfd pfd;
	int pfds[2], port = 0, status;
	uint64_t t0;
	pid_t pid;

	cr_assert_eq(pipe(pfds), 0);
	/* fork before this process opens any device */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(pfds[0]);
		child_publisher(pfds[1]);
	}
	close(pfds[1]);
	pfd = (struct pollfd){ .fd = pfds[0], .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 10000), 1, "child publisher did not start");
	cr_assert_eq(read(pfds[0], &port, sizeof(port)), sizeof(port));
	ctx = devtest_open_ctx();
	/* the child publishes from before we join: no strict start */
	sub = dp_sub(ctx, "k", &rec);
	cr_assert_geq(msga_sub_connect(sub, dp_uri((uint16_t)port), NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &rec.connected, 1, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 1000, 10000),
		  "got %llu", (unsigned long long)rec.total);
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	t0 = dp_now_ms();
	cr_assert(dp_poll_until(&ctx, 1, &rec.disconnected, 1, 30000),
		  "no DISCONNECTED within 30 s of SIGKILL");
	cr_log_info("disconnect event %llu ms after SIGKILL",
		    (unsigned long long)(dp_now_ms() - t0));
	cr_expect_eq(rec.last_status, -ECONNRESET);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	/* nothing hangs afterwards */
	cr_expect_geq(msga_ctx_poll(ctx, 64), 0);
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
	close(pfds[0]);
}

/* Destroy publishers, subscribers and contexts while SENDs are queued. */
Test(pubsub, destroy_in_any_order_with_traffic, .timeout = 60)
{
	for (int order = 0; order < 3; order++) {
		static struct dp_rec r1, r2, ev;
		struct msga_ctx *ctx = devtest_open_ctx();
		struct msga_pub *pub = dp_pub(ctx, 0, &ev);
		struct msga_sub *s1 = dp_sub(ctx, "*", &r1);
		struct msga_sub *s2 = dp_sub(ctx, "*", &r2);
		uint32_t t = topic(pub, "d");
		static uint8_t buf[3 * MSGA_FRAG_MAX];

		memset(&r1, 0, sizeof(r1));
		memset(&r2, 0, sizeof(r2));
		dp_connect(s1, pub, &ctx, 1, 1);
		dp_connect(s2, pub, &ctx, 1, 2);
		for (int i = 0; i < 100; i++)
			msga_pub_send(pub, t, buf, (size_t)(i * 29) % 3000);
		msga_pub_send(pub, t, buf, 3 * MSGA_FRAG_MAX);
		if (order == 0) {
			msga_pub_destroy(pub);
			cr_assert(dp_poll_until(&ctx, 1, &r1.disconnected, 1,
						10000));
			msga_sub_destroy(s1);
			msga_sub_destroy(s2);
		} else if (order == 1) {
			msga_sub_destroy(s2);
			cr_assert(dp_poll_until(&ctx, 1, &ev.disconnected, 1,
						10000));
			msga_pub_destroy(pub);
		}
		msga_ctx_close(ctx); /* order 2: everything still alive */
		memset(&ev, 0, sizeof(ev));
	}
}

/*
 * A large claim (more than one fragment) may shrink at commit, even to
 * nothing: the empty message must still arrive, with its sequence
 * number, or the subscriber sees the next one after a silent gap.
 */
static uint64_t shrunk_seq[4];
static size_t shrunk_len[4];
static int shrunk_n;

static void on_shrunk(const struct msga_msg *m, void *user)
{
	(void)user;
	if (shrunk_n < 4) {
		shrunk_seq[shrunk_n] = m->seq;
		shrunk_len[shrunk_n] = m->len;
	}
	shrunk_n++;
}

static void large_claim_shrunk_to_nothing(uint32_t sub_flags)
{
	static struct dp_rec ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_sub_attr a = { .size = sizeof(a), .flags = sub_flags,
				   .pattern = "big", .on_msg = on_shrunk,
				   .on_event = dp_on_event, .user = &ev };
	uint32_t t = topic(pub, "big");
	struct msga_claim c = { .size = sizeof(c) };
	struct msga_sub *sub;
	uint8_t small[8] = { 0 };
	volatile int *n = &shrunk_n;

	shrunk_n = 0;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	dp_connect(sub, pub, &ctx, 1, 1);
	cr_assert_eq(msga_pub_claim(pub, t, 3 * MSGA_FRAG_MAX, &c), 0);
	c.len = 0;
	cr_assert_eq(msga_pub_commit(pub, &c), 1);
	cr_assert_eq(msga_pub_send(pub, t, small, sizeof(small)), 1);
	cr_assert(dp_poll_until(&ctx, 1, n, 2, 10000), "got %d of 2", *n);
	cr_expect_eq(shrunk_seq[0], 1);
	cr_expect_eq(shrunk_len[0], 0);
	cr_expect_eq(shrunk_seq[1], 2);
	cr_expect_eq(shrunk_len[1], sizeof(small));
	msga_ctx_close(ctx);
}

Test(pubsub, large_claim_shrunk_to_nothing_arrives_ring, .timeout = 60)
{
	large_claim_shrunk_to_nothing(0);
}

Test(pubsub, large_claim_shrunk_to_nothing_arrives_send_recv, .timeout = 60)
{
	large_claim_shrunk_to_nothing(MSGA_SUB_NO_RING);
}

/* ------------------------------------------------ last value (0.12) */

#define LV_TOPICS 4

/* Per topic: the last value (if any) first, then seq + 1, + 2, ... */
struct lv_rec {
	uint64_t lv_seq[LV_TOPICS], first[LV_TOPICS], last[LV_TOPICS];
	uint64_t n[LV_TOPICS], lv[LV_TOPICS];
	int bad;
	char why[200];
};

static void lv_bad(struct lv_rec *r, const char *what,
		   const struct msga_msg *m)
{
	if (!r->bad++)
		snprintf(r->why, sizeof(r->why), "%s: topic %u seq %llu flags "
			 "%#x (last %llu)", what, m->topic_id,
			 (unsigned long long)m->seq, m->flags,
			 (unsigned long long)(m->topic_id < LV_TOPICS ?
					      r->last[m->topic_id] : 0));
}

static void lv_on_msg(const struct msga_msg *m, void *user)
{
	struct lv_rec *r = user;
	uint32_t t = m->topic_id;

	if (t >= LV_TOPICS)
		return lv_bad(r, "unknown topic", m);
	if (dp_check(m->data, m->len, t, m->seq))
		lv_bad(r, "payload", m);
	if (m->flags & MSGA_MSG_LAST_VALUE) {
		if (r->n[t])
			lv_bad(r, "last value after the live stream", m);
		r->lv[t]++;
		r->lv_seq[t] = m->seq;
	} else if (r->n[t] && m->seq != r->last[t] + 1) {
		lv_bad(r, "gap or duplicate", m);
	}
	if (!r->n[t])
		r->first[t] = m->seq;
	r->last[t] = m->seq;
	r->n[t]++;
}

static struct msga_sub *lv_sub(struct msga_ctx *ctx, const char *pattern,
			       uint32_t flags, struct lv_rec *r)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = pattern, .on_msg = lv_on_msg,
				   .user = r };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0, "%s",
		     msga_ctx_last_error(ctx));
	return sub;
}

/* msga_pub_send (the solo ring's short record or an inline post) */
static void lv_send(struct msga_pub *pub, struct msga_ctx *ctx, uint32_t t,
		    uint64_t seq)
{
	char buf[MSG];
	uint64_t end = dp_now_ms() + 20000;
	int ret;

	dp_fill(buf, sizeof(buf), t, seq);
	while ((ret = msga_pub_send(pub, t, buf, sizeof(buf))) == -EAGAIN) {
		cr_assert_lt(dp_now_ms(), end, "back-pressured for 20 s");
		msga_ctx_poll(ctx, 64);
	}
	cr_assert_geq(ret, 0, "msga_pub_send = %d", ret);
}

/*
 * Issue 37 item 4 over RC: topics md.A, md.B, fx.C and md.big have a
 * history; two late subscribers to md.* join while the publisher keeps
 * sending, one asking for last values. It gets md.A's and md.B's last
 * value first, flagged, then every later message once, in order; none
 * for fx.C (not matched) nor md.big (its last message was larger than a
 * kept value: forgotten, never a stale one). The other gets no last
 * value at all.
 */
static void last_value_then_live(uint32_t sub_flags)
{
	static struct lv_rec with, without;
	static struct dp_rec ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, MSGA_PUB_LAST_VALUE, &ev);
	uint32_t a = topic(pub, "md.A"), b = topic(pub, "md.B");
	uint32_t c = topic(pub, "fx.C"), big = topic(pub, "md.big");
	struct msga_sub *s_with, *s_without;
	char uri[96];
	uint64_t seq = 0, end;

	memset(&with, 0, sizeof(with));
	memset(&without, 0, sizeof(without));
	cr_assert(a == 0 && b == 1 && c == 2 && big == 3);
	for (seq = 1; seq <= 20; seq++) {
		dp_send(pub, a, seq, MSG, &ctx, 1);
		lv_send(pub, ctx, b, seq);
		dp_send(pub, c, seq, MSG, &ctx, 1);
	}
	dp_send(pub, big, 1, MSG, &ctx, 1);
	dp_send(pub, big, 2, 3 * MSGA_FRAG_MAX, &ctx, 1);
	s_with = lv_sub(ctx, "md.*", sub_flags | MSGA_SUB_LAST_VALUE, &with);
	s_without = lv_sub(ctx, "md.*", sub_flags, &without);
	snprintf(uri, sizeof(uri), "%s", dp_uri((uint16_t)msga_pub_port(pub)));
	cr_assert_geq(dp_connect_id(s_with, uri), 0);
	cr_assert_geq(dp_connect_id(s_without, uri), 0);
	/* the join happens while the feed goes on */
	end = dp_now_ms() + 10000;
	for (int after = 0; after < 20; seq++) {
		dp_send(pub, a, seq, MSG, &ctx, 1);
		lv_send(pub, ctx, b, seq);
		dp_send(pub, c, seq, MSG, &ctx, 1);
		msga_ctx_poll(ctx, 64);
		after += msga_pub_subscribers(pub) == 2;
		cr_assert_lt(dp_now_ms(), end, "%d subscribers after 10 s: %s",
			     msga_pub_subscribers(pub),
			     msga_ctx_last_error(ctx));
	}
	seq--; /* the last sent */
	for (uint64_t s = 3; s <= 5; s++)
		dp_send(pub, big, s, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &with.last[big], 5, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &with.last[a], seq, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &with.last[b], seq, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &without.last[big], 5, 10000));
	cr_assert(dp_poll_until64(&ctx, 1, &without.last[b], seq, 10000));
	for (int i = 0; i < 20; i++)
		msga_ctx_poll(ctx, 64);
	cr_expect_eq(with.bad, 0, "%s", with.why);
	cr_expect_eq(without.bad, 0, "%s", without.why);
	for (uint32_t t = a; t <= b; t++) {
		cr_expect_eq(with.lv[t], 1, "topic %u: one last value", t);
		cr_expect_eq(with.first[t], with.lv_seq[t],
			     "topic %u: the last value comes first", t);
		cr_expect_geq(with.lv_seq[t], 20, "topic %u: sent before the "
			      "join, so at least 20", t);
		cr_expect_eq(with.n[t], seq - with.lv_seq[t] + 1,
			     "topic %u: seq %llu..%llu once each", t,
			     (unsigned long long)with.lv_seq[t],
			     (unsigned long long)seq);
		cr_expect_eq(without.lv[t], 0);
		cr_expect_gt(without.first[t], 20, "live only");
	}
	cr_expect_eq(with.n[c], 0, "fx.C does not match");
	cr_expect_eq(with.lv[big], 0, "a value over MSGA_FRAG_MAX is not kept");
	cr_expect_eq(with.first[big], 3, "live from the next message");
	cr_expect_eq(with.n[big], 3);
	cr_expect_eq(without.first[big], 3);
	msga_ctx_close(ctx);
}

DP_TEST_RC_PATHS(pubsub, last_value_then_live_ring,
		 last_value_then_live_send_recv, last_value_then_live, 120)

/*
 * The documented refusals (msga_pub_create(3), msga_sub_create(3)), and a publisher without MSGA_PUB_LAST_VALUE,
 * which sends the live stream only (as one before 0.12 does).
 */
Test(pubsub, last_value_errors_and_a_publisher_that_keeps_none,
     .timeout = 60)
{
	static struct lv_rec r;
	static struct dp_rec ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa),
				    .flags = MSGA_PUB_LAST_VALUE,
				    .uri = "mcast://239.1.2.3" };
	struct msga_sub_attr sa = { .size = sizeof(sa),
				    .flags = MSGA_SUB_LAST_VALUE,
				    .pattern = "*", .on_msg = lv_on_msg,
				    .user = &r, .history = 1 };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub = NULL;
	uint32_t t;

	memset(&r, 0, sizeof(r));
	/* (checked before the transport: iWARP's refusal comes after) */
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL,
		     "mcast:// without MSGA_PUB_RELIABLE");
	cr_expect_null(pub);
	pa.uri = dp_ud_uri(0);
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL,
		     "ud:// without MSGA_PUB_RELIABLE");
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL, "history");
	sa.history = 0;
	sa.history_from = 5;
	cr_expect_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL,
		     "history_from");
	sa.history_from = 0;
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	pub = dp_pub(ctx, 0, &ev);
	t = topic(pub, "x");
	for (uint64_t s = 1; s <= 5; s++)
		dp_send(pub, t, s, MSG, &ctx, 1);
	dp_connect(sub, pub, &ctx, 1, 1);
	for (uint64_t s = 6; s <= 10; s++)
		dp_send(pub, t, s, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &r.last[0], 10, 10000));
	cr_expect_eq(r.bad, 0, "%s", r.why);
	cr_expect_eq(r.lv[0], 0, "a publisher that keeps none sends none");
	cr_expect_eq(r.first[0], 6);
	cr_expect_eq(r.n[0], 5);
	msga_ctx_close(ctx);
}
