/* SPDX-License-Identifier: MIT */
/*
 * Device tests of hardening fixes (issue 23) that are seen only with a
 * hostile peer or an unlucky callback:
 *  - a publisher's TOPIC record (RC) or a datagram (multicast) naming a
 *    topic msga_pub_topic() would refuse never reaches msg->topic: RC
 *    ends the connection with -EPROTO, a datagram is counted as foreign;
 *  - (0.12) an RC LAST_VALUE after its topic's live data, or a second
 *    one (a replay of an old value), ends the connection with -EPROTO;
 *  - a blocking claim or send whose wait runs a callback that destroys
 *    the publisher returns -ESHUTDOWN and touches nothing freed;
 *  - a subscriber's shared receive queue keeps its full depth through
 *    many connection teardowns (a regression guard, see the test).
 *
 * The hostile peers are raw verbs in this process (dev_raw_peer.h),
 * speaking lib/wire.h and lib/ud_wire.h (built in).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "ud_wire.h"
#include "wire.h"

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

/* The name of the topic a message arrived on (the first one seen). */
static const char *topic_seen(const struct dp_rec *rec)
{
	for (int c = 0; c < DP_CONNS; c++)
		for (int t = 0; t < DP_TOPICS; t++)
			if (rec->topic_name[c][t][0])
				return rec->topic_name[c][t];
	return "";
}

/* ------------------------------------------------ a raw RC publisher */

/* The raw publisher's completions: receives counted, sends forgotten. */
static void raw_pub_poll(struct raw_pub *rp)
{
	struct ibv_wc wc[8];
	int n = ibv_poll_cq(rp->cq, 8, wc);

	for (int i = 0; i < n; i++)
		rp->heard += wc[i].status == IBV_WC_SUCCESS &&
			     (wc[i].opcode & IBV_WC_RECV);
}

/* Turn the subscriber's context, the raw peer's cm and its CQ. */
static void raw_pub_turn(struct raw_pub *rp, struct msga_ctx *ctx)
{
	raw_turn(&rp->cm, ctx);
	if (rp->cq)
		raw_pub_poll(rp);
}

/*
 * Accept the subscriber connecting to rp's listener (it offers no ring:
 * MSGA_SUB_NO_RING, so all it sends are SENDs), and return once it
 * reported CONNECTED and its SUBSCRIBE arrived (only then may we send:
 * iWARP's initiator sends first).
 */
static void raw_pub_connect(struct raw_pub *rp, struct msga_ctx *ctx,
			    const struct dp_rec *rec)
{
	uint64_t end;

	raw_pub_accept(rp, ctx);
	cr_assert_eq(rp->hello.ring_size, 0, "MSGA_SUB_NO_RING offered a ring");
	end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	while (!rp->cm.established || !rec->connected || !rp->heard) {
		cr_assert_lt(dp_now_ms(), end, "raw publisher: established %d, "
			     "subscriber connected %d, heard %d",
			     rp->cm.established, rec->connected, rp->heard);
		raw_pub_turn(rp, ctx);
	}
}

