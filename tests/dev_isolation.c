/* SPDX-License-Identifier: MIT */
/*
 * Device tests of memory isolation (issue 26, part 3): a key a peer
 * learns opens only what its own connection needs, through that
 * connection's QP.
 *
 *  - RC: one subscriber, two connections: to a real publisher (the
 *    victim's stream) and to a raw rdma_cm publisher (the attacker,
 *    dev_raw_peer.h). The attacker WRITEs with the victim connection's
 *    key at the victim's next ring offset: a remote access error, the
 *    victim's bytes untouched, its stream goes on without a loss. On
 *    siw, which ignores a zero-based registration's iova, no ring is
 *    offered at all (zero_based.c): the attacker aims at the victim's
 *    receive buffers instead, which no peer may write.
 *  - READ endpoint (multicast, so not on iWARP): the retention key of
 *    one publisher's READ endpoint reads nothing through another
 *    endpoint's QP of the same context, and an RC connection's QP is
 *    never given a READ responder.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "internal.h"
#include "mcast.h"
#include "rc.h"
#include "read_wire.h"
#include "srq.h"
#include "wire.h"

#define NMSG 100

/* The attacker: a raw publisher (dev_raw_peer.h) that writes from its
 * first send slot. */
static struct ibv_wc att_wait(struct raw_pub *a, struct msga_ctx **ctx)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	struct ibv_wc wc;

	for (;;) {
		int n = ibv_poll_cq(a->cq, 1, &wc);

		cr_assert_geq(n, 0);
		if (n && !(wc.opcode & IBV_WC_RECV) &&
		    wc.status != IBV_WC_WR_FLUSH_ERR)
			return wc;
		if (n && wc.wr_id == 99)
			return wc; /* our WRITE, flushed */
		cr_assert_lt(dp_now_ms(), end, "the WRITE never completed");
		raw_turn(&a->cm, ctx[0]);
		msga_ctx_poll(ctx[1], 16);
	}
}

/* One signalled WRITE of len bytes of a->buf's first send slot to
 * (rkey, off). */
static struct ibv_wc att_write(struct raw_pub *a, uint32_t rkey,
			       uint64_t off, uint32_t len,
			       struct msga_ctx **ctx)
{
	struct ibv_sge sge = { (uintptr_t)a->buf[RAW_PUB_RECVS], len,
			       a->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 99, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = off, .rkey = rkey },
	}, *bad;

	cr_assert_eq(ibv_post_send(a->cm.req->qp, &wr, &bad), 0);
	return att_wait(a, ctx);
}

/* A raw publisher (dev_raw_peer.h) accepts one subscriber, and waits. */
static void att_accept(struct raw_pub *a, struct msga_ctx **ctx,
		       const struct dp_rec *rec, int connected_before)
{
	uint64_t end;

	raw_pub_accept(a, ctx[0]);
	end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	while (!a->cm.established || rec->connected <= connected_before) {
		cr_assert_lt(dp_now_ms(), end, "attacker not connected");
		raw_turn(&a->cm, ctx[0]);
		msga_ctx_poll(ctx[1], 16);
	}
}

/* The subscriber's connection with id, from sub->rc.conns. */
static struct msga__conn *sub_conn(struct msga_sub *sub, int id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.conns)
		if (msga__own_conn(pos)->id == (uint32_t)id)
			return msga__own_conn(pos);
	cr_assert_fail("no connection %d", id);
	return NULL;
}

static void send_and_wait(struct msga_pub *pub, uint32_t t, uint64_t first,
			  uint64_t last, struct dp_rec *rec,
			  const uint64_t *got, struct msga_ctx **ctx)
{
	for (uint64_t s = first; s <= last; s++)
		dp_send(pub, t, s, 200, ctx, 2);
	cr_assert(dp_poll_until64(ctx, 2, got, last, 20000),
		  "victim got %llu of %llu (bad %llu: %s)",
		  (unsigned long long)*got, (unsigned long long)last,
		  (unsigned long long)rec->bad, rec->first_bad);
}

TestSuite(isolation);

