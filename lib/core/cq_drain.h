/* SPDX-License-Identifier: MIT */
/*
 * cq_drain.h - the one way this library opens, drains and arms a
 * completion queue, used at every poll site (RC connections, their
 * shared receive queue, UD endpoints, READ repair).
 *
 * A CQ's context pointer is its owner's `armed` flag: the engine clears
 * it when the CQ's event arrives (engine.c drain_comp_channel), so a poll
 * knows whether the CQ still has to be armed before the program may
 * sleep on msga_ctx_fd(). Draining inline keeps the fast path as it was:
 * ibv_poll_cq is itself an inline call into the provider.
 */
#ifndef MSGA_CQ_DRAIN_H
#define MSGA_CQ_DRAIN_H

#include <errno.h>

#include <infiniband/verbs.h>

struct msga_ctx;

/*
 * A CQ of depth entries on the context's completion channel, its context
 * the flag *armed, armed at once in event mode (a program may sleep on
 * msga_ctx_fd() before it ever polls this CQ). NULL with errno set.
 */
struct ibv_cq *msga__cq_open(struct msga_ctx *ctx, int depth, int *armed);

/*
 * Up to max completions into wc. When the CQ is empty and evmode is set,
 * arm it and look once more: a completion that slipped in before the arm
 * raises no event, so it must be found now. Returns how many were polled
 * (> 0), 0 when the CQ is empty (and armed, in event mode), or -EIO when
 * the provider reports the CQ broken.
 */
static inline int msga__cq_drain(struct ibv_cq *cq, int *armed, int evmode,
				 struct ibv_wc *wc, int max)
{
	for (;;) {
		int n = ibv_poll_cq(cq, max, wc);

		if (n > 0)
			return n;
		if (n < 0)
			return -EIO;
		if (!evmode || *armed || ibv_req_notify_cq(cq, 0))
			return 0;
		*armed = 1;
	}
}

/* Arm cq for one event unless it already is (the engine's arm op). */
static inline void msga__cq_arm(struct ibv_cq *cq, int *armed)
{
	if (cq && !*armed && !ibv_req_notify_cq(cq, 0))
		*armed = 1;
}

#endif