/* One SEND: h, then h->len bytes of payload (TOPIC, or a whole DATA). */
static void raw_pub_send(struct raw_pub *rp, const struct msga__wire_hdr *h,
			 const void *payload)
{
	char *buf = rp->buf[RAW_PUB_RECVS + rp->sends++ % RAW_PUB_SENDS];
	struct ibv_sge sge = { .addr = (uintptr_t)buf,
			       .length = MSGA__WIRE_HDR_LEN + h->len,
			       .lkey = rp->mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	cr_assert_leq(sge.length, RAW_PUB_SLOT);
	msga__wire_hdr_put(buf, h);
	memcpy(buf + MSGA__WIRE_HDR_LEN, payload, h->len);
	cr_assert_eq(ibv_post_send(rp->cm.req->qp, &wr, &bad), 0);
}

/*
 * A raw publisher names topic 0 with name[0, len), then sends a message
 * on it. Returns once the subscriber got the message or lost the
 * connection; rec says which.
 */
static void raw_publish(const char *name, uint32_t len, struct dp_rec *rec)
{
	static struct raw_pub rp;
	struct msga__wire_hdr topic = { .type = MSGA__W_TOPIC, .len = len };
	struct msga__wire_hdr data = { .type = MSGA__W_DATA,
				       .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				       .seq = 1, .len = 16 };
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub *sub = dp_sub_flags(ctx, "*", MSGA_SUB_NO_RING, rec);
	char msg[16];
	uint64_t end;

	memset(&rp, 0, sizeof(rp));
	cr_assert_geq(msga_sub_connect(sub, dp_uri(raw_listen(&rp.cm)), NULL),
		      0);
	raw_pub_connect(&rp, ctx, rec);
	raw_pub_send(&rp, &topic, name);
	dp_fill(msg, sizeof(msg), 0, 1);
	raw_pub_send(&rp, &data, msg);
	end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	while (!rec->total && !rec->disconnected) {
		cr_assert_lt(dp_now_ms(), end, "the subscriber neither got "
			     "the message nor dropped the connection");
		raw_pub_turn(&rp, ctx);
	}
	msga_ctx_close(ctx);
	raw_pub_close(&rp);
}

TestSuite(hostile);

/* The raw publisher itself is right: a good name is heard. */
Test(hostile, rc_good_topic_name_is_delivered, .timeout = 60)
{
	static struct dp_rec rec;

	raw_publish("good.name", 9, &rec);
	cr_expect_eq(rec.total, 1);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_str_eq(topic_seen(&rec), "good.name");
	cr_expect_eq(rec.disconnected, 0, "status %d", rec.last_status);
}

static void rc_bad_name(const char *name, uint32_t len)
{
	static struct dp_rec rec;

	memset(&rec, 0, sizeof(rec));
	raw_publish(name, len, &rec);
	cr_expect_eq(rec.total, 0, "a message reached on_msg with topic "
		     "\"%s\" (TOPIC record of %u bytes)", topic_seen(&rec),
		     len);
	cr_expect_eq(rec.disconnected, 1);
	cr_expect_eq(rec.last_status, -EPROTO, "status %d (%s)",
		     rec.last_status, msga_strerror(rec.last_status));
}

Test(hostile, rc_topic_name_with_a_star_ends_the_connection, .timeout = 60)
{
	rc_bad_name("bad*name", 8);
}

Test(hostile, rc_topic_name_with_a_control_char_ends_the_connection,
     .timeout = 60)
{
	rc_bad_name("bad\001name", 8);
}

Test(hostile, rc_topic_name_with_a_nul_ends_the_connection, .timeout = 60)
{
	rc_bad_name("bad\0name", 8);
}

/*
 * (0.12) A raw publisher names topic 0 and sends the records of types
 * type[0..n) (DATA whole or LAST_VALUE, 16 bytes each) with numbers
 * seq[], to a subscriber that asked for last values. Returns once the
 * subscriber got want messages and, if it must, lost the connection (or
 * it did neither in time: the caller's asserts say which).
 */
static void raw_last_values(const uint8_t *type, const uint64_t *seq, int n,
			    uint64_t want, int drop, struct dp_rec *rec)
{
	static struct raw_pub rp;
	struct msga__wire_hdr topic = { .type = MSGA__W_TOPIC, .len = 6 };
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub *sub = dp_sub_flags(ctx, "*", MSGA_SUB_NO_RING |
					    MSGA_SUB_LAST_VALUE, rec);
	uint64_t end;
	char msg[16];

	memset(&rp, 0, sizeof(rp));
	cr_assert_geq(msga_sub_connect(sub, dp_uri(raw_listen(&rp.cm)), NULL),
		      0);
	raw_pub_connect(&rp, ctx, rec);
	raw_pub_send(&rp, &topic, "lv.one");
	for (int i = 0; i < n; i++) {
		struct msga__wire_hdr h = { .type = type[i], .seq = seq[i],
					    .len = sizeof(msg) };

		if (type[i] == MSGA__W_DATA)
			h.flags = MSGA__WF_FIRST | MSGA__WF_LAST;
		dp_fill(msg, sizeof(msg), 0, seq[i]);
		raw_pub_send(&rp, &h, msg);
	}
	end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	while (rec->total < want || (drop && !rec->disconnected)) {
		if (dp_now_ms() >= end)
			break;
		raw_pub_turn(&rp, ctx);
	}
	/* a while more: a refusal that should not come has time to */
	for (end = dp_now_ms() + 200; dp_now_ms() < end;)
		raw_pub_turn(&rp, ctx);
	msga_ctx_close(ctx);
	raw_pub_close(&rp);
}

/* The raw publisher is right: a last value, then live, both delivered. */
Test(hostile, rc_last_value_before_live_is_delivered, .timeout = 60)
{
	static struct dp_rec rec;
	static const uint8_t type[] = { MSGA__W_LAST_VALUE, MSGA__W_DATA };
	static const uint64_t seq[] = { 5, 6 };

	raw_last_values(type, seq, 2, 2, 0, &rec);
	cr_expect_eq(rec.total, 2);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.disconnected, 0, "status %d", rec.last_status);
}

