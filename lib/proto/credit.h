/* SPDX-License-Identifier: MIT */
/*
 * credit.h - credit-based flow control for one RC connection, both ways.
 *
 * A SEND may only leave when the peer has a receive posted for it (iWARP
 * has no RNR retry, and on IB/RoCE an RNR storm is worse than waiting).
 * Each side counts, modulo 2^32:
 *   tx_sent      SENDs it posted,
 *   peer_freed   the peer's latest report of receives it re-posted,
 *   rx_count     SENDs it received, rx_freed receives it re-posted,
 *   rx_reported  the rx_freed value its last header carried.
 * Credits = peer_depth + peer_freed - tx_sent. Every header carries
 * rx_freed, so data piggy-backs credit; an explicit CREDIT message goes
 * when a quarter of the ring is unreported or the peer may be starving.
 *
 * Deadlock freedom: data needs two credits, a CREDIT message one, so the
 * last credit is always kept for a CREDIT message, and a CREDIT message is
 * only sent when it reports something new (see credit.c and test_credit).
 * While a publisher holds a claim, a control message also leaves the
 * claimed message's two credits (msga__conn_can_ctl): that delays it
 * until the commit or abort, which never wait for control room, so no
 * cycle forms.
 */
#ifndef MSGA_CREDIT_H
#define MSGA_CREDIT_H

#include <stdint.h>

struct msga__credit {
	uint32_t depth;       /* receives we keep posted */
	uint32_t peer_depth;  /* receives the peer posted at connect */
	uint32_t tx_sent;
	uint32_t peer_freed;
	uint32_t rx_count;
	uint32_t rx_freed;
	uint32_t rx_reported;
};

void msga__credit_init(struct msga__credit *c, uint32_t depth,
		       uint32_t peer_depth);
/* Credits left now (may be 0). */
static inline uint32_t msga__credit_avail(const struct msga__credit *c)
{
	int64_t n = (int64_t)c->peer_depth +
		    (int32_t)(c->peer_freed - c->tx_sent);

	return n > 0 ? (uint32_t)n : 0;
}
/* Whether a data / control SEND may be posted now. */
int msga__credit_can_data(const struct msga__credit *c);
int msga__credit_can_ctl(const struct msga__credit *c);
/* Account one posted SEND; returns the credit value for its header. */
uint32_t msga__credit_on_send(struct msga__credit *c);
/* A header arrived carrying the peer's credit value. */
void msga__credit_on_recv(struct msga__credit *c, uint32_t peer_credit);
/* One receive was re-posted. */
void msga__credit_on_repost(struct msga__credit *c);
/* Whether an explicit CREDIT message should be sent now. */
int msga__credit_need_update(const struct msga__credit *c);
/*
 * Whether the peer may be out of credit for a SEND to us: by what we last
 * told it, fewer than two of our receives are free for it, and it keeps
 * the last for a CREDIT report. A peer we starved of credit cannot send a
 * keepalive either (liveness.h).
 */
static inline int msga__credit_peer_may_wait(const struct msga__credit *c)
{
	return (int32_t)(c->depth + c->rx_reported - c->rx_count) < 2;
}

#endif
