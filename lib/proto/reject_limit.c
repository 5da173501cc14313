/* SPDX-License-Identifier: MIT */
/* reject_limit.c - see reject_limit.h. */
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
