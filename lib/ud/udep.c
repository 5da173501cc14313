/* SPDX-License-Identifier: MIT */
/*
 * udep.c - a UD endpoint: an rdma_cm id in the UDP port space bound to the
 * context's address, its UD queue pair (made by rdma_create_qp, which sets
 * the Q_Key rdma_cm's groups use; a context with keys then sets its own,
 * dgram_auth.c), one CQ, a receive ring sized for the
 * path MTU plus the 40-byte GRH, per-send-slot header buffers, and the
 * multicast groups it joined. Teardown works in any state.
 */
#include <arpa/inet.h>
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

static int udep_bind(struct msga__udep *ep, const struct sockaddr_storage *at)
{
	struct msga_ctx *ctx = ep->ctx;
	struct sockaddr_storage local;
	int ret = 0;

	if (at)
		local = *at;
	else
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
int msga__udep_new(struct msga_ctx *ctx, uint32_t rx_depth, uint32_t sq_depth,
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
		ep->dead = 1;
		msga__udep_free(ep);
		return ret;
	}
	*epp = ep;
	return 0;
}

static int join(struct msga__mgroup *g, int sendonly)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
			     RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = sendonly ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER :
					 RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = (struct sockaddr *)&g->addr,
	};

	/* The context is the group's index + 1: ep->groups may move. */
	void *tag = (void *)(uintptr_t)(g - g->ep->groups + 1);

	g->sendonly = sendonly;
	g->state = MSGA__G_JOINING;
	msga__ctx_cm_soon(g->ep->ctx);
	if (rdma_join_multicast_ex(g->ep->cm, &attr, tag))
		return msga__neg_errno(EINVAL);
	g->joined = 1;
	return 0;
}

static void group_name(struct msga__mgroup *g)
{
	const void *a = g->addr.ss_family == AF_INET6 ?
		(const void *)&((struct sockaddr_in6 *)&g->addr)->sin6_addr :
		(const void *)&((struct sockaddr_in *)&g->addr)->sin_addr;

	inet_ntop(g->addr.ss_family, a, g->name, sizeof(g->name));
}

/*
 * Start joining group addr. Send-only where the device supports it (a
 * publisher need not receive), else as a full member.
 */
int msga__udep_join(struct msga__udep *ep, const struct sockaddr_storage *addr,
		    int sendonly, struct msga__mgroup **gp)
{
	struct msga__mgroup *g, *grown;
	int ret;

	grown = realloc(ep->groups, (ep->ngroups + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ep->groups = grown;
	g = &ep->groups[ep->ngroups];
	memset(g, 0, sizeof(*g));
	g->ep = ep;
	g->addr = *addr;
	group_name(g);
	ret = join(g, sendonly);
	if (ret && sendonly)
		ret = join(g, 0);
	if (ret) {
		g->state = MSGA__G_FAILED;
		g->status = ret;
		return msga__ctx_fail(ep->ctx, ret, "rdma_join_multicast(%s)",
				      g->name);
	}
	ep->ngroups++;
	*gp = g;
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

/*
 * Post one datagram to group g: the header already written in this send
 * slot's header buffer, then len bytes of data. Inline when it fits;
 * otherwise tag says what stays referenced until a signalled completion.
 */
int msga__udep_send(struct msga__udep *ep, struct msga__mgroup *g,
		    uint32_t hdr_len, const void *data, uint32_t len,
		    uint32_t lkey, int32_t tag, int force_signal)
{
	uint32_t pos = ep->tx_seq % ep->sq_depth;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)msga__udep_hdr_slot(ep), hdr_len,
		  ep->hdr_mr->lkey },
		{ (uintptr_t)data, len, lkey },
	};
	struct ibv_send_wr wr = {
		.wr_id = ep->tx_seq, .sg_list = sge, .num_sge = len ? 2 : 1,
		.opcode = IBV_WR_SEND,
		.wr.ud = { .ah = g->ah, .remote_qpn = g->qpn,
			   .remote_qkey = g->qkey },
	};
	struct ibv_send_wr *bad;
	int ret;

	if (hdr_len + len <= ep->max_inline) {
		wr.send_flags |= IBV_SEND_INLINE;
		tag = MSGA__TAG_NONE;
	}
	sge[0].length = msga__dgram_auth_send(ep, msga__udep_hdr_slot(ep),
					      hdr_len, data, len);
	if (force_signal || ep->nparked || ++ep->unsig >= MSGA__UD_SIG_EVERY ||
	    ep->tx_seq + 1 - ep->tx_done >= ep->sq_depth) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		ep->unsig = 0;
	}
	ret = ibv_post_send(ep->qp, &wr, &bad);
	if (ret)
		return -ret;
	ep->tx_tag[pos] = tag;
	ep->tx_dst[pos] = g->counted ? g : NULL;
	if (g->counted)
		g->inflight++;
	ep->tx_seq++;
	return 0;
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

