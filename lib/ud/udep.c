/* SPDX-License-Identifier: MIT */
/*
 * udep.c - a UD endpoint: an rdma_cm id in the UDP port space bound to the
 * context's address, its UD queue pair (made by rdma_create_qp, which sets
 * the Q_Key rdma_cm's groups use; a context with keys then sets its own,
 * dgram_auth.c), one CQ, a receive ring sized for the
 * path MTU plus the 40-byte GRH, per-send-slot header buffers, and the
 * multicast groups it joined. Teardown works in any state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cq_drain.h"
#include "mcast.h"
#include "pubsub.h"
#include "udep_policy.h"

static const struct msga__ep_ops udep_ops;
static void post_flush_marker(struct msga__udep *ep);
static void qp_failed(struct msga__udep *ep, uint64_t now_ns);

/*
 * The endpoint's state machine, told once (as rdma-core's rping.c tells
 * its test_state):
 *
 *   state        event         next         who
 *   READY        RESOLVE       RESOLVING    ud:// subscriber, just made
 *   RESOLVING    PEER_FOUND    SUBSCRIBING  its SIDR reply (ud_unicast.c)
 *   SUBSCRIBING  PEER_FOUND    SUBSCRIBING  (rdma_cm sends one reply; a
 *   READY        PEER_FOUND    SUBSCRIBING   second would start over)
 *   SUBSCRIBING  SUBACK        READY        the publisher took it
 *   READY        QP_FAILED     RESTARTING   publisher (qp_failed)
 *   RESTARTING   QP_RESTARTED  READY        publisher (restart_tick)
 *   READY        CLOSE         CLOSING      publisher destroyed (mcast_pub.c)
 *   any but DEAD KILL          DEAD         msga__udep_kill, a failed new
 *
 * Any other pair leaves the state as it is: the callers test the state
 * before they fire an event where it matters (a failure while
 * RESTARTING is the rest of the queue flushing; a KILL of the dead is a
 * second teardown).
 */
static const uint8_t udep_next[MSGA__UDEP_DEAD + 1][MSGA__UDEP_EV_COUNT] = {
	[MSGA__UDEP_READY] = {
		[MSGA__UDEP_EV_RESOLVE] = MSGA__UDEP_RESOLVING,
		[MSGA__UDEP_EV_PEER_FOUND] = MSGA__UDEP_SUBSCRIBING,
		[MSGA__UDEP_EV_QP_FAILED] = MSGA__UDEP_RESTARTING,
		[MSGA__UDEP_EV_CLOSE] = MSGA__UDEP_CLOSING,
		[MSGA__UDEP_EV_KILL] = MSGA__UDEP_DEAD,
	},
	[MSGA__UDEP_RESOLVING] = {
		[MSGA__UDEP_EV_PEER_FOUND] = MSGA__UDEP_SUBSCRIBING,
		[MSGA__UDEP_EV_KILL] = MSGA__UDEP_DEAD,
	},
	[MSGA__UDEP_SUBSCRIBING] = {
		[MSGA__UDEP_EV_PEER_FOUND] = MSGA__UDEP_SUBSCRIBING,
		[MSGA__UDEP_EV_SUBACK] = MSGA__UDEP_READY,
		[MSGA__UDEP_EV_KILL] = MSGA__UDEP_DEAD,
	},
	[MSGA__UDEP_RESTARTING] = {
		[MSGA__UDEP_EV_QP_RESTARTED] = MSGA__UDEP_READY,
		[MSGA__UDEP_EV_KILL] = MSGA__UDEP_DEAD,
	},
	[MSGA__UDEP_CLOSING] = {
		[MSGA__UDEP_EV_KILL] = MSGA__UDEP_DEAD,
	},
};

/* The one place the state changes. */
void msga__udep_on(struct msga__udep *ep, enum msga__udep_event ev)
{
	uint8_t next = udep_next[ep->state][ev];

	if (next)
		ep->state = (enum msga__udep_state)next;
}

