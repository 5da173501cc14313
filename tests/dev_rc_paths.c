/* SPDX-License-Identifier: MIT */
/*
 * The two RC data paths on the device under test: the RDMA WRITE ring a
 * busy-polling subscriber gets by default, and SEND/RECV (MSGA_SUB_NO_RING,
 * or any connection made in event mode). Both must deliver the same
 * stream; a held ring message must pin the ring (back-pressure, no loss);
 * msga_ctx_fd() must refuse a context whose data would wake nobody; and a
 * reassembled message can be held past later large ones. A callback may
 * publish, but polling its own context from there is refused. A claim's
 * room survives whatever the publisher sends between claim and commit.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "internal.h"

/*
 * Whether ctx's device takes a ring: since 0.8 not siw, which ignores
 * zero-based registration (lib/core/context.c), and no address of ours
 * goes on the wire. There a busy-poll subscriber takes SEND/RECV, and
 * the ring tests check exactly that instead.
 */
static int ring_device(const struct msga_ctx *ctx)
{
	return ctx->zero_based;
}

/* On a device without rings, sub's connections took SEND/RECV. */
static int no_ring_here(struct msga_ctx *cs, struct msga_ctx *cp,
			struct msga_sub *sub, struct msga_pub *pub)
{
	struct msga_ctx *both[2] = { cp, cs };

	if (ring_device(cs))
		return 0;
	dp_connect(sub, pub, both, 2, 1);
	/* a ring connection would make the fd refuse (-EBUSY) */
	cr_expect_geq(msga_ctx_fd(cs), 0, "siw: a ring was offered: %s",
		      msga_ctx_last_error(cs));
	msga_ctx_close(cs);
	msga_ctx_close(cp);
	return 1;
}

static uint32_t topic(struct msga_pub *pub, const char *name)
{
	uint32_t id = UINT32_MAX;
	int ret = msga_pub_topic(pub, name, &id);

	cr_assert_eq(ret, 0, "msga_pub_topic(%s) = %d", name, ret);
	return id;
}

static struct msga_sub *sub_with(struct msga_ctx *ctx, const char *pattern,
				 uint32_t flags, msga_msg_cb on_msg,
				 struct dp_rec *rec)
{
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = pattern,
				   .flags = flags, .on_msg = on_msg,
				   .on_event = dp_on_event, .user = rec };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	return sub;
}

Test(rc_paths, ring_and_send_recv_deliver_the_same_stream, .timeout = 180)
{
	static struct dp_rec ring_rec, send_rec, ev;
	static const size_t sizes[] = { 64, 64, 200, 64, 1000, 64, 4072, 300 };
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "paths");
	uint64_t seq = 0;

	ring_rec.strict = send_rec.strict = 1;
	dp_connect(sub_with(cs, "paths", 0, dp_on_msg, &ring_rec), pub, both,
		   2, 1);
	dp_connect(sub_with(cs, "paths", MSGA_SUB_NO_RING, dp_on_msg,
			    &send_rec), pub, both, 2, 2);
	/* Several MiB: the 256 KiB ring wraps (with PADs) many times. */
	for (int i = 0; i < 12000; i++) {
		size_t len = i % 1000 == 999 ? 3 * MSGA_FRAG_MAX + 5 :
					       sizes[i % 8];

		/* Every 2000 messages, publish without polling the
		 * subscribers until the publisher is pushed back. */
		if (i % 2000 == 1000) {
			struct msga_claim c = { .size = sizeof(c) };
			int ret;

			while ((ret = msga_pub_claim(pub, t, 64, &c)) == 0) {
				dp_fill(c.data, 64, t, ++seq);
				cr_assert_eq(msga_pub_commit(pub, &c), 2);
			}
			cr_assert_eq(ret, -EAGAIN);
		}
		dp_send(pub, t, ++seq, len, both, 2);
	}
	cr_assert(dp_poll_until64(both, 2, &ring_rec.total, seq, 60000),
		  "ring: %llu of %llu", (unsigned long long)ring_rec.total,
		  (unsigned long long)seq);
	cr_assert(dp_poll_until64(both, 2, &send_rec.total, seq, 60000),
		  "send/recv: %llu of %llu",
		  (unsigned long long)send_rec.total, (unsigned long long)seq);
	cr_expect_eq(ring_rec.bad, 0, "%s", ring_rec.first_bad);
	cr_expect_eq(send_rec.bad, 0, "%s", send_rec.first_bad);
	cr_expect_eq(ring_rec.bytes, send_rec.bytes);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

