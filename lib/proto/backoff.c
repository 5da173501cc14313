/* SPDX-License-Identifier: MIT */
/* backoff.c - see backoff.h. */
#include <errno.h>

#include "backoff.h"

uint64_t msga__backoff_next(uint64_t wait_ns, int restart)
{
	if (restart || !wait_ns)
		return MSGA__BACKOFF_MIN_NS;
	return wait_ns > MSGA__BACKOFF_MAX_NS / 2 ? MSGA__BACKOFF_MAX_NS :
						    wait_ns * 2;
}

/* xorshift64: the jitter needs no quality, only spread. */
uint64_t msga__jitter(uint64_t *rand, uint64_t range)
{
	uint64_t x = *rand ? *rand : 0x9e3779b97f4a7c15ull;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rand = x;
	return range ? x % range : 0;
}

uint64_t msga__backoff_due(uint64_t now_ns, uint64_t wait_ns, uint64_t *rand)
{
	return now_ns + wait_ns / 2 + msga__jitter(rand, wait_ns - wait_ns / 2 + 1);
}

int msga__backoff_final(int status)
{
	return status == -EACCES || status == -EPERM || status == -ENODEV ||
	       status == -EINVAL;
}