/*
 * A last value after the topic's live data (a hostile publisher replaying
 * an old value), or a second one: refused as any malformed record is,
 * the connection ended with -EPROTO; what came before was delivered.
 */
static void rc_late_last_value(const uint8_t *type, const uint64_t *seq)
{
	static struct dp_rec rec;

	memset(&rec, 0, sizeof(rec));
	raw_last_values(type, seq, 2, 1, 1, &rec);
	cr_expect_eq(rec.total, 1, "only the first record is delivered");
	cr_expect_eq(rec.disconnected, 1);
	cr_expect_eq(rec.last_status, -EPROTO, "status %d (%s)",
		     rec.last_status, msga_strerror(rec.last_status));
}

Test(hostile, rc_last_value_after_live_data_ends_the_connection,
     .timeout = 60)
{
	static const uint8_t type[] = { MSGA__W_DATA, MSGA__W_LAST_VALUE };
	static const uint64_t seq[] = { 6, 5 };

	rc_late_last_value(type, seq);
}

Test(hostile, rc_second_last_value_ends_the_connection, .timeout = 60)
{
	static const uint8_t type[] = { MSGA__W_LAST_VALUE,
					MSGA__W_LAST_VALUE };
	static const uint64_t seq[] = { 5, 4 };

	rc_late_last_value(type, seq);
}

/* ------------------------------------------------ a raw UD sender */

#define G_HOSTILE "239.255.10.20"
#define UD_ORIGIN 0xbad0000000000001ull

/* One whole 16-byte message on topic name[0, len) as a datagram. */
static void raw_ud_send(struct raw_ud *u, const char *name, uint8_t len,
			uint64_t seq)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_DATA,
				   .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = len, .msg_len = 16,
				   .origin = UD_ORIGIN, .seq = seq };
	uint32_t n = msga__udw_put(u->buf, &h, name);

	cr_assert_leq(n + 16, sizeof(u->buf));
	dp_fill(u->buf + n, 16, 0, seq);
	raw_ud_post(u, n + 16, u->cm.ud.qkey);
}

static struct msga_sub_stats sub_stats(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

/*
 * Send name's datagram (again, same sequence number: a repeat that does
 * get through is a duplicate) until the subscriber counts it somewhere.
 */
static void ud_until_seen(struct raw_ud *u, struct msga_ctx *ctx,
			  struct msga_sub *sub, const struct dp_rec *rec,
			  const char *name, uint8_t len, uint64_t seq)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	struct msga_sub_stats before = sub_stats(sub), now = before;
	uint64_t total = rec->total;

	while (now.foreign == before.foreign && rec->total == total) {
		cr_assert_lt(dp_now_ms(), end, "no datagram of ours arrived");
		raw_ud_send(u, name, len, seq);
		for (int i = 0; i < 100; i++)
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		now = sub_stats(sub);
	}
}

