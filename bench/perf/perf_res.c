/* SPDX-License-Identifier: MIT */
/*
 * perf_res.c - see perf_res.h. Receives are always posted before the peer
 * may send, because iWARP has no RNR retry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_dev.h"
#include "perf_fast.h"
#include "perf_res.h"

#define MAX_RX_BYTES (64u << 20)

static int create_qp(struct perf_ep *ep, struct ibv_qp_init_attr *qia)
{
	/* Ask for the inline size wanted; shrink until the device agrees. */
	int want = ep->prm.inline_size >= 0 ? ep->prm.inline_size : 512;

	for (;;) {
		qia->cap.max_inline_data = (uint32_t)want;
		if (ep->cm_id) {
			if (!rdma_create_qp(ep->cm_id, ep->pd, qia)) {
				ep->qp = ep->cm_id->qp;
				break;
			}
		} else {
			ep->qp = ibv_create_qp(ep->pd, qia);
			if (ep->qp)
				break;
		}
		if (want == 0 || ep->prm.inline_size >= 0)
			return perf_fail(ep, perf_neg_errno(),
				    "cannot create a %s queue pair (depth %u/%u, inline %d) on %s: %s",
				    perf_conn_name(ep->prm.conn), ep->prm.tx_depth,
				    ep->prm.rx_depth, want, ep->dev_name,
				    strerror(errno));
		want = want > 32 ? want / 2 : 0;
	}
	ep->max_inline = qia->cap.max_inline_data;
	return 0;
}

static int alloc_buffer(struct perf_ep *ep)
{
	const struct perf_params *p = &ep->prm;
	int recv_side = p->verb == PERF_SEND || p->verb == PERF_WRITE_IMM;
	size_t slot;

	ep->data_off = p->conn == PERF_UD ? PERF_UD_GRH : 0;
	slot = ((size_t)p->max_size + ep->data_off + 63) & ~(size_t)63;
	ep->slot = slot;
	ep->rx_slots = 1;
	if (recv_side) {
		/* Content matters only for --rate; big sizes may share slots. */
		ep->rx_slots = p->rx_depth;
		if ((size_t)ep->rx_slots * slot > MAX_RX_BYTES)
			ep->rx_slots = (uint32_t)(MAX_RX_BYTES / slot) ?: 1;
	}
	ep->tx_slots = p->rate ? p->tx_depth : 1;
	/* Last 64 bytes: the credit word the peer writes (see perf_credit). */
	ep->credit_off = (size_t)(ep->rx_slots + ep->tx_slots) * slot;
	ep->buf_len = ep->credit_off + 64;
	ep->buf = aligned_alloc(4096, (ep->buf_len + 4095) & ~(size_t)4095);
	if (!ep->buf)
		return perf_fail(ep, -ENOMEM, "cannot allocate %zu bytes",
			    ep->buf_len);
	memset(ep->buf, 0, ep->buf_len);
	/* iWARP: an RDMA READ sink must allow remote write. */
	ep->mr = ibv_reg_mr(ep->pd, ep->buf, ep->buf_len,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ);
	if (!ep->mr)
		return perf_fail(ep, perf_neg_errno(), "ibv_reg_mr(%zu bytes) failed: %s",
			    ep->buf_len, strerror(errno));
	return 0;
}

int perf_res_create(struct perf_ep *ep)
{
	const struct perf_params *p = &ep->prm;
	static const enum ibv_qp_type qpt[] = { IBV_QPT_RC, IBV_QPT_UC,
						 IBV_QPT_UD };
	struct ibv_qp_init_attr qia = {
		.qp_type = qpt[p->conn],
		.sq_sig_all = 0,
		/* + 1: a slot for credit writes (perf_credit_flush). */
		.cap = { .max_send_wr = p->tx_depth + 1,
			 .max_recv_wr = p->rx_depth,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int ret;

	ep->pd = ibv_alloc_pd(ep->verbs);
	if (!ep->pd)
		return perf_fail(ep, perf_neg_errno(), "ibv_alloc_pd(%s) failed", ep->dev_name);
	if (p->events) {
		ep->chan = ibv_create_comp_channel(ep->verbs);
		if (!ep->chan)
			return perf_fail(ep, perf_neg_errno(), "ibv_create_comp_channel failed");
	}
	ep->scq = ibv_create_cq(ep->verbs, (int)p->tx_depth + 1, NULL, ep->chan,
				0);
	ep->rcq = ibv_create_cq(ep->verbs, (int)p->rx_depth, NULL, ep->chan, 0);
	if (!ep->scq || !ep->rcq)
		return perf_fail(ep, perf_neg_errno(), "ibv_create_cq failed: %s",
			    strerror(errno));
	qia.send_cq = ep->scq;
	qia.recv_cq = ep->rcq;
	ret = alloc_buffer(ep);
	if (!ret)
		ret = create_qp(ep, &qia);
	return ret;
}

/* Receives go up before the peer may send (iWARP: no RNR retry). */
int perf_res_post_recvs(struct perf_ep *ep)
{
	if (ep->prm.verb != PERF_SEND && ep->prm.verb != PERF_WRITE_IMM)
		return 0;
	for (uint32_t i = 0; i < ep->prm.rx_depth; i++) {
		int ret = perf_post_recv(ep, i % ep->rx_slots);

		if (ret)
			return perf_fail(ep, ret, "ibv_post_recv failed");
	}
	return 0;
}

int perf_cm_resources(struct perf_ep *ep, struct rdma_cm_id *id,
		      const char *local)
{
	uint8_t ip4[4];
	const uint8_t *p4;
	int ret;

	ep->cm_id = id;
	ep->verbs = id->verbs;
	snprintf(ep->dev_name, sizeof(ep->dev_name), "%s",
		 ibv_get_device_name(id->verbs->device));
	ep->port = id->port_num ? id->port_num : 1;
	perf_local_ip4(local, ip4, &p4);
	ret = perf_dev_query(ep, p4);
	if (!ret)
		ret = perf_dev_check(ep);
	if (!ret)
		ret = perf_res_create(ep);
	if (!ret)
		ret = perf_res_post_recvs(ep);
	return ret;
}

void perf_res_release(struct perf_ep *ep)
{
	if (ep->cm_id && ep->qp)
		rdma_destroy_qp(ep->cm_id);
	else if (ep->qp)
		ibv_destroy_qp(ep->qp);
	if (ep->mr)
		ibv_dereg_mr(ep->mr);
	free(ep->buf);
	if (ep->scq)
		ibv_destroy_cq(ep->scq);
	if (ep->rcq)
		ibv_destroy_cq(ep->rcq);
	if (ep->chan)
		ibv_destroy_comp_channel(ep->chan);
	if (ep->pd)
		ibv_dealloc_pd(ep->pd);
	ep->qp = NULL, ep->mr = NULL, ep->buf = NULL;
	ep->scq = ep->rcq = NULL, ep->chan = NULL, ep->pd = NULL;
}

/* Undo cm_client_try() up to its connect, keeping the event channel. */
