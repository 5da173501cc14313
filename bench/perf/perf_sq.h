/* SPDX-License-Identifier: MIT */
/*
 * perf_sq.h - send queue accounting with selective signalling: a
 * completion is requested every cq_mod sends, its wr_id says how many sends
 * it covers, and the queue never holds more than tx_depth unreaped sends.
 */
#ifndef MSGA_PERF_SQ_H
#define MSGA_PERF_SQ_H

#include "perf_ep.h"
#include "perf_fast.h"

struct perf_sq {
	uint32_t outstanding; /* posted, completion not yet reaped */
	uint32_t unsignaled;  /* posted since the last signalled one */
	uint64_t completed;   /* sends known complete */
};

/* Reap send completions; wait (bounded by --timeout) while the queue is
 * too full for n more. Returns 0 or -errno. */
int perf_sq_reserve(struct perf_ep *ep, struct perf_sq *sq, uint32_t n);

/* Reap whatever send completions are there, without waiting. */
int perf_sq_reap(struct perf_ep *ep, struct perf_sq *sq);

/*
 * Post n sends (a post list) from tx_slot, signalling as cq_mod asks, or
 * the last one when force_signal. Call perf_sq_reserve(n) first.
 */
int perf_sq_post(struct perf_ep *ep, struct perf_sq *sq, enum perf_verb verb,
		 uint32_t size, uint32_t tx_slot, uint32_t n, int force_signal);

/*
 * Write our receive count into the peer's credit word, if the send queue
 * has room. Returns 1 when posted, 0 when it must wait, or -errno.
 */
int perf_sq_post_credit(struct perf_ep *ep, struct perf_sq *sq, uint64_t value);

/*
 * Credits (iWARP has no receiver-not-ready retry): with ep->credits set,
 * a sender may have at most rx_depth messages beyond the count of receives
 * the peer has re-posted and reported into our credit word.
 */
static inline int perf_credit_ok(const struct perf_ep *ep, uint32_t n)
{
	return !ep->credits ||
	       ep->tx_total + n - perf_credit(ep) <= ep->prm.rx_depth;
}

/*
 * Count n re-posted receives; every rx_depth/4 of them, report the total
 * to the peer's credit word. Returns 0 or -errno.
 */
int perf_credit_received(struct perf_ep *ep, struct perf_sq *sq, uint32_t n);

/*
 * Post a credit report that is due but found the send queue full. Every
 * wait loop of a side that receives must call this, not only when a
 * message arrives: a peer held back by our credit sends nothing more, so
 * a report skipped at the last arrival would otherwise never go out and
 * both sides would wait for ever. The queue pair has one send slot more
 * than tx_depth, which data sends never use, so a credit write always
 * finds room once a send completion has been reaped.
 */
int perf_credit_flush(struct perf_ep *ep, struct perf_sq *sq);

/* Wait until every posted send has completed (needs a signalled last). */
int perf_sq_drain(struct perf_ep *ep, struct perf_sq *sq);

#endif