Test(isolation, a_ring_key_opens_only_its_own_connection, .timeout = 180)
{
	static struct dp_rec rec, pe;
	static struct raw_pub a;
	static char snap[MSGA__SUB_RING_SIZE];
	struct msga_ctx *ctx[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct msga_pub *pub = dp_pub(ctx[1], 0, &pe);
	struct msga_sub *sub = dp_sub(ctx[0], "iso.*", &rec);
	struct msga__conn *victim, *mine;
	const char *victim_mem;
	size_t victim_len;
	uint32_t t, victim_key, mine_off;
	uint64_t victim_off;
	struct ibv_wc wc;
	int vid, aid;

	rec.strict = 1;
	cr_assert_eq(msga_pub_topic(pub, "iso.x", &t), 0);
	dp_connect(sub, pub, ctx, 2, 1);
	vid = (int)msga__own_conn(sub->rc.conns.next)->id;
	memset(&a, 0, sizeof(a));
	aid = dp_connect_id(sub, dp_uri(raw_listen(&a.cm)));
	cr_assert_geq(aid, 0);
	att_accept(&a, ctx, &rec, rec.connected);
	victim = sub_conn(sub, vid);
	mine = sub_conn(sub, aid);
	send_and_wait(pub, t, 1, NMSG, &rec, &rec.got[vid % DP_CONNS][t], ctx);

	/* No address of ours on the wire, whatever the device. */
	cr_assert_eq(a.hello.ring_addr, 0, "the hello carries an address");
	if (ctx[0]->zero_based) {
		/* The ring: its own PD, shared with no other connection. */
		cr_assert(victim->ring && mine->ring);
		cr_assert_neq(a.hello.ring_size, 0);
		cr_assert_eq(a.hello.ring_rkey, mine->ring_mr->rkey);
		cr_expect_eq(victim->ring_mr->pd, victim->qp->pd);
		cr_expect_neq(victim->qp->pd, mine->qp->pd);
		cr_expect_neq(victim->qp->pd, ctx[0]->pd);
		victim_key = victim->ring_mr->rkey;
		victim_mem = (const char *)victim->ring_buf;
		victim_len = MSGA__SUB_RING_SIZE + MSGA__RING_ALIGN;
		/* where the victim's publisher writes next */
		victim_off = MSGA__RING_REMOTE(
			msga__own_conn(pub->rc.conns.next)->rw.off);
		/* Control: the attacker's own key works, at its own ring's
		 * far end (zeros: no record, its reader sees nothing). */
		mine_off = MSGA__RING_REMOTE(MSGA__SUB_RING_SIZE - 64);
		memset(a.buf[RAW_PUB_RECVS], 0, 64);
		wc = att_write(&a, a.hello.ring_rkey, mine_off, 64, ctx);
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "own ring: %s",
			     ibv_wc_status_str(wc.status));
	} else {
		/* siw: nothing is open to a peer; aim at the receives. */
		cr_assert(!victim->ring && !mine->ring && !victim->ring_mr);
		cr_assert_eq(a.hello.ring_size, 0);
		cr_assert_eq(a.hello.ring_rkey, 0);
		cr_assert_not_null(victim->srq, "a SEND/RECV subscriber "
				   "connection without its SRQ");
		victim_key = victim->srq->mr[0]->rkey;
		victim_mem = victim->srq->buf[0];
		victim_len = (size_t)MSGA__SRQ_CONN_CREDITS *
			     victim->srq->slot_size;
		victim_off = (uintptr_t)victim_mem; /* (siw: addresses) */
	}
	cr_assert_leq(victim_len, sizeof(snap) + MSGA__RING_ALIGN);
	if (victim_len > sizeof(snap))
		victim_len = sizeof(snap);
	memcpy(snap, victim_mem, victim_len);

	/* The attack: the victim's key, the victim's next offset. */
	memset(a.buf[RAW_PUB_RECVS], 0xa5, 64);
	wc = att_write(&a, victim_key, victim_off, 64, ctx);
	cr_log_info("attacker's WRITE: %s", ibv_wc_status_str(wc.status));
	if (ctx[0]->zero_based) {
		cr_assert_eq(wc.status, IBV_WC_REM_ACCESS_ERR, "%s",
			     ibv_wc_status_str(wc.status));
	} else {
		/*
		 * siw completes a WRITE once it is on the wire (iWARP has no
		 * response to one); the target refuses it (siw_check_mem:
		 * no remote access) and TERMINATEs the connection, which
		 * ends (below) with the victim's bytes as they were.
		 */
		cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s",
			     ibv_wc_status_str(wc.status));
	}
	/* The attacker's connection is the one that ends. */
	cr_assert(dp_poll_until(ctx, 2, &rec.disconnected, 1, 20000),
		  "the attacker's connection did not end");
	cr_assert_eq(rec.last_conn, (uint32_t)aid);

	/* Untouched, and the stream goes on, each message once in order. */
	cr_assert_eq(memcmp(snap, victim_mem, victim_len), 0,
		     "the victim's memory changed");
	send_and_wait(pub, t, NMSG + 1, 3 * NMSG, &rec,
		      &rec.got[vid % DP_CONNS][t], ctx);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(rec.got[vid % DP_CONNS][t], 3 * NMSG);
	cr_assert_eq(rec.disconnected, 1);
	cr_assert_eq(msga_pub_subscribers(pub), 1);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
	raw_pub_close(&a);
}

