/* SPDX-License-Identifier: MIT */
/*
 * rc_batch.h - coalescing small messages into one SEND (a publisher's RC
 * connection on SEND/RECV; a ring needs none). Inline: the publish path
 * asks these of every subscriber.
 *
 * When a subscriber falls behind (half its credits in use), small messages
 * are copied into a per-connection batch buffer and go out many to one
 * SEND: on soft RDMA the cost is per packet, not per byte, so this is what
 * keeps a fast publisher and a slower subscriber near the link's rate.
 * An open batch sets aside one credit and one send slot, so flushing it
 * can never fail; it is flushed when full, before any other SEND on the
 * connection (order), and on every msga_ctx_poll().
  */
#ifndef MSGA_RC_BATCH_H
#define MSGA_RC_BATCH_H

#include <string.h>

#include "rc.h"

static inline uint32_t msga__bat_rec_size(size_t len)
{
	return (uint32_t)MSGA__WIRE_ALIGN(MSGA__WIRE_HDR_LEN + len);
}

static inline int msga__bat_fits(const struct msga__conn *c, size_t len)
{
	return c->bat_open &&
	       c->bat_len + msga__bat_rec_size(len) <= MSGA_FRAG_MAX;
}

static inline char *msga__bat_cur(struct msga__conn *c)
{
	return c->bat_buf +
	       (size_t)(c->bat_head % MSGA__BATCH_BUFS) * MSGA__DATA_SLOT;
}

static inline void msga__bat_append(struct msga__conn *c,
				    const struct msga__wire_hdr *h,
				    const void *data, size_t len)
{
	char *rec = msga__bat_cur(c) + c->bat_len;
	struct msga__wire_hdr r = *h;

	r.credit = 0;
	msga__wire_hdr_put(rec, &r);
	memcpy(rec + MSGA__WIRE_HDR_LEN, data, len);
	c->bat_len += msga__bat_rec_size(len);
}

/* Coalesce this message into a new batch? Only when c is behind. */
static inline int msga__bat_should_open(const struct msga__conn *c, size_t len)
{
	return !c->ring && len <= MSGA__BATCH_REC_MAX &&
	       msga__credit_avail(&c->cr) < c->cr.peer_depth / 2 &&
	       c->bat_head - c->bat_tail < MSGA__BATCH_BUFS &&
	       msga__conn_can_data(c);
}

/* Send the open batch, if any (rc_pub.c): 0 or a send's error. */
int msga__bat_flush(struct msga__conn *c);

#endif