/*
 * Multicast (RoCE): datagrams from a raw sender in the group, with names
 * the API refuses and a pattern that matches them by prefix, are counted
 * as foreign and never delivered; a good name from the same sender is.
 * iWARP has no multicast: the documented refusal.
 */
Test(hostile, mcast_bad_topic_names_are_foreign, .timeout = 60)
{
	static struct dp_rec rec;
	static struct raw_ud u;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub *sub = dp_sub(ctx, "bad*", &rec);
	struct msga_sub_stats st;

	if (is_iwarp()) {
		cr_expect_eq(msga_sub_connect(sub, "mcast://" G_HOSTILE, NULL),
			     -EOPNOTSUPP);
		msga_ctx_close(ctx);
		return;
	}
	cr_assert_geq(msga_sub_connect(sub, "mcast://" G_HOSTILE, NULL), 0);
	cr_assert(dp_poll_until(&ctx, 1, &rec.connected, 1,
				devtest_wait_s(10) * 1000),
		  "the subscriber never joined: %s", msga_ctx_last_error(ctx));
	raw_ud_join(&u, ctx, G_HOSTILE);
	ud_until_seen(&u, ctx, sub, &rec, "bad*name", 8, 1);
	cr_expect_eq(rec.total, 0, "'bad*name' was delivered as \"%s\"",
		     topic_seen(&rec));
	ud_until_seen(&u, ctx, sub, &rec, "bad\001name", 8, 1);
	cr_expect_eq(rec.total, 0, "'bad\\001name' was delivered as \"%s\"",
		     topic_seen(&rec));
	st = sub_stats(sub);
	cr_expect_geq(st.foreign, 2);
	/* the same sender, a good name: delivered */
	ud_until_seen(&u, ctx, sub, &rec, "bad.good", 8, 1);
	cr_expect_eq(rec.total, 1);
	cr_expect_str_eq(topic_seen(&rec), "bad.good");
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(sub_stats(sub).foreign, st.foreign);
	raw_ud_close(&u);
	msga_ctx_close(ctx);
}

/* ------------------------------------------------ a wait's callback */

#define MSG 256

static struct msga_pub *victim;
static int victim_destroyed;

/* A message for the second subscriber: destroy the blocked publisher. */
static void destroy_victim(const struct msga_msg *msg, void *user)
{
	dp_on_msg(msg, user);
	if (victim) {
		msga_pub_destroy(victim);
		victim = NULL;
		victim_destroyed++;
	}
}

/* One message by msga_pub_claim and commit, or by msga_pub_send. */
static int publish(struct msga_pub *pub, uint32_t t, uint64_t seq,
		   int by_claim)
{
	struct msga_claim claim = { .size = sizeof(claim) };
	char buf[MSG];
	int ret;

	if (!by_claim) {
		dp_fill(buf, MSG, t, seq);
		return msga_pub_send(pub, t, buf, MSG);
	}
	ret = msga_pub_claim(pub, t, MSG, &claim);
	if (ret)
		return ret;
	dp_fill(claim.data, MSG, t, seq);
	return msga_pub_commit(pub, &claim);
}

/*
 * A MSGA_PUB_BLOCK publisher fills the ring of a subscriber whose context
 * is never polled again, and then has to wait. Its wait polls its own
 * context, where a second subscriber has a message waiting: that
 * callback destroys the waiting publisher. The claim or send must return
 * -ESHUTDOWN and read nothing freed (ASan). Before the fix the wait went
 * on with the freed publisher. A wait that never runs the callback ends
 * by the slow-consumer rule, and then the sends never block again.
 */