/* ------------------------------------------------ the READ endpoint */

#define G_A "mcast://239.255.15.1"
#define G_B "mcast://239.255.15.2"

static struct msga_pub *reliable_pub(struct msga_ctx *ctx, const char *uri,
				     struct dp_rec *pe)
{
	struct msga_pub_attr at = { .size = sizeof(at), .uri = uri,
				    .flags = MSGA_PUB_RELIABLE,
				    .on_event = dp_on_event, .user = pe };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &at, &pub);

	if (dp_is_iwarp()) {
		cr_assert_eq(ret, -EOPNOTSUPP, "%d", ret);
		return NULL;
	}
	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

/* A raw peer connected to port, asking for READs (initiator depth 1). */
static void raw_reader(struct raw_peer *p, uint16_t port,
		       struct msga_ctx *ctx, const void *pdata, uint8_t plen)
{
	struct rdma_conn_param cp = { .initiator_depth = 1, .retry_count = 7,
				      .private_data = pdata,
				      .private_data_len = plen };

	cr_assert_eq(raw_connect_with(p, port, &cp, ctx),
		     RDMA_CM_EVENT_ESTABLISHED);
}

Test(isolation, a_retention_key_reads_only_through_its_read_endpoint,
     .timeout = 180)
{
	static struct dp_rec pa, pb, prc;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *a = reliable_pub(ctx, G_A, &pa), *b, *rc;
	struct msga__rdw_offer oa, ob;
	struct raw_peer ra, rb, rr;
	struct msga__wire_hello sub_hello = {
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = 2, .recv_depth = 4, .slot_size = 4096,
	};
	uint8_t hello[MSGA__WIRE_HELLO_LEN];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_mr *mr;
	char buf[64];

	if (!a) {
		/* iWARP: no multicast, so no READ endpoint and no
		 * retention key at all; what is left is the RC test. */
		cr_assert(dp_is_iwarp());
		msga_ctx_close(ctx);
		return;
	}
	b = reliable_pub(ctx, G_B, &pb);
	rc = dp_pub(ctx, 0, &prc);
	cr_assert(dp_poll_until(&ctx, 1, &pa.connected, 1, 15000));
	cr_assert(dp_poll_until(&ctx, 1, &pb.connected, 1, 15000));
	cr_assert_not_null(a->ud.serve);
	cr_assert_not_null(b->ud.serve);
	/* each endpoint's block in a PD of its own, not the context's */
	cr_expect_neq(a->ud.serve->pd, ctx->pd);
	cr_expect_neq(a->ud.serve->pd, b->ud.serve->pd);
	cr_expect_eq(a->ud.serve->mr->pd, a->ud.serve->pd);

	raw_reader(&ra, a->ud.serve->port, ctx, NULL, 0);
	cr_assert_eq(msga__rdw_get(ra.est_pdata, ra.est_plen, &oa), 0);
	raw_reader(&rb, b->ud.serve->port, ctx, NULL, 0);
	cr_assert_eq(msga__rdw_get(rb.est_pdata, rb.est_plen, &ob), 0);
	mr = ibv_reg_mr(ra.id->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	cr_assert_not_null(mr);
	/* control: A's key through A's endpoint */
	cr_assert_eq(raw_read(&ra, mr, buf, 0, 64, oa.rkey, ctx),
		     IBV_WC_SUCCESS);
	/* B's key through A's endpoint: another publisher's block */
	cr_assert_eq(raw_read(&ra, mr, buf, 0, 64, ob.rkey, ctx),
		     IBV_WC_REM_ACCESS_ERR, "A's endpoint read B's block");

	/*
	 * An RC connection of the same context: its QP is accepted with no
	 * READ responder (responder_resources 0), so the peer's QP may not
	 * even issue one (max_rd_atomic 0); and it is in ctx->pd, which
	 * holds no remote access. Both are what stops the retention key.
	 */
	msga__wire_hello_put(hello, &sub_hello);
	raw_reader(&rr, (uint16_t)msga_pub_port(rc), ctx, hello,
		   sizeof(hello));
	cr_assert_eq(ibv_query_qp(rr.id->qp, &qa, IBV_QP_MAX_QP_RD_ATOMIC,
				  &qi), 0);
	cr_assert_eq(qa.max_rd_atomic, 0, "an RC connection answers READs");
	cr_assert_neq(a->ud.serve->pd, ctx->pd);
	raw_free_verbs(ra.id, mr, NULL);
	raw_close(&ra);
	raw_close(&rb);
	raw_close(&rr);
	msga_ctx_close(ctx);
}