static int udep_bind(struct msga__udep *ep, const struct sockaddr_storage *at)
{
	struct msga_ctx *ctx = ep->ctx;
	struct sockaddr_storage local;
	int ret = 0;

	if (at) {
		local = *at;
		ep->bind = *at;
		ep->has_bind = 1;
	} else
		ret = msga__ctx_local_addr(ctx, &local);

	if (ret)
		return ret;
	ret = msga__ctx_cm_channel(ctx);
	if (ret)
		return ret;
	if (rdma_create_id(ctx->cm_ch, &ep->cm, &ep->eng, RDMA_PS_UDP))
		return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
				      "rdma_create_id(UDP)");
	if (rdma_bind_addr(ep->cm, (struct sockaddr *)&local))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRNOTAVAIL),
				      "rdma_bind_addr (UD)");
	if (ep->cm->verbs != ctx->verbs)
		return msga__ctx_fail(ctx, -ENODEV, "the context's address is "
				      "not on %s", ctx->dev_name);
	return 0;
}

/* What rdma_cm set the QP up with, to set it up again (qp_restart). */
static int remember_qp(struct msga__udep *ep)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	if (ibv_query_qp(ep->qp, &a, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_QKEY, &init))
		return msga__ctx_fail(ep->ctx, -EIO, "ibv_query_qp(UD)");
	ep->pkey_index = a.pkey_index;
	ep->port_num = a.port_num;
	ep->qkey = a.qkey;
	return 0;
}

static int udep_create_qp(struct msga__udep *ep)
{
	struct msga_ctx *ctx = ep->ctx;
	int ret;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = ep->sq_depth ? ep->sq_depth : 1,
			 .max_recv_wr = ep->rx_depth ? ep->rx_depth : 1,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = ctx->max_inline },
	};

	ep->cq = msga__cq_open(ctx, (int)(qia.cap.max_send_wr +
					  qia.cap.max_recv_wr), &ep->armed);
	if (!ep->cq)
		return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
				      "ibv_create_cq(UD)");
	qia.send_cq = ep->cq;
	qia.recv_cq = ep->cq;
	if (rdma_create_qp(ep->cm, ctx->pd, &qia)) {
		/* Some providers take no inline data on UD: try without. */
		qia.cap.max_inline_data = 0;
		if (rdma_create_qp(ep->cm, ctx->pd, &qia))
			return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
					      "rdma_create_qp(UD)");
	}
	ep->qp = ep->cm->qp;
	ep->max_inline = qia.cap.max_inline_data;
	ret = msga__ud_qkey_apply(ep); /* a context with keys: its own */
	return ret ? ret : remember_qp(ep);
}

static int udep_alloc(struct msga__udep *ep)
{
	struct msga_ctx *ctx = ep->ctx;

	if (ep->rx_depth) {
		ep->rx_slot = MSGA__UD_GRH + ep->max_dgram;
		ep->rx_slots = calloc(ep->rx_depth, sizeof(*ep->rx_slots));
		if (!ep->rx_slots)
			return -ENOMEM;
		ep->rx_buf = msga__reg_buf(ctx, (size_t)ep->rx_depth * ep->rx_slot,
				     &ep->rx_mr);
		if (!ep->rx_buf)
			return msga__neg_errno(ENOMEM);
		for (uint32_t i = 0; i < ep->rx_depth; i++)
			ep->rx_slots[i] = (struct msga__rxslot){ .ud = ep,
								 .idx = i };
	}
	if (ep->sq_depth) {
		ep->tx_tag = calloc(ep->sq_depth, sizeof(*ep->tx_tag));
		ep->tx_dst = calloc(ep->sq_depth, sizeof(*ep->tx_dst));
		if (!ep->tx_tag || !ep->tx_dst)
			return -ENOMEM;
		ep->hdr_buf = msga__reg_buf(ctx, (size_t)ep->sq_depth *
				      MSGA__UD_HDR_SLOT, &ep->hdr_mr);
		if (!ep->hdr_buf)
			return msga__neg_errno(ENOMEM);
	}
	return 0;
}

