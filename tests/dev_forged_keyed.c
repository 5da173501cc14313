/* SPDX-License-Identifier: MIT */
/*
 * Forged datagrams against contexts with keys (issue 26, part 4;
 * lib/ud/dgram_auth.c):
 *  - the Q_Key: a raw UD sender in the group, using rdma_cm's default
 *    Q_Key, never reaches a subscriber in a context with keys (the HCA
 *    drops its datagrams), while the publisher's stream loses nothing;
 *    the same sender with the Q_Key derived from the key does (so it is
 *    the Q_Key that stopped it);
 *  - the MAC: with MSGA_PUB_MAC, a sender that has the Q_Key but not the
 *    key sends datagrams without a MAC and with a wrong one: dropped and
 *    counted (forged) by a MSGA_SUB_REQUIRE_MAC subscriber, the wrong
 *    one by any; the real stream loses nothing, and a right MAC passes;
 *  - a reliable MAC publisher takes its subscribers' signed NAKs (loss
 *    is recovered), ud:// works between keyed contexts (SIDR's Q_Key is
 *    overridden on both sides), and the flags' errors are documented.
 * iWARP has no UD: the documented refusal.
 *
 * The raw sender computes the Q_Key and the MAC with the library's own
 * lib/core/auth.c and lib/proto/dgram_mac.c, built in.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "auth.h"
#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "dgram_mac.h"
#include "mcast.h"
#include "pubsub.h"
#include "ud_wire.h"

#define G_QKEY "239.255.26.41"
#define G_MAC "239.255.26.42"
#define G_NAK "239.255.26.43"
#define G_NAK2 "239.255.26.44"
#define RAW_ORIGIN 0xf0f0000000000001ull
#define N_REAL 600u
#define INJECT_EVERY 20u

static const uint8_t KEY[MSGA_KEY_LEN] = "forged-keyed test key, 32 bytes";

static struct msga_ctx *keyed_ctx(void)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr), .key = KEY,
				      .key_name = "fk" };
	struct msga_ctx *ctx = NULL;
	int ret;

	attr.dev_name = devtest_env()->dev;
	ret = msga_ctx_open(&attr, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open(keyed) = %d: %s", ret,
		     msga_open_error());
	return ctx;
}

static struct msga_sub_stats stats(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

/* ------------------------------------------------ a raw UD sender */

enum raw_mac { RAW_NO_MAC, RAW_BAD_MAC, RAW_GOOD_MAC };

static uint8_t scratch[512]; /* (the MAC's, dgram_mac.h) */

/* One whole 16-byte message on topic seq under qkey, MAC'd as mac says. */
static void raw_ud_send(struct raw_ud *u, const char *topic, uint64_t seq,
			uint32_t qkey, enum raw_mac mac)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_DATA,
				   .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = (uint8_t)strlen(topic),
				   .msg_len = 16, .origin = RAW_ORIGIN,
				   .seq = seq };
	uint32_t n = msga__udw_put(u->buf, &h, topic);
	uint8_t payload[16], mkey[MSGA__DGRAM_MAC_KEY_LEN];

	dp_fill(payload, sizeof(payload), 0, seq);
	if (mac != RAW_NO_MAC) {
		msga__auth_derive(KEY, MSGA__DGRAM_MAC_LABEL, mkey,
				  sizeof(mkey));
		if (mac == RAW_BAD_MAC)
			mkey[0] ^= 1; /* a key near ours is no key */
		n = msga__dgram_mac_sign(mkey, u->buf, n, payload,
					 sizeof(payload), scratch);
	}
	memcpy(u->buf + n, payload, sizeof(payload));
	raw_ud_post(u, n + (uint32_t)sizeof(payload), qkey);
}

/* Poll both contexts for ms (nothing is waited for: a quiet spell). */
static void poll_for(struct msga_ctx **ctx, uint64_t ms)
{
	uint64_t end = dp_now_ms() + ms;

	while (dp_now_ms() < end)
		for (int i = 0; i < 2; i++)
			cr_assert_geq(msga_ctx_poll(ctx[i], 64), 0);
}

