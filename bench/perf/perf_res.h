/* SPDX-License-Identifier: MIT */
/*
 * perf_res.h - an endpoint's verbs resources (perf_res.c): protection
 * domain, completion queues (and channel with -e), the registered buffer
 * with its credit word, and the queue pair, made through rdma_cm when the
 * endpoint has a cm_id, else with plain verbs.
 */
#ifndef MSGA_PERF_RES_H
#define MSGA_PERF_RES_H

#include "perf_ep.h"

/* Everything above on ep->verbs, sized from ep->prm. */
int perf_res_create(struct perf_ep *ep);
/* Post every receive before the peer may send (iWARP: no RNR retry). */
int perf_res_post_recvs(struct perf_ep *ep);
/*
 * The device rdma_cm chose for id: check it (local: the local address, for
 * the GID), create the resources and post the receives.
 */
int perf_cm_resources(struct perf_ep *ep, struct rdma_cm_id *id,
		      const char *local);
/*
 * What perf_res_create() made, in reverse, pointers cleared: closing an
 * endpoint and a connect retry both need exactly this.
 */
void perf_res_release(struct perf_ep *ep);

#endif
