/* SPDX-License-Identifier: MIT */
/*
 * Device tests of what bounds a publisher (issue 23, items 6-8): a slow
 * consumer is dropped and the others go on, a blocking publish ends, a
 * peer that never subscribes is dropped after the peer timeout, the
 * connection cap refuses the one too many, and a changed claim is refused
 * without harm.
 *
 * The hostile peers are raw rdma_cm clients in this process: they send a
 * valid hello (lib/wire.c, built in) and then nothing at all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rdma/rdma_cma.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"

#define MSG 256               /* fills a 256 KiB ring in about 900 */
#define SLOW_MS 500u          /* slow_consumer_ms here (scaled) */
#define LONG_TIMEOUT_MS 10000 /* a peer timeout liveness never reaches */

static struct msga_pub *pub_with(struct msga_ctx *ctx, uint32_t flags,
				 uint32_t slow_ms, uint32_t max_conns,
				 struct dp_rec *ev)
{
	struct msga_pub_attr a = { .size = sizeof(a), .flags = flags,
				   .uri = dp_uri(0), .on_event = dp_on_event,
				   .user = ev, .slow_consumer_ms = slow_ms,
				   .max_conns = max_conns };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &a, &pub);

	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

/* ------------------------------------------------ attributes */

Test(pub_limits, create_checks_the_new_fields_and_reads_them_by_size,
     .timeout = 60)
{
	static const uint32_t bad_slow[] = { 1, MSGA_PEER_TIMEOUT_MIN_MS - 1,
					     MSGA_PEER_TIMEOUT_MAX_MS + 1 };
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0) };
	struct msga_pub *pub;

	for (unsigned i = 0; i < sizeof(bad_slow) / sizeof(*bad_slow); i++) {
		a.slow_consumer_ms = bad_slow[i];
		cr_expect_eq(msga_pub_create(ctx, &a, &pub), -EINVAL,
			     "slow_consumer_ms %u", bad_slow[i]);
		cr_expect_null(pub);
	}
	a.slow_consumer_ms = 0;
	a.max_conns = MSGA_PUB_CONNS_MAX + 1;
	cr_expect_eq(msga_pub_create(ctx, &a, &pub), -EINVAL);
	a.max_conns = MSGA_PUB_CONNS_MAX;
	a.slow_consumer_ms = MSGA_PEER_TIMEOUT_MIN_MS;
	cr_expect_eq(msga_pub_create(ctx, &a, &pub), 0);
	msga_pub_destroy(pub);
	/* a 0.3 caller: what lies past its size is not read */
	a.size = offsetof(struct msga_pub_attr, slow_consumer_ms);
	a.slow_consumer_ms = 1;
	a.max_conns = UINT32_MAX;
	cr_expect_eq(msga_pub_create(ctx, &a, &pub), 0, "%s",
		     msga_ctx_last_error(ctx));
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

/* ------------------------------------------------ slow consumer */

/*
 * Two subscribers; the second's context is never polled again, so it
 * returns no ring room. Its keepalives would have to stop for liveness
 * to notice (the peer timeout is long here): only the slow-consumer rule
 * can drop it, with -ENOBUFS naming it, while the first, polled with the
 * publisher, gets every message in order. With MSGA_PUB_BLOCK the send
 * that waits on it returns once it is dropped, or at its bound.
 */