/* An endpoint with its queue pair ready and every receive posted. */
int msga__udep_new(struct msga_ctx *ctx, const struct msga__udep_cb *cb,
		   uint32_t rx_depth, uint32_t sq_depth,
		   const struct sockaddr_storage *at, struct msga__udep **epp)
{
	struct msga__udep *ep;
	int ret;

	*epp = NULL;
	if (ctx->transport == MSGA_TRANSPORT_IWARP)
		return msga__ctx_fail(ctx, -EOPNOTSUPP, "iWARP has no "
				      "multicast; use rdma:// (RC)");
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->ctx = ctx;
	ep->cb = cb;
	ep->state = MSGA__UDEP_READY;
	ep->rx_depth = rx_depth;
	ep->sq_depth = sq_depth;
	ep->max_dgram = 128u << ctx->port_attr.active_mtu;
	msga__list_init(&ep->own_node);
	msga__ep_add(ctx, &ep->eng, &udep_ops, 1);
	ret = udep_bind(ep, at);
	if (!ret)
		ret = udep_alloc(ep);
	if (!ret)
		ret = udep_create_qp(ep);
	if (!ret)
		ret = msga__dgram_auth_init(ep);
	for (uint32_t i = 0; !ret && i < rx_depth; i++)
		ret = msga__udep_post_recv(ep, i);
	if (ret) {
		msga__udep_on(ep, MSGA__UDEP_EV_KILL); /* nothing to leave */
		msga__udep_free(ep);
		return ret;
	}
	*epp = ep;
	return 0;
}

int msga__udep_post_recv(struct msga__udep *ep, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(ep->rx_buf + (size_t)idx * ep->rx_slot),
		.length = ep->rx_slot,
		.lkey = ep->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = MSGA__UD_WR_RECV | idx,
				  .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(ep->qp, &wr, &bad);

	if (!ret)
		ep->rx_posted++;
	return -ret;
}

int msga__udep_sq_room(const struct msga__udep *ep)
{
	return (int)(ep->sq_depth - (uint32_t)(ep->tx_seq - ep->tx_done));
}

char *msga__udep_hdr_slot(struct msga__udep *ep)
{
	return ep->hdr_buf + (ep->tx_seq % ep->sq_depth) * MSGA__UD_HDR_SLOT;
}

/* What a publisher's endpoint held back (msga__pub_post) goes now. */
int msga__udep_ring(struct msga__udep *ep)
{
	int ret;

	if (!ep->wrb.n)
		return 0;
	if (msga__udep_dead(ep)) {
		msga__wrb_drop(&ep->wrb); /* (the flush marker retired it) */
		return -ENETDOWN;
	}
	ret = msga__wrb_ring(&ep->wrb, ep->qp);
	if (ret)
		msga__udep_kill(ep, -ret, 1);
	return ret ? -ENETDOWN : 0;
}

/*
 * Post one datagram: the header already written in this send slot's
 * header buffer, then m->len bytes of data. Inline when it fits; otherwise
 * m->tag says what stays referenced until a signalled completion.
 */
int msga__udep_sendmsg(struct msga__udep *ep, const struct msga__ud_msg *m)
{
	struct msga__mgroup *g = m->to;
	uint32_t pos = ep->tx_seq % ep->sq_depth;
	int32_t tag = m->tag;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)msga__udep_hdr_slot(ep), m->hdr_len,
		  ep->hdr_mr->lkey },
		{ (uintptr_t)m->data, m->len, m->lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = ep->tx_seq, .sg_list = sge, .num_sge = m->len ? 2 : 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = g->ah, .remote_qpn = g->qpn,
			   .remote_qkey = g->qkey },
	};
	int ret;

	if (m->hdr_len + m->len <= ep->max_inline) {
		wr.send_flags |= IBV_SEND_INLINE;
		tag = MSGA__TAG_NONE;
	}
	sge[0].length = msga__dgram_auth_send(ep, msga__udep_hdr_slot(ep),
					      m->hdr_len, m->data, m->len);
	if (m->signal || ep->nparked || ++ep->unsig >= MSGA__UD_SIG_EVERY ||
	    ep->tx_seq + 1 - ep->tx_done >= ep->sq_depth) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		ep->unsig = 0;
	}
	/* (a publisher's may be held back for one doorbell with later ones) */
	ret = msga__pub_post(ep->pub, &ep->wrb, ep->qp, &wr,
			     ep->tx_seq - ep->tx_done, ep->sq_depth,
			     MSGA__UD_SIG_EVERY);
	if (ret)
		return -ret;
	ep->tx_tag[pos] = tag;
	ep->tx_dst[pos] = g->counted ? g : NULL;
	if (g->counted)
		g->inflight++;
	ep->tx_seq++;
	return 0;
}