static void wait_destroys_its_publisher(int by_claim)
{
	static struct dp_rec pe, pe2, r1, r2;
	struct msga_ctx *ca = devtest_open_ctx(), *cb = devtest_open_ctx();
	struct msga_ctx *all[2] = { ca, cb };
	struct msga_pub *pub = dp_pub(ca, MSGA_PUB_BLOCK, &pe);
	struct msga_pub *other = dp_pub(ca, 0, &pe2);
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "other",
				   .on_msg = destroy_victim,
				   .on_event = dp_on_event, .user = &r2 };
	struct msga_sub *s2;
	uint32_t t, t2;
	uint64_t seq;
	char buf[MSG];
	int ret = 0;

	cr_assert_eq(msga_pub_topic(pub, "stalled", &t), 0);
	cr_assert_eq(msga_pub_topic(other, "other", &t2), 0);
	dp_connect(dp_sub(cb, "stalled", &r1), pub, all, 2, 1);
	cr_assert_eq(msga_sub_create(ca, &a, &s2), 0);
	dp_connect(s2, other, all, 2, 1);
	/* sent now, read only by a poll of ca: the blocking wait's */
	dp_fill(buf, MSG, t2, 1);
	cr_assert_geq(msga_pub_send(other, t2, buf, MSG), 1);
	victim = pub;
	for (seq = 1; !victim_destroyed; seq++) {
		cr_assert_lt(seq, 100000, "the publisher never waited");
		ret = publish(pub, t, seq, by_claim);
		if (ret < 0)
			break;
	}
	cr_expect_eq(victim_destroyed, 1);
	cr_expect_eq(ret, -ESHUTDOWN, "%s = %d (%s) after %llu messages",
		     by_claim ? "msga_pub_claim" : "msga_pub_send", ret,
		     msga_strerror(ret), (unsigned long long)seq);
	cr_expect_eq(r2.total, 1);
	msga_ctx_close(cb);
	msga_ctx_close(ca);
}

Test(hostile, blocking_claim_whose_wait_destroys_its_publisher,
     .timeout = 60)
{
	wait_destroys_its_publisher(1);
}

Test(hostile, blocking_send_whose_wait_destroys_its_publisher,
     .timeout = 60)
{
	wait_destroys_its_publisher(0);
}

/* ------------------------------------------------ SRQ teardowns */

#define SRQ_CONNS 16       /* MSGA__SRQ_MAX_CONNS: the SRQ's full depth */
#define SRQ_ROUNDS 12
#define SRQ_MSG MSGA_FRAG_MAX /* one SEND each, never batched two to one */
/* (every wait of the SRQ test only catches a hang: srq_fanout) */
#define SRQ_PEER_TIMEOUT_MS 30000u
#define SRQ_HANG_S 120


/* connects a round may try again after a failure (srq_fanout) */
#define SRQ_RETRIES (2 * SRQ_CONNS)

struct srq_rec {
	uint64_t total, bad;
	int connected, disconnected, failed;
	int last_status;
	uint32_t refused[SRQ_RETRIES + 1]; /* failed conn_ids, this round */
	int nrefused;
};

/* Counts only: connections come and go, each with its own sequence. */
static void srq_on_msg(const struct msga_msg *m, void *user)
{
	struct srq_rec *r = user;

	r->total++;
	r->bad += dp_check(m->data, m->len, m->topic_id, m->seq) != 0;
}

static void srq_on_event(const struct msga_event *ev, void *user)
{
	struct srq_rec *r = user;

	r->connected += ev->type == MSGA_EVENT_CONNECTED;
	if (ev->type == MSGA_EVENT_DISCONNECTED) {
		r->disconnected++;
		r->last_status = ev->status;
	} else if (ev->type == MSGA_EVENT_CONNECT_FAILED) {
		r->failed++;
		r->last_status = ev->status;
		if (r->nrefused < SRQ_RETRIES + 1)
			r->refused[r->nrefused++] = ev->conn_id;
	}
}

