/* SPDX-License-Identifier: MIT */
/*
 * perf_conn.h - one rdma_lat/rdma_bw endpoint: the device, its queue pair
 * and registered buffer, connected to the peer either by exchanging queue
 * pair numbers and GIDs over the TCP control channel (perftest's default)
 * or through rdma_cm (-R, and always on iWARP), or to multicast groups
 * (-M, perf_mcast.c). Also the small posting and
 * polling helpers the measurement loops share.
 */
#ifndef MSGA_PERF_CONN_H
#define MSGA_PERF_CONN_H

#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

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
	struct rdma_event_channel *cm_ch;
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

/*
 * Client: find the device (-d, else the one the route to the server uses),
 * apply the device rules (iWARP => rdma_cm, RC only), connect the control
 * channel and the queue pair. Returns 0; -EINVAL for a combination this
 * device cannot run (exit 2); another -errno otherwise. ep->err says why.
 */
int perf_client_open(struct perf_ep *ep, const struct perf_opts *o,
		     uint32_t max_size);

/* Server: one client session on an accepted control channel. */
int perf_server_open(struct perf_ep *ep, const struct perf_opts *o,
		     struct perf_ctrl *ctrl);

void perf_ep_close(struct perf_ep *ep);

/* Receive slot i (data starts after the GRH room on UD). */
static inline uint8_t *perf_rx(struct perf_ep *ep, uint32_t i)
{
	return ep->buf + (size_t)i * ep->slot + ep->data_off;
}

static inline uint8_t *perf_tx(struct perf_ep *ep, uint32_t i)
{
	return ep->buf + (size_t)(ep->rx_slots + i) * ep->slot;
}

int perf_post_recv(struct perf_ep *ep, uint32_t slot);

/*
 * Post n chained work requests of verb from tx slot, each of size bytes.
 * signal_mask bit k requests a completion for the k-th one, whose wr_id
 * is ids[k]. n is at most 64.
 */
int perf_post_ids(struct perf_ep *ep, enum perf_verb verb, uint32_t size,
		  uint32_t tx_slot, uint32_t n, uint64_t signal_mask,
		  const uint64_t *ids);

/*
 * The credit word: a count of messages received that the peer's receiver
 * RDMA-writes here, so a sender on iWARP (no RNR retry) never sends into
 * an empty receive queue.
 */
static inline uint64_t perf_credit(const struct perf_ep *ep)
{
	return *(volatile const uint64_t *)(ep->buf + ep->credit_off);
}

/* Write value into the peer's credit word (signalled, wr_id as given). */
int perf_post_credit(struct perf_ep *ep, uint64_t value, uint64_t wr_id);

/*
 * Poll cq for up to max completions. With -e, wait for a completion event
 * (but at most timeout_ms), else return what is there now. Returns the
 * number of completions, or -EIO (with ep->err) on a failed completion.
 */
int perf_poll(struct perf_ep *ep, struct ibv_cq *cq, struct ibv_wc *wc,
	      int max, int timeout_ms);

/* ---- shared by perf_conn.c, perf_dev.c and perf_fast.c ---- */

#define PERF_CM_TIMEOUT_MS 5000

/* Record a one-line reason in ep->err and return ret. */
int perf_fail(struct perf_ep *ep, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int perf_neg_errno(void);

/* Device name and port from -d/-i, else from addr, else the first active. */
int perf_dev_choose(struct perf_ep *ep, const char *addr, int resolve);
/* Open ep->dev_name. An unknown name is -EINVAL (a usage error). */
int perf_dev_open(struct perf_ep *ep);
/* Port state, transport, MTU, GID (ip4: the local IPv4 address or NULL). */
int perf_dev_query(struct perf_ep *ep, const uint8_t *ip4);
/* Device rules the option parser could not know; -EINVAL if broken. */
int perf_dev_check(struct perf_ep *ep);
void perf_local_ip4(const char *addr, uint8_t *ip4, const uint8_t **p);
int perf_numeric_addr(struct perf_ep *ep, const char *addr, uint16_t port,
		      struct sockaddr_storage *ss);
/* Device checks, queue pair and buffers on the device id is bound to. */
int perf_cm_resources(struct perf_ep *ep, struct rdma_cm_id *id,
		      const char *local);
/* Wait for one rdma_cm event of type want (else fail); *evp to keep it. */
int perf_cm_wait(struct perf_ep *ep, enum rdma_cm_event_type want,
		 struct rdma_cm_event **evp);

#endif