static struct msga_msg ring_held;
static int ring_hold_ret = 1;

static void hold_seq1(const struct msga_msg *m, void *user)
{
	if (m->seq == 1) {
		ring_hold_ret = msga_msg_hold(m);
		ring_held = *m;
	}
	dp_on_msg(m, user);
}

Test(rc_paths, held_ring_message_pins_the_ring_until_released,
     .timeout = 120)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "pin");
	uint64_t seq = 0, stall_ms = 0;
	struct msga_claim c = { .size = sizeof(c) };
	int ret;

	struct msga_sub *sub;

	rec.strict = 1;
	sub = sub_with(cs, "pin", 0, hold_seq1, &rec);
	if (no_ring_here(cs, cp, sub, pub))
		return;
	dp_connect(sub, pub, both, 2, 1);
	/* The subscriber is polled all along: only the hold can stop us. */
	for (uint64_t end = dp_now_ms() + 60000; dp_now_ms() < end;) {
		ret = msga_pub_claim(pub, t, 1000, &c);
		if (ret == -EAGAIN) {
			if (!stall_ms)
				stall_ms = dp_now_ms();
			if (dp_now_ms() - stall_ms > 1500)
				break;
			msga_ctx_poll(cs, 64);
			msga_ctx_poll(cp, 64);
			continue;
		}
		cr_assert_eq(ret, 0);
		stall_ms = 0;
		dp_fill(c.data, 1000, t, ++seq);
		cr_assert_eq(msga_pub_commit(pub, &c), 1);
		msga_ctx_poll(cs, 64);
	}
	cr_assert_eq(ring_hold_ret, 0);
	cr_assert(stall_ms, "the publisher was never pushed back");
	cr_expect_lt(seq, 300, "a 256 KiB ring holds ~250 1000-byte records");
	cr_assert(dp_poll_until64(both, 2, &rec.total, seq, 10000));
	cr_expect_eq(dp_check(ring_held.data, ring_held.len, t, 1), 0,
		     "the held message is intact");
	msga_msg_release(&ring_held);
	for (int i = 0; i < 2000; i++)
		dp_send(pub, t, ++seq, 1000, both, 2);
	cr_assert(dp_poll_until64(both, 2, &rec.total, seq, 30000),
		  "got %llu of %llu after the release",
		  (unsigned long long)rec.total, (unsigned long long)seq);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

Test(rc_paths, ctx_fd_refuses_a_busy_poll_ring_connection, .timeout = 60)
{
	static struct dp_rec r1, r2, r3, ev;
	struct msga_ctx *cp = devtest_open_ctx(), *c1 = devtest_open_ctx();
	struct msga_ctx *c2 = devtest_open_ctx(), *c3 = devtest_open_ctx();
	struct msga_ctx *all[4] = { cp, c1, c2, c3 };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "fd");
	int fd;

	if (!ring_device(c1)) {
		msga_ctx_close(c3);
		msga_ctx_close(c2);
		cr_assert(no_ring_here(c1, cp, dp_sub(c1, "fd", &r1), pub));
		(void)t;
		return;
	}
	dp_connect(dp_sub(c1, "fd", &r1), pub, all, 4, 1);
	cr_expect_eq(msga_ctx_fd(c1), -EBUSY);
	cr_expect(strstr(msga_ctx_last_error(c1), "MSGA_SUB_NO_RING"), "%s",
		  msga_ctx_last_error(c1));
	dp_connect(sub_with(c2, "fd", MSGA_SUB_NO_RING, dp_on_msg, &r2), pub,
		   all, 4, 2);
	cr_expect_geq(msga_ctx_fd(c2), 0);
	/* fd first: the connection takes SEND/RECV on its own. */
	fd = msga_ctx_fd(c3);
	cr_assert_geq(fd, 0);
	dp_connect(dp_sub(c3, "fd", &r3), pub, all, 4, 3);
	cr_expect_eq(msga_ctx_fd(c3), fd);
	for (uint64_t s = 1; s <= 500; s++)
		dp_send(pub, t, s, 64, all, 4);
	cr_assert(dp_poll_until64(all, 4, &r1.total, 500, 20000));
	cr_assert(dp_poll_until64(all, 4, &r2.total, 500, 20000));
	cr_assert(dp_poll_until64(all, 4, &r3.total, 500, 20000));
	cr_expect_eq(r1.bad + r2.bad + r3.bad, 0);
	for (int i = 3; i >= 0; i--)
		msga_ctx_close(all[i]);
}

