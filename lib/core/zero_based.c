/* SPDX-License-Identifier: MIT */
/*
 * zero_based.c - whether the device honours a zero-based registration,
 * found by using one, and the one call that makes such registrations.
 *
 * Memory a peer may READ or WRITE is registered with iova 0
 * (ibv_reg_mr_iova), so the peer addresses it by offset and no address
 * of ours goes on the wire. A provider may take the call and ignore the
 * iova: soft-iWARP (siw) does (Linux 6.1's siw_reg_user_mr() documents
 * rnic_va as "not used by siw", siw_check_mem() bounds a remote access
 * by the buffer's own virtual address). There an offset reaches nothing,
 * so nothing may be registered for remote access (msga__reg_zero_based
 * refuses and the RC ring is not offered). rxe and the hardware drivers
 * (mlx5, irdma, cxgb4) honour it.
 *
 * Rather than name the providers that get it wrong, msga_ctx_open asks
 * the device (msga__zero_based_probe): on InfiniBand and RoCE, an RC QP
 * connected to itself READs at offset 64 of a zero-based registration;
 * the iova is honoured only if that READ succeeds and brings the right
 * bytes (a device that bounds a remote access by our address answers
 * with a remote access error). The probe is bounded (PROBE_MS) and
 * anything that goes wrong, a timeout included, means "not honoured":
 * the safe answer, which costs only the ring's speed.
 *
 * iWARP: a QP cannot be connected to itself by ibv_modify_qp (its
 * connection is a TCP stream, set up only through rdma_cm), so there the
 * probe connects two QPs through rdma_cm on the device's own address
 * (a listener on an ephemeral port, a connect to it, the accept) and
 * READs the same way, under the same deadline: siw answers the READ with
 * a remote access error, so no provider is named by its vendor number.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_cma.h>

#include "internal.h"

#define PROBE_MS 2000          /* for all tries: a loopback READ takes us */
#define PROBE_PAGE 4096
#define PROBE_OFF 64           /* not 0: an ignored iova then faults */
#define PROBE_LEN 64
#define PROBE_TRIES 4          /* RoCE GIDs tried for a path */

struct probe {
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *src_mr;        /* zero-based, remote READ */
	struct ibv_mr *dst_mr;        /* local write */
	uint8_t *src;                 /* a page: a zero-based iova's offset
				       * in its page must be the address's */
	uint8_t dst[PROBE_LEN];
};

/* Its memory, and (qp: InfiniBand, RoCE) its QP; rdma_cm makes iWARP's. */
static int probe_setup(struct msga_ctx *ctx, struct probe *p, int qp)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	p->pd = ibv_alloc_pd(ctx->verbs);
	p->cq = ibv_create_cq(ctx->verbs, 4, NULL, NULL, 0);
	p->src = aligned_alloc(PROBE_PAGE, PROBE_PAGE);
	if (!p->pd || !p->cq || !p->src)
		return -1;
	for (int i = 0; i < PROBE_PAGE; i++)
		p->src[i] = (uint8_t)(i * 7 + 1);
	memset(p->dst, 0, sizeof(p->dst));
	qia.send_cq = qia.recv_cq = p->cq;
	if (qp)
		p->qp = ibv_create_qp(p->pd, &qia);
	p->src_mr = ibv_reg_mr_iova(p->pd, p->src, PROBE_PAGE, 0,
				    IBV_ACCESS_REMOTE_READ);
	/* (iWARP: a READ's response is written into it, so REMOTE_WRITE) */
	p->dst_mr = ibv_reg_mr(p->pd, p->dst, sizeof(p->dst),
			       IBV_ACCESS_LOCAL_WRITE |
			       (qp ? 0 : IBV_ACCESS_REMOTE_WRITE));
	return (p->qp || !qp) && p->src_mr && p->dst_mr ? 0 : -1;
}

/*
 * The address that takes a packet of ours back to our own port: the
 * port's LID (InfiniBand), or its GID at gid_index (RoCE).
 */
static int probe_self_ah(struct msga_ctx *ctx, int gid_index,
			 struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->port_num = ctx->port;
	if (ctx->transport == MSGA_TRANSPORT_IB) {
		ah->dlid = ctx->port_attr.lid;
		return 0;
	}
	ah->is_global = 1;
	ah->grh.sgid_index = (uint8_t)gid_index;
	ah->grh.hop_limit = 1;
	return ibv_query_gid(ctx->verbs, ctx->port, gid_index, &ah->grh.dgid);
}

