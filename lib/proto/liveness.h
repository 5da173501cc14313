/* SPDX-License-Identifier: MIT */
/*
 * liveness.h - is the peer of an RC connection still there?
 *
 * RC's transport notices a vanished peer only when a send of ours goes
 * unacknowledged: after seconds of retries on RoCE and InfiniBand, and
 * after TCP's retransmission timeout (many minutes) on iWARP. A subscriber
 * that only receives sends nothing at all while its feed is quiet, so a
 * publisher whose host died would leave it waiting forever, unable to
 * tell a quiet market from a dead feed.
 *
 * So both sides of a connection say something at least every keepalive
 * interval (a CREDIT message when nothing else went out), and a peer that
 * has said nothing for the whole peer timeout is reported gone. This is
 * the rule UD unicast follows too (ud_unicast.c), with the same timeout.
 *
 * Nothing is done per message. The progress engine ticks every connection
 * now and then (engine.c) with counters that the data path keeps anyway:
 * everything received (SENDs counted by credit.h, ring bytes read) and
 * every work request posted. A tick notes when either last moved.
 *
 * A program that stopped polling (stopped in a debugger, descheduled,
 * its whole process paused) cannot have read what its peer sent in the
 * meantime, so after such a pause the peer gets a fresh timeout instead
 * of being blamed for our own absence. Its peer, which kept polling, still
 * times the pause out: a side that does not poll cannot keep a connection.
 *
 * Pure logic: tested on the host (tests/test_liveness.c).
 */
#ifndef MSGA_LIVENESS_H
#define MSGA_LIVENESS_H

#include <stdint.h>

struct msga__liveness {
	uint64_t rx_mark;  /* the receive counter when last seen moving */
	uint64_t tx_mark;  /* the post counter when last seen moving */
	uint64_t heard_ns; /* when the receive counter last moved */
	uint64_t sent_ns;  /* when we last posted, or tried a keepalive */
	uint64_t tick_ns;  /* the previous tick; 0 before the first */
};

enum msga__live_verdict {
	MSGA__LIVE_OK = 0,
	MSGA__LIVE_KEEPALIVE = 1, /* nothing went out for an interval */
	MSGA__LIVE_DEAD = 2,      /* nothing came in for the timeout */
};

/* Ticks further apart than this mean we were not polling (see above). */
#define MSGA__LIVE_PAUSE_INTERVALS 2u

/*
 * One tick at now with the current counters. peer_blocked: we may have
 * left the peer no room to send us anything (a full ring, receives held
 * or not yet reported), so its silence proves nothing. Returns the
 * verdict; a KEEPALIVE counts as sent now whether or not the caller finds
 * room for it (one try per interval: the peer waits several before giving
 * up). *next_ns is when the next tick is due (for event mode's timer).
 */
enum msga__live_verdict msga__liveness_tick(struct msga__liveness *l,
					    uint64_t now_ns, uint64_t rx,
					    uint64_t tx, int peer_blocked,
					    uint64_t interval_ns,
					    uint64_t timeout_ns,
					    uint64_t *next_ns);

/*
 * A connection that is not ready yet (address and route resolution,
 * connect, accept, a publisher's wait for the SUBSCRIBE) has
 * MSGA__SETUP_PEER_TIMEOUTS peer timeouts from its first tick to get
 * there; then it is dropped. A handshake is several round trips through
 * rdma_cm and the kernel, not one message, hence more than one timeout.
 * Our own pauses (ticks further apart than MSGA__LIVE_PAUSE_INTERVALS
 * keepalive intervals) push the deadline back, as they give a ready
 * peer a fresh timeout.
 */
#define MSGA__SETUP_PEER_TIMEOUTS 2u
/*
 * ...and never less than the library's own rdma_cm budgets (2 s to
 * resolve the address, 2 s the route) plus a second for the connect, so
 * that a short peer timeout does not cut a slow but healthy handshake.
 */
#define MSGA__SETUP_MIN_NS 5000000000ull

struct msga__setup_clock {
	uint64_t deadline_ns; /* 0 before the first tick */
	uint64_t tick_ns;     /* the previous tick */
};

/* The span a connection has, from its first tick, with timeout_ns. */
uint64_t msga__setup_span(uint64_t timeout_ns);

/*
 * A clock started at now_ns with a span of its own instead (a publisher's
 * handshake: the shorter of handshake_ms and the usual span, from the
 * connect request). Our pauses push it back the same way.
 */
void msga__setup_start(struct msga__setup_clock *s, uint64_t now_ns,
		       uint64_t span_ns);

/*
 * One tick at now_ns: 1 when the deadline has passed (drop it), else 0
 * with *next_ns set to the deadline.
 */
int msga__setup_expired(struct msga__setup_clock *s, uint64_t now_ns,
			uint64_t interval_ns, uint64_t timeout_ns,
			uint64_t *next_ns);

#endif
