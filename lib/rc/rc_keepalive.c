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

#include "rc.h"

/* Everything received: SENDs (credit.h counts them) and ring bytes read. */
static uint64_t conn_rx_count(const struct msga__conn *c)
{
	return (uint64_t)c->cr.rx_count + c->rr.rd;
}

/* We may have left the peer no room to say anything (liveness.h). */
static int conn_peer_may_wait(const struct msga__conn *c)
{
	if (c->ring == MSGA__C_RING_READER)
		return msga__ring_writer_may_wait(&c->rr);
	return msga__credit_peer_may_wait(&c->cr);
}

static int conn_can_keepalive(const struct msga__conn *c)
{
	int claim = c->pub && c->pub->claimed;

	if (!msga__conn_can_ctl(c))
		return 0;
	if (c->ring == MSGA__C_RING_WRITER)
		return 1; /* a WRITE: ring room, which can_ctl checked */
	return msga__credit_avail(&c->cr) >= 2u + c->bat_open +
					      (claim ? 2u : 0u);
}

/*
 * Every state before READY has a deadline from when we first see it
 * (liveness.h, msga__setup_expired): address and route resolution,
 * connect, accept, and a publisher's wait for the SUBSCRIBE. A peer that
 * completes the handshake and then says nothing would otherwise keep a
 * queue pair and pinned buffers for good. (DEAD lasts until the reaper
 * runs, or the user releases what it holds.)
 *
 * A publisher's clock runs from the request instead, for handshake_ms or
 * the usual span if that is shorter (msga_pub_create(3) gives both), and
 * a handshake over handshake_ms is a refusal too (MSGA_EVENT_REJECTED).
 * It asks to be ticked at least every keepalive interval, so that event
 * mode's sleep until a distant deadline is not taken for our own pause.
 */
static int hs_limit_is_handshake_ms(const struct msga__conn *c)
{
	return c->pub->rc.handshake_ns <=
	       msga__setup_span(c->ctx->peer_timeout_ns);
}

void msga__conn_hs_start(struct msga__conn *c, uint64_t now)
{
	msga__setup_start(&c->setup, now, hs_limit_is_handshake_ms(c) ?
			  c->pub->rc.handshake_ns :
			  msga__setup_span(c->ctx->peer_timeout_ns));
}

static uint64_t conn_setup_tick(struct msga__conn *c, uint64_t now)
{
	uint64_t next, interval = msga__keepalive_ns(c->ctx);

	if (c->state == MSGA__C_DEAD)
		return UINT64_MAX;
	if (!msga__setup_expired(&c->setup, now, interval,
				 c->ctx->peer_timeout_ns, &next))
		return c->pub && now + interval < next ? now + interval : next;
	if (c->pub && !c->auth.refused && hs_limit_is_handshake_ms(c))
		msga__pub_rejected(c->pub, -ETIMEDOUT, c->peer);
	msga__conn_kill(c, -ETIMEDOUT, 1);
	return UINT64_MAX;
}

/*
 * A publisher's subscriber that has held up the stream for the whole
 * slow-consumer time is dropped (slow_consumer.h), so that the others go
 * on: room for a data message is what a publish needs of it.
 */
static uint64_t conn_slow_tick(struct msga__conn *c, uint64_t now)
{
	uint64_t next;

	if (msga__slow_check(&c->slow, now, msga__conn_can_data(c),
			     msga__conn_room_made(c), c->pub->slow_ns,
			     &next) == MSGA__SLOW_DROP)
		msga__conn_kill(c, -ENOBUFS, 1);
	return next;
}

uint64_t msga__conn_tick(struct msga__conn *c, uint64_t now)
{
	struct msga_ctx *ctx = c->ctx;
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };
	uint64_t next, slow_next = UINT64_MAX;

	if (c->state != MSGA__C_READY)
		return conn_setup_tick(c, now);
	if (c->pub) {
		slow_next = conn_slow_tick(c, now);
		if (c->state == MSGA__C_DEAD)
			return UINT64_MAX;
	}

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
		if (conn_can_keepalive(c) && !msga__conn_send_ctl(c, &h, 0) &&
		    c->pub)
			c->pub->st.keepalives++;
		break;
	case MSGA__LIVE_OK:
		break;
	}
	if (c->state == MSGA__C_DEAD)
		return UINT64_MAX;
	return slow_next < next ? slow_next : next;
}
