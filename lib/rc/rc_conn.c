/* SPDX-License-Identifier: MIT */
/*
 * rc_conn.c - one RC queue pair and its buffers: the receive ring (posted
 * in full before connect/accept, as iWARP needs), the per-send-slot header
 * buffers, selective signalling, and teardown in any state.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "srq.h"

struct msga__conn *msga__conn_new(struct msga_ctx *ctx,
				  const struct msga__conn_geom *g,
				  const struct msga__ep_ops *ops)
{
	struct msga__conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ctx = ctx;
	c->rx_depth = g->rx_depth;
	c->rx_slot = g->rx_slot;
	c->sq_depth = g->sq_depth;
	c->sq_mask = g->sq_depth - 1;
	c->sig_every = g->sig_every;
	msga__list_init(&c->own_node);
	msga__list_init(&c->rs_held);
	msga__list_init(&c->rs_idle);
	msga__ep_add(ctx, &c->eng, ops, 1);
	return c;
}

static int conn_alloc_bufs(struct msga__conn *c)
{
	c->tx_tag = calloc(c->sq_depth, sizeof(*c->tx_tag));
	if (!c->tx_tag)
		return -ENOMEM;
	c->ctl_buf = msga__reg_buf_pd(c->pd, (size_t)c->sq_depth *
				      MSGA__CTL_SLOT, &c->ctl_mr);
	if (!c->ctl_buf)
		return msga__neg_errno(ENOMEM);
	if (c->srq)
		return 0; /* receives come from the subscriber's SRQ */
	c->rx_slots = calloc(c->rx_depth, sizeof(*c->rx_slots));
	if (!c->rx_slots)
		return -ENOMEM;
	c->rx_buf = msga__reg_buf_pd(c->pd, (size_t)c->rx_depth * c->rx_slot,
				     &c->rx_mr);
	if (!c->rx_buf)
		return msga__neg_errno(ENOMEM);
	for (uint32_t i = 0; i < c->rx_depth; i++)
		c->rx_slots[i] = (struct msga__rxslot){ .conn = c, .idx = i };
	return 0;
}

static int conn_create_qp(struct msga__conn *c)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 0,
		.cap = { .max_send_wr = c->sq_depth,
			 .max_recv_wr = c->rx_depth,
			 .max_send_sge = 3, .max_recv_sge = 1,
			 .max_inline_data = c->ctx->max_inline },
	};

	c->cq = ibv_create_cq(c->ctx->verbs, (int)(c->sq_depth + c->rx_depth),
			      &c->armed, c->ctx->comp_channel, 0);
	if (!c->cq)
		return msga__neg_errno(ENOMEM);
	/* (a program may sleep on msga_ctx_fd() before it polls this CQ) */
	if (c->ctx->evmode && !ibv_req_notify_cq(c->cq, 0))
		c->armed = 1;
	qia.send_cq = c->cq;
	qia.recv_cq = c->cq; /* also of SRQ receives this QP takes */
	if (c->srq) {
		qia.srq = c->srq->srq;
		qia.cap.max_recv_wr = 0;
		qia.cap.max_recv_sge = 0;
	}
	if (rdma_create_qp(c->cm, c->pd, &qia))
		return msga__neg_errno(ENOMEM);
	c->qp = c->cm->qp;
	return 0;
}

/*
 * The connection's protection domain (rc.h). A ring subscriber gets one
 * of its own, so it has its own receive queue too (an SRQ is in its
 * QPs' PD: the subscriber's SRQ, in ctx->pd, serves only connections
 * without a ring). Everything else stays in ctx->pd, where no memory is
 * open to a peer (internal.h), so sharing it opens nothing.
 */
static int conn_pd(struct msga__conn *c)
{
	if (!(c->sub && c->ring)) {
		c->pd = c->ctx->pd;
		return 0;
	}
	c->pd = ibv_alloc_pd(c->ctx->verbs);
	return c->pd ? 0 : msga__neg_errno(ENOMEM);
}