static void poll_for_ms(struct msga_ctx **ctxs, int nctx, uint64_t ms)
{
	uint64_t end = dp_now_ms() + ms;

	while (dp_now_ms() < end)
		for (int i = 0; i < nctx; i++)
			cr_assert_geq(msga_ctx_poll(ctxs[i], 64), 0);
}

/*
 * A failed connect of this round (seen: those handled) is made again, as
 * the library's reconnection would (off here, so that the test can
 * count). On siw (Linux 6.1, the test VM), 16 connects at once after a
 * teardown sometimes fail for a moment: in a round, 12 of 16 were
 * refused (-ECONNREFUSED), and the publisher's last error said it could
 * not accept one (-ENOMEM); a wait for all 16 without trying again
 * ended at "4 of 16 subscribers counted". All connected when tried
 * again. Bounded: at most SRQ_RETRIES a round. Returns the failures
 * handled.
 */
static int srq_connect_again(struct msga_ctx *cp, struct msga_sub *sub,
			     struct msga_pub *pub, struct srq_rec *r, int seen,
			     int *ids)
{
	for (; seen < r->nrefused; seen++) {
		int i = 0;

		cr_assert_lt(seen, SRQ_RETRIES, "%d connects failed in one "
			     "round: %s", seen + 1, msga_ctx_last_error(cp));
		while (i < SRQ_CONNS && ids[i] != (int)r->refused[seen])
			i++;
		cr_assert_lt(i, SRQ_CONNS, "conn_id %u is not this round's",
			     r->refused[seen]);
		cr_log_info("connection %d failed (%s; publisher: %s): "
			    "connecting again", ids[i],
			    msga_strerror(r->last_status),
			    msga_ctx_last_error(cp));
		ids[i] = dp_connect_id(sub,
					  dp_uri((uint16_t)msga_pub_port(pub)));
		cr_assert_geq(ids[i], 0, "msga_sub_connect = %d", ids[i]);
	}
	return seen;
}

/*
 * SRQ_CONNS connections from sub to a new publisher; returns it. On a
 * loaded TCG guest one thread setting up 2 x SRQ_CONNS queue pairs (and
 * siw's TCP and MPA exchanges) can take many seconds, so the publisher
 * allows the longest handshake (handshake_ms, with the contexts' long
 * peer timeout: SRQ_PEER_TIMEOUT_MS) and the wait only catches a hang;
 * a connect that fails is tried again (srq_connect_again), and a
 * connection that ends says why at once.
 */
static struct msga_pub *srq_fanout(struct msga_ctx **all,
				   struct msga_sub *sub, struct dp_rec *pe,
				   struct srq_rec *r, uint32_t *t, int *ids)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .on_event = dp_on_event, .user = pe,
				   .handshake_ms = MSGA_HANDSHAKE_MAX_MS };
	int ended = r->failed + r->disconnected, ret, seen = 0;
	uint64_t start = dp_now_ms(), end;
	struct msga_pub *pub = NULL;

	r->nrefused = 0;

	ret = msga_pub_create(all[1], &a, &pub);
	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(all[1]));
	cr_assert_eq(msga_pub_topic(pub, "srq", t), 0);
	for (int i = 0; i < SRQ_CONNS; i++) {
		ids[i] = dp_connect_id(sub,
					  dp_uri((uint16_t)msga_pub_port(pub)));
		cr_assert_geq(ids[i], 0, "msga_sub_connect = %d", ids[i]);
	}
	end = start + (uint64_t)devtest_wait_s(SRQ_HANG_S) * 1000;
	while (msga_pub_subscribers(pub) < SRQ_CONNS) {
		seen = srq_connect_again(all[1], sub, pub, r, seen, ids);
		cr_assert_eq(r->failed + r->disconnected, ended + seen,
			     "%d of %d subscribers counted, and a connection "
			     "failed: status %d (%s); subscriber: %s; "
			     "publisher: %s", msga_pub_subscribers(pub),
			     SRQ_CONNS, r->last_status,
			     msga_strerror(r->last_status),
			     msga_ctx_last_error(all[0]),
			     msga_ctx_last_error(all[1]));
		cr_assert_lt(dp_now_ms(), end, "%d of %d subscribers counted "
			     "after %d s", msga_pub_subscribers(pub),
			     SRQ_CONNS, devtest_wait_s(SRQ_HANG_S));
		poll_for_ms(all, 2, 1);
	}
	cr_log_info("%d connections counted in %llu ms", SRQ_CONNS,
		    (unsigned long long)(dp_now_ms() - start));
	return pub;
}