int msga__udep_send_hdr(struct msga__udep *ep, struct msga__mgroup *to,
			uint32_t hdr_len, int signal)
{
	struct msga__ud_msg m = { .to = to, .hdr_len = hdr_len,
				  .tag = MSGA__TAG_NONE, .signal = signal };

	return msga__udep_sendmsg(ep, &m);
}

/* A send to a counted destination is done: the last one frees its AH. */
static void dst_put(struct msga__mgroup *g)
{
	if (--g->inflight || !g->retiring)
		return;
	ibv_destroy_ah(g->ah);
	g->ah = NULL;
	g->retiring = 0;
}

static void tx_done(struct msga__udep *ep, uint64_t wr_seq)
{
	for (; ep->tx_done <= wr_seq && ep->tx_done < ep->tx_seq;
	     ep->tx_done++) {
		uint32_t pos = ep->tx_done % ep->sq_depth;
		int32_t *tag = &ep->tx_tag[pos];

		if (*tag != MSGA__TAG_NONE && ep->cb->on_tag_done)
			ep->cb->on_tag_done(ep, *tag);
		*tag = MSGA__TAG_NONE;
		if (ep->tx_dst[pos])
			dst_put(ep->tx_dst[pos]);
		ep->tx_dst[pos] = NULL;
	}
	if (ep->nparked)
		msga__ud_unpark(ep, 0);
}

/*
 * A datagram longer than the receive buffer (a sender with a larger MTU
 * or datagram size than ours): dropped and counted, never fatal, since
 * any peer on the group can send one.
 */
static int recv_too_long(const struct ibv_wc *wc)
{
	return wc->status == IBV_WC_LOC_LEN_ERR;
}

/* A receive completed while closing, restarting or dead was flushed. */
static int takes_datagrams(const struct msga__udep *ep)
{
	return ep->state == MSGA__UDEP_READY ||
	       ep->state == MSGA__UDEP_RESOLVING ||
	       ep->state == MSGA__UDEP_SUBSCRIBING;
}

static void recv_wc(struct msga__udep *ep, const struct ibv_wc *wc,
		    uint64_t now_ns)
{
	uint32_t idx = (uint32_t)(wc->wr_id & ~MSGA__UD_WR_RECV);

	ep->rx_posted--;
	if (!takes_datagrams(ep) || idx >= ep->rx_depth)
		return; /* flushed, or the ring goes with the endpoint */
	if (recv_too_long(wc)) {
		if (ep->sub)
			ep->sub->ud.st.oversize++;
		if (msga__udep_post_recv(ep, idx))
			msga__udep_kill(ep, -EIO, 1);
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		if (ep->pub)
			qp_failed(ep, now_ns); /* the QP is in error */
		else
			msga__udep_kill(ep, -EIO, 1);
		return;
	}
	/* forged datagrams go before they touch any state (dgram_auth.c) */
	if (msga__dgram_auth_recv(ep, &ep->rx_slots[idx], wc)) {
		if (msga__udep_post_recv(ep, idx))
			msga__udep_kill(ep, -EIO, 1);
		return;
	}
	ep->cb->on_recv(ep, &ep->rx_slots[idx], wc, now_ns);
}

/*
 * Reset to ready-to-send, as rdma_cm first set it up. Receives do not
 * survive a reset: a unicast publisher's control ring is posted again.
 */