/* INIT, RTR, RTS with the QP as its own peer. */
static int probe_connect_self(struct msga_ctx *ctx, struct ibv_qp *qp,
			      int gid_index)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = ctx->port,
		.qp_access_flags = IBV_ACCESS_REMOTE_READ,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = ctx->port_attr.active_mtu;
	a.dest_qp_num = qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	if (probe_self_ah(ctx, gid_index, &a.ah_attr) ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 10;          /* 4 ms: a loopback answers at once */
	a.retry_cnt = 3;
	a.rnr_retry = 3;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/*
 * What one READ said: the iova is honoured, or not, or the READ never
 * got there (no path through this GID: another may have one).
 */
enum probe_said { PROBE_NOT_HONOURED, PROBE_HONOURED, PROBE_NO_PATH };

/* READ PROBE_LEN bytes at offset PROBE_OFF, by end (ns). */
static enum probe_said probe_read(struct probe *p, uint64_t end)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p->dst,
			       .length = PROBE_LEN, .lkey = p->dst_mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = PROBE_OFF,
			     .rkey = p->src_mr->rkey },
	}, *bad;
	struct ibv_wc wc;
	int n;

	if (ibv_post_send(p->qp, &wr, &bad))
		return PROBE_NO_PATH;
	while (!(n = ibv_poll_cq(p->cq, 1, &wc)))
		if (msga__now_ns() > end)
			return PROBE_NO_PATH; /* destroying the QP flushes it */
	if (n < 0 || wc.status == IBV_WC_RETRY_EXC_ERR)
		return PROBE_NO_PATH;
	return wc.status == IBV_WC_SUCCESS &&
	       !memcmp(p->dst, p->src + PROBE_OFF, PROBE_LEN) ?
	       PROBE_HONOURED : PROBE_NOT_HONOURED;
}

/* In the order verbs wants them gone: the QP before what it uses. */
static void probe_free(struct probe *p)
{
	if (p->qp)
		ibv_destroy_qp(p->qp);
	if (p->src_mr)
		ibv_dereg_mr(p->src_mr);
	if (p->dst_mr)
		ibv_dereg_mr(p->dst_mr);
	if (p->cq)
		ibv_destroy_cq(p->cq);
	if (p->pd)
		ibv_dealloc_pd(p->pd);
	free(p->src);
}

/* One try through the port's GID at gid_index (InfiniBand: its LID). */
static enum probe_said probe_once(struct msga_ctx *ctx, int gid_index,
				  uint64_t end)
{
	struct probe *p = calloc(1, sizeof(*p));
	enum probe_said said = PROBE_NO_PATH;

	if (!p)
		return PROBE_NOT_HONOURED;
	if (!probe_setup(ctx, p, 1) &&
	    !probe_connect_self(ctx, p->qp, gid_index))
		said = probe_read(p, end);
	probe_free(p);
	free(p);
	return said;
}

/* A GID table entry worth a try: set (a RoCE table has holes). */
static int gid_is_set(struct msga_ctx *ctx, int index)
{
	static const union ibv_gid zero;
	union ibv_gid gid;

	return !ibv_query_gid(ctx->verbs, ctx->port, index, &gid) &&
	       memcmp(&gid, &zero, sizeof(gid));
}

/* ---------------------------------------------------------- iWARP */

/* The loopback connection of the iWARP probe: its own event channel. */
struct iw_probe {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *listen, *client, *server;
	int client_up, server_up;
	struct probe p;
};

static void set_port(struct sockaddr_storage *ss, uint16_t port_be)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = port_be;
	else
		((struct sockaddr_in6 *)ss)->sin6_port = port_be;
}

/* Milliseconds left before end, at least 1. */
static int ms_left(uint64_t end)
{
	uint64_t now = msga__now_ns();

	return now >= end ? 1 : (int)((end - now) / 1000000u) + 1;
}

static int iw_qp(struct iw_probe *w, struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC, .send_cq = w->p.cq, .recv_cq = w->p.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return rdma_create_qp(id, w->p.pd, &qia);
}

/* One rdma_cm event of the handshake: the next step, or -1. */
static int iw_step(struct iw_probe *w, const struct rdma_cm_event *ev,
		   uint64_t end)
{
	struct rdma_conn_param cp = { .initiator_depth = 1,
				      .responder_resources = 1 };

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		return rdma_resolve_route(w->client, ms_left(end));
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (iw_qp(w, w->client))
			return -1;
		cp.responder_resources = 0;
		return rdma_connect(w->client, &cp);
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		if (w->server) {
			rdma_reject(ev->id, NULL, 0); /* not ours */
			rdma_destroy_id(ev->id);
			return 0;
		}
		w->server = ev->id;
		if (iw_qp(w, w->server))
			return -1;
		cp.initiator_depth = 0;
		return rdma_accept(w->server, &cp);
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ev->id == w->client)
			w->client_up = 1;
		else
			w->server_up = 1;
		return 0;
	default:
		return -1; /* an error, a reject, a disconnect */
	}
}