/*
 * PD, buffers, CQ and QP, then every receive, before connect or accept.
 * A connect tried again on a new cm_id (msga__conn_drop_qp) keeps the
 * PD, the buffers and its place on the SRQ, and gets a new CQ and QP.
 */
int msga__conn_setup(struct msga__conn *c)
{
	int ret = 0;

	if (c->cm->verbs != c->ctx->verbs)
		return -ENODEV;
	if (!c->pd && (ret = conn_pd(c)) < 0)
		return ret;
	if (!c->tx_tag) {
		/* A subscriber's SEND/RECV data: its SRQ, posted already,
		 * if it has room for one more connection. */
		if (c->sub && !c->ring) {
			ret = msga__srq_attach(c);
			if (ret < 0)
				return ret;
		}
		ret = conn_alloc_bufs(c);
	}
	if (!ret)
		ret = conn_create_qp(c);
	for (uint32_t i = 0; !ret && !c->srq && i < c->rx_depth; i++)
		ret = msga__conn_post_recv(c, i);
	return ret;
}

/*
 * The QP and CQ go; buffers and the place on the SRQ stay. Used before a
 * connect is tried again on a new cm_id (the QP belongs to the old id),
 * and by msga__conn_free. SRQ receives the QP took go back to the SRQ: it
 * is put in error, LAST_WQE_REACHED (or its deadline) awaited and its CQ
 * reaped, and once the QP is destroyed the CQ is reaped again (srq.c).
 */
void msga__conn_drop_qp(struct msga__conn *c)
{
	msga__srq_conn_drain(c);
	if (c->qp)
		rdma_destroy_qp(c->cm);
	c->qp = NULL;
	msga__srq_conn_drain(c);
	if (c->cq)
		ibv_destroy_cq(c->cq);
	c->cq = NULL;
	c->armed = 0;
}

int msga__conn_post_recv(struct msga__conn *c, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rx_buf + (size_t)idx * c->rx_slot),
		.length = c->rx_slot,
		.lkey = c->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = idx, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(c->qp, &wr, &bad);
}

char *msga__conn_ctl_payload(struct msga__conn *c)
{
	return c->ctl_buf + msga__sq_slot(c, c->tx_seq) * MSGA__CTL_SLOT +
	       (c->ring && c->pub ? MSGA__RING_HEAD : MSGA__WIRE_HDR_LEN);
}

/*
 * Post nwr chained work requests (bytes in the last); the last one carries
 * tag, which says what its buffers are until a later signalled completion
 * (none when inline: the provider copied them). Selective signalling: one
 * completion every sig_every posts, or when the caller needs it.
 */
int msga__conn_post(struct msga__conn *c, struct ibv_send_wr *wr,
		    uint32_t nwr, uint32_t bytes, int32_t tag,
		    int force_signal)
{
	struct ibv_send_wr *last = &wr[nwr - 1], *bad;
	int ret;

	for (uint32_t i = 0; i < nwr; i++) {
		wr[i].wr_id = c->tx_seq + i;
		c->tx_tag[msga__sq_slot(c, c->tx_seq + i)] = MSGA__TAG_NONE;
	}
	c->last_inline = bytes <= c->ctx->max_inline;
	if (c->last_inline) {
		for (uint32_t i = 0; i < nwr; i++)
			wr[i].send_flags |= IBV_SEND_INLINE;
		tag = MSGA__TAG_NONE;
	}
	if (tag != MSGA__TAG_NONE)
		c->unsig_tagged++;
	if (force_signal || ++c->unsig >= c->sig_every) {
		last->send_flags |= IBV_SEND_SIGNALED;
		c->unsig = 0;
		c->unsig_tagged = 0;
	}
	c->tx_tag[msga__sq_slot(c, last->wr_id)] = tag;
	ret = ibv_post_send(c->qp, wr, &bad);
	if (ret) {
		c->tx_tag[msga__sq_slot(c, last->wr_id)] = MSGA__TAG_NONE;
		msga__conn_kill(c, -ret, 1);
		return -ECONNRESET;
	}
	c->tx_seq += nwr;
	return 0;
}