static int qp_restart(struct msga__udep *ep)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE))
		return -EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT,
				  .pkey_index = ep->pkey_index,
				  .port_num = ep->port_num, .qkey = ep->qkey };
	if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE))
		return -EIO;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	if (ibv_modify_qp(ep->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -EIO;
	for (uint32_t i = 0; i < ep->rx_depth; i++)
		if (msga__udep_post_recv(ep, i))
			return -EIO;
	return 0;
}

/*
 * A publisher's QP failed (a send, or a receive of a unicast publisher's
 * control ring, came back in error): every queued send and receive comes
 * back flushed, and then the QP restarts instead of the publisher ending,
 * because a link that flaps under a feed (or a datagram the device would
 * not send) should cost the datagrams it took, which subscribers see as a
 * gap, not the feed. Claims return -EAGAIN meanwhile. Failing again and
 * again, it waits longer each time, and after a peer timeout of failures
 * it ends as before (MSGA_EVENT_DISCONNECTED).
 */
static void qp_failed(struct msga__udep *ep, uint64_t now_ns)
{
	uint32_t shift;

	ep->wc_errors++;
	if (ep->state == MSGA__UDEP_RESTARTING)
		return; /* the rest of the queue, flushed */
	if (!ep->restarts_in_row)
		ep->failing_since_ns = now_ns;
	else if (msga__time_reached(now_ns, ep->failing_since_ns +
				    ep->ctx->peer_timeout_ns)) {
		msga__udep_kill(ep, -ENETDOWN, 1);
		return;
	}
	shift = ep->restarts_in_row < MSGA__UD_RESTART_MAX_SHIFT ?
		ep->restarts_in_row : MSGA__UD_RESTART_MAX_SHIFT;
	msga__udep_on(ep, MSGA__UDEP_EV_QP_FAILED);
	ep->restart_at_ns = now_ns + (1000000ull << shift);
	ep->restarts_in_row++;
	/* unsignalled sends after the failed one: one signalled flush */
	post_flush_marker(ep);
}

/*
 * Restart the QP once every send and receive is back (a flush still in
 * the CQ would fail the new QP) and the wait is over.
 */
static uint64_t restart_tick(struct msga__udep *ep, uint64_t now_ns)
{
	if (ep->state != MSGA__UDEP_RESTARTING)
		return UINT64_MAX;
	if (ep->tx_done != ep->tx_seq || ep->rx_posted)
		return now_ns + 1000000u; /* flushes still coming */
	if (!msga__time_reached(now_ns, ep->restart_at_ns))
		return ep->restart_at_ns;
	if (qp_restart(ep)) {
		msga__udep_kill(ep, -EIO, 1);
		return UINT64_MAX;
	}
	msga__udep_on(ep, MSGA__UDEP_EV_QP_RESTARTED);
	ep->qp_restarts++;
	if (ep->pub)
		msga__pub_work(ep->pub); /* a blocked pump goes on */
	return UINT64_MAX;
}

/*
 * Only wr_id tells a send from a receive: an error completion's opcode is
 * undefined. A failed send (a flush after a death included) still frees
 * its slot and the buffers it held.
 */
static void udep_wc(struct msga__udep *ep, const struct ibv_wc *wc,
		    uint64_t now_ns)
{
	if (wc->wr_id & MSGA__UD_WR_RECV) {
		recv_wc(ep, wc, now_ns);
		return;
	}
	tx_done(ep, wc->wr_id);
	if (wc->status == IBV_WC_SUCCESS) {
		if (ep->state != MSGA__UDEP_RESTARTING)
			ep->restarts_in_row = 0;
		return;
	}
	if (ep->pub && ep->state != MSGA__UDEP_CLOSING && !msga__udep_dead(ep))
		qp_failed(ep, now_ns ? now_ns : msga__now_ns());
	else
		msga__udep_kill(ep, -EIO, ep->state != MSGA__UDEP_CLOSING);
}

/* A dead endpoint is drained until its last send is back. */
static int udep_busy(const struct msga__udep *ep)
{
	return !msga__udep_dead(ep) || ep->tx_done != ep->tx_seq;
}

/* A publisher's endpoint died: say so from the poll, not from a commit. */
static void report_death(struct msga__udep *ep)
{
	int status = ep->death_report;

	if (!status)
		return;
	ep->death_report = 0;
	ep->cb->on_death(ep, status);
}

static int udep_poll(struct msga__udep *ep, int budget, uint64_t *now)
{
	struct ibv_wc wc[32];
	int done = 0, n;

	report_death(ep);
	while (ep->cq && udep_busy(ep) && done < budget) {
		n = msga__cq_drain(ep->cq, &ep->armed, ep->ctx->evmode, wc,
				   budget - done < 32 ? budget - done : 32);
		if (n < 0) {
			msga__udep_kill(ep, n, 1);
			break;
		}
		if (n == 0)
			break;
		if (!*now)
			*now = msga__rx_clock_now(&ep->ctx->rx_clock);
		for (int i = 0; i < n; i++)
			udep_wc(ep, &wc[i], *now);
		done += n;
	}
	return done;
}

/*
 * Poll until every send posted is back: 1, or 0 when until_ns came first
 * or the endpoint died. For a publisher being destroyed (its ENDs).
 */
int msga__udep_drain(struct msga__udep *ep, uint64_t until_ns)
{
	while (!msga__udep_dead(ep) && ep->tx_done != ep->tx_seq) {
		uint64_t now = 0;

		if (msga__time_reached(msga__now_ns(), until_ns))
			return 0;
		udep_poll(ep, 32, &now);
	}
	return !msga__udep_dead(ep);
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * A publisher's QP restart, then the groups' rejoins (none on a unicast
 * endpoint), then the owner's own timers.
 */
static uint64_t udep_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	if (msga__udep_dead(ep))
		return UINT64_MAX;
	if (ep->pub) {
		next = restart_tick(ep, now_ns);
		if (msga__udep_dead(ep))
			return UINT64_MAX;
	}
	next = earliest(next, msga__ud_rejoin_tick(ep, now_ns));
	if (ep->cb->tick)
		next = earliest(next, ep->cb->tick(ep, now_ns));
	return next;
}

static void udep_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev)
{
	int ret;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* a unicast publisher's subscriber (it refuses if dead) */
		if (ep->cb->on_cm) {
			ep->cb->on_cm(ep, ev);
		} else { /* nobody listens here: never asked for */
			rdma_reject(ev->id, NULL, 0);
			rdma_destroy_id(ev->id);
		}
		return;
	}
	if (msga__udep_dead(ep))
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_MULTICAST_JOIN:
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		ret = msga__ud_join_event(ep, ev);
		if (ret)
			msga__udep_kill(ep, ret, 1);
		return;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (ep->cb->on_cm) /* a unicast subscriber's SIDR */
			ep->cb->on_cm(ep, ev);
		return;
	default: /* device removal and the like */
		msga__udep_kill(ep, -ENODEV, 1);
		return;
	}
}

