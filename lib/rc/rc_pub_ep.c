/* SPDX-License-Identifier: MIT */
/*
 * rc_pub_ep.c - a publisher's RC connection as the engine drives it
 * (struct msga__ep_ops). Its CQ holds only its own sends' completions and
 * its subscriber's control messages (SUBSCRIBE, credit reports): no data
 * waits there.
 */
#include "rc.h"

/*
 * A busy-poller looks at the CQ every 4th poll, which takes the
 * provider's CQ lock off three of four idle loops of a latency-bound
 * program, and at once when its send queue fills or in event mode.
 */
static int cq_can_wait(const struct msga__conn *c)
{
	return !c->ctx->evmode && (c->ctx->polls & 3) &&
	       c->state == MSGA__C_READY &&
	       c->tx_seq - c->tx_done < c->sq_depth / 4;
}

static int pub_conn_poll(struct msga__ep *ep, int budget, uint64_t *now)
{
	struct msga__conn *c = msga__conn_of(ep);

	(void)now;
	if (cq_can_wait(c))
		return 0;
	return msga__conn_poll(c, budget);
}

/* Liveness, keepalives, the handshake's deadline and slow consumers. */
static uint64_t pub_conn_tick(struct msga__ep *ep, uint64_t now)
{
	return msga__conn_tick(msga__conn_of(ep), now);
}

const struct msga__ep_ops msga__rc_pub_conn_ops = {
	.poll = pub_conn_poll,
	.on_cm = msga__conn_on_cm,
	.tick = pub_conn_tick,
	.arm = msga__conn_arm,
	.reap = msga__conn_reap,
	.destroy = msga__conn_destroy,
};
