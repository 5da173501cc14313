/* SPDX-License-Identifier: MIT */
/*
 * perf_fast.h - the calls the measurement loops make (perf_fast.c): post
 * receives, post (chains of) sends, write the peer's credit word, poll or
 * wait for completions.
 */
#ifndef MSGA_PERF_FAST_H
#define MSGA_PERF_FAST_H

#include "perf_ep.h"

int perf_post_recv(struct perf_ep *ep, uint32_t slot);

/*
 * Post n chained work requests of verb from tx slot, each of size bytes.
 * signal_mask bit k requests a completion for the k-th one, whose wr_id
 * is ids[k]. n is at most 64.
 */
int perf_post_ids(struct perf_ep *ep, enum perf_verb verb, uint32_t size,
		  uint32_t tx_slot, uint32_t n, uint64_t signal_mask,
		  const uint64_t *ids);

/* Write value into the peer's credit word (signalled, wr_id as given). */
int perf_post_credit(struct perf_ep *ep, uint64_t value, uint64_t wr_id);

/*
 * Poll cq for up to max completions. With -e, wait for a completion event
 * (but at most timeout_ms), else return what is there now. Returns the
 * number of completions, or -EIO (with ep->err) on a failed completion.
 */
int perf_poll(struct perf_ep *ep, struct ibv_cq *cq, struct ibv_wc *wc,
	      int max, int timeout_ms);

#endif