/* Free the replaced group AHs no queued send can use any more. */
static void unpark(struct msga__udep *ep, int all)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < ep->nparked; i++) {
		struct msga__parked_ah *p = &ep->parked[i];

		if (all || ep->tx_done >= p->until_seq)
			ibv_destroy_ah(p->ah);
		else
			ep->parked[kept++] = *p;
	}
	ep->nparked = kept;
}

static void tx_done(struct msga__udep *ep, uint64_t wr_seq)
{
	for (; ep->tx_done <= wr_seq && ep->tx_done < ep->tx_seq;
	     ep->tx_done++) {
		uint32_t pos = ep->tx_done % ep->sq_depth;
		int32_t *tag = &ep->tx_tag[pos];

		if (*tag != MSGA__TAG_NONE && ep->pub)
			msga__mpub_tag_done(ep->pub, *tag);
		*tag = MSGA__TAG_NONE;
		if (ep->tx_dst[pos])
			dst_put(ep->tx_dst[pos]);
		ep->tx_dst[pos] = NULL;
	}
	if (ep->nparked)
		unpark(ep, 0);
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

static void recv_wc(struct msga__udep *ep, const struct ibv_wc *wc,
		    uint64_t now_ns)
{
	uint32_t idx = (uint32_t)(wc->wr_id & ~MSGA__UD_WR_RECV);

	ep->rx_posted--;
	if (ep->dead || ep->closing || ep->restarting || idx >= ep->rx_depth)
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
	if (ep->pub && ep->unicast)
		msga__upub_on_recv(ep, &ep->rx_slots[idx], wc, now_ns);
	else if (ep->pub)
		msga__mpub_on_recv(ep, &ep->rx_slots[idx], wc, now_ns);
	else
		msga__msub_on_recv(ep, &ep->rx_slots[idx], wc, now_ns);
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
	if (ep->restarting)
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
	ep->restarting = 1;
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
	if (!ep->restarting)
		return UINT64_MAX;
	if (ep->tx_done != ep->tx_seq || ep->rx_posted)
		return now_ns + 1000000u; /* flushes still coming */
	if (!msga__time_reached(now_ns, ep->restart_at_ns))
		return ep->restart_at_ns;
	if (qp_restart(ep)) {
		msga__udep_kill(ep, -EIO, 1);
		return UINT64_MAX;
	}
	ep->restarting = 0;
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
		if (!ep->restarting)
			ep->restarts_in_row = 0;
		return;
	}
	if (ep->pub && !ep->closing && !ep->dead)
		qp_failed(ep, now_ns ? now_ns : msga__now_ns());
	else
		msga__udep_kill(ep, -EIO, !ep->closing);
}

/* A dead endpoint is drained until its last send is back. */
static int udep_busy(const struct msga__udep *ep)
{
	return !ep->dead || ep->tx_done != ep->tx_seq;
}

/* A publisher's endpoint died: say so from the poll, not from a commit. */
static void report_death(struct msga__udep *ep)
{
	if (!ep->death_pending)
		return;
	ep->death_pending = 0;
	msga__mpub_on_death(ep->pub, ep->death_status);
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
	while (!ep->dead && ep->tx_done != ep->tx_seq) {
		uint64_t now = 0;

		if (msga__time_reached(msga__now_ns(), until_ns))
			return 0;
		udep_poll(ep, 32, &now);
	}
	return !ep->dead;
}

