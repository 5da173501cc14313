/* SPDX-License-Identifier: MIT */
/*
 * rc_ring_fast.h - the ring writer's fast path (ring.h, rc_ring.c): a
 * whole short message as one inline RDMA WRITE. Inline, so that the
 * publisher's one-subscriber send (rc_fanout.c) is one function from the
 * transport's table to ibv_post_send: every call between them cost its
 * prologue, and every layer checked again what the one above had
 * (issue 39: library instructions per message, counted).
 */
#ifndef MSGA_RC_RING_FAST_H
#define MSGA_RC_RING_FAST_H

#include "rc.h"

/*
 * The fast path (rc_fanout.c's one-subscriber send): a whole message of
 * len bytes, seq the next of its topic, as one short record built on the
 * stack and posted inline as a one-SGE WRITE (the provider copies it
 * before returning, so the stack may go). Against msga__ring_send, this
 * builds no head it then copies, and hands the provider one SGE, not
 * three. 1 when posted; 0, with nothing done, when the message needs the
 * general path (no room, too big to go inline, a PAD due, not its topic's
 * next seq on this connection); -ECONNRESET when the post failed and
 * killed the connection.
 */
static MSGA__HOT_INLINE int msga__ring_send_short(struct msga__conn *c,
						  uint32_t topic, uint64_t seq,
						  const void *data,
						  uint32_t len)
{
	char rec[MSGA__RING_SHORT_BUF(MSGA__RING_FAST_MAX)];
	struct ibv_send_wr *wr = &c->ring_wr[1];
	uint32_t off, size;

	if (len > MSGA__RING_FAST_MAX || !msga__conn_can_data(c))
		return 0;
	size = msga__ring_put_short(&c->rw, rec, c->ctx->max_inline, topic,
				    seq, data, len, &off);
	if (!size)
		return 0;
	c->ring_sge[1] = (struct ibv_sge){ (uintptr_t)rec, size, 0 };
	wr->num_sge = 1;
	wr->send_flags = 0;
	wr->wr.rdma.remote_addr = MSGA__RING_REMOTE(off);
	/* (size fits the inline limit, so the post copies rec) */
	return msga__conn_post_inl(c, wr, 1, size, MSGA__TAG_NONE, 0) ?
		       -ECONNRESET : 1;
}

#endif
