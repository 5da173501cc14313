/* SPDX-License-Identifier: MIT */
/*
 * reject_limit.h - how often a publisher reports refused peers
 * (MSGA_EVENT_REJECTED): at most one event per interval, each carrying
 * how many were refused since the last one. A flood of hostile connects
 * then costs the application a bounded number of callbacks, and no
 * refusal goes uncounted.
 */
#ifndef MSGA_REJECT_LIMIT_H
#define MSGA_REJECT_LIMIT_H

#include <stdint.h>

#include "msgaccel.h"

struct msga__reject_limit {
	uint64_t interval_ns;  /* 1 s / events per second */
	uint64_t next_ns;      /* no event before this */
	uint64_t pending;      /* refused, not yet reported */
	uint64_t total;        /* refused since creation */
	int status;            /* the last refusal's */
	/* refusals by status since creation (msga_pub_stats) */
	uint64_t keys, allow, limits, timeouts;
	char peer[64];         /* and its peer */
};

void msga__reject_limit_init(struct msga__reject_limit *l,
			     uint32_t per_second);
/*
 * One more refusal at now_ns: 1 with *count set (refusals the event
 * reports, this one included) when an event is due, else 0.
 */
int msga__reject_limit_hit(struct msga__reject_limit *l, uint64_t now_ns,
			   uint64_t *count);

/*
 * A publisher's refusal of peer with status: counted, and reported to cb
 * (MSGA_EVENT_REJECTED, pub's) when the limit allows. The due check, from
 * the publisher's tick, reports what the limit held back; it returns when
 * to look again (UINT64_MAX: nothing held).
 */
void msga__reject_report(struct msga__reject_limit *l, uint64_t now_ns,
			 int status, const char *peer, struct msga_pub *pub,
			 msga_event_cb cb, void *user);
uint64_t msga__reject_report_due(struct msga__reject_limit *l,
				 uint64_t now_ns, struct msga_pub *pub,
				 msga_event_cb cb, void *user);

#endif
