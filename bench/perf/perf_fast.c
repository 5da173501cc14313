/* SPDX-License-Identifier: MIT */
/*
 * perf_fast.c - the calls the measurement loops make: post receives, post
 * (chains of) sends, write a credit, poll or wait for completions. No
 * allocation, no system call except the event wait with -e.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>

#include "perf_fast.h"

int perf_post_recv(struct perf_ep *ep, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(ep->buf + (size_t)slot * ep->slot),
		.length = (uint32_t)ep->slot,
		.lkey = ep->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(ep->qp, &wr, &bad);
}

#define PERF_MAX_CHAIN 64

int perf_post_ids(struct perf_ep *ep, enum perf_verb verb, uint32_t size,
		  uint32_t tx_slot, uint32_t n, uint64_t signal_mask,
		  const uint64_t *ids)
{
	static const enum ibv_wr_opcode op[] = {
		IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ,
		IBV_WR_RDMA_WRITE_WITH_IMM,
	};
	struct ibv_send_wr wr[PERF_MAX_CHAIN], *bad;
	struct ibv_sge sge = {
		.addr = (uintptr_t)perf_tx(ep, tx_slot),
		.length = size,
		.lkey = ep->mr->lkey,
	};
	unsigned int inl = verb != PERF_READ && size <= ep->max_inline ?
			   IBV_SEND_INLINE : 0;

	if (n > PERF_MAX_CHAIN)
		n = PERF_MAX_CHAIN;
	for (uint32_t k = 0; k < n; k++) {
		struct ibv_send_wr *w = &wr[k];

		memset(w, 0, sizeof(*w));
		w->wr_id = ids[k];
		w->sg_list = &sge;
		w->num_sge = 1;
		w->opcode = op[verb];
		w->send_flags = inl | ((signal_mask >> k) & 1 ?
				       IBV_SEND_SIGNALED : 0);
		w->next = k + 1 < n ? &wr[k + 1] : NULL;
		if (ep->ah) {
			w->wr.ud.ah = ep->ah;
			w->wr.ud.remote_qpn = ep->rqpn;
			w->wr.ud.remote_qkey = ep->rqkey;
		} else if (verb != PERF_SEND) {
			w->wr.rdma.remote_addr = ep->raddr;
			w->wr.rdma.rkey = ep->rkey;
			w->imm_data = htonl(0x4d534741);
		}
	}
	return -ibv_post_send(ep->qp, wr, &bad);
}

/*
 * Arm the CQ, look once more (a completion that slipped in before arming
 * raises no event), then sleep on the completion channel - and on the
 * control socket, so a vanished peer or a STOP wakes us too.
 */
int perf_post_credit(struct perf_ep *ep, uint64_t value, uint64_t wr_id)
{
	uint64_t *src = (uint64_t *)(ep->buf + ep->credit_off + 8);
	struct ibv_sge sge = {
		.addr = (uintptr_t)src,
		.length = sizeof(*src),
		.lkey = ep->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED |
			      (ep->max_inline >= sizeof(*src) ? IBV_SEND_INLINE : 0),
	};
	struct ibv_send_wr *bad;

	*src = value;
	wr.wr.rdma.remote_addr = ep->rcredit;
	wr.wr.rdma.rkey = ep->rkey;
	return -ibv_post_send(ep->qp, &wr, &bad);
}

static int wait_event(struct perf_ep *ep, struct ibv_cq *cq, struct ibv_wc *wc,
		      int max, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = ep->chan->fd, .events = POLLIN },
		{ .fd = ep->ctrl.fd, .events = POLLIN },
	};
	struct ibv_cq *ev_cq;
	void *ctx;
	int n;

	if (ibv_req_notify_cq(cq, 0))
		return perf_fail(ep, -EIO, "ibv_req_notify_cq failed");
	n = ibv_poll_cq(cq, max, wc);
	if (n)
		return n;
	n = poll(pfd, 2, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : perf_neg_errno();
	if (n > 0 && (pfd[0].revents & POLLIN)) {
		if (ibv_get_cq_event(ep->chan, &ev_cq, &ctx))
			return perf_fail(ep, -EIO, "ibv_get_cq_event failed");
		ibv_ack_cq_events(ev_cq, 1);
	}
	return ibv_poll_cq(cq, max, wc);
}

int perf_poll(struct perf_ep *ep, struct ibv_cq *cq, struct ibv_wc *wc,
	      int max, int timeout_ms)
{
	int n = ibv_poll_cq(cq, max, wc);

	if (n == 0 && ep->prm.events && timeout_ms)
		n = wait_event(ep, cq, wc, max, timeout_ms);
	if (n < 0)
		return perf_fail(ep, -EIO, "ibv_poll_cq failed");
	for (int i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			return perf_fail(ep, -EIO, "completion failed: %s (opcode %d)",
				    ibv_wc_status_str(wc[i].status),
				    wc[i].opcode);
	return n;
}