/* A SEND of the header (and ctl_len bytes after it) from this send
 * slot's header buffer, then ext_len bytes of ext. */
static int conn_send_recv(struct msga__conn *c, struct msga__wire_hdr *h,
			  uint32_t ctl_len, const void *ext, uint32_t ext_len,
			  uint32_t ext_lkey, int32_t tag, int force_signal)
{
	char *hb = c->ctl_buf + msga__sq_slot(c, c->tx_seq) * MSGA__CTL_SLOT;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)hb, MSGA__WIRE_HDR_LEN + ctl_len,
		  c->ctl_mr->lkey },
		{ (uintptr_t)ext, ext_len, ext_lkey },
	};
	struct ibv_send_wr wr = {
		.sg_list = sge, .num_sge = ext_len ? 2 : 1,
		.opcode = IBV_WR_SEND,
	};

	h->credit = msga__credit_on_send(&c->cr);
	if (c->ring) {
		/* A ring's reader reports freed bytes, not receives. */
		h->credit = (uint32_t)c->rr.freed;
		c->rr.reported = c->rr.freed;
	}
	msga__wire_hdr_put(hb, h);
	return msga__conn_post(c, &wr, 1, sge[0].length + ext_len, tag,
			       force_signal);
}

/*
 * Post one message: on a ring connection's publisher side a WRITE into the
 * subscriber's ring (rc_ring.c), otherwise a SEND. The caller checked
 * msga__conn_can_data/_ctl. (The ring is tested first, so the hot path
 * builds no SEND work request it will not post.)
 */
int msga__conn_send(struct msga__conn *c, struct msga__wire_hdr *h,
		    uint32_t ctl_len, const void *ext, uint32_t ext_len,
		    uint32_t ext_lkey, int32_t tag, int force_signal)
{
	if (c->ring && c->pub)
		return msga__ring_send(c, h, ctl_len, ext, ext_len, ext_lkey,
				       tag, force_signal);
	return conn_send_recv(c, h, ctl_len, ext, ext_len, ext_lkey, tag,
			      force_signal);
}

/*
 * A claimed message was promised room on every matching connection
 * (msga__rc_pub_ready), and a poll between claim and commit must not
 * spend it: while the publisher holds a claim, a control message also
 * leaves room for one data message after it (ring: the record may bring a
 * PAD, so two of the largest records; a SEND: two credits and a send
 * slot).
 */
int msga__conn_can_ctl(const struct msga__conn *c)
{
	int claim = c->pub && c->pub->claimed;

	if (c->ring && c->pub)
		return msga__ring_can_place(&c->rw, claim ?
					    3u * MSGA__RING_REC_MAX : 0) &&
		       c->tx_seq + (claim ? 4 : 2) - c->tx_done <= c->sq_depth;
	/* An open batch has its credit and send slot set aside. */
	return msga__credit_avail(&c->cr) >= 1u + c->bat_open +
					      (claim ? 2u : 0u) &&
	       c->tx_seq + c->bat_open + (claim ? 1 : 0) - c->tx_done <
		       c->sq_depth;
}

int msga__conn_send_credit(struct msga__conn *c)
{
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };

	if (!msga__conn_can_ctl(c))
		return -EAGAIN;
	return msga__conn_send(c, &h, 0, NULL, 0, 0, MSGA__TAG_NONE, 0);
}

void msga__conn_hello(struct msga__conn *c, struct msga__wire_hello *h,
		      uint16_t role)
{
	*h = (struct msga__wire_hello){
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = role, .recv_depth = c->rx_depth,
		.slot_size = c->rx_slot,
	};
	if (c->ring && c->sub) {
		h->ring_addr = 0; /* an offset: the ring is zero-based */
		h->ring_rkey = c->ring_mr->rkey;
		h->ring_size = msga__ring_offer(c->rr.mem.size);
	} else if (c->ring) {
		h->ring_size = msga__ring_offer(c->rw.size); /* accepted */
	}
}