void msga__udep_emit(struct msga__udep *ep, const struct msga__mgroup *g,
		     enum msga_event_type type, int status)
{
	struct msga_event ev = {
		.type = type, .status = status, .conn_id = ep->id,
		.pub = ep->pub, .sub = ep->sub, .peer = g ? g->name : "",
	};
	msga_event_cb cb = ep->pub ? ep->pub->on_event :
				     ep->sub ? ep->sub->on_event : NULL;
	void *user = ep->pub ? ep->pub->user : ep->sub ? ep->sub->user : NULL;

	if (ep->pub && g)
		ev.conn_id = (uint32_t)(g - ep->groups);
	if (cb)
		cb(&ev, user);
}

/*
 * A rejoined group's old AH: sends queued before may still use it, so it
 * is freed when they are done (unpark), or now when none is queued. The
 * list only grows while no send completes and groups keep rejoining; past
 * MSGA__PARKED_AH_MAX the endpoint is stuck, and -ENOBUFS ends it.
 */
static int park_ah(struct msga__udep *ep, struct ibv_ah *ah)
{
	struct msga__parked_ah *grown;

	if (ep->tx_done == ep->tx_seq) {
		ibv_destroy_ah(ah);
		return 0;
	}
	if (ep->nparked >= MSGA__PARKED_AH_MAX)
		return -ENOBUFS;
	grown = realloc(ep->parked, (ep->nparked + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ep->parked = grown;
	ep->parked[ep->nparked++] = (struct msga__parked_ah){
		.ah = ah, .until_seq = ep->tx_seq };
	return 0;
}

static void on_join(struct msga__mgroup *g, const struct rdma_cm_event *ev)
{
	const struct rdma_ud_param *ud = &ev->param.ud;
	struct msga__udep *ep = g->ep;
	int ret;

	if (ep->pub) {
		struct ibv_ah_attr ah_attr = ud->ah_attr;
		struct ibv_ah *old = g->ah;

		g->ah = ibv_create_ah(ep->ctx->pd, &ah_attr);
		if (!g->ah) {
			g->ah = old;
			g->state = MSGA__G_FAILED;
			g->status = msga__neg_errno(ENOMEM);
			msga__mpub_on_group(g, g->status);
			return;
		}
		ret = old ? park_ah(ep, old) : 0;
		if (ret) {
			ibv_destroy_ah(g->ah); /* nothing used it yet */
			g->ah = old;
			msga__udep_kill(ep, ret, 1);
			return;
		}
		g->qpn = ud->qp_num;
		g->qkey = msga__ud_remote_qkey(ep->ctx, ud->qkey);
	}
	g->join_attr = ud->ah_attr;
	g->state = MSGA__G_READY;
	g->was_ready = 1;
	g->rejoin_attempt = 0;
	if (ep->pub)
		msga__mpub_on_group(g, 0);
	else
		msga__msub_on_group(g, 0);
}

/* Schedule the next rejoin, or give the group up for good. */
static void rejoin_later(struct msga__mgroup *g, int status)
{
	uint64_t wait = msga__rejoin_delay_ns(g->rejoin_attempt);

	if (wait == UINT64_MAX) {
		g->state = MSGA__G_FAILED;
		g->status = status;
		if (g->ep->pub)
			msga__mpub_on_group(g, status);
		else
			msga__msub_on_group(g, status); /* ends the membership */
		return;
	}
	g->state = MSGA__G_REJOINING;
	g->status = status;
	g->rejoin_at_ns = msga__now_ns() + wait;
	g->rejoin_attempt++;
}

/*
 * The fabric dropped a group we had joined (an SM restart, a client
 * reregister, a port that went away): say so, leave what is left of the
 * join, and join again with backoff (udep_policy.h).
 */
static void group_lost(struct msga__mgroup *g, int status)
{
	struct msga__udep *ep = g->ep;

	if (g->joined && !rdma_leave_multicast(ep->cm,
					       (struct sockaddr *)&g->addr))
		g->joined = 0;
	if (g->state == MSGA__G_READY)
		msga__udep_emit(ep, g, MSGA_EVENT_DISCONNECTED, status);
	rejoin_later(g, status);
}

/* Rejoins due; when the next is (UINT64_MAX: none), for the timer. */
static uint64_t rejoin_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; i < ep->ngroups && !ep->dead; i++) {
		struct msga__mgroup *g = &ep->groups[i];
		int ret;

		if (g->state != MSGA__G_REJOINING)
			continue;
		if (!msga__time_reached(now_ns, g->rejoin_at_ns)) {
			next = g->rejoin_at_ns < next ? g->rejoin_at_ns : next;
			continue;
		}
		ret = join(g, g->sendonly);
		if (ret)
			rejoin_later(g, ret);
		if (g->state == MSGA__G_REJOINING && g->rejoin_at_ns < next)
			next = g->rejoin_at_ns;
	}
	return next;
}