/* Send seq, and wait until every receiver has it. */
static void send_paced(struct msga_pub *pub, uint32_t t, uint64_t seq,
		       struct msga_ctx **ctx, struct dp_rec **recs, int nrec)
{
	dp_send(pub, t, seq, 64, ctx, 2);
	for (int i = 0; i < nrec; i++)
		cr_assert(dp_poll_until64(ctx, 2, &recs[i]->total, seq,
					  devtest_wait_s(10) * 1000),
			  "receiver %d is short of seq %llu", i,
			  (unsigned long long)seq);
}

/* The counters until_counted() watches. */
static uint64_t n_forged(const struct msga_sub_stats *st)
{
	return st->forged;
}

static uint64_t n_streams(const struct msga_sub_stats *st)
{
	return st->streams;
}

/*
 * Send the raw datagram (again, a new number each time) until sub's
 * counter moves: the forged ones are counted, not lost on the way.
 * Returns how many it sent.
 */
static uint64_t until_counted(struct raw_ud *u, struct msga_ctx **ctx,
			      struct msga_sub *sub,
			      uint64_t (*counter)(const struct msga_sub_stats *),
			      uint32_t qkey, enum raw_mac mac, uint64_t *seq)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	struct msga_sub_stats st = stats(sub);
	uint64_t before = counter(&st), now;
	uint64_t sent = 0;

	do {
		cr_assert_lt(dp_now_ms(), end, "no raw datagram was counted");
		raw_ud_send(u, "fk.x", ++*seq, qkey, mac);
		sent++;
		for (int i = 0; i < 100; i++)
			for (int c = 0; c < 2; c++)
				cr_assert_geq(msga_ctx_poll(ctx[c], 64), 0);
		st = stats(sub);
		now = counter(&st);
	} while (now == before);
	return sent;
}

struct bed {
	struct msga_ctx *ctx[2];
	struct msga_pub *pub;
	uint32_t t;
	struct dp_rec pe;
};

static void bed_up(struct bed *b, const char *group, uint32_t flags)
{
	struct msga_pub_attr a = { .size = sizeof(a), .flags = flags,
				   .on_event = dp_on_event, .user = &b->pe };
	char uri[64];

	memset(b, 0, sizeof(*b));
	snprintf(uri, sizeof(uri), "mcast://%s", group);
	a.uri = uri;
	b->ctx[0] = keyed_ctx();
	b->ctx[1] = keyed_ctx();
	cr_assert_eq(msga_pub_create(b->ctx[0], &a, &b->pub), 0, "%s",
		     msga_ctx_last_error(b->ctx[0]));
	cr_assert_eq(msga_pub_topic(b->pub, "fk.a", &b->t), 0);
	cr_assert(dp_poll_until(b->ctx, 2, &b->pe.connected, 1,
				devtest_wait_s(10) * 1000),
		  "the publisher never joined %s", group);
}

static struct msga_sub *bed_sub(struct bed *b, const char *group,
				const char *pattern, uint32_t flags,
				struct dp_rec *rec)
{
	struct msga_sub *sub = dp_sub_flags(b->ctx[1], pattern, flags, rec);
	char uri[64];

	snprintf(uri, sizeof(uri), "mcast://%s", group);
	rec->strict = 1;
	cr_assert_geq(msga_sub_connect(sub, uri, NULL), 0);
	cr_assert(dp_poll_until(b->ctx, 2, &rec->connected, 1,
				devtest_wait_s(10) * 1000),
		  "the subscriber never joined %s", group);
	return sub;
}

static void bed_down(struct bed *b)
{
	msga_pub_destroy(b->pub);
	msga_ctx_close(b->ctx[0]);
	msga_ctx_close(b->ctx[1]);
}

