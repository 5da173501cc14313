/* SPDX-License-Identifier: MIT */
/*
 * rc_pingpair.c - see rc_pingpair.h. Deliberately plain verbs: one signaled
 * SEND per message, one RECV always posted ahead, so it works unchanged on
 * iWARP (receives posted before the peer can send, client sends first).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_conn.h"
#include "rc_pingpair.h"

enum { SLOT_CLI_SEND, SLOT_CLI_RECV, SLOT_SRV_RECV, SLOT_SRV_SEND, NSLOTS };

struct rc_end {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	uint32_t done;      /* slots whose completion arrived, not yet claimed */
	uint32_t len[NSLOTS];
	int established;
};

struct rc_pingpair {
	struct cm_conn cm;
	struct rdma_cm_id *listen_id;
	struct rc_end cli, srv;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;
	size_t slot;
};

static int fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static char *slot_buf(struct rc_pingpair *pp, int slot)
{
	return pp->buf + (size_t)slot * pp->slot;
}

static int post_recv(struct rc_pingpair *pp, struct rc_end *end, int slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot_buf(pp, slot),
		.length = (uint32_t)pp->slot,
		.lkey = pp->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(end->id->qp, &wr, &bad);
}

static int post_send(struct rc_pingpair *pp, struct rc_end *end, int slot,
		     size_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot_buf(pp, slot),
		.length = (uint32_t)len,
		.lkey = pp->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = slot,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	return -ibv_post_send(end->id->qp, &wr, &bad);
}

static int end_setup(struct rc_pingpair *pp, struct rc_end *end,
		     struct rdma_cm_id *id, int recv_slot)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	size_t bytes = pp->slot * NSLOTS;

	end->id = id;
	if (!pp->pd) {
		pp->pd = ibv_alloc_pd(id->verbs);
		if (!pp->pd)
			return neg_errno();
		pp->buf = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
		if (!pp->buf)
			return -ENOMEM;
		memset(pp->buf, 0, bytes);
		pp->mr = ibv_reg_mr(pp->pd, pp->buf, bytes, IBV_ACCESS_LOCAL_WRITE);
		if (!pp->mr)
			return neg_errno();
	}
	end->cq = ibv_create_cq(id->verbs, 8, NULL, NULL, 0);
	if (!end->cq)
		return neg_errno();
	qia.send_cq = end->cq;
	qia.recv_cq = end->cq;
	if (rdma_create_qp(id, pp->pd, &qia))
		return neg_errno();
	return post_recv(pp, end, recv_slot);
}

#define CM_WAIT_MS 5000

/*
 * Client and server on one channel, driven by this one thread: the client
 * resolves and connects, the server accepts the request, and then both
 * ESTABLISHED events come, in either order.
 */
static int connect_pair(struct rc_pingpair *pp, char *err, size_t errlen)
{
	struct rdma_conn_param param = { .retry_count = 7, .rnr_retry_count = 7,
					 .responder_resources = 1,
					 .initiator_depth = 1 };
	struct rdma_cm_event *ev;
	int ret = end_setup(pp, &pp->cli, pp->cli.id, SLOT_CLI_RECV);

	if (!ret)
		ret = rdma_connect(pp->cli.id, &param) ? neg_errno() : 0;
	if (ret)
		return fail(err, errlen, ret, "client setup/connect failed");
	ret = cm_conn_expect(&pp->cm, RDMA_CM_EVENT_CONNECT_REQUEST, CM_WAIT_MS,
			     &ev);
	if (ret)
		return ret;
	ret = end_setup(pp, &pp->srv, ev->id, SLOT_SRV_RECV);
	if (!ret)
		ret = rdma_accept(ev->id, &param) ? neg_errno() : 0;
	rdma_ack_cm_event(ev);
	if (ret)
		return fail(err, errlen, ret, "server setup/accept failed");
	while (!(pp->cli.established && pp->srv.established)) {
		ret = cm_conn_expect(&pp->cm, RDMA_CM_EVENT_ESTABLISHED,
				     CM_WAIT_MS, &ev);
		if (ret)
			return ret;
		if (ev->id == pp->cli.id)
			pp->cli.established = 1;
		else
			pp->srv.established = 1;
		rdma_ack_cm_event(ev);
	}
	return 0;
}

