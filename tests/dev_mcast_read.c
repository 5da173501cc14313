/* SPDX-License-Identifier: MIT */
/*
 * Repair by RDMA READ (issue 25, deliverable 3's preferred path) on the
 * device under test. A MSGA_PUB_RELIABLE publisher serves READs of its
 * retention ring; its subscribers, once connected to that endpoint,
 * repair a loss by reading the span that holds it, and send no NAK. The
 * loss is real: subscribers that are not polled while hundreds of
 * messages go out keep only what their receive rings hold. Also: the
 * NAK-only option reads nothing, and a span wider than one READ is read
 * in chunks (dev_mcast_stall: outages of seconds, and what READ cannot
 * serve going to NAK). On iWARP, which has no
 * multicast, there is nothing to test here (dev_mcast_recovery checks
 * the refusals).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "mcast.h"
#include "pubsub.h"
#include "read_wire.h"
#include "retain.h"

#define G_READ "mcast://239.255.14.1"
#define G_NAKONLY "mcast://239.255.14.2"
#define G_WIDE "mcast://239.255.14.3"
#define G_RAW "mcast://239.255.14.4"
#define G_FROM "mcast://239.255.14.5"
#define NSUBS 3

struct rd {
	struct dp_rec rec;
	int gaps, losses, dups, reorders;
	struct msga_sub *sub;
};

static void rd_on_event(const struct msga_event *ev, void *user)
{
	struct rd *r = user;

	switch (ev->type) {
	case MSGA_EVENT_GAP:
		r->gaps++;
		break;
	case MSGA_EVENT_LOSS:
		r->losses++;
		break;
	case MSGA_EVENT_DUPLICATE:
		r->dups++;
		break;
	case MSGA_EVENT_REORDER:
		r->reorders++;
		break;
	default:
		dp_on_event(ev, &r->rec);
	}
}

static void rd_sub(struct msga_ctx *ctx, uint32_t flags, const char *uri,
		   struct rd *r, struct msga_ctx **both)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = "rd.x", .on_msg = dp_on_msg,
				   .on_event = rd_on_event, .user = &r->rec };

	/* (dp_on_msg's user is the record: events find r around it) */
	_Static_assert(offsetof(struct rd, rec) == 0, "rec first");
	r->rec.strict = 1; /* from 1, each once, in order */
	cr_assert_eq(msga_sub_create(ctx, &a, &r->sub), 0);
	cr_assert_geq(msga_sub_connect(r->sub, uri, NULL), 0);
	cr_assert(dp_poll_until(both, 2, &r->rec.connected, 1, 15000),
		  "not joined (failed %d, status %d)", r->rec.failed,
		  r->rec.last_status);
}

static struct msga_pub *rd_pub(struct msga_ctx *ctx, const char *uri,
			       struct dp_rec *pe)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri,
				   .flags = MSGA_PUB_RELIABLE,
				   .on_event = dp_on_event, .user = pe };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &a, &pub);

	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

/*
 * Two contexts, a reliable publisher on uri in the first with topic rd.x
 * (*t), its group joined: what every test here starts from.
 */
static void rd_rig_up(struct msga_ctx **ctx, const char *uri,
		      struct dp_rec *pe, struct msga_pub **pub, uint32_t *t)
{
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	*pub = rd_pub(ctx[0], uri, pe);
	cr_assert_eq(msga_pub_topic(*pub, "rd.x", t), 0);
	cr_assert(dp_poll_until(ctx, 2, &pe->connected, 1, 15000));
}

static struct msga_sub_stats rd_stats(const struct rd *r)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(r->sub, &st), 0);
	return st;
}

/* The subscriber's READ connection to its one publisher, or NULL. */
static const struct msga__rconn *rconn(const struct rd *r)
{
	for (uint32_t i = 0; r->sub->ud.rconns && i < MSGA__UD_RCONN_MAX; i++)
		if (r->sub->ud.rconns[i])
			return r->sub->ud.rconns[i];
	return NULL;
}

