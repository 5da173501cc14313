/* SPDX-License-Identifier: MIT */
/*
 * srq.c - the subscriber's shared receive queue (srq.h): created by its
 * first SEND/RECV connection, grown by a chunk of posted receives per
 * connection beyond the high-water mark, destroyed with the subscriber.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>

#include "cq_drain.h"
#include "srq.h"

static int srq_post(struct msga__srq *s, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)msga__srq_buf(s, idx),
		.length = s->slot_size,
		.lkey = s->mr[idx / MSGA__SRQ_CONN_CREDITS]->lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = MSGA__SRQ_WR_TAG | idx, .sg_list = &sge, .num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	int ret = -ibv_post_srq_recv(s->srq, &wr, &bad);

	if (!ret)
		s->posted++;
	return ret;
}

/* One more chunk, all of it posted before its connection can connect. */
static int srq_grow(struct msga_ctx *ctx, struct msga__srq *s)
{
	uint32_t k = s->nchunks, first = k * MSGA__SRQ_CONN_CREDITS;
	int ret = 0;

	s->buf[k] = msga__reg_buf(ctx, (size_t)MSGA__SRQ_CONN_CREDITS *
				  s->slot_size, &s->mr[k]);
	if (!s->buf[k])
		return msga__neg_errno(ENOMEM);
	s->nchunks++;
	for (uint32_t i = first; i < first + MSGA__SRQ_CONN_CREDITS; i++) {
		s->slots[i] = (struct msga__rxslot){ .idx = i };
		if (!ret)
			ret = srq_post(s, i);
	}
	return ret;
}

static int srq_create(struct msga_sub *sub, uint32_t slot_size)
{
	const struct ibv_device_attr *da = &sub->ctx->dev_attr;
	uint32_t max_conns = MSGA__SRQ_MAX_CONNS;
	struct ibv_srq_init_attr sia = { .attr = { .max_sge = 1 } };
	struct msga__srq *s;
	int fl;

	/* What the device cannot hold goes to per-connection receives. */
	if ((uint32_t)da->max_srq_wr / MSGA__SRQ_CONN_CREDITS < max_conns)
		max_conns = (uint32_t)da->max_srq_wr / MSGA__SRQ_CONN_CREDITS;
	if (da->max_srq <= 0 || max_conns == 0)
		return 1;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->slots = calloc((size_t)max_conns * MSGA__SRQ_CONN_CREDITS,
			  sizeof(*s->slots));
	sia.attr.max_wr = max_conns * MSGA__SRQ_CONN_CREDITS;
	s->srq = s->slots ? ibv_create_srq(sub->ctx->pd, &sia) : NULL;
	if (!s->srq) {
		msga__srq_destroy(s);
		return msga__ctx_fail(sub->ctx, msga__neg_errno(ENOMEM),
				      "ibv_create_srq(%u)", sia.attr.max_wr);
	}
	s->slot_size = slot_size;
	s->max_conns = max_conns;
	sub->rc.srq = s;
	/* LAST_WQE_REACHED is read without blocking (msga__srq_events) */
	fl = fcntl(sub->ctx->verbs->async_fd, F_GETFL);
	if (fl >= 0)
		fcntl(sub->ctx->verbs->async_fd, F_SETFL, fl | O_NONBLOCK);
	return 0;
}

int msga__srq_attach(struct msga__conn *c)
{
	struct msga_sub *sub = c->sub;
	struct msga__srq *s;
	int ret;

	if (!sub->rc.srq && !sub->rc.no_srq) {
		ret = srq_create(sub, c->rx_slot);
		if (ret < 0)
			return ret;
		sub->rc.no_srq = ret;
	}
	s = sub->rc.srq;
	if (!s || s->nconns >= s->max_conns || c->rx_slot != s->slot_size)
		return 1;
	if (s->nconns == s->nchunks) {
		ret = srq_grow(sub->ctx, s);
		if (ret) {
			/* A chunk not wholly posted may not back a peer. */
			s->max_conns = s->nconns;
			return msga__ctx_fail(sub->ctx, ret,
					      "shared receive queue: post");
		}
	}
	s->nconns++;
	c->srq = s;
	c->rx_depth = MSGA__SRQ_CONN_CREDITS;
	return 0;
}

int msga__srq_repost(struct msga__conn *c, uint32_t idx)
{
	int ret = srq_post(c->srq, idx);

	if (!ret)
		msga__credit_on_repost(&c->cr);
	return ret;
}