/*
 * Send until a connection has no credit left: with the subscriber's
 * context not polled, every connection's credit ends up in the SRQ. Only
 * the publisher's context is polled, for its send completions; no room
 * after `patience` tries 10 ms apart is the credit's end (0: stop at the
 * first -EAGAIN, SENDs still in flight). Returns the messages sent (to
 * each connection).
 */
static uint64_t srq_fill(struct msga_ctx *cp, struct msga_pub *pub,
			 uint32_t t, int patience)
{
	static char buf[SRQ_MSG];
	uint64_t seq = 1;
	int tries = 0, ret;

	for (;;) {
		dp_fill(buf, SRQ_MSG, t, seq);
		ret = msga_pub_send(pub, t, buf, SRQ_MSG);
		if (ret == -EAGAIN) {
			if (tries++ >= patience)
				break;
			poll_for_ms(&cp, 1, 10);
			continue;
		}
		cr_assert_eq(ret, SRQ_CONNS, "msga_pub_send = %d", ret);
		tries = 0;
		seq++;
	}
	return seq - 1;
}

/*
 * Registered memory is pinned, and siw counts it against RLIMIT_MEMLOCK
 * even for root (siw_umem_get, Linux 6.1; rxe exempts CAP_IPC_LOCK). This
 * one process holds both sides of SRQ_CONNS connections, about 5 MiB
 * (msga_pub_create(3), NOTES), and siw keeps a torn-down connection's
 * pages counted until it frees the QP, after its TCP connection closed:
 * later on a loaded guest. Past the guest's 8 MiB, connects failed with
 * -ENOMEM (or, from the publisher's side, -ECONNREFUSED), so the test
 * lifts the limit, as msga_pub_create(3) advises.
 */
static void srq_lift_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (!setrlimit(RLIMIT_MEMLOCK, &rl))
		return;
	cr_assert_eq(getrlimit(RLIMIT_MEMLOCK, &rl), 0);
	rl.rlim_cur = rl.rlim_max;
	cr_assert_eq(setrlimit(RLIMIT_MEMLOCK, &rl), 0, "RLIMIT_MEMLOCK: %s",
		     strerror(errno));
	cr_log_info("RLIMIT_MEMLOCK stays at %llu bytes (not root?): siw may "
		    "refuse connections", (unsigned long long)rl.rlim_cur);
}

/*
 * Regression guard for issue 23 item 11. A subscriber's SEND/RECV
 * connections share its SRQ; a connection torn down while a SEND into it
 * is half arrived has an SRQ receive in progress, which the device
 * completes (flushed) only after the QP went to the error state. Freed
 * too early, that receive is lost to the SRQ for good, and the SRQ then
 * holds fewer receives than the credit its connections hand out: a burst
 * that uses every credit at once meets an empty SRQ, an RNR (rdma_cm's
 * rnr_retry_count is 0) and a dead connection.
 *
 * Rounds of SRQ_CONNS connections are torn down with full-credit bursts
 * in flight (by the publisher going away, and by the subscriber
 * disconnecting), then a last round's burst must arrive whole with no
 * connection lost. The publishers' context alone is polled during a burst
 * so the subscriber re-posts nothing until every SEND has landed.
 *
 * A guard, not a reproducer: on the test bed's rxe and siw (Linux 6.1)
 * it passes on the code before the fix (120a948) as well; no receive was
 * seen lost there. It fails if a change makes teardown lose receives.
 */
