/* SPDX-License-Identifier: MIT */
/* slow_consumer.c - the slow-consumer rule (see slow_consumer.h). */
#include "slow_consumer.h"

/* Looks further apart than this mean we were not polling. */
static uint64_t pause_ns(uint64_t limit_ns)
{
	return limit_ns / 4;
}

/*
 * A look at now: restart the time after a pause of ours, or when it has
 * made room since the previous look (slow, but not stuck).
 */
static void look(struct msga__slow_consumer *s, uint64_t now_ns,
		 uint64_t made, uint64_t limit_ns)
{
	if (s->blocking && (now_ns - s->seen_ns > pause_ns(limit_ns) ||
			    made != s->made))
		s->since_ns = now_ns;
	s->seen_ns = now_ns;
	s->made = made;
}

void msga__slow_blocked(struct msga__slow_consumer *s, uint64_t now_ns,
			uint64_t made, uint64_t limit_ns)
{
	look(s, now_ns, made, limit_ns);
	if (!s->blocking) {
		s->blocking = 1;
		s->since_ns = now_ns;
		s->began_ns = now_ns;
		s->stalls++;
	}
}

enum msga__slow_verdict msga__slow_check(struct msga__slow_consumer *s,
					 uint64_t now_ns, int has_room,
					 uint64_t made, uint64_t limit_ns,
					 uint64_t *next_ns)
{
	*next_ns = UINT64_MAX;
	if (has_room && s->blocking) {
		s->blocking = 0;
		s->held_ns += now_ns - s->began_ns;
	}
	if (!s->blocking)
		return MSGA__SLOW_OK;
	look(s, now_ns, made, limit_ns);
	if (now_ns - s->since_ns >= limit_ns)
		return MSGA__SLOW_DROP;
	/* The limit, or sooner: a program asleep on its timer must look
	 * again within a pause, or its own sleep would restart the time. */
	*next_ns = s->since_ns + limit_ns;
	if (now_ns + pause_ns(limit_ns) / 2 < *next_ns)
		*next_ns = now_ns + pause_ns(limit_ns) / 2;
	return MSGA__SLOW_OK;
}