void msga__conn_peer_name(struct msga__conn *c)
{
	msga__cm_peer_name(c->cm, c->peer, sizeof(c->peer));
}

void msga__conn_emit(struct msga__conn *c, enum msga_event_type type,
		     int status)
{
	struct msga_event ev = {
		.type = type, .status = status, .conn_id = c->id,
		.pub = c->pub, .sub = c->sub, .peer = c->peer,
	};
	msga_event_cb cb = c->pub ? c->pub->on_event : c->sub->on_event;
	void *user = c->pub ? c->pub->user : c->sub->user;

	if (cb)
		cb(&ev, user);
}

/*
 * Stop using a connection: the QP goes to error (flushing its work), the
 * owner hears about it once, and the memory is freed later by the reaper
 * (or at once by a destroy), because we may be inside a completion loop or
 * a user callback that still holds a message of it.
 */
void msga__conn_kill(struct msga__conn *c, int status, int notify)
{
	int was = c->state;

	if (was == MSGA__C_DEAD)
		return;
	c->state = MSGA__C_DEAD;
	c->eng.silent = 0;
	msga__ctx_reap_soon(c->ctx);
	if (status < 0 && notify)
		msga__ctx_fail(c->ctx, status, "connection %u to %s closed",
			       c->id, c->peer);
	if (c->cm && c->qp)
		rdma_disconnect(c->cm); /* (the QP goes to the error state) */
	/* A ring's key dies with its connection, before a held message's
	 * bytes are freed, so a dead publisher cannot write under them. */
	if (c->sub)
		msga__ring_unregister(c);
	msga__srq_conn_error(c); /* (freed once LAST_WQE_REACHED, srq.c) */
	if (c->pub)
		msga__pub_conn_gone(c);
	if (!notify)
		return;
	if (c->was_ready)
		msga__conn_emit(c, MSGA_EVENT_DISCONNECTED, status);
	else if (c->sub)
		msga__conn_emit(c, MSGA_EVENT_CONNECT_FAILED, status);
}

static void conn_release_tags(struct msga__conn *c)
{
	for (; c->tx_done < c->tx_seq; c->tx_done++) {
		int32_t tag = c->tx_tag[msga__sq_slot(c, c->tx_done)];

		if (c->pub && tag != MSGA__TAG_NONE)
			msga__pub_tag_done(c, tag);
	}
}

/*
 * Teardown, in the order that keeps a peer's keys from outliving what
 * they open: (1) the QP (msga__conn_kill already put it in error): no
 * more of the peer's WRITEs land; (2) every MR, the ring's first (kill
 * did it already): its rkey is void; (3) the cm_id and the connection's
 * own PD, which only this QP and these MRs used; (4) only then is any
 * memory freed, for malloc to reuse.
 */
void msga__conn_free(struct msga__conn *c)
{
	msga__conn_drop_qp(c);
	/* The QP is gone, so the device no longer reads what sends named. */
	if (c->tx_tag)
		conn_release_tags(c);
	msga__srq_detach(c);
	msga__ring_unregister(c);
	if (c->rx_mr)
		ibv_dereg_mr(c->rx_mr);
	if (c->ctl_mr)
		ibv_dereg_mr(c->ctl_mr);
	if (c->bat_mr)
		ibv_dereg_mr(c->bat_mr);
	if (c->cm)
		rdma_destroy_id(c->cm);
	if (c->pd && c->pd != c->ctx->pd)
		ibv_dealloc_pd(c->pd);
	msga__ep_del(&c->eng);
	msga__list_del(&c->own_node);
	free(c->rx_buf);
	free(c->ctl_buf);
	free(c->bat_buf);
	free(c->ring_buf);
	msga__ring_reader_fini(&c->rr);
	msga__rs_free_all(c);
	free(c->rx_slots);
	free(c->tx_tag);
	free(c->names);
	free(c);
}