static int start_pair(struct rc_pingpair *pp, const char *addr, char *err,
		      size_t errlen)
{
	struct sockaddr_storage dst;
	int ret;

	if (cm_numeric_addr(addr, 0, &dst))
		return fail(err, errlen, -EINVAL, "'%s' is not a numeric address",
			    addr);
	ret = cm_conn_open(&pp->cm, err, errlen);
	if (!ret)
		ret = cm_conn_listen(&pp->cm, &pp->listen_id,
				     (struct sockaddr *)&dst, pp);
	if (ret)
		return fail(err, errlen, ret, "listen on %s: %s", addr,
			    strerror(-ret));
	/* Connect to the port the listener got. */
	((struct sockaddr_in *)&dst)->sin_port = rdma_get_src_port(pp->listen_id);
	if (rdma_create_id(pp->cm.ch, &pp->cli.id, pp, RDMA_PS_TCP))
		return fail(err, errlen, neg_errno(), "resolve %s: %s", addr,
			    strerror(errno));
	ret = cm_conn_resolve(&pp->cm, pp->cli.id, NULL,
			      (struct sockaddr *)&dst, 1, CM_WAIT_MS);
	return ret ? ret : connect_pair(pp, err, errlen);
}

int rc_pingpair_open(struct rc_pingpair **ppp, const char *addr,
		     size_t max_msg, char *err, size_t errlen)
{
	struct rc_pingpair *pp;
	int ret;

	*ppp = NULL;
	if (!addr || max_msg == 0 || max_msg > (1u << 30))
		return fail(err, errlen, -EINVAL, "bad address or message size");
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return -ENOMEM;
	pp->slot = (max_msg + 63) & ~(size_t)63;
	ret = start_pair(pp, addr, err, errlen);
	if (ret) {
		rc_pingpair_close(pp);
		return ret;
	}
	*ppp = pp;
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * Busy-poll end's CQ until the completion for slot `want` has arrived. Other
 * completions met on the way are remembered in end->done, not dropped.
 */
static int poll_for(struct rc_end *end, int want, uint32_t *byte_len,
		    int timeout_ms)
{
	double deadline = now_ms() + timeout_ms;

	for (unsigned spins = 0; !(end->done & (1u << want)); spins++) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(end->cq, 1, &wc);

		if (n < 0)
			return -EIO;
		if (n == 1) {
			if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= NSLOTS)
				return -EIO;
			end->done |= 1u << wc.wr_id;
			end->len[wc.wr_id] = wc.byte_len;
		} else if ((spins & 1023) == 0 && now_ms() > deadline) {
			return -ETIMEDOUT;
		}
	}
	end->done &= ~(1u << want);
	if (byte_len)
		*byte_len = end->len[want];
	return 0;
}

int rc_pingpair_roundtrip(struct rc_pingpair *pp, const void *msg, size_t len,
			  void *reply, int timeout_ms)
{
	uint32_t got;
	int ret;

	if (len > pp->slot)
		return -EMSGSIZE;
	memcpy(slot_buf(pp, SLOT_CLI_SEND), msg, len);
	ret = post_send(pp, &pp->cli, SLOT_CLI_SEND, len);
	if (!ret)
		ret = poll_for(&pp->srv, SLOT_SRV_RECV, &got, timeout_ms);
	if (ret)
		return ret;
	/* Echo from the server's own send slot, re-arming its receive first. */
	memcpy(slot_buf(pp, SLOT_SRV_SEND), slot_buf(pp, SLOT_SRV_RECV), got);
	ret = post_recv(pp, &pp->srv, SLOT_SRV_RECV);
	if (!ret)
		ret = post_send(pp, &pp->srv, SLOT_SRV_SEND, got);
	if (!ret)
		ret = poll_for(&pp->cli, SLOT_CLI_RECV, &got, timeout_ms);
	if (ret)
		return ret;
	memcpy(reply, slot_buf(pp, SLOT_CLI_RECV), got);
	ret = post_recv(pp, &pp->cli, SLOT_CLI_RECV);
	/* Drain the two send completions so the CQs never overflow. */
	if (!ret)
		ret = poll_for(&pp->cli, SLOT_CLI_SEND, NULL, timeout_ms);
	if (!ret)
		ret = poll_for(&pp->srv, SLOT_SRV_SEND, NULL, timeout_ms);
	return ret;
}

const char *rc_pingpair_device(const struct rc_pingpair *pp)
{
	return ibv_get_device_name(pp->cli.id->verbs->device);
}

static void end_close(struct rc_end *end)
{
	if (!end->id)
		return;
	if (end->id->qp)
		rdma_destroy_qp(end->id);
	if (end->cq)
		ibv_destroy_cq(end->cq);
	rdma_destroy_id(end->id);
}

void rc_pingpair_close(struct rc_pingpair *pp)
{
	if (!pp)
		return;
	if (pp->cli.established)
		rdma_disconnect(pp->cli.id);
	end_close(&pp->cli);
	end_close(&pp->srv);
	if (pp->listen_id)
		rdma_destroy_id(pp->listen_id);
	if (pp->mr)
		ibv_dereg_mr(pp->mr);
	if (pp->pd)
		ibv_dealloc_pd(pp->pd);
	free(pp->buf);
	cm_conn_close(&pp->cm);
	free(pp);
}
