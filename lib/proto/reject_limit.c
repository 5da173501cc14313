/* SPDX-License-Identifier: MIT */
/* reject_limit.c - see reject_limit.h. */
#include <errno.h>
#include <stdio.h>

#include "reject_limit.h"

void msga__reject_limit_init(struct msga__reject_limit *l,
			     uint32_t per_second)
{
	*l = (struct msga__reject_limit){
		.interval_ns = 1000000000ull / (per_second ? per_second : 1),
	};
}

int msga__reject_limit_hit(struct msga__reject_limit *l, uint64_t now_ns,
			   uint64_t *count)
{
	l->total++;
	l->pending++;
	if (now_ns < l->next_ns)
		return 0;
	*count = l->pending;
	l->pending = 0;
	l->next_ns = now_ns + l->interval_ns;
	return 1;
}

static void report(const struct msga__reject_limit *l, uint64_t count,
		   struct msga_pub *pub, msga_event_cb cb, void *user)
{
	struct msga_event ev = { .size = sizeof(ev),
				 .type = MSGA_EVENT_REJECTED,
				 .status = l->status, .pub = pub,
				 .peer = l->peer, .count = count };

	if (cb && count)
		cb(&ev, user);
}

void msga__reject_report(struct msga__reject_limit *l, uint64_t now_ns,
			 int status, const char *peer, struct msga_pub *pub,
			 msga_event_cb cb, void *user)
{
	uint64_t count;

	l->keys += status == -EACCES;
	l->allow += status == -EPERM;
	l->limits += status == -ECONNREFUSED;
	l->timeouts += status == -ETIMEDOUT;
	l->status = status;
	snprintf(l->peer, sizeof(l->peer), "%s", peer);
	if (msga__reject_limit_hit(l, now_ns, &count))
		report(l, count, pub, cb, user);
}

uint64_t msga__reject_report_due(struct msga__reject_limit *l,
				 uint64_t now_ns, struct msga_pub *pub,
				 msga_event_cb cb, void *user)
{
	uint64_t count = l->pending;

	if (!count)
		return UINT64_MAX;
	if (now_ns < l->next_ns)
		return l->next_ns;
	l->pending = 0;
	l->next_ns = now_ns + l->interval_ns;
	report(l, count, pub, cb, user);
	return UINT64_MAX;
}
