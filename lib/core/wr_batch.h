/* SPDX-License-Identifier: MIT */
/*
 * wr_batch.h - send work requests held back on one queue pair, to be
 * posted together as one chain: one ibv_post_send and so one doorbell
 * (the provider's system call on soft RDMA) for many. When to hold is
 * lib/proto/doorbell.h's rule; the send queues (lib/rc/rc_conn.c,
 * lib/ud/udep.c) keep their own accounting as if posted, so a held
 * request already counts against the queue's depth and credits.
 *
 * Each held request is a copy with its scatter list; an inline request's
 * bytes are copied too (the provider would have copied them at the post,
 * and the caller's buffer may be gone by the doorbell).
 */
#ifndef MSGA_WR_BATCH_H
#define MSGA_WR_BATCH_H

#include <infiniband/verbs.h>
#include <stdint.h>

#define MSGA__WRB_SGE 2u
#define MSGA__WRB_INL_BYTES (16u << 10) /* inline bytes held at most */

struct msga__wrb_ent {
	struct ibv_send_wr wr;
	struct ibv_sge sge[MSGA__WRB_SGE];
};

struct msga__wrb {
	struct msga__wrb_ent *ent;     /* MSGA__DB_HOLD_MAX, on first use */
	char *inl;                     /* MSGA__WRB_INL_BYTES */
	uint32_t n, inl_used;
};

/*
 * Post wr: held back when hold is set and
 * there is room, else posted at once after (and with) what is held; a
 * chain (wr->next) is never held.
 * 0, or ibv_post_send's positive errno (what was held is then dropped:
 * the queue pair is of no more use).
 */
int msga__wrb_post_held(struct msga__wrb *b, struct ibv_qp *qp,
			struct ibv_send_wr *wr, int hold);
static inline int msga__wrb_post(struct msga__wrb *b, struct ibv_qp *qp,
				 struct ibv_send_wr *wr, int hold)
{
	struct ibv_send_wr *bad;

	/* (nothing waits and nothing is to wait: a send's usual case) */
	if (!hold && !b->n)
		return ibv_post_send(qp, wr, &bad);
	return msga__wrb_post_held(b, qp, wr, hold);
}
/* Post what is held, as one chain: 0 or a positive errno. */
int msga__wrb_ring(struct msga__wrb *b, struct ibv_qp *qp);
/* Forget what is held: its queue pair is dead (the queue's own
 * accounting releases what the requests referenced). */
void msga__wrb_drop(struct msga__wrb *b);
/* The same, and free the copies. */
void msga__wrb_free(struct msga__wrb *b);

#endif