static struct msga_msg big_held;
static int big_hold_ret = 1, big_hold_again = 1;

static void hold_big(const struct msga_msg *m, void *user)
{
	if (m->len > MSGA_FRAG_MAX && (m->seq == 1 || m->seq == 5)) {
		big_hold_ret = msga_msg_hold(m);
		big_hold_again = msga_msg_hold(m);
		big_held = *m;
	}
	dp_on_msg(m, user);
}

static void reassembled_hold(uint32_t flags)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	uint32_t t = topic(pub, "big");

	memset(&rec, 0, sizeof(rec));
	big_hold_ret = big_hold_again = 1;
	rec.strict = 1;
	dp_connect(sub_with(ctx, "big", flags, hold_big, &rec), pub, &ctx, 1,
		   1);
	dp_send(pub, t, 1, 3 * MSGA_FRAG_MAX + 11, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 1, 10000));
	cr_expect_eq(big_hold_ret, 0);
	cr_expect_eq(big_hold_again, -EALREADY);
	/* Three more large messages are reassembled while it is held. */
	for (uint64_t s = 2; s <= 4; s++)
		dp_send(pub, t, s, 3 * MSGA_FRAG_MAX + 11, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 4, 10000));
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(dp_check(big_held.data, big_held.len, t, 1), 0,
		     "held message overwritten");
	cr_expect_eq(msga_msg_hold(&big_held), -EALREADY);
	msga_msg_release(&big_held);
	msga_msg_release(&big_held); /* a second release is a no-op */
	/* Held at close: msga_ctx_close() frees it (ASan checks). */
	dp_send(pub, t, 5, 2 * MSGA_FRAG_MAX, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 5, 10000));
	cr_expect_eq(big_hold_ret, 0);
	msga_ctx_close(ctx);
}

Test(rc_paths, reassembled_message_held_over_ring, .timeout = 60)
{
	reassembled_hold(0);
}

Test(rc_paths, reassembled_message_held_over_send_recv, .timeout = 60)
{
	reassembled_hold(MSGA_SUB_NO_RING);
}

/*
 * A callback may publish but not poll its own context. On context A, a
 * subscriber's callback: polls A (-EDEADLK), echoes the message on
 * another publisher of A (works), starts a 1 MiB message on a blocking
 * publisher of A and then sends (and claims) a small one there, which
 * would have to wait for the large one and cannot poll (-EDEADLK). B
 * receives the echo and the large one.
 */
static struct {
	struct msga_ctx *ctx;
	struct msga_pub *echo, *blocking;
	uint32_t echo_topic, big_topic;
	int poll_ret, echo_ret, big_ret, wait_ret, claim_ret, calls;
	struct msga_claim big, small;
} nest = { .big.size = sizeof(struct msga_claim),
	    .small.size = sizeof(struct msga_claim) };

static void nest_on_msg(const struct msga_msg *msg, void *user)
{
	char small[64] = { 0 };

	if (nest.calls++)
		return;
	nest.poll_ret = msga_ctx_poll(nest.ctx, 16);
	/* (topic 0, seq 1) both ways: the echo passes the same check) */
	nest.echo_ret = msga_pub_send(nest.echo, nest.echo_topic, msg->data,
				      msg->len);
	nest.big_ret = msga_pub_claim(nest.blocking, nest.big_topic,
				      MSGA_MSG_MAX, &nest.big);
	if (!nest.big_ret) {
		dp_fill(nest.big.data, MSGA_MSG_MAX, nest.big_topic, 1);
		nest.big_ret = msga_pub_commit(nest.blocking, &nest.big);
	}
	nest.wait_ret = msga_pub_send(nest.blocking, nest.big_topic, small,
				      sizeof(small));
	/* (a claim waits the same way: refused, and nothing is claimed) */
	nest.claim_ret = msga_pub_claim(nest.blocking, nest.big_topic,
					sizeof(small), &nest.small);
}