/* Listen, connect, accept, until both sides are up or end: 0 or -1. */
static int iw_connect(struct msga_ctx *ctx, struct iw_probe *w, uint64_t end)
{
	struct sockaddr_storage at, to;
	struct pollfd pfd;

	if (msga__ctx_own_addr(ctx, AF_UNSPEC, &at))
		return -1;
	set_port(&at, 0);
	w->ch = rdma_create_event_channel();
	if (!w->ch || fcntl(w->ch->fd, F_SETFL,
			    fcntl(w->ch->fd, F_GETFL) | O_NONBLOCK) ||
	    rdma_create_id(w->ch, &w->listen, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(w->listen, (struct sockaddr *)&at) ||
	    w->listen->verbs != ctx->verbs || rdma_listen(w->listen, 1) ||
	    rdma_create_id(w->ch, &w->client, NULL, RDMA_PS_TCP))
		return -1;
	to = at;
	set_port(&to, rdma_get_src_port(w->listen));
	if (rdma_resolve_addr(w->client, (struct sockaddr *)&at,
			      (struct sockaddr *)&to, ms_left(end)))
		return -1;
	pfd = (struct pollfd){ .fd = w->ch->fd, .events = POLLIN };
	while (!(w->client_up && w->server_up)) {
		struct rdma_cm_event *ev, copy;

		if (msga__now_ns() > end)
			return -1;
		if (rdma_get_cm_event(w->ch, &ev)) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			poll(&pfd, 1, ms_left(end));
			continue;
		}
		copy = *ev;
		rdma_ack_cm_event(ev);
		if (iw_step(w, &copy, end))
			return -1;
	}
	return 0;
}

/* In the order rdma_cm wants them gone: QPs, then ids, then channel. */
static void iw_free(struct iw_probe *w)
{
	struct rdma_cm_id *ids[] = { w->client, w->server, w->listen };

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (ids[i] && ids[i]->qp)
			rdma_destroy_qp(ids[i]);
		if (ids[i])
			rdma_destroy_id(ids[i]);
	}
	if (w->ch)
		rdma_destroy_event_channel(w->ch);
	w->p.qp = NULL; /* (the client's, destroyed above) */
	probe_free(&w->p);
}

/* iWARP: READ through a loopback rdma_cm connection, by end. */
static enum probe_said probe_iwarp(struct msga_ctx *ctx, uint64_t end)
{
	struct iw_probe *w = calloc(1, sizeof(*w));
	enum probe_said said = PROBE_NO_PATH;

	if (!w)
		return PROBE_NOT_HONOURED;
	if (!probe_setup(ctx, &w->p, 0) && !iw_connect(ctx, w, end)) {
		w->p.qp = w->client->qp;
		said = probe_read(&w->p, end);
	}
	iw_free(w);
	free(w);
	return said;
}

/*
 * RoCE: the first GIDs in the table until one has a path (the default
 * GID, index 0, is link-local IPv6; a host without IPv6 routes may need
 * an IPv4 one), PROBE_TRIES at the most, one deadline for all.
 */
int msga__zero_based_probe(struct msga_ctx *ctx)
{
	uint64_t end = msga__now_ns() + (uint64_t)PROBE_MS * 1000000;
	enum probe_said said = PROBE_NO_PATH;
	int tries = 0;

	if (ctx->transport == MSGA_TRANSPORT_IWARP)
		return probe_iwarp(ctx, end) == PROBE_HONOURED;
	if (ctx->transport == MSGA_TRANSPORT_IB)
		return probe_once(ctx, 0, end) == PROBE_HONOURED;
	for (int i = 0; i < ctx->port_attr.gid_tbl_len &&
			tries < PROBE_TRIES && said == PROBE_NO_PATH &&
			msga__now_ns() < end; i++) {
		if (!gid_is_set(ctx, i))
			continue;
		tries++;
		said = probe_once(ctx, i, end);
	}
	return said == PROBE_HONOURED;
}

/*
 * buf[0, len) for a peer's READ or WRITE (access), zero-based: the peer
 * addresses it by offset, so no address of ours goes on the wire. buf
 * must start a page (ib_uverbs_reg_mr refuses an iova whose offset in
 * its page is not the address's). pd must be one of its own, never
 * ctx->pd (internal.h). NULL with errno set: EOPNOTSUPP where the device
 * does not honour the iova (the probe above).
 */
struct ibv_mr *msga__reg_zero_based(struct msga_ctx *ctx, struct ibv_pd *pd,
				    void *buf, size_t len, int access)
{
	if (!ctx->zero_based || pd == ctx->pd) {
		errno = ctx->zero_based ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return ibv_reg_mr_iova(pd, buf, len, 0, access);
}
