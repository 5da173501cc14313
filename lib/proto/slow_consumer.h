/* SPDX-License-Identifier: MIT */
/*
 * slow_consumer.h - when a subscriber that holds up its publisher is
 * dropped, and how long a blocking publish may wait.
 *
 * Over RC a publisher sends a message only when every matching subscriber
 * has room for it (ring bytes or receive credit): nothing is lost, and a
 * slow subscriber slows the stream down. A subscriber that stops making
 * room would stop it for good, for every other subscriber too, while its
 * keepalives (or our own back-pressure on it, liveness.h) keep the
 * connection alive. So a publish that finds no room on a subscriber marks
 * it as holding up the stream since then; once it has gone the whole
 * limit (msga_pub_attr.slow_consumer_ms) without room, it is dropped.
 * Any look that finds room again clears the mark.
 *
 * A subscriber that is slow but keeps up its pace is not dropped: each
 * look also sees how much room it has made so far (ring bytes freed,
 * credits returned, counted in messages), and room made for another
 * message restarts its time. That matters because a busy publisher takes
 * new room at once: a look rarely finds room left over, even from a
 * subscriber that frees some every few milliseconds. A subscriber that
 * lets one message through per limit is slow, not stuck; the stream is
 * never held up longer than the limit by it.
 *
 * As in liveness.h, looks further apart than a pause (a quarter of the
 * limit) mean we were not polling, so the room the subscriber made may be
 * unread: its time starts afresh instead of blaming it for our absence.
 *
 * Pure logic: tested on the host (tests/test_slow_consumer.c).
 */
#ifndef MSGA_SLOW_CONSUMER_H
#define MSGA_SLOW_CONSUMER_H

#include <stdint.h>

struct msga__slow_consumer {
	int blocking;      /* a publish found no room on it, none since */
	uint64_t since_ns; /* when that began (or restarted, after a pause) */
	uint64_t seen_ns;  /* the previous look */
	uint64_t made;     /* room it had made by then (any monotonic count) */
	/* counters (msga_pub_conn_stats): times it began holding up the
	 * stream, and the time it held it up, from the publish that found
	 * no room to the look that found room again */
	uint64_t began_ns;
	uint64_t stalls;
	uint64_t held_ns;
};

enum msga__slow_verdict {
	MSGA__SLOW_OK = 0,
	MSGA__SLOW_DROP = 1, /* no room for the whole limit: disconnect it */
};

/*
 * A publish found no room on this subscriber at now_ns, when it had made
 * made room so far.
 */
void msga__slow_blocked(struct msga__slow_consumer *s, uint64_t now_ns,
			uint64_t made, uint64_t limit_ns);

/*
 * A look at now_ns (a tick, or another publish): has_room says whether it
 * could take a message now, made how much room it has made so far.
 * *next_ns is when the next look is due (UINT64_MAX: none needed).
 */
enum msga__slow_verdict msga__slow_check(struct msga__slow_consumer *s,
					 uint64_t now_ns, int has_room,
					 uint64_t made, uint64_t limit_ns,
					 uint64_t *next_ns);

/*
 * How long a blocking claim or send (MSGA_PUB_BLOCK) waits for room
 * before it gives up with -ETIMEDOUT: twice the limit. Any subscriber
 * holding it up is dropped within the limit, so the wait ends sooner
 * unless subscribers take turns holding it up, each for less.
 */
static inline uint64_t msga__slow_wait_ns(uint64_t limit_ns)
{
	return 2 * limit_ns;
}

#endif