Test(rc_paths, a_callback_may_publish_but_not_poll_its_context,
     .timeout = 120)
{
	static struct dp_rec in_rec, echo_rec, big_rec, ev;
	struct msga_ctx *ca = devtest_open_ctx(), *cb = devtest_open_ctx();
	struct msga_ctx *cc = devtest_open_ctx(), *all[3] = { ca, cb, cc };
	struct msga_pub *in = dp_pub(cc, 0, &ev);
	uint32_t in_topic = topic(in, "nest.in");

	nest.ctx = ca;
	nest.echo = dp_pub(ca, 0, &ev);
	nest.blocking = dp_pub(ca, MSGA_PUB_BLOCK, &ev);
	nest.echo_topic = topic(nest.echo, "nest.echo");
	nest.big_topic = topic(nest.blocking, "nest.big");
	dp_connect(sub_with(ca, "nest.in", 0, nest_on_msg, &in_rec), in, all,
		   3, 1);
	dp_connect(sub_with(cb, "nest.echo", 0, dp_on_msg, &echo_rec),
		   nest.echo, all, 3, 1);
	dp_connect(sub_with(cb, "nest.big", 0, dp_on_msg, &big_rec),
		   nest.blocking, all, 3, 1);
	dp_send(in, in_topic, 1, 64, all, 3);
	cr_assert(dp_poll_until(all, 3, &nest.calls, 1, 10000));
	cr_expect_eq(nest.poll_ret, -EDEADLK);
	cr_expect_eq(nest.echo_ret, 1, "echo from a callback: %d",
		     nest.echo_ret);
	cr_expect_eq(nest.big_ret, 1, "1 MiB message: %d", nest.big_ret);
	cr_expect_eq(nest.wait_ret, -EDEADLK);
	cr_expect_eq(nest.claim_ret, -EDEADLK);
	/* Outside callbacks all of it goes on: the echo and the 1 MiB one. */
	cr_assert(dp_poll_until64(all, 3, &echo_rec.total, 1, 10000));
	cr_assert(dp_poll_until64(all, 3, &big_rec.total, 1, 30000));
	cr_expect_eq(echo_rec.bad + big_rec.bad, 0, "%s%s",
		     echo_rec.first_bad, big_rec.first_bad);
	msga_ctx_close(cc);
	msga_ctx_close(cb);
	msga_ctx_close(ca);
}

/*
 * A claim found room on every matching connection; what the publisher
 * sends before the commit (here: announcements of 700 new topics, more
 * than the SEND connection's 128 credits and the ring connection's send
 * queue) must leave it, or the commit would reach one subscriber and
 * skip the other. Both get the message, and every topic after.
 */
Test(rc_paths, a_claim_keeps_its_room_until_commit, .timeout = 120)
{
	static struct dp_rec ring_rec, send_rec, ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "room.0"), last = 0;
	struct msga_claim c = { .size = sizeof(c) };
	char name[32];

	ring_rec.strict = send_rec.strict = 1;
	dp_connect(sub_with(cs, "room.*", 0, dp_on_msg, &ring_rec), pub,
		   both, 2, 1);
	dp_connect(sub_with(cs, "room.*", MSGA_SUB_NO_RING, dp_on_msg,
			    &send_rec), pub, both, 2, 2);
	cr_assert_eq(msga_pub_claim(pub, t, 64, &c), 0);
	dp_fill(c.data, 64, t, 1);
	for (int i = 1; i <= 700; i++) {
		snprintf(name, sizeof(name), "room.%d", i);
		last = topic(pub, name);
	}
	cr_expect_eq(msga_pub_commit(pub, &c), 2);
	cr_assert(dp_poll_until64(both, 2, &ring_rec.total, 1, 10000));
	cr_assert(dp_poll_until64(both, 2, &send_rec.total, 1, 10000));
	/* The held-back announcements go out once there is room. */
	dp_send(pub, last, 1, 64, both, 2);
	cr_assert(dp_poll_until64(both, 2, &ring_rec.total, 2, 10000));
	cr_assert(dp_poll_until64(both, 2, &send_rec.total, 2, 10000));
	cr_expect_eq(ring_rec.bad + send_rec.bad, 0, "%s%s",
		     ring_rec.first_bad, send_rec.first_bad);
	for (int k = 0; k < DP_CONNS; k++)
		if (ring_rec.got[k][last % DP_TOPICS])
			cr_expect_str_eq(ring_rec.topic_name[k]
						    [last % DP_TOPICS], name);
	cr_expect_eq(ev.disconnected, 0);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

