/* SPDX-License-Identifier: MIT */
/*
 * Issue 23 item 4: msg->data is at least 8-byte aligned on every delivery
 * path, so a program may cast it to a structure of doubles (msgaccel(7)'s
 * example does). Each path gets every size from 1 to 64 bytes, sizes
 * around its batch and fragment limits, and one message larger than
 * MSGA_FRAG_MAX; every message must arrive, intact, in order, aligned.
 *
 *   RC ring             16 bytes (ring.h), 8 for reassembled messages
 *   RC SEND/RECV (SRQ)  one message per SEND, BATCH records, reassembled
 *   RC in event mode    SEND/RECV, connected after msga_ctx_fd()
 *   UD unicast          a datagram, or reassembled fragments
 *   multicast           the same
 *
 * SEND/RECV with receives of the connection's own (the 17th connection of
 * a subscriber on) is checked by dev_srq. iWARP has no UD: there the UD
 * cases check the documented refusal instead.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "internal.h"

#define G_ALIGN "mcast://239.255.10.20"
#define TOPIC "al.x"
/* The publisher coalesces messages up to this size into a BATCH
 * (MSGA__BATCH_REC_MAX, lib/api/pubsub.h). */
#define BATCH_REC_MAX 512u
#define UDW_HDR_FIXED 36u /* ud_wire.h: header before the topic name */
#define SIZES_MAX 96

struct al_rec {
	uint64_t total, misaligned, bad;
	uintptr_t want;     /* alignment of msg->data whole messages get */
	char first_bad[160];
	struct dp_rec ev;   /* connection events */
};

/* Payloads of any length, even 1 byte, that say which message they are. */
static uint8_t al_byte(uint64_t seq, size_t len, size_t i)
{
	return (uint8_t)(seq * 131u + len * 17u + i * 7u + 1u);
}

static void al_fill(uint8_t *p, size_t len, uint64_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = al_byte(seq, len, i);
}

static void al_bad(struct al_rec *r, const struct msga_msg *m,
		   const char *what)
{
	if (!r->bad++)
		snprintf(r->first_bad, sizeof(r->first_bad),
			 "seq %llu len %zu: %s", (unsigned long long)m->seq,
			 m->len, what);
}

static void al_on_msg(const struct msga_msg *m, void *user)
{
	struct al_rec *r = user;
	const uint8_t *p = m->data;
	uintptr_t want = m->len <= MSGA_FRAG_MAX ? r->want : 8;

	if ((uintptr_t)m->data % want)
		r->misaligned++;
	if (m->seq != r->total + 1)
		al_bad(r, m, "out of order");
	for (size_t i = 0; i < m->len; i++)
		if (p[i] != al_byte(m->seq, m->len, i)) {
			al_bad(r, m, "bad payload");
			break;
		}
	r->total++;
}

static void al_on_event(const struct msga_event *ev, void *user)
{
	dp_on_event(ev, &((struct al_rec *)user)->ev);
}

static struct msga_sub *al_sub(struct msga_ctx *ctx, uint32_t flags,
			       struct al_rec *r)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = TOPIC, .on_msg = al_on_msg,
				   .on_event = al_on_event, .user = r };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	return sub;
}

/* 1..64, then the given limits' neighbours, then 2 * MSGA_FRAG_MAX + 7. */
static int al_sizes(size_t *sz, const uint32_t *limits, int nlimits)
{
	int n = 0;

	for (size_t len = 1; len <= 64; len++)
		sz[n++] = len;
	for (int i = 0; i < nlimits; i++)
		for (uint32_t d = 0; d < 3; d++)
			sz[n++] = limits[i] - 1 + d;
	sz[n++] = 2 * MSGA_FRAG_MAX + 7;
	cr_assert_leq(n, SIZES_MAX);
	return n;
}

