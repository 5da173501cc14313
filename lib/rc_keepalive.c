/* SPDX-License-Identifier: MIT */
/*
 * rc_keepalive.c - liveness (liveness.h) on RC connections: what counts as
 * hearing from the peer, when it may be unable to speak because of us,
 * and the keepalive itself.
 *
 * The keepalive is a CREDIT message: every peer already takes one at any
 * time (its credit value only ever moves forward, so repeating one is
 * harmless), on all four paths: a SEND or a ring record, either way. It
 * goes only where a data message could go as well, so the rules of
 * credit.h hold unchanged: a SEND leaves the last credit for a CREDIT
 * report, and room promised to an open claim is not spent.
 */
#include <errno.h>

#include "pubsub.h"

/* Everything received: SENDs (credit.h counts them) and ring bytes read. */
static uint64_t conn_rx_count(const struct msga__conn *c)
{
	return (uint64_t)c->cr.rx_count + c->rr.rd;
}

/* We may have left the peer no room to say anything (liveness.h). */
static int conn_peer_may_wait(const struct msga__conn *c)
{
	if (c->ring && c->sub)
		return msga__ring_writer_may_wait(&c->rr);
	return msga__credit_peer_may_wait(&c->cr);
}

static int conn_can_keepalive(const struct msga__conn *c)
{
	int claim = c->pub && c->pub->claimed;

	if (!msga__conn_can_ctl(c))
		return 0;
	if (c->ring && c->pub)
		return 1; /* a WRITE: ring room, which can_ctl checked */
	return msga__credit_avail(&c->cr) >= 2u + c->bat_open +
					      (claim ? 2u : 0u);
}

uint64_t msga__conn_tick(struct msga__conn *c, uint64_t now)
{
	struct msga_ctx *ctx = c->ctx;
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };
	uint64_t next;

	switch (msga__liveness_tick(&c->live, now, conn_rx_count(c),
				    c->tx_seq, conn_peer_may_wait(c),
				    msga__keepalive_ns(ctx),
				    ctx->peer_timeout_ns,
				    &next)) {
	case MSGA__LIVE_DEAD:
		msga__conn_kill(c, -ETIMEDOUT, 1);
		return UINT64_MAX;
	case MSGA__LIVE_KEEPALIVE:
		/* (no room: the peer is behind, and the next interval retries) */
		if (conn_can_keepalive(c))
			msga__conn_send(c, &h, 0, NULL, 0, 0, MSGA__TAG_NONE,
					0);
		break;
	case MSGA__LIVE_OK:
		break;
	}
	return c->state == MSGA__C_DEAD ? UINT64_MAX : next;
}