/*
 * Issue 23 items 3 and 4: on every RC path (ring, SEND/RECV, BATCH
 * records, reassembled messages) msg->data is aligned (16 bytes on the
 * ring, 8 elsewhere), and holding a copy of an earlier ring message in a
 * later callback is refused with -EINVAL.
 */
struct align_rec {
	struct dp_rec rec;
	int ring;
	uint64_t misaligned, stale_ok, stale_tried;
	struct msga_msg prev;
	int have_prev;
};

static void align_on_msg(const struct msga_msg *m, void *user)
{
	struct align_rec *a = user;
	uintptr_t want = a->ring && m->len <= MSGA_FRAG_MAX ? 16 : 8;

	a->misaligned += (uintptr_t)m->data % want != 0;
	if (a->ring && a->have_prev && a->prev.len <= MSGA_FRAG_MAX) {
		int ret = msga_msg_hold(&a->prev);

		a->stale_tried++;
		if (ret != -EINVAL) {
			a->stale_ok++;
			if (!ret)
				msga_msg_release(&a->prev);
		}
	}
	a->prev = *m;
	a->have_prev = 1;
	dp_on_msg(m, &a->rec);
}

Test(rc_paths, data_is_aligned_on_every_path_and_stale_holds_fail,
     .timeout = 180)
{
	static struct align_rec ring_a = { .ring = 1 }, send_a;
	static struct dp_rec ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	uint32_t t = topic(pub, "align");
	uint64_t seq = 0;

	struct msga_sub *ring_sub = sub_with(cs, "align", 0, align_on_msg,
					     (struct dp_rec *)&ring_a);

	if (no_ring_here(cs, cp, ring_sub, pub))
		return;
	dp_connect(ring_sub, pub, both, 2, 1);
	dp_connect(sub_with(cs, "align", MSGA_SUB_NO_RING, align_on_msg,
			    (struct dp_rec *)&send_a), pub, both, 2, 2);
	for (int round = 0; round < 3; round++) {
		/* every size from 16 (dp_fill's least) to 300, a large
		 * message, polled as we go */
		for (size_t len = 16; len <= 300; len++)
			dp_send(pub, t, ++seq, len, both, 2);
		dp_send(pub, t, ++seq, 2 * MSGA_FRAG_MAX + 7, both, 2);
		/* a burst the subscriber is not polled for: BATCHes */
		for (size_t len = 16; len < 136; len++) {
			struct msga_claim c = { .size = sizeof(c) };

			if (msga_pub_claim(pub, t, len, &c))
				break;
			dp_fill(c.data, len, t, ++seq);
			cr_assert_eq(msga_pub_commit(pub, &c), 2);
		}
	}
	cr_assert(dp_poll_until64(both, 2, &ring_a.rec.total, seq, 60000));
	cr_assert(dp_poll_until64(both, 2, &send_a.rec.total, seq, 60000));
	cr_expect_eq(ring_a.misaligned, 0, "ring: %llu misaligned",
		     (unsigned long long)ring_a.misaligned);
	cr_expect_eq(send_a.misaligned, 0, "send/recv: %llu misaligned",
		     (unsigned long long)send_a.misaligned);
	cr_assert_gt(ring_a.stale_tried, 100);
	cr_expect_eq(ring_a.stale_ok, 0, "%llu stale holds accepted",
		     (unsigned long long)ring_a.stale_ok);
	cr_expect_eq(ring_a.rec.bad, 0, "%s", ring_a.rec.first_bad);
	cr_expect_eq(send_a.rec.bad, 0, "%s", send_a.rec.first_bad);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}