/* iWARP: no UD; the flags are still checked first. */
static void check_iwarp_refusal(void)
{
	struct msga_ctx *ctx = keyed_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa),
				    .flags = MSGA_PUB_MAC,
				    .uri = "mcast://" G_MAC };
	struct msga_pub *pub = NULL;
	struct dp_rec rec = { 0 };
	struct msga_sub *sub = dp_sub_flags(ctx, "fk.*", MSGA_SUB_REQUIRE_MAC,
					    &rec);

	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EOPNOTSUPP);
	cr_assert_null(pub);
	cr_assert_eq(msga_sub_connect(sub, "mcast://" G_MAC, NULL),
		     -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

Test(forged_keyed, default_qkey_datagrams_never_reach_the_subscriber,
     .timeout = 180)
{
	static struct raw_ud u;
	struct dp_rec rec = { 0 };
	struct dp_rec *recs[1] = { &rec };
	struct msga_sub_stats st;
	struct msga_sub *sub;
	uint64_t raw_seq = 0;
	struct bed b;

	if (dp_is_iwarp())
		return check_iwarp_refusal();
	bed_up(&b, G_QKEY, 0);
	sub = bed_sub(&b, G_QKEY, "fk.*", 0, &rec);
	raw_ud_join(&u, b.ctx[1], G_QKEY);
	/* what rdma_cm says the group's Q_Key is: the well-known one */
	cr_assert_eq(u.cm.ud.qkey, RDMA_UDP_QKEY);
	for (uint64_t s = 1; s <= N_REAL; s++) {
		send_paced(b.pub, b.t, s, b.ctx, recs, 1);
		if (s % INJECT_EVERY == 0) /* the stream's own topic, too */
			raw_ud_send(&u, s % 40 ? "fk.x" : "fk.a", ++raw_seq,
				    RDMA_UDP_QKEY, RAW_NO_MAC);
	}
	poll_for(b.ctx, 300);
	st = stats(sub);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(rec.total, N_REAL);
	cr_assert_eq(st.msgs, N_REAL);
	cr_assert_eq(st.streams, 1, "a forged stream got in");
	cr_assert_eq(st.foreign + st.filtered + st.forged + st.gaps +
		     st.overflow, 0);
	/* the same sender with the derived Q_Key is heard: a new stream */
	until_counted(&u, b.ctx, sub, n_streams,
		      msga__auth_qkey(KEY), RAW_NO_MAC, &raw_seq);
	cr_assert_eq(stats(sub).streams, 2);
	raw_ud_close(&u);
	bed_down(&b);
}

Test(forged_keyed, mac_forgeries_are_dropped_and_counted, .timeout = 180)
{
	static struct raw_ud u;
	struct dp_rec need = { 0 }, lax = { 0 };
	struct dp_rec *recs[2] = { &need, &lax };
	struct msga_sub *sub_need, *sub_lax;
	struct msga_sub_stats st;
	uint32_t qkey = msga__auth_qkey(KEY);
	uint64_t raw_seq = 0, injected = 0, bad_mac = 0;
	struct bed b;

	if (dp_is_iwarp())
		return check_iwarp_refusal();
	bed_up(&b, G_MAC, MSGA_PUB_MAC);
	sub_need = bed_sub(&b, G_MAC, "fk.*", MSGA_SUB_REQUIRE_MAC, &need);
	sub_lax = bed_sub(&b, G_MAC, "fk.a", 0, &lax); /* (not fk.x) */
	raw_ud_join(&u, b.ctx[1], G_MAC);
	for (uint64_t s = 1; s <= N_REAL; s++) {
		send_paced(b.pub, b.t, s, b.ctx, recs, 2);
		if (s % INJECT_EVERY)
			continue;
		if (s % (2 * INJECT_EVERY)) {
			injected += until_counted(&u, b.ctx, sub_need,
						  n_forged, qkey,
						  RAW_NO_MAC, &raw_seq);
		} else {
			uint64_t n = until_counted(&u, b.ctx, sub_need,
						   n_forged, qkey,
						   RAW_BAD_MAC, &raw_seq);

			injected += n;
			bad_mac += n;
		}
	}
	poll_for(b.ctx, 300);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(recs[i]->bad, 0, "%s", recs[i]->first_bad);
		cr_assert_eq(recs[i]->total, N_REAL, "subscriber %d", i);
	}
	st = stats(sub_need);
	cr_assert_eq(st.msgs, N_REAL);
	cr_assert_eq(st.streams, 1);
	/* every injected datagram counted once; none of the real ones */
	cr_assert_eq(st.forged, injected);
	cr_assert_eq(st.foreign + st.filtered + st.gaps, 0);
	/* without REQUIRE_MAC: the wrong MACs dropped, no MAC let in (as
	 * far as its pattern, which fk.x does not match) */
	st = stats(sub_lax);
	cr_assert_eq(st.forged, bad_mac);
	cr_assert_eq(st.filtered, injected - bad_mac);
	cr_assert_eq(st.streams, 1);
	cr_assert_eq(st.msgs, N_REAL);
	/* a right MAC (the key's) is taken by the strict one */
	until_counted(&u, b.ctx, sub_need, n_streams, qkey, RAW_GOOD_MAC,
		      &raw_seq);
	cr_assert_eq(stats(sub_need).forged, injected);
	raw_ud_close(&u);
	bed_down(&b);
}

