/* SPDX-License-Identifier: MIT */
/*
 * cpulist.h - the kernel's CPU list text ("0-3,8,10-11"), as in
 * /proc/irq/N/smp_affinity_list, /sys/devices/system/cpu/cpuN/topology/
 * thread_siblings_list, .../cpu/isolated and .../cpu/nohz_full, read into
 * a CPU set the caller sized, and written back.
 *
 * A set is an array of 64-bit words, CPU c in bit c % 64 of word c / 64;
 * nbits bounds it: a CPU at or past nbits is an error, never a write past
 * the caller's array. The kernel writes these lists with %*pbl: ranges
 * and single CPUs in rising order, comma-separated, one newline at the
 * end, an empty line for an empty set. The parser takes any order and
 * overlaps (a hand-written isolcpus= value may have them), but not the
 * "0-15:2/4" stride form, which the kernel parses on input only and never
 * prints; nor isolcpus='s flag words ("nohz,domain,"), which the caller
 * strips first.
 *
 * Pure: tested on the host (tests/test_irq_parse.c), fuzzed with the
 * /proc/interrupts parser (tests/fuzz/fuzz_irq_parse.c).
 */
#ifndef MSGA_CPULIST_H
#define MSGA_CPULIST_H

#include <stddef.h>
#include <stdint.h>

/* Words a set of nbits CPUs needs. */
#define MSGA__CPUSET_WORDS(nbits) (((nbits) + 63u) / 64u)

/*
 * Parse text[0, len) (no NUL needed; one trailing newline and blanks
 * around it allowed) into set, which holds nbits CPUs and is cleared
 * first. Returns the number of CPUs in the set (0 for an empty list),
 * -EINVAL for text that is not a CPU list (a range whose end is below its
 * start, a stray character, an empty item, a number over 7 digits), or
 * -ERANGE for a CPU at or past nbits.
 */
int msga__cpulist_parse(const char *text, size_t len, uint64_t *set,
			uint32_t nbits);

/* 1 if cpu is in set (of nbits CPUs; a CPU past nbits is not). */
int msga__cpuset_has(const uint64_t *set, uint32_t nbits, uint32_t cpu);

/* Add cpu to set; a CPU past nbits is ignored. */
void msga__cpuset_add(uint64_t *set, uint32_t nbits, uint32_t cpu);

/* The lowest CPU in set, or -1 for an empty set. */
int msga__cpuset_first(const uint64_t *set, uint32_t nbits);

/* How many CPUs set holds. */
uint32_t msga__cpuset_count(const uint64_t *set, uint32_t nbits);

/*
 * Write set as the kernel would (ranges of 2 or more as "A-B", rising,
 * comma-separated; no newline) into buf of cap bytes, always
 * NUL-terminated when cap > 0. Returns the length of the whole text
 * (as snprintf does: >= cap means it was cut short).
 */
size_t msga__cpulist_format(const uint64_t *set, uint32_t nbits, char *buf,
			    size_t cap);

#endif
