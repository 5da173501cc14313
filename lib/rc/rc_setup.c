/* SPDX-License-Identifier: MIT */
/*
 * rc_setup.c - a connection's making and unmaking: its protection domain,
 * buffers, CQ and QP and every receive posted before connect/accept (as
 * iWARP needs), its place on the subscriber's shared receive queue, and
 * teardown in the order that keeps a peer's keys from outliving what they
 * open. What the owner keeps in a connection it hears about through its
 * callbacks (struct msga__conn_owner_ops, rc.h).
 */
#include <stdlib.h>

#include "auth.h"
#include "cq_drain.h"
#include "rc.h"
#include "srq.h"

struct msga__conn *msga__conn_new(struct msga_ctx *ctx,
				  const struct msga__conn_geom *g,
				  const struct msga__ep_ops *ops,
				  const struct msga__conn_owner_ops *owner)
{
	struct msga__conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ctx = ctx;
	c->owner = owner;
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

	/* (armed at once in event mode: a program may sleep on
	 * msga_ctx_fd() before it polls this CQ) */
	c->cq = msga__cq_open(c->ctx, (int)(c->sq_depth + c->rx_depth),
			      &c->armed);
	if (!c->cq)
		return msga__neg_errno(ENOMEM);
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
	if (c->ring != MSGA__C_RING_READER) {
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

	c->setup_step = "its device (another than the context's)";
	if (c->cm->verbs != c->ctx->verbs)
		return -ENODEV;
	/*
	 * (errno is stale here: the non-blocking rdma_cm read before us
	 * left EAGAIN. A failing call that sets none must not report it.)
	 */
	errno = 0;
	c->setup_step = "its protection domain";
	if (!c->pd && (ret = conn_pd(c)) < 0)
		return ret;
	if (!c->tx_tag) {
		/* A subscriber's SEND/RECV data: its SRQ, posted already,
		 * if it has room for one more connection. */
		c->setup_step = "a place on the shared receive queue";
		if (c->sub && !c->ring) {
			ret = msga__srq_attach(c);
			if (ret < 0)
				return ret;
		}
		c->setup_step = "registering its buffers";
		ret = conn_alloc_bufs(c);
	}
	if (!ret) {
		c->setup_step = "its completion queue or queue pair";
		ret = conn_create_qp(c);
	}
	if (!ret)
		c->setup_step = "posting its receives";
	for (uint32_t i = 0; !ret && !c->srq && i < c->rx_depth; i++)
		ret = msga__conn_post_recv(c, i);
	if (!ret)
		c->setup_step = NULL;
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

static void conn_release_tags(struct msga__conn *c)
{
	for (; c->tx_done < c->tx_seq; c->tx_done++) {
		int32_t tag = c->tx_tag[msga__sq_slot(c, c->tx_done)];

		if (tag != MSGA__TAG_NONE)
			c->owner->on_tag_done(c, tag);
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
	msga__key_put(c->key);
	free(c->rx_buf);
	free(c->ctl_buf);
	free(c->bat_buf);
	free(c->ring_buf);
	msga__ring_reader_fini(&c->rr);
	if (c->owner->on_free)
		c->owner->on_free(c);
	free(c->rx_slots);
	free(c->tx_tag);
	msga__wrb_free(&c->wrb);
	free(c->names);
	free(c);
}