/* Any address handle of the endpoint's, for a send that goes nowhere. */
static struct ibv_ah *any_ah(const struct msga__udep *ep)
{
	for (uint32_t i = 0; i < ep->ngroups; i++)
		if (ep->groups[i].ah)
			return ep->groups[i].ah;
	for (uint32_t i = 0; ep->pub && ep->pub->ud.dests &&
			     i < MSGA__UD_DESTS_MAX; i++)
		if (ep->pub->ud.dests[i].g.ah)
			return ep->pub->ud.dests[i].g.ah;
	return ep->peer.ah;
}

/*
 * After the QP went to error: sends that already completed unsignalled
 * give no completion, so one signalled send is posted behind them; its
 * flush completion retires every send before it (tx_done). With a full
 * queue the last send is signalled already (msga__udep_send).
 */
static void post_flush_marker(struct msga__udep *ep)
{
	struct ibv_send_wr wr = { .wr_id = ep->tx_seq, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	wr.wr.ud.ah = any_ah(ep);
	if (ep->tx_done == ep->tx_seq || msga__udep_sq_room(ep) < 1 ||
	    !wr.wr.ud.ah || ibv_post_send(ep->qp, &wr, &bad))
		return;
	ep->tx_tag[ep->tx_seq % ep->sq_depth] = MSGA__TAG_NONE;
	ep->tx_dst[ep->tx_seq % ep->sq_depth] = NULL;
	ep->tx_seq++;
}

/*
 * Leave every group and stop. The memory stays until msga__udep_free(),
 * because a held message may still point into the receive ring.
 */
void msga__udep_kill(struct msga__udep *ep, int status, int notify)
{
	if (msga__udep_dead(ep))
		return;
	msga__udep_on(ep, MSGA__UDEP_EV_KILL);
	msga__ud_leave_all(ep);
	/* Flush the queues: every queued send comes back and frees what it
	 * held (the endpoint is polled until then). */
	/* (what is held back goes first, so the marker retires it too) */
	if (ep->qp)
		msga__wrb_ring(&ep->wrb, ep->qp);
	if (ep->qp && !ibv_modify_qp(ep->qp, &(struct ibv_qp_attr){
				.qp_state = IBV_QPS_ERR }, IBV_QP_STATE) &&
	    ep->sq_depth)
		post_flush_marker(ep);
	msga__ctx_reap_soon(ep->ctx);
	if (notify && ep->sub)
		msga__udep_emit(ep, ep->ngroups ? &ep->groups[0] : &ep->peer,
				MSGA_EVENT_DISCONNECTED, status);
	if (notify && ep->pub) {
		/* reported by the next poll */
		ep->death_report = status ? status : -EIO;
	}
	if (ep->cb && ep->cb->on_end)
		ep->cb->on_end(ep, status, notify);
}

void msga__udep_free(struct msga__udep *ep)
{
	msga__udep_kill(ep, 0, 0);
	msga__ud_groups_free(ep);
	if (ep->peer.ah)
		ibv_destroy_ah(ep->peer.ah);
	if (ep->qp)
		rdma_destroy_qp(ep->cm);
	msga__ud_unpark(ep, 1);
	if (ep->cq)
		ibv_destroy_cq(ep->cq);
	if (ep->cm)
		rdma_destroy_id(ep->cm);
	if (ep->rx_mr)
		ibv_dereg_mr(ep->rx_mr);
	if (ep->hdr_mr)
		ibv_dereg_mr(ep->hdr_mr);
	msga__ep_del(&ep->eng);
	msga__list_del(&ep->own_node);
	free(ep->rx_buf);
	free(ep->rx_slots);
	free(ep->hdr_buf);
	free(ep->tx_tag);
	msga__wrb_free(&ep->wrb);
	free(ep->tx_dst);
	free(ep->parked);
	free(ep->retry); /* (a record no retry took: ud_unicast.c) */
	msga__dgram_auth_free(ep);
	free(ep);
}

/* ---------------------------------------------------- the engine's ops */

static struct msga__udep *udep_of(struct msga__ep *e)
{
	return msga__container_of(e, struct msga__udep, eng);
}

static int udep_ep_poll(struct msga__ep *e, int budget, uint64_t *now)
{
	return udep_poll(udep_of(e), budget, now);
}

static void udep_ep_on_cm(struct msga__ep *e, const struct rdma_cm_event *ev)
{
	udep_on_cm(udep_of(e), ev);
}

static uint64_t udep_ep_tick(struct msga__ep *e, uint64_t now)
{
	return udep_tick(udep_of(e), now);
}

static void udep_ep_arm(struct msga__ep *e)
{
	struct msga__udep *ep = udep_of(e);

	msga__cq_arm(ep->cq, &ep->armed);
}

/*
 * A membership is freed once dead and unheld; a publisher's endpoint
 * lives as long as the publisher, which frees it.
 */
static int udep_ep_reap(struct msga__ep *e, uint64_t now)
{
	struct msga__udep *ep = udep_of(e);

	(void)now;
	if (!msga__udep_dead(ep) || !ep->sub || ep->holds)
		return 0;
	msga__udep_free(ep);
	return 1;
}

static void udep_ep_destroy(struct msga__ep *e)
{
	msga__udep_free(udep_of(e));
}

static const struct msga__ep_ops udep_ops = {
	.poll = udep_ep_poll,
	.on_cm = udep_ep_on_cm,
	.tick = udep_ep_tick,
	.arm = udep_ep_arm,
	.reap = udep_ep_reap,
	.destroy = udep_ep_destroy,
};
