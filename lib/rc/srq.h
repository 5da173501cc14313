/* SPDX-License-Identifier: MIT */
/*
 * srq.h - one shared receive queue per subscriber, for its SEND/RECV
 * connections (those without an RDMA WRITE ring), so N publishers into one
 * subscriber do not each pin a receive ring of their own.
 *
 * Each attached connection advertises MSGA__SRQ_CONN_CREDITS receives in
 * its hello, and the SRQ grows by one chunk of that many posted receives
 * the first time the number of attached connections exceeds its chunks.
 * A chunk is never taken back (posted receives cannot be withdrawn), so
 * memory follows the high-water mark of connections, not their churn.
 *
 * No RNR (credit.h): a peer may only send while it has credit, and its
 * credit never exceeds CONN_CREDITS minus the receives its connection has
 * taken from the SRQ and not yet given back (a completion not reaped yet,
 * a held message). So, summing over attached connections, receives the
 * peers may still use plus receives taken and not given back is at most
 * nconns * CONN_CREDITS <= nchunks * CONN_CREDITS, which is what the SRQ
 * started with: the SRQ never runs dry. A connection stays attached
 * (counted in nconns) until it is freed, which is after its holds were
 * released and its CQ drained, so every receive it took is back by then.
 */
#ifndef MSGA_SRQ_H
#define MSGA_SRQ_H

#include <stdint.h>

#include "rc.h"

#define MSGA__SRQ_CONN_CREDITS 32u
#define MSGA__SRQ_MAX_CONNS 16u
/* Receive work request ids of the SRQ: tell them apart from send ids
 * (a send's id is its sequence number, far below 2^63) even in an error
 * completion, whose opcode is undefined. */
#define MSGA__SRQ_WR_TAG (1ull << 63)
/*
 * How long a dying QP waits for LAST_WQE_REACHED before it is destroyed
 * anyway. Linux 6.1's rxe and siw never raise it (rdmavt, mlx5, bnxt_re,
 * hns and cxgb4 do). siw completes an SRQ receive in progress with a
 * flush status inside the move to the error state (siw_rq_flush); rxe
 * does it later, from its responder task (get_req, check_resource), so
 * there the deadline is what lets that flush land before the QP goes.
 */
#define MSGA__SRQ_QUIET_NS 100000000ull

struct msga__srq {
	struct ibv_srq *srq;
	char *buf[MSGA__SRQ_MAX_CONNS];        /* one chunk each */
	struct ibv_mr *mr[MSGA__SRQ_MAX_CONNS];
	struct msga__rxslot *slots;            /* max_conns chunks' worth */
	uint32_t slot_size;
	uint32_t nchunks;                      /* chunks posted */
	uint32_t nconns, max_conns;            /* attached connections */
	/* Receives on the SRQ now: posted minus completions reaped. Once
	 * every connection is idle it equals nchunks * CONN_CREDITS. */
	uint32_t posted;
	int closing;                           /* being destroyed: no wait */
};

/* Attach a subscriber's SEND/RECV connection before its QP exists:
 * 0 attached (c->srq set), 1 not (it uses receives of its own), < 0 error. */
int msga__srq_attach(struct msga__conn *c);
/* Give one receive back to the SRQ, and count it on c's credit. */
int msga__srq_repost(struct msga__conn *c, uint32_t idx);
/*
 * Give back every SRQ receive c's CQ holds, after putting its QP (if any)
 * in error; msga__conn_drop_qp calls it before and after the QP goes.
 */
void msga__srq_conn_drain(struct msga__conn *c);
/* A completion of an SRQ receive was reaped: it left the SRQ. */
static inline void msga__srq_taken(struct msga__srq *s)
{
	s->posted--;
}
/* c died: put its QP in error and start waiting for LAST_WQE_REACHED. */
void msga__srq_conn_error(struct msga__conn *c);
/* 1 when c's QP takes no more SRQ receives (or the deadline passed). */
int msga__srq_quiet(struct msga__conn *c, uint64_t now);
/*
 * Read (and acknowledge) the device's asynchronous events; a
 * LAST_WQE_REACHED marks its QP's connection among the endpoints of ops
 * (the subscriber's connections': srq.c knows them only by the table
 * the one it serves has, so it calls no file above it).
 */
void msga__srq_events(struct msga_ctx *ctx, const struct msga__ep_ops *ops);
/* c no longer counts on the SRQ (its QP and CQ are gone). */
void msga__srq_detach(struct msga__conn *c);
void msga__srq_destroy(struct msga__srq *s);

static inline int msga__srq_wr(uint64_t wr_id)
{
	return !!(wr_id & MSGA__SRQ_WR_TAG);
}

static inline struct msga__rxslot *msga__srq_slot(struct msga__srq *s,
						  uint64_t wr_id)
{
	return &s->slots[(uint32_t)(wr_id & ~MSGA__SRQ_WR_TAG)];
}

static inline char *msga__srq_buf(const struct msga__srq *s, uint32_t idx)
{
	return s->buf[idx / MSGA__SRQ_CONN_CREDITS] +
	       (size_t)(idx % MSGA__SRQ_CONN_CREDITS) * s->slot_size;
}

#endif