static void slow_consumer(uint32_t flags, uint32_t sub_flags)
{
	static struct dp_rec pe, r1, r2;
	struct msga_ctx *cp = devtest_open_ctx_timeout(LONG_TIMEOUT_MS);
	struct msga_ctx *c2 = devtest_open_ctx_timeout(LONG_TIMEOUT_MS);
	struct msga_ctx *all[2] = { cp, c2 };
	struct msga_pub *pub;
	uint64_t seq = 0, dropped_at = 0, end;
	char buf[MSG];
	uint32_t t;
	int slow_id, blocking_timeouts = 0;

	memset(&pe, 0, sizeof(pe));
	memset(&r1, 0, sizeof(r1));
	memset(&r2, 0, sizeof(r2));
	r1.strict = r2.strict = 1;
	pub = pub_with(cp, flags, (uint32_t)devtest_scale_ms(SLOW_MS), 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(cp, "t", sub_flags, &r1), pub, all, 2, 1);
	dp_connect(dp_sub_flags(c2, "t", sub_flags, &r2), pub, all, 2, 2);
	slow_id = 1; /* the publisher's second connection */
	end = dp_now_ms() + (uint64_t)devtest_wait_s(30) * 1000;
	while (!dropped_at || seq < dropped_at + 2000) {
		int ret;

		cr_assert_lt(dp_now_ms(), end, "still held up at seq %llu",
			     (unsigned long long)seq);
		dp_fill(buf, MSG, t, seq + 1);
		ret = msga_pub_send(pub, t, buf, MSG);
		if (ret == -EAGAIN) {
			cr_assert(!(flags & MSGA_PUB_BLOCK));
			cr_assert_geq(msga_ctx_poll(cp, 64), 0);
			continue;
		}
		/* A blocking wait is bounded (twice the limit). The drop
		 * normally ends it first, but a pause of ours (a loaded
		 * machine) restarts the slow one's time while the bound
		 * runs on: then the wait ends first, and is tried again.
		 * Either way it ended; only the drop ends this loop. */
		if (ret == -ETIMEDOUT && (flags & MSGA_PUB_BLOCK)) {
			blocking_timeouts++;
			continue;
		}
		cr_assert_geq(ret, 1, "msga_pub_send = %d (%s)", ret,
			      msga_ctx_last_error(cp));
		seq++;
		if (!dropped_at && pe.disconnected)
			dropped_at = seq;
	}
	cr_log_info("dropped the slow consumer at message %llu (%d blocking "
		    "send(s) ended with -ETIMEDOUT first)",
		    (unsigned long long)dropped_at, blocking_timeouts);
	cr_expect_eq(pe.disconnected, 1);
	cr_expect_eq(pe.last_status, -ENOBUFS, "status %d (%s)",
		     pe.last_status, msga_strerror(pe.last_status));
	cr_expect_eq(pe.last_conn, (uint32_t)slow_id, "named connection %u",
		     pe.last_conn);
	cr_expect_eq(msga_pub_subscribers(pub), 1);
	cr_assert(dp_poll_until64(&cp, 1, &r1.total, seq, 20000),
		  "the live subscriber got %llu of %llu",
		  (unsigned long long)r1.total, (unsigned long long)seq);
	cr_expect_eq(r1.bad, 0, "%s", r1.first_bad);
	cr_expect_eq(r1.disconnected, 0);
	/* the slow one resumes: what it had is in order, then it is told */
	cr_assert(dp_poll_until(all, 2, &r2.disconnected, 1, 20000),
		  "the dropped subscriber was never told");
	cr_expect_leq(r2.total, dropped_at);
	cr_expect_eq(r2.bad, 0, "%s", r2.first_bad);
	msga_ctx_close(c2);
	msga_ctx_close(cp);
}

Test(pub_limits, slow_consumer_is_dropped_ring, .timeout = 120)
{
	slow_consumer(0, 0);
}

Test(pub_limits, slow_consumer_is_dropped_send_recv, .timeout = 120)
{
	slow_consumer(0, MSGA_SUB_NO_RING);
}

Test(pub_limits, slow_consumer_ends_a_blocking_send, .timeout = 120)
{
	slow_consumer(MSGA_PUB_BLOCK, 0);
}

/*
 * A subscriber that is slow but keeps going is not a slow consumer: its
 * context is polled only every twentieth of slow_consumer_ms, a little
 * each time, so the publisher is held up by it again and again, and
 * takes whatever room it makes at once (a look rarely finds room left
 * over). It makes room well within the limit, so it must never be
 * dropped, however long this goes on. Only wall time paces the
 * subscriber: a loaded machine makes the publisher's looks further apart
 * (which never counts against it), not the subscriber's turns.
 */
