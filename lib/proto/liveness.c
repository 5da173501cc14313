/* SPDX-License-Identifier: MIT */
/* liveness.c - keepalive and peer timeout decisions (see liveness.h). */
#include "liveness.h"

enum msga__live_verdict msga__liveness_tick(struct msga__liveness *l,
					    uint64_t now_ns, uint64_t rx,
					    uint64_t tx, int peer_blocked,
					    uint64_t interval_ns,
					    uint64_t timeout_ns,
					    uint64_t *next_ns)
{
	enum msga__live_verdict v = MSGA__LIVE_OK;
	uint64_t heard_due, sent_due;

	if (!l->tick_ns) {
		/* The first tick: the connection just became ready. */
		l->rx_mark = rx;
		l->tx_mark = tx;
		l->heard_ns = now_ns;
		l->sent_ns = now_ns;
	} else if (now_ns - l->tick_ns >
		   MSGA__LIVE_PAUSE_INTERVALS * interval_ns || peer_blocked) {
		/*
		 * We were not polling, so what the peer said may be unread;
		 * or we left it no room to say anything. Its silence is
		 * ours: start its timeout afresh.
		 */
		l->heard_ns = now_ns;
	}
	l->tick_ns = now_ns;
	if (rx != l->rx_mark) {
		l->rx_mark = rx;
		l->heard_ns = now_ns;
	}
	if (tx != l->tx_mark) {
		l->tx_mark = tx;
		l->sent_ns = now_ns;
	}
	if (now_ns - l->heard_ns >= timeout_ns) {
		*next_ns = UINT64_MAX;
		return MSGA__LIVE_DEAD;
	}
	if (now_ns - l->sent_ns >= interval_ns) {
		l->sent_ns = now_ns;
		v = MSGA__LIVE_KEEPALIVE;
	}
	heard_due = l->heard_ns + timeout_ns;
	sent_due = l->sent_ns + interval_ns;
	*next_ns = heard_due < sent_due ? heard_due : sent_due;
	return v;
}

uint64_t msga__setup_span(uint64_t timeout_ns)
{
	uint64_t span = MSGA__SETUP_PEER_TIMEOUTS * timeout_ns;

	return span > MSGA__SETUP_MIN_NS ? span : MSGA__SETUP_MIN_NS;
}

void msga__setup_start(struct msga__setup_clock *s, uint64_t now_ns,
		       uint64_t span_ns)
{
	s->deadline_ns = now_ns + span_ns;
	s->tick_ns = now_ns;
}

int msga__setup_expired(struct msga__setup_clock *s, uint64_t now_ns,
			uint64_t interval_ns, uint64_t timeout_ns,
			uint64_t *next_ns)
{
	if (!s->deadline_ns)
		s->deadline_ns = now_ns + msga__setup_span(timeout_ns);
	else if (now_ns > s->tick_ns &&
		   now_ns - s->tick_ns > MSGA__LIVE_PAUSE_INTERVALS * interval_ns) {
		/* we were not polling: the pause is not the peer's */
		s->deadline_ns += now_ns - s->tick_ns;
	}
	s->tick_ns = now_ns;
	*next_ns = s->deadline_ns;
	return now_ns >= s->deadline_ns;
}
