/* SPDX-License-Identifier: MIT */
/*
 * doorbell.h - when a publisher's send work requests are held back to go
 * to the device together (one ibv_post_send, one doorbell, for many), and
 * when what is held back must go now (issue 36, item 6). Pure, and inline
 * (every send asks): the send queues (lib/rc/rc_conn.c, lib/ud/udep.c)
 * ask, lib/core/wr_batch.c holds the requests.
 *
 * A request is held back when the caller said more follows
 * (MSGA_COMMIT_MORE), or, unless the publisher has MSGA_PUB_NO_COALESCE,
 * when its send queue is busy: at least msga__db_busy_mark() requests are
 * posted and not known complete. An idle queue (a publisher that polls
 * after each message) is never held back. What is held back goes when
 * MSGA__DB_HOLD_MAX requests wait, or with the next request that is not
 * held, msga_pub_doorbell(), the next poll of the context,
 * msga_pub_flush() or msga_pub_destroy().
 */
#ifndef MSGA_DOORBELL_H
#define MSGA_DOORBELL_H

#include <stdint.h>

/* Requests held back on one send queue at most (the larger batches gave
 * nothing more on soft RDMA, and the copy of each must stay small). */
#define MSGA__DB_HOLD_MAX 64u

/* Busy from this many requests outstanding: two signalling periods (an
 * idle queue may show up to one period of completed but unsignalled
 * requests), at most half the queue. */
static inline uint32_t msga__db_busy_mark(uint32_t sq_depth,
					  uint32_t sig_every)
{
	uint32_t mark = 2u * sig_every;

	if (mark > sq_depth / 2)
		mark = sq_depth / 2;
	return mark ? mark : 1u;
}

/*
 * Hold this request back (1) or ring now (0)? more: the caller said more
 * follows; adaptive: the publisher coalesces while busy; outstanding:
 * requests posted or held and not known complete; held: requests held now.
 */
static inline int msga__db_hold(int more, int adaptive, uint64_t outstanding,
				uint32_t held, uint32_t sq_depth,
				uint32_t sig_every)
{
	/* (full: this one goes with the ones that wait) */
	if (held + 1u >= MSGA__DB_HOLD_MAX)
		return 0;
	if (more)
		return 1;
	return adaptive &&
	       outstanding >= msga__db_busy_mark(sq_depth, sig_every);
}

#endif
