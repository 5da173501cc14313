/* SPDX-License-Identifier: MIT */
/*
 * irq_affinity.h - where an interrupt should go so that it stays off the
 * polling CPUs (issue 38, msga_cpu --apply-irq-affinity): its affinity
 * less the polling CPUs; when that leaves nothing (an IRQ bound to the
 * polling CPU alone), the online CPUs less the polling ones. Sets as in
 * cpulist.h (64-bit words, nbits CPUs). Pure: tested on the host
 * (tests/test_irq_parse.c).
 */
#ifndef MSGA_IRQ_AFFINITY_H
#define MSGA_IRQ_AFFINITY_H

#include <stdint.h>

/*
 * The new affinity of an IRQ now on aff, away from poll, into out (all
 * of nbits CPUs): 0 when aff has no polling CPU (nothing to move; out =
 * aff), 1 when out is the new affinity (never empty, no polling CPU),
 * -ENOSPC when every online CPU polls (nowhere to go; out empty).
 */
int msga__irq_affinity_away(const uint64_t *aff, const uint64_t *poll,
			    const uint64_t *online, uint32_t nbits,
			    uint64_t *out);

#endif