static uint64_t earliest(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static uint64_t udep_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t next;

	if (ep->dead)
		return UINT64_MAX;
	if (ep->sub)
		return ep->unicast ? msga__usub_tick(ep, now_ns) :
				     rejoin_tick(ep, now_ns);
	next = restart_tick(ep, now_ns);
	if (ep->dead)
		return UINT64_MAX;
	next = earliest(next, ep->unicast ? msga__upub_tick(ep->pub, now_ns) :
					    rejoin_tick(ep, now_ns));
	return earliest(next, msga__mpub_tick(ep->pub, now_ns));
}

static void on_join_error(struct msga__mgroup *g,
			  const struct rdma_cm_event *ev)
{
	struct msga__udep *ep = g->ep;

	/* A send-only join the fabric refused: try as a full member. */
	if (!g->was_ready && g->sendonly && !rdma_leave_multicast(ep->cm,
						 (struct sockaddr *)&g->addr)) {
		g->joined = 0;
		if (!join(g, 0))
			return;
	}
	g->status = ev->status < 0 ? ev->status : -ENETUNREACH;
	if (g->was_ready) {
		group_lost(g, g->status);
		return;
	}
	g->state = MSGA__G_FAILED;
	if (ep->pub)
		msga__mpub_on_group(g, g->status);
	else
		msga__msub_on_group(g, g->status);
}

static void udep_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev)
{
	uintptr_t idx = (uintptr_t)ev->param.ud.private_data;
	struct msga__mgroup *g = idx && idx <= ep->ngroups ?
				 &ep->groups[idx - 1] : NULL;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		/* a unicast publisher's subscriber (it refuses if dead) */
		msga__upub_on_request(ep, ev->id);
		return;
	}
	if (ep->dead)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_MULTICAST_JOIN:
		if (g)
			on_join(g, ev);
		return;
	case RDMA_CM_EVENT_MULTICAST_ERROR:
		if (g)
			on_join_error(g, ev);
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
		if (ep->unicast && ep->sub)
			msga__usub_on_cm(ep, ev);
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
	if (ep->dead)
		return;
	ep->dead = 1;
	for (uint32_t i = 0; i < ep->ngroups; i++) {
		struct msga__mgroup *g = &ep->groups[i];

		if (g->joined && ep->cm)
			rdma_leave_multicast(ep->cm, (struct sockaddr *)&g->addr);
		g->joined = 0;
	}
	/* Flush the queues: every queued send comes back and frees what it
	 * held (the endpoint is polled until then). */
	if (ep->qp && !ibv_modify_qp(ep->qp, &(struct ibv_qp_attr){
				.qp_state = IBV_QPS_ERR }, IBV_QP_STATE) &&
	    ep->sq_depth)
		post_flush_marker(ep);
	msga__ctx_reap_soon(ep->ctx);
	if (notify && ep->sub)
		msga__udep_emit(ep, ep->ngroups ? &ep->groups[0] : &ep->peer,
				MSGA_EVENT_DISCONNECTED, status);
	if (notify && ep->pub) {
		ep->death_status = status ? status : -EIO;
		ep->death_pending = 1; /* reported by the next poll */
	}
}

void msga__udep_free(struct msga__udep *ep)
{
	msga__udep_kill(ep, 0, 0);
	for (uint32_t i = 0; i < ep->ngroups; i++)
		if (ep->groups[i].ah)
			ibv_destroy_ah(ep->groups[i].ah);
	if (ep->peer.ah)
		ibv_destroy_ah(ep->peer.ah);
	if (ep->qp)
		rdma_destroy_qp(ep->cm);
	unpark(ep, 1);
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
	free(ep->tx_dst);
	free(ep->parked);
	free(ep->groups);
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
	if (!ep->dead || !ep->sub || ep->holds)
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
