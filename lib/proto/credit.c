/* SPDX-License-Identifier: MIT */
/* credit.c - the counting rules described in credit.h. */
#include "credit.h"

void msga__credit_init(struct msga__credit *c, uint32_t depth,
		       uint32_t peer_depth)
{
	*c = (struct msga__credit){ .depth = depth, .peer_depth = peer_depth };
}

int msga__credit_can_data(const struct msga__credit *c)
{
	return msga__credit_avail(c) >= 2;
}

int msga__credit_can_ctl(const struct msga__credit *c)
{
	return msga__credit_avail(c) >= 1;
}

uint32_t msga__credit_on_send(struct msga__credit *c)
{
	c->tx_sent++;
	c->rx_reported = c->rx_freed;
	return c->rx_freed;
}

void msga__credit_on_recv(struct msga__credit *c, uint32_t peer_credit)
{
	c->rx_count++;
	/* Headers arrive in order, but keep the counter monotonic anyway. */
	if ((int32_t)(peer_credit - c->peer_freed) > 0)
		c->peer_freed = peer_credit;
}

void msga__credit_on_repost(struct msga__credit *c)
{
	c->rx_freed++;
}

/*
 * The peer can have at most depth + rx_reported - rx_count credits left
 * (what it still holds of our last report). Tell it about new receives
 * when a quarter of the ring (at least two) is waiting, or at once when
 * it may be down to the one credit it keeps for a CREDIT message of its
 * own. The batch of two keeps two idle peers from answering every CREDIT
 * with a CREDIT forever: each answer halves the traffic.
 */
int msga__credit_need_update(const struct msga__credit *c)
{
	uint32_t unreported = c->rx_freed - c->rx_reported;
	uint32_t batch = c->depth / 4 > 2 ? c->depth / 4 : 2;
	int64_t peer_left;

	if (!unreported)
		return 0;
	if (unreported >= batch)
		return 1;
	peer_left = (int64_t)c->depth - (int32_t)(c->rx_count - c->rx_reported);
	return peer_left < 2;
}