static int ready(const struct rd *r)
{
	const struct msga__rconn *rc = rconn(r);

	return rc && rc->state == MSGA__R_READY;
}

/* Poll both until every subscriber's READ connection is up. */
static void wait_ready(struct rd *r, int n, struct msga_ctx **ctx)
{
	uint64_t end = dp_now_ms() + 15000;
	int up = 0;

	while (dp_now_ms() < end) {
		up = 0;
		for (int i = 0; i < n; i++)
			up += ready(&r[i]);
		if (up == n)
			return;
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
	cr_assert_fail("%d of %d subscribers connected to the READ endpoint "
		       "(first's state %d)", up, n,
		       rconn(&r[0]) ? rconn(&r[0])->state : 0);
}

/* seqs [from, to] of topic t, len bytes, polling ctxs[0..nctx) only. */
static void send_range(struct msga_pub *pub, uint32_t t, uint64_t from,
		       uint64_t to, size_t len, struct msga_ctx **ctx, int nctx)
{
	for (uint64_t s = from; s <= to; s++)
		dp_send(pub, t, s, len, ctx, nctx);
}

/*
 * Three subscribers connected to the READ endpoint starve through 700
 * messages, then the stream goes on and stops: each repairs mid-stream
 * and tail losses by READ alone (no NAK sent, none taken), and delivers
 * 1..800 exactly once, in order.
 */
Test(read, starved_subscribers_repair_by_read_alone, .timeout = 180)
{
	struct msga_ctx *ctx[2];
	struct rd r[NSUBS];
	struct dp_rec pe = { 0 };
	struct msga_pub *pub;
	uint64_t recovered = 0;
	uint32_t t;

	if (dp_iwarp_refuses(G_READ))
		return;
	memset(r, 0, sizeof(r));
	rd_rig_up(ctx, G_READ, &pe, &pub, &t);
	cr_assert_not_null(pub->ud.serve, "no READ endpoint: %s",
			   msga_ctx_last_error(ctx[0]));
	for (int i = 0; i < NSUBS; i++)
		rd_sub(ctx[1], 0, G_READ, &r[i], ctx);
	send_range(pub, t, 1, 10, 64, ctx, 2);
	wait_ready(r, NSUBS, ctx);
	cr_assert_eq(pub->ud.serve->nreaders, NSUBS);
	send_range(pub, t, 11, 700, 64, ctx, 1);  /* they starve */
	send_range(pub, t, 701, 800, 64, ctx, 2); /* gaps seen, read */
	for (int i = 0; i < NSUBS; i++) {
		struct msga_sub_stats st;

		dp_wait_total(ctx, 2, &r[i].rec, r[i].sub, 800);
		st = rd_stats(&r[i]);
		cr_log_info("subscriber %d: %llu recovered by %llu READs, "
			    "%llu NAKs, %llu fallbacks", i,
			    (unsigned long long)st.recovered,
			    (unsigned long long)st.reads,
			    (unsigned long long)st.naks,
			    (unsigned long long)st.read_fallbacks);
		cr_assert_eq(r[i].rec.bad, 0, "%s", r[i].rec.first_bad);
		cr_assert_eq(r[i].gaps + r[i].losses + r[i].dups +
			     r[i].reorders, 0);
		cr_assert_gt(st.reads, 0);
		cr_assert_eq(st.naks, 0, "READ served every repair");
		cr_assert_eq(st.read_fallbacks, 0);
		cr_assert_eq(st.unrecoverable, 0);
		recovered += st.recovered;
	}
	cr_assert_gt(recovered, 0, "nothing was lost: nothing tested");
	cr_assert_eq(pub->ud.naks_taken, 0, "the publisher did no repair work");
	cr_assert_eq(pub->ud.retx_msgs, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * MSGA_SUB_REPAIR_BY_NAK: the same loss, repaired by NAK, and no READ
 * connection is made at all.
 */
Test(read, nak_only_subscriber_never_reads, .timeout = 180)
{
	struct msga_ctx *ctx[2];
	struct rd r = { 0 };
	struct dp_rec pe = { 0 };
	struct msga_sub_stats st;
	struct msga_pub *pub;
	uint32_t t;

	if (dp_iwarp_refuses(G_READ))
		return;
	rd_rig_up(ctx, G_NAKONLY, &pe, &pub, &t);
	rd_sub(ctx[1], MSGA_SUB_REPAIR_BY_NAK, G_NAKONLY, &r, ctx);
	send_range(pub, t, 1, 10, 64, ctx, 2);
	send_range(pub, t, 11, 700, 64, ctx, 1);
	send_range(pub, t, 701, 800, 64, ctx, 2);
	dp_wait_total(ctx, 2, &r.rec, r.sub, 800);
	st = rd_stats(&r);
	cr_assert_eq(r.rec.bad, 0, "%s", r.rec.first_bad);
	cr_assert_gt(st.recovered, 0, "nothing was lost: nothing tested");
	cr_assert_gt(st.naks, 0);
	cr_assert_eq(st.reads, 0);
	cr_assert_null(rconn(&r), "a NAK-only subscriber connected to read");
	cr_assert_eq(pub->ud.serve->nreaders, 0);
	cr_assert_gt(pub->ud.naks_taken, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * A loss wider than one READ (1 190 messages of 200 bytes: their records
 * span over 270 KiB, four times MSGA__UD_READ_MAX): READ serves it all,
 * in overlapping chunks read in turn (issue 35; 0.8 NAKed every number
 * of it), and the subscriber gets everything in order, with no NAK.
 */
Test(read, a_span_wider_than_one_read_is_read_in_chunks, .timeout = 180)
{
	struct msga_ctx *ctx[2];
	struct rd r = { 0 };
	struct dp_rec pe = { 0 };
	struct msga_sub_stats st;
	struct msga_pub *pub;
	uint32_t t;

	if (dp_iwarp_refuses(G_READ))
		return;
	rd_rig_up(ctx, G_WIDE, &pe, &pub, &t);
	rd_sub(ctx[1], 0, G_WIDE, &r, ctx);
	send_range(pub, t, 1, 10, 200, ctx, 2);
	wait_ready(&r, 1, ctx);
	send_range(pub, t, 11, 1200, 200, ctx, 1);
	send_range(pub, t, 1201, 1250, 200, ctx, 2);
	dp_wait_total(ctx, 2, &r.rec, r.sub, 1250);
	st = rd_stats(&r);
	cr_log_info("wide: %llu recovered, %llu READs, %llu NAKs, %llu "
		    "fallbacks", (unsigned long long)st.recovered,
		    (unsigned long long)st.reads, (unsigned long long)st.naks,
		    (unsigned long long)st.read_fallbacks);
	cr_assert_eq(r.rec.bad, 0, "%s", r.rec.first_bad);
	cr_assert_eq(r.gaps + r.losses + r.dups + r.reorders, 0);
	cr_assert_gt(st.recovered, 600, "the loss was not wide: nothing tested");
	cr_assert_geq(st.reads, st.recovered * msga__retain_rec_size(200) /
				 MSGA__UD_READ_MAX,
		      "one READ per chunk of the span");
	cr_assert_eq(st.read_fallbacks, 0, "READ dropped part of the span");
	cr_assert_eq(st.naks, 0, "READ served the whole span");
	cr_assert_eq(pub->ud.naks_taken, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * A stranger connects to a reliable publisher's READ endpoint as a raw
 * rdma_cm peer: the offer is a zero-based block of exactly the control
 * block and the ring (no address of the publisher's on the wire); it can
 * read inside it, and a READ one byte past it is a remote access error,
 * which ends that connection and nothing else: the publisher's stream
 * goes on.
 */
Test(read, the_read_endpoint_opens_its_block_and_nothing_more, .timeout = 120)
{
	struct rdma_conn_param cp = { .initiator_depth = 1, .retry_count = 7 };
	struct msga_ctx *ctx[2];
	struct msga__rdw_offer offer;
	struct msga__retain_ctrl ctrl;
	struct dp_rec pe = { 0 };
	struct raw_peer p;
	struct rd r = { 0 };
	struct ibv_mr *mr;
	struct msga_pub *pub;
	char buf[64];
	uint32_t t;

	if (dp_iwarp_refuses(G_READ))
		return;
	rd_rig_up(ctx, G_RAW, &pe, &pub, &t);
	cr_assert_not_null(pub->ud.serve);
	cr_assert_eq(raw_connect_with(&p, pub->ud.serve->port, &cp, ctx[0]),
		     RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_eq(msga__rdw_get(p.est_pdata, p.est_plen, &offer), 0,
		     "the accept carries no valid offer");
	cr_assert_eq(offer.cap, pub->ud.retain.cap);
	cr_assert_eq(offer.len, MSGA__RETAIN_CTRL + offer.cap);
	mr = ibv_reg_mr(p.id->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	/* offset 0 is the control block: zero-based, not an address */
	cr_assert_eq(raw_read(&p, mr, buf, 0, sizeof(buf), offer.rkey, ctx[0]),
		     IBV_WC_SUCCESS);
	memcpy(&ctrl, buf, sizeof(ctrl));
	cr_assert_eq(ctrl.cap, offer.cap);
	cr_assert_eq(raw_read(&p, mr, buf, offer.len - 8, 8, offer.rkey,
			      ctx[0]), IBV_WC_SUCCESS);
	cr_assert_neq(raw_read(&p, mr, buf, offer.len - 4, 8, offer.rkey,
			       ctx[0]), IBV_WC_SUCCESS,
		      "a READ past the block was served");
	/* the publisher goes on, and serves the next subscriber */
	rd_sub(ctx[1], 0, G_RAW, &r, ctx);
	send_range(pub, t, 1, 20, 64, ctx, 2);
	dp_wait_total(ctx, 2, &r.rec, r.sub, 20);
	wait_ready(&r, 1, ctx);
	raw_free_verbs(p.id, mr, NULL);
	raw_close(&p);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * Late join from a sequence number (msga_sub_attr.history_from): a
 * subscriber that comes after 100 messages asks from #30 on, and gets
 * 30..100 (the history, by READ or NAK), then the live stream, each once
 * and in order. history and history_from together are -EINVAL.
 */
Test(read, a_late_joiner_starts_from_the_number_it_names, .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 };
	struct rd r = { 0 };
	struct msga_sub *bad = NULL;
	struct msga_pub *pub;
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "rd.x",
				   .on_msg = dp_on_msg, .on_event = rd_on_event,
				   .user = &r.rec, .history_from = 30 };
	uint32_t t;
	int cid;

	if (dp_iwarp_refuses(G_READ))
		return;
	rd_rig_up(ctx, G_FROM, &pe, &pub, &t);
	a.history = 5;
	cr_assert_eq(msga_sub_create(ctx[1], &a, &bad), -EINVAL);
	cr_assert_null(bad);
	a.history = 0;
	send_range(pub, t, 1, 100, 64, ctx, 1);
	cr_assert_eq(msga_sub_create(ctx[1], &a, &r.sub), 0);
	cid = dp_connect_id(r.sub, G_FROM);
	cr_assert_geq(cid, 0);
	/* from #30 (the first stream, index 0), each once, in order */
	r.rec.next[cid % DP_CONNS][0] = 30;
	cr_assert(dp_poll_until(ctx, 2, &r.rec.connected, 1, 15000));
	/* the idle stream's heartbeat places it: #30..#100 come */
	dp_wait_total(ctx, 2, &r.rec, r.sub, 71);
	send_range(pub, t, 101, 110, 64, ctx, 2);
	dp_wait_total(ctx, 2, &r.rec, r.sub, 81);
	cr_assert_eq(r.rec.bad, 0, "%s", r.rec.first_bad);
	cr_assert_eq(r.gaps + r.losses + r.dups + r.reorders, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}
