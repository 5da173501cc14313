/* SPDX-License-Identifier: MIT */
/*
 * irq_affinity.c - an IRQ's affinity away from the polling CPUs
 * (irq_affinity.h).
 */
#include <errno.h>

#include "cpulist.h"
#include "irq_affinity.h"

/* out = a & ~b; returns whether out has a CPU. */
static int minus(const uint64_t *a, const uint64_t *b, uint32_t words,
		 uint64_t *out)
{
	uint64_t any = 0;

	for (uint32_t w = 0; w < words; w++)
		any |= out[w] = a[w] & ~b[w];
	return any != 0;
}

int msga__irq_affinity_away(const uint64_t *aff, const uint64_t *poll,
			    const uint64_t *online, uint32_t nbits,
			    uint64_t *out)
{
	uint32_t words = MSGA__CPUSET_WORDS(nbits);
	uint64_t hit = 0;

	for (uint32_t w = 0; w < words; w++)
		hit |= aff[w] & poll[w];
	if (!hit) {
		for (uint32_t w = 0; w < words; w++)
			out[w] = aff[w];
		return 0;
	}
	/* Keep what the administrator chose, less the pollers; only when
	 * that is nothing, spread over every other online CPU. */
	if (minus(aff, poll, words, out) || minus(online, poll, words, out))
		return 1;
	return -ENOSPC;
}