/* Claim (polling while pushed back), fill with seq's bytes, commit. */
static void al_send(struct msga_pub *pub, uint32_t topic, size_t len,
		    uint64_t seq, struct msga_ctx **ctx)
{
	uint64_t end = dp_now_ms() + 20000;
	struct msga_claim c = { .size = sizeof(c) };
	int ret;

	while ((ret = msga_pub_claim(pub, topic, len, &c)) == -EAGAIN) {
		cr_assert_lt(dp_now_ms(), end, "pushed back for 20 s");
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
	cr_assert_eq(ret, 0, "msga_pub_claim(%zu) = %d", len, ret);
	al_fill(c.data, len, seq);
	cr_assert_geq(msga_pub_commit(pub, &c), 0);
}

/*
 * Every size, each waited for when pace is set (datagrams may not be
 * overrun), then every message must have come, aligned and intact.
 */
static void al_run(struct msga_pub *pub, uint32_t topic, struct al_rec *r,
		   const size_t *sz, int n, int pace, struct msga_ctx **ctx)
{
	uint64_t seq = r->total;

	for (int i = 0; i < n; i++) {
		al_send(pub, topic, sz[i], ++seq, ctx);
		if (pace)
			cr_assert(dp_poll_until64(ctx, 2, &r->total, seq,
						  10000),
				  "%zu-byte message (seq %llu) never came",
				  sz[i], (unsigned long long)seq);
	}
	cr_assert(dp_poll_until64(ctx, 2, &r->total, seq, 30000),
		  "%llu of %llu messages came", (unsigned long long)r->total,
		  (unsigned long long)seq);
	cr_expect_eq(r->bad, 0, "%s", r->first_bad);
	cr_expect_eq(r->misaligned, 0, "%llu of %llu not %zu-byte aligned",
		     (unsigned long long)r->misaligned,
		     (unsigned long long)r->total, (size_t)r->want);
}

/* No connection died on the way; both contexts closed. */
static void al_close(struct al_rec *r, struct msga_ctx **ctx)
{
	cr_expect_eq(r->ev.disconnected, 0);
	msga_ctx_close(ctx[1]);
	msga_ctx_close(ctx[0]);
}

/* An RC subscriber with flags; want: the path's alignment. */
static void rc_case(uint32_t flags, int event_mode, uintptr_t want)
{
	static const uint32_t limits[] = { BATCH_REC_MAX, MSGA_FRAG_MAX };
	struct msga_ctx *ctx[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct al_rec r = { .want = want };
	struct dp_rec pe = { 0 };
	struct msga_pub *pub = dp_pub(ctx[0], 0, &pe);
	size_t sz[SIZES_MAX];
	int n = al_sizes(sz, limits, 2);
	uint32_t topic;

	cr_assert_eq(msga_pub_topic(pub, TOPIC, &topic), 0);
	if (event_mode)
		cr_assert_geq(msga_ctx_fd(ctx[1]), 0);
	dp_connect(al_sub(ctx[1], flags, &r), pub, ctx, 2, 1);
	al_run(pub, topic, &r, sz, n, 1, ctx);
	/* unpaced: a subscriber behind gets BATCHes on SEND/RECV */
	for (int round = 0; round < 3; round++)
		al_run(pub, topic, &r, sz, n, 0, ctx);
	al_close(&r, ctx);
}

/*
 * Since 0.8 siw offers no ring (it ignores zero-based registration, and
 * no address of ours goes on the wire: lib/core/context.c): there a
 * busy-poll subscriber takes SEND/RECV, whose data is 8-byte aligned.
 */
Test(align, rc_ring_data_is_16_byte_aligned, .timeout = 120)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	int ring = ctx->zero_based;

	msga_ctx_close(ctx);
	rc_case(0, 0, ring ? 16 : 8);
}

Test(align, rc_send_recv_data_is_8_byte_aligned, .timeout = 120)
{
	rc_case(MSGA_SUB_NO_RING, 0, 8);
}

Test(align, event_mode_data_is_8_byte_aligned, .timeout = 120)
{
	rc_case(0, 1, 8);
}

/* iWARP: no UD, no multicast. */
static void ud_refused(const char *uri)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri };
	struct msga_pub *pub = NULL;
	struct al_rec r = { .want = 8 };

	cr_assert_eq(msga_pub_create(ctx, &a, &pub), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(al_sub(ctx, 0, &r), uri, NULL),
		     -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

/*
 * Datagram limits: the largest message in one datagram (MTU less the
 * header) and the fragment size (mcast_pub.c: the MTU less the longest
 * header, rounded down to 64).
 */
static int ud_sizes(struct msga_ctx *ctx, size_t *sz)
{
	struct msga_dev_info di = { .size = sizeof(di) };
	uint32_t limits[3];

	cr_assert_eq(msga_ctx_query(ctx, &di), 0);
	limits[0] = di.active_mtu -
		    ((UDW_HDR_FIXED + (uint32_t)strlen(TOPIC) + 7u) & ~7u);
	limits[1] = (di.active_mtu - 104u) & ~63u;
	limits[2] = MSGA_FRAG_MAX;
	return al_sizes(sz, limits, 3);
}

/* A UD publisher on uri; a subscriber joined; every size, paced. */
static void ud_case(const char *uri, int mcast)
{
	struct msga_ctx *ctx[2];
	struct al_rec r = { .want = 8 };
	struct dp_rec pe = { 0 };
	struct msga_pub *pub;
	struct msga_sub *sub;
	size_t sz[SIZES_MAX];
	uint32_t topic;
	int n, id;

	if (dp_is_iwarp())
		return ud_refused(uri);
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = dp_pub_at(ctx[0], uri, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, TOPIC, &topic), 0);
	if (mcast)
		cr_assert(dp_poll_until(ctx, 2, &pe.connected, 1, 10000),
			  "publisher did not join (status %d)",
			  pe.last_status);
	else
		uri = dp_ud_uri(msga_pub_port(pub));
	sub = al_sub(ctx[1], 0, &r);
	id = dp_connect_id(sub, uri);
	cr_assert_geq(id, 0, "msga_sub_connect(%s) = %d", uri, id);
	cr_assert(dp_poll_until(ctx, 2, &r.ev.connected, 1, 15000),
		  "not joined (failed %d, status %d)", r.ev.failed,
		  r.ev.last_status);
	for (uint64_t end = dp_now_ms() + 5000;
	     !mcast && msga_pub_subscribers(pub) < 1;) {
		cr_assert_lt(dp_now_ms(), end, "the publisher sees no one");
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
	n = ud_sizes(ctx[0], sz);
	for (int round = 0; round < 2; round++)
		al_run(pub, topic, &r, sz, n, 1, ctx);
	al_close(&r, ctx);
}

Test(align, ud_unicast_data_is_8_byte_aligned, .timeout = 120)
{
	ud_case(dp_ud_uri(0), 0);
}

Test(align, multicast_data_is_8_byte_aligned, .timeout = 120)
{
	ud_case(G_ALIGN, 1);
}
