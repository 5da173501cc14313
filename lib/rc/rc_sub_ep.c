/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_ep.c - a subscriber's RC connection as the engine drives it
 * (struct msga__ep_ops). On a ring its data are in memory and its CQ only
 * has its own sends' completions; on SEND/RECV the data are completions.
 * Its owner's callbacks are rc_sub.c's.
 */
#include "rc.h"

/*
 * A ring connection whose next record has not arrived and whose CQ is not
 * due (msga__ring_cq_due) has nothing for this poll: checked here, inline,
 * before calling down to msga__ring_peek: in a ping-pong the time to
 * notice a record is half an idle poll, and a call chain per connection
 * was most of one.
 */
static int ring_can_wait(const struct msga__conn *c)
{
	return c->ring && c->state == MSGA__C_READY && !msga__ring_cq_due(c) &&
	       !c->ring_report_due && !msga__ring_may_read(&c->rr);
}

/*
 * A ready ring's records first, then its CQ only when due (it holds only
 * our sends' completions and a few control receives); a SEND/RECV
 * connection's data are all on the CQ.
 */
int msga__rc_sub_conn_drain(struct msga__conn *c, int budget)
{
	int done = 0;

	if (c->ring && c->state == MSGA__C_READY) {
		done = msga__sub_ring_poll(c, budget);
		if (!msga__ring_cq_due(c))
			return done;
	}
	return done + msga__conn_poll(c, budget - done);
}

static int sub_conn_poll(struct msga__ep *ep, int budget, uint64_t *now)
{
	struct msga__conn *c = msga__conn_of(ep);

	(void)now;
	if (ring_can_wait(c))
		return 0;
	return msga__rc_sub_conn_drain(c, budget);
}

/*
 * Liveness and the handshake's deadline (msga__conn_tick), and the nudge
 * of a publisher that has not answered our SUBSCRIBE yet.
 */
static uint64_t sub_conn_tick(struct msga__ep *ep, uint64_t now)
{
	struct msga__conn *c = msga__conn_of(ep);
	uint64_t due = msga__conn_tick(c, now);
	uint64_t nudge = msga__sub_nudge(c, now); /* (READY only) */

	return nudge < due ? nudge : due;
}

const struct msga__ep_ops msga__rc_sub_conn_ops = {
	.poll = sub_conn_poll,
	.on_cm = msga__conn_on_cm,
	.tick = sub_conn_tick,
	.arm = msga__conn_arm,
	.reap = msga__conn_reap,
	.destroy = msga__conn_destroy,
};
