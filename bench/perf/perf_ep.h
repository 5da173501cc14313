/* SPDX-License-Identifier: MIT */
/*
 * perf_ep.h - one rdma_lat/rdma_bw endpoint: the parameters of the test,
 * the device, its queue pair and registered buffer, and what is known of
 * the peer. The bottom of perf/'s layers (bench/README.md): every other
 * perf_* part works on a struct perf_ep, and this header includes only
 * the control channel, the options and bench/common.
 */
#ifndef MSGA_PERF_EP_H
#define MSGA_PERF_EP_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_conn.h"
#include "perf_ctrl.h"
#include "perf_opts.h"

#define PERF_UD_GRH 40
#define PERF_QKEY 0x11111111u

/* What the client asks for; the server runs whatever the client sends. */
struct perf_params {
	enum perf_tool tool;
	enum perf_conn_type conn;
	enum perf_verb verb;
	int use_cm, bidir, events;
	int inline_size;           /* -1 = as large as the device allows */
	uint32_t tx_depth, rx_depth, cq_mod, post_list, max_size, sample;
	uint64_t rate;
	uint32_t mcast_group;      /* -M, network order; 0 = unicast */
};

enum perf_transport { PERF_TR_IB, PERF_TR_ROCE, PERF_TR_IWARP };

struct perf_ep {
	struct perf_params prm;
	const struct perf_opts *opts;
	int is_server;
	struct perf_ctrl ctrl;

	char dev_name[64];
	enum perf_transport transport;
	struct ibv_context *verbs;  /* owned unless it came from cm_id */
	struct cm_conn cm;          /* rdma_cm event channel, err -> err */
	struct rdma_cm_id *cm_listen, *cm_id;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_ah *ah;
	uint8_t *buf;
	size_t buf_len, slot, credit_off;
	uint32_t rx_slots, tx_slots, data_off;
	uint32_t max_inline, rd_atom;

	uint8_t port;
	int gid_idx;
	union ibv_gid gid;
	uint16_t lid;
	enum ibv_mtu mtu;
	uint32_t mtu_bytes;
	uint32_t psn;

	uint64_t raddr;
	uint32_t rkey, rqpn, rqkey; /* rqpn, rqkey: UD destination */
	uint32_t mc_send, mc_recv;  /* joined groups (network order), or 0 */
	uint64_t rcredit;           /* the peer's credit word */
	/* Whole-session message counts, for credits (never reset). */
	uint64_t tx_total, rx_total, credit_last;
	int credits;                /* pace sends by the peer's credits */
	char err[256];
};

const char *perf_transport_name(enum perf_transport t);

void perf_params_from_opts(struct perf_params *p, const struct perf_opts *o,
			   uint32_t max_size);

/* Receive slot i (data starts after the GRH room on UD). */
static inline uint8_t *perf_rx(struct perf_ep *ep, uint32_t i)
{
	return ep->buf + (size_t)i * ep->slot + ep->data_off;
}

static inline uint8_t *perf_tx(struct perf_ep *ep, uint32_t i)
{
	return ep->buf + (size_t)(ep->rx_slots + i) * ep->slot;
}

/*
 * The credit word: a count of messages received that the peer's receiver
 * RDMA-writes here, so a sender on iWARP (no RNR retry) never sends into
 * an empty receive queue.
 */
static inline uint64_t perf_credit(const struct perf_ep *ep)
{
	return *(volatile const uint64_t *)(ep->buf + ep->credit_off);
}

#define PERF_CM_TIMEOUT_MS 5000

/* Record a one-line reason in ep->err and return ret. */
int perf_fail(struct perf_ep *ep, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int perf_neg_errno(void);

#endif