/*
 * Every SRQ receive c's CQ holds goes back to the SRQ. The CQ is a dying
 * QP's, about to be destroyed (msga__conn_drop_qp): nothing waits on its
 * events, so it is drained without arming (evmode 0).
 */
static void srq_drain_cq(struct msga__conn *c)
{
	struct ibv_wc wc[16];
	int n;

	while ((n = msga__cq_drain(c->cq, &c->armed, 0, wc, 16)) > 0) {
		for (int i = 0; i < n; i++) {
			if (!msga__srq_wr(wc[i].wr_id))
				continue;
			msga__srq_taken(c->srq);
			srq_post(c->srq, (uint32_t)(wc[i].wr_id &
						    ~MSGA__SRQ_WR_TAG));
		}
	}
}

/*
 * The device's asynchronous events, without blocking: the one we wait for
 * is a QP's LAST_WQE_REACHED, which says it takes no more SRQ receives.
 * Every event is acknowledged at once (ibv_destroy_qp waits for that).
 */
void msga__srq_events(struct msga_ctx *ctx, const struct msga__ep_ops *ops)
{
	struct ibv_async_event ev;
	struct msga__list *pos, *tmp;

	while (!ibv_get_async_event(ctx->verbs, &ev)) {
		if (ev.event_type == IBV_EVENT_QP_LAST_WQE_REACHED) {
			msga__list_for_each_safe(pos, tmp, &ctx->eps) {
				struct msga__ep *ep = msga__container_of(pos,
						struct msga__ep, node);
				struct msga__conn *c = msga__conn_of(ep);

				if (ep->ops == ops &&
				    c->qp && c->qp == ev.element.qp)
					c->srq_last_wqe = 1;
			}
		}
		ibv_ack_async_event(&ev);
	}
}

/*
 * Stop a QP that shares the SRQ: in the error state it flushes what it
 * holds, and the device says LAST_WQE_REACHED once it will take no more
 * SRQ receives. Only then may it be destroyed without losing one that
 * completes in between; we wait for it until MSGA__SRQ_QUIET_NS from now.
 */
void msga__srq_conn_error(struct msga__conn *c)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (!c->srq || !c->qp || c->srq_quiet_by)
		return;
	ibv_modify_qp(c->qp, &qa, IBV_QP_STATE);
	c->srq_quiet_by = msga__now_ns() + MSGA__SRQ_QUIET_NS;
}

int msga__srq_quiet(struct msga__conn *c, uint64_t now)
{
	/* (a QP that never got connected took no SRQ receive) */
	if (!c->srq || !c->qp || !c->established || c->srq_last_wqe ||
	    c->srq->closing)
		return 1;
	msga__srq_conn_error(c);
	msga__srq_events(c->ctx, c->eng.ops);
	return c->srq_last_wqe || now >= c->srq_quiet_by;
}

/*
 * Unlike its own receive queue, a QP's share of an SRQ is not flushed when
 * it dies, but a receive it took (reaped or not, or in progress: the error
 * state completes that one with a flush status) must go back. So: error
 * state, LAST_WQE_REACHED or its deadline (the reaper waits without
 * blocking, msga__srq_quiet; here only what is left of the deadline is
 * waited for, on the async fd), reap the CQ, and after the QP is
 * destroyed reap it once more (msga__conn_drop_qp calls this on both
 * sides of rdma_destroy_qp).
 */
void msga__srq_conn_drain(struct msga__conn *c)
{
	uint64_t now = msga__now_ns();

	if (!c->srq || !c->cq)
		return;
	while (!msga__srq_quiet(c, now)) {
		struct pollfd p = { .fd = c->ctx->verbs->async_fd,
				    .events = POLLIN };

		poll(&p, 1, (int)((c->srq_quiet_by - now) / 1000000u) + 1);
		now = msga__now_ns();
	}
	srq_drain_cq(c);
}

void msga__srq_detach(struct msga__conn *c)
{
	if (!c->srq)
		return;
	c->srq->nconns--;
	c->srq = NULL;
}

void msga__srq_destroy(struct msga__srq *s)
{
	if (!s)
		return;
	if (s->srq)
		ibv_destroy_srq(s->srq);
	for (uint32_t k = 0; k < s->nchunks; k++) {
		ibv_dereg_mr(s->mr[k]);
		free(s->buf[k]);
	}
	free(s->slots);
	free(s);
}