Test(hostile, srq_keeps_its_depth_after_many_teardowns, .timeout = 600)
{
	static struct dp_rec pe;
	static struct srq_rec r;
	struct msga_ctx *cs = devtest_open_ctx_timeout(SRQ_PEER_TIMEOUT_MS);
	struct msga_ctx *cp = devtest_open_ctx_timeout(SRQ_PEER_TIMEOUT_MS);
	struct msga_ctx *all[2] = { cs, cp };
	/*
	 * (NO_RECONNECT: each round's connections end for good, as the test
	 * counts them; a subscriber that reconnects would try each destroyed
	 * publisher's port again beside the next round's connections)
	 */
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "srq",
				   .flags = MSGA_SUB_NO_RING |
					    MSGA_SUB_NO_RECONNECT,
				   .on_msg = srq_on_msg,
				   .on_event = srq_on_event, .user = &r };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint64_t sent, base, end;
	uint32_t t;
	int gone, ids[SRQ_CONNS], hang_ms = devtest_wait_s(SRQ_HANG_S) * 1000;

	srq_lift_memlock();
	cr_assert_eq(msga_sub_create(cs, &a, &sub), 0);
	for (int round = 0; round < SRQ_ROUNDS; round++) {
		memset(&pe, 0, sizeof(pe));
		pub = srq_fanout(all, sub, &pe, &r, &t, ids);
		srq_fill(cp, pub, t, 0);
		/* the side that ends them is told (a disconnect of our own
		 * raises no event) */
		if (round % 2) {
			gone = r.disconnected;
			msga_pub_destroy(pub);
			cr_assert(dp_poll_until(all, 2, &r.disconnected,
						gone + SRQ_CONNS,
						hang_ms),
				  "round %d: the subscriber saw %d of %d "
				  "connections end", round,
				  r.disconnected - gone, SRQ_CONNS);
		} else {
			for (int i = 0; i < SRQ_CONNS; i++)
				msga_sub_disconnect(sub, (uint32_t)ids[i]);
			cr_assert(dp_poll_until(all, 2, &pe.disconnected,
						SRQ_CONNS,
						hang_ms),
				  "round %d: the publisher saw %d of %d "
				  "connections end", round, pe.disconnected,
				  SRQ_CONNS);
			msga_pub_destroy(pub);
		}
		/* the dead connections are freed (srq.c's quiet time) */
		poll_for_ms(all, 2, devtest_scale_ms(300));
	}
	cr_expect_eq(r.bad, 0);
	/* the last round: every connection's whole credit at once */
	memset(&pe, 0, sizeof(pe));
	gone = r.disconnected;
	base = r.total;
	pub = srq_fanout(all, sub, &pe, &r, &t, ids);
	sent = srq_fill(cp, pub, t, 20);
	cr_log_info("burst: %llu messages to each of %d connections",
		    (unsigned long long)sent, SRQ_CONNS);
	poll_for_ms(&cp, 1, devtest_scale_ms(500));
	end = dp_now_ms() + (uint64_t)hang_ms;
	while (r.total - base < sent * SRQ_CONNS &&
	       r.disconnected == gone && !pe.disconnected) {
		cr_assert_lt(dp_now_ms(), end, "the burst stalled: %llu of "
			     "%llu", (unsigned long long)(r.total - base),
			     (unsigned long long)(sent * SRQ_CONNS));
		poll_for_ms(all, 2, 1);
	}
	cr_expect_eq(pe.disconnected, 0, "the publisher lost %d "
		     "connection(s): status %d (%s)", pe.disconnected,
		     pe.last_status, msga_strerror(pe.last_status));
	cr_expect_eq(r.disconnected, gone, "the subscriber lost %d "
		     "connection(s): status %d", r.disconnected - gone,
		     r.last_status);
	cr_expect_eq(r.total - base, sent * SRQ_CONNS);
	cr_expect_eq(r.bad, 0);
	msga_ctx_close(cp);
	msga_ctx_close(cs);
}