/*
 * A reliable MAC publisher takes only MAC'd NAKs: its keyed subscriber
 * signs them, and every dropped datagram is recovered.
 */
Test(forged_keyed, a_mac_publisher_takes_signed_naks, .timeout = 180)
{
	struct dp_rec rec = { 0 };
	struct msga_sub_stats st;
	struct msga_sub *sub;
	struct bed b;

	if (dp_is_iwarp())
		return check_iwarp_refusal();
	bed_up(&b, G_NAK, MSGA_PUB_MAC | MSGA_PUB_RELIABLE);
	/* (by NAK: READ repair would bypass what this test is about) */
	sub = bed_sub(&b, G_NAK, "fk.*",
		      MSGA_SUB_REQUIRE_MAC | MSGA_SUB_REPAIR_BY_NAK, &rec);
	/* every 5th datagram dropped, a gap the next one shows: sent in
	 * runs, each waited for (201: the last run's last is not dropped) */
	b.pub->ud.fault_drop_every = 5;
	for (uint64_t s = 1; s <= 201; s++) {
		dp_send(b.pub, b.t, s, 64, b.ctx, 2);
		if (s % 10 == 1)
			cr_assert(dp_poll_until64(b.ctx, 2, &rec.total, s,
						  devtest_wait_s(30) * 1000),
				  "%llu of %llu delivered",
				  (unsigned long long)rec.total,
				  (unsigned long long)s);
	}
	poll_for(b.ctx, 300);
	st = stats(sub);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(rec.total, 201);
	cr_assert_geq(st.recovered, 40, "recovered %llu",
		      (unsigned long long)st.recovered);
	cr_assert_eq(st.unrecoverable + st.forged, 0);
	cr_assert_geq(b.pub->ud.naks_taken, 1);
	cr_assert_eq(b.pub->ud.forged, 0);
	bed_down(&b);
}

/*
 * A NAK of raw's, MAC'd as mac says, sent straight to the publisher's
 * queue pair (with the derived Q_Key) until counter moves.
 */
static void nak_until(struct raw_ud *u, struct bed *b, struct ibv_ah *to,
		      enum raw_mac mac, const uint64_t *counter)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_NAK, .topic_len = 4,
				   .origin = b->pub->ud.origin, .seq = 1,
				   .msg_len = 3 };
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	uint64_t before = *counter;
	struct ibv_ah *group_ah = u->ah;
	uint32_t group_qpn = u->cm.ud.qp_num, n;
	uint8_t mkey[MSGA__DGRAM_MAC_KEY_LEN];

	msga__auth_derive(KEY, MSGA__DGRAM_MAC_LABEL, mkey, sizeof(mkey));
	if (mac == RAW_BAD_MAC)
		mkey[0] ^= 1;
	u->ah = to;
	u->cm.ud.qp_num = b->pub->ud.ep->qp->qp_num;
	while (*counter == before) {
		cr_assert_lt(dp_now_ms(), end, "no NAK was counted");
		n = msga__udw_put(u->buf, &h, "fk.a");
		if (mac != RAW_NO_MAC)
			n = msga__dgram_mac_sign(mkey, u->buf, n, NULL, 0,
						 scratch);
		raw_ud_post(u, n, msga__auth_qkey(KEY));
		poll_for(b->ctx, 20);
	}
	u->ah = group_ah;
	u->cm.ud.qp_num = group_qpn;
}

/*
 * A MAC publisher drops NAKs without a valid MAC (counted), so a forged
 * NAK makes it resend nothing; a NAK with the key's MAC is answered.
 */