static void slow_but_progressing(uint32_t sub_flags)
{
	static struct dp_rec pe, rec;
	struct msga_ctx *cp = devtest_open_ctx_timeout(LONG_TIMEOUT_MS);
	struct msga_ctx *cs = devtest_open_ctx_timeout(LONG_TIMEOUT_MS);
	struct msga_ctx *all[2] = { cp, cs };
	uint64_t slow_ms = devtest_scale_ms(SLOW_MS), turn_ms = slow_ms / 20;
	uint64_t seq = 0, held_up = 0, start, next_turn, end;
	struct msga_pub *pub;
	char buf[MSG];
	uint32_t t;

	memset(&pe, 0, sizeof(pe));
	memset(&rec, 0, sizeof(rec));
	rec.strict = 1;
	pub = pub_with(cp, 0, (uint32_t)slow_ms, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	dp_connect(dp_sub_flags(cs, "t", sub_flags, &rec), pub, all, 2, 1);
	start = dp_now_ms();
	next_turn = start + turn_ms;
	end = start + 8 * slow_ms;
	while (dp_now_ms() < end && !pe.disconnected) {
		int ret;

		if (dp_now_ms() >= next_turn) {
			cr_assert_geq(msga_ctx_poll(cs, 64), 0);
			next_turn = dp_now_ms() + turn_ms;
		}
		dp_fill(buf, MSG, t, seq + 1);
		ret = msga_pub_send(pub, t, buf, MSG);
		if (ret == -EAGAIN) {
			held_up++;
			cr_assert_geq(msga_ctx_poll(cp, 64), 0);
			continue;
		}
		cr_assert_geq(ret, 1, "msga_pub_send = %d (%s)", ret,
			      msga_ctx_last_error(cp));
		seq++;
	}
	cr_log_info("%llu messages, held up %llu times, subscriber got %llu",
		    (unsigned long long)seq, (unsigned long long)held_up,
		    (unsigned long long)rec.total);
	cr_assert_eq(pe.disconnected, 0, "a subscriber making room was "
		     "dropped after %llu ms (status %d, %s)",
		     (unsigned long long)(dp_now_ms() - start), pe.last_status,
		     msga_strerror(pe.last_status));
	cr_assert_gt(held_up, 0, "the subscriber never held the publisher up: "
		     "this test tested nothing");
	cr_assert(dp_poll_until64(all, 2, &rec.total, seq, 20000),
		  "the subscriber got %llu of %llu",
		  (unsigned long long)rec.total, (unsigned long long)seq);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.disconnected, 0);
	cr_expect_eq(msga_pub_subscribers(pub), 1);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

DP_TEST_RC_PATHS(pub_limits, slow_but_progressing_is_kept_ring,
		 slow_but_progressing_is_kept_send_recv, slow_but_progressing,
		 120)

/* ------------------------------------------------ raw peers */

/*
 * A peer that completes the handshake and never subscribes would keep a
 * queue pair, a CQ and pinned buffers on the publisher for good; it gets
 * the peer timeout to subscribe, and is then disconnected.
 */
Test(pub_limits, a_peer_that_never_subscribes_is_dropped, .timeout = 60)
{
	static struct dp_rec pe;
	struct msga_ctx *cp = devtest_open_ctx_timeout(200);
	struct msga_pub *pub = dp_pub(cp, 0, &pe);
	struct raw_peer p;
	enum rdma_cm_event_type e;
	uint64_t end;

	/* On a loaded machine the deadline may pass before our side sees
	 * ESTABLISHED: the connect then ends without it, which is a drop
	 * too. Without the deadline it is established and stays so. */
	e = raw_connect(&p, (uint16_t)msga_pub_port(pub), cp);
	cr_log_info("raw connect: cm event %d", (int)e);
	if (e != RDMA_CM_EVENT_ESTABLISHED)
		p.disconnected = 1;
	end = dp_now_ms() + (uint64_t)devtest_wait_s(20) * 1000;
	while (!p.disconnected) {
		cr_assert_lt(dp_now_ms(), end, "the half-open connection "
			     "was never dropped");
		raw_turn(&p, cp);
	}
	cr_expect_eq(msga_pub_subscribers(pub), 0);
	cr_expect_eq(pe.connected + pe.disconnected, 0,
		     "a peer that never subscribed is no subscriber");
	raw_close(&p);
	msga_ctx_close(cp);
}

/* Our own subscriber gets the same deadline for a publisher that never
 * accepts: here a raw listener that takes the request and sits on it. */
Test(pub_limits, a_connect_never_answered_fails_after_the_timeout,
     .timeout = 60)
{
	static struct dp_rec rec;
	struct msga_ctx *cs = devtest_open_ctx_timeout(200);
	struct raw_peer l;
	uint64_t end;

	cr_assert_geq(msga_sub_connect(dp_sub(cs, "t", &rec),
				       dp_uri(raw_listen(&l)), NULL), 0);
	end = dp_now_ms() + (uint64_t)devtest_wait_s(20) * 1000;
	while (!rec.failed && !rec.disconnected) {
		cr_assert_lt(dp_now_ms(), end, "the connect never ended");
		raw_turn(&l, cs); /* a request is taken and never accepted */
	}
	cr_expect(l.req, "the request never reached the listener");
	cr_expect_eq(rec.failed, 1);
	cr_expect_eq(rec.connected, 0);
	cr_expect_eq(rec.last_status, -ETIMEDOUT, "status %d",
		     rec.last_status);
	msga_ctx_close(cs);
	raw_close(&l);
}

/*
 * max_conns counts handshakes in progress: two raw peers that never
 * subscribe fill a cap of two, the third is rejected before anything is
 * allocated for it, and a place that frees up is taken again.
 */
Test(pub_limits, the_connection_cap_rejects_one_too_many, .timeout = 60)
{
	static struct dp_rec pe;
	struct msga_ctx *cp = devtest_open_ctx_timeout(LONG_TIMEOUT_MS);
	struct msga_pub *pub = pub_with(cp, 0, 0, 2, &pe);
	uint16_t port = (uint16_t)msga_pub_port(pub);
	struct raw_peer p[3];
	uint64_t end;

	cr_assert_eq(raw_connect(&p[0], port, cp), RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(raw_connect(&p[1], port, cp), RDMA_CM_EVENT_ESTABLISHED);
	cr_expect_eq(raw_connect(&p[2], port, cp), RDMA_CM_EVENT_REJECTED,
		     "the third connection was not rejected");
	cr_expect(strstr(msga_ctx_last_error(cp), "max_conns"), "%s",
		  msga_ctx_last_error(cp));
	raw_close(&p[2]);
	/* one goes: its place is free again */
	rdma_disconnect(p[0].id);
	raw_close(&p[0]);
	end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	for (;;) {
		enum rdma_cm_event_type e = raw_connect(&p[2], port, cp);

		if (e == RDMA_CM_EVENT_ESTABLISHED)
			break;
		cr_assert_eq(e, RDMA_CM_EVENT_REJECTED);
		raw_close(&p[2]);
		cr_assert_lt(dp_now_ms(), end, "the freed place was not "
			     "taken again");
		for (int i = 0; i < 100; i++)
			raw_turn(&p[1], cp);
	}
	raw_close(&p[2]);
	raw_close(&p[1]);
	msga_ctx_close(cp);
}

/* ------------------------------------------------ tampered claims */

/*
 * Each way of changing a claim between msga_pub_claim() and its commit
 * is refused with -EINVAL and changes nothing: the claim is still there
 * and commits as it was given, and the subscriber gets every message
 * intact on a connection that stays up.
 */
static void tampered_claims(uint32_t sub_flags)
{
	static struct dp_rec pe, rec;
	static char foreign[MSG];
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &pe);
	struct msga_claim c = { .size = sizeof(c) }, copy;
	struct msga_claim old = { .size = sizeof(old) };
	uint32_t t, other;
	uint64_t seq = 0;

	memset(&rec, 0, sizeof(rec));
	rec.strict = 1;
	cr_assert_eq(msga_pub_topic(pub, "t", &t), 0);
	cr_assert_eq(msga_pub_topic(pub, "u", &other), 0);
	dp_connect(dp_sub_flags(ctx, "t", sub_flags, &rec), pub, &ctx, 1, 1);
	for (int tamper = 0; tamper < 6; tamper++) {
		cr_assert_eq(msga_pub_claim(pub, t, MSG, &c), 0);
		dp_fill(c.data, MSG, t, ++seq);
		copy = c;
		switch (tamper) {
		case 0: /* another buffer, with the send buffer's lkey */
			c.data = foreign;
			break;
		case 1: /* inside the claimed buffer, but elsewhere */
			c.data = (char *)c.data + 64;
			break;
		case 2: /* a topic whose room was not checked */
			c.topic_id = other;
			break;
		case 3: /* a topic that does not exist */
			c.topic_id = 1000;
			break;
		case 4: /* more than was claimed */
			c.len = MSG + 1;
			break;
		case 5: /* the library's words */
			c.priv_[0] ^= 1;
			break;
		}
		cr_expect_eq(msga_pub_commit(pub, &c), -EINVAL,
			     "tampering %d committed", tamper);
		cr_expect_eq(msga_pub_abort(pub, &c), -EINVAL,
			     "tampering %d aborted", tamper);
		cr_expect_eq(msga_pub_claim(pub, t, MSG, &old), -EBUSY,
			     "tampering %d: the claim is gone", tamper);
		c = copy;
		cr_assert_eq(msga_pub_commit(pub, &c), 1, "tampering %d",
			     tamper);
		/* stale now: twice, or aborted after commit */
		cr_expect_eq(msga_pub_commit(pub, &copy), -EINVAL);
		cr_expect_eq(msga_pub_abort(pub, &copy), -EINVAL);
	}
	/* an old claim while a new one is out */
	cr_assert_eq(msga_pub_claim(pub, t, MSG, &old), 0);
	cr_assert_eq(msga_pub_abort(pub, &old), 0);
	cr_assert_eq(msga_pub_claim(pub, t, MSG, &c), 0);
	cr_expect_eq(msga_pub_commit(pub, &old), -EINVAL, "a stale claim of "
		     "the same buffer committed");
	dp_fill(c.data, MSG, t, ++seq);
	cr_assert_eq(msga_pub_commit(pub, &c), 1);
	/* and the stream goes on */
	for (int i = 0; i < 100; i++)
		dp_send(pub, t, ++seq, MSG, &ctx, 1);
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, seq, 20000),
		  "got %llu of %llu", (unsigned long long)rec.total,
		  (unsigned long long)seq);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.disconnected + pe.disconnected, 0,
		     "a tampered claim broke the connection");
	cr_expect_eq(msga_pub_subscribers(pub), 1);
	msga_ctx_close(ctx);
}

Test(pub_limits, tampered_claims_are_refused_ring, .timeout = 60)
{
	tampered_claims(0);
}

Test(pub_limits, tampered_claims_are_refused_send_recv, .timeout = 60)
{
	tampered_claims(MSGA_SUB_NO_RING);
}