Test(forged_keyed, a_mac_publisher_drops_forged_naks, .timeout = 120)
{
	static struct raw_ud u;
	struct ibv_ah_attr at;
	struct ibv_ah *to;
	struct bed b;

	if (dp_is_iwarp())
		return check_iwarp_refusal();
	bed_up(&b, G_NAK2, MSGA_PUB_MAC | MSGA_PUB_RELIABLE);
	for (uint64_t s = 1; s <= 5; s++)
		dp_send(b.pub, b.t, s, 64, b.ctx, 2);
	raw_ud_join(&u, b.ctx[1], G_NAK2);
	/* the publisher's QP, unicast: same device, same GID as ours */
	at = u.cm.ud.ah_attr;
	at.is_global = 1;
	cr_assert_eq(ibv_query_gid(u.cm.id->verbs, u.cm.id->port_num,
				   at.grh.sgid_index, &at.grh.dgid), 0);
	to = ibv_create_ah(u.cm.id->pd, &at);
	cr_assert(to);
	nak_until(&u, &b, to, RAW_NO_MAC, &b.pub->ud.forged);
	nak_until(&u, &b, to, RAW_BAD_MAC, &b.pub->ud.forged);
	cr_assert_eq(b.pub->ud.naks_taken + b.pub->ud.retx_msgs + b.pub->ud.lost_sent,
		     0, "a forged NAK was answered");
	nak_until(&u, &b, to, RAW_GOOD_MAC, &b.pub->ud.naks_taken);
	cr_assert(dp_poll_until64(b.ctx, 2, &b.pub->ud.retx_msgs, 3,
				  devtest_wait_s(10) * 1000),
		  "the NAK's 3 messages were not resent (%llu)",
		  (unsigned long long)b.pub->ud.retx_msgs);
	ibv_destroy_ah(to);
	raw_ud_close(&u);
	bed_down(&b);
}

/* ud:// between keyed contexts, MAC on: SIDR's Q_Key overridden. */
Test(forged_keyed, ud_between_keyed_contexts, .timeout = 120)
{
	struct msga_ctx *ctx[2] = { keyed_ctx(), keyed_ctx() };
	struct msga_pub_attr a = { .size = sizeof(a), .flags = MSGA_PUB_MAC };
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct dp_rec *recs[1] = { &rec };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub;
	uint32_t t;

	a.uri = dp_ud_uri(0);
	a.on_event = dp_on_event;
	a.user = &pe;
	if (dp_is_iwarp()) {
		cr_assert_eq(msga_pub_create(ctx[0], &a, &pub), -EOPNOTSUPP);
		goto out;
	}
	cr_assert_eq(msga_pub_create(ctx[0], &a, &pub), 0, "%s",
		     msga_ctx_last_error(ctx[0]));
	cr_assert_eq(msga_pub_topic(pub, "fk.u", &t), 0);
	sub = dp_sub_flags(ctx[1], "fk.*", MSGA_SUB_REQUIRE_MAC, &rec);
	rec.strict = 1;
	cr_assert_geq(msga_sub_connect(sub, dp_ud_uri(msga_pub_port(pub)), NULL),
		      0);
	cr_assert(dp_poll_until(ctx, 2, &rec.connected, 1,
				devtest_wait_s(10) * 1000),
		  "no SUBACK: failed %d status %d", rec.failed,
		  rec.last_status);
	for (uint64_t s = 1; s <= 200; s++)
		send_paced(pub, t, s, ctx, recs, 1);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(stats(sub).forged, 0);
	cr_assert_eq(pub->ud.forged, 0);
	msga_pub_destroy(pub);
out:
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/* The flags need keys: -EINVAL on a context without, on any device. */
Test(forged_keyed, mac_flags_need_keys)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa),
				    .flags = MSGA_PUB_MAC,
				    .uri = "mcast://" G_MAC };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "fk.*",
				    .flags = MSGA_SUB_REQUIRE_MAC,
				    .on_msg = dp_on_msg };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL);
	cr_assert_null(pub);
	cr_assert(strstr(msga_ctx_last_error(ctx), "keys"), "%s",
		  msga_ctx_last_error(ctx));
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), -EINVAL);
	cr_assert_null(sub);
	msga_ctx_close(ctx);
}
