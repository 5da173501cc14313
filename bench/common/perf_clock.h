/* SPDX-License-Identifier: MIT */
/*
 * perf_clock.h - the benchmark clock: the invariant TSC calibrated against
 * CLOCK_MONOTONIC when the CPU says it is invariant and two calibrations
 * agree, else clock_gettime(CLOCK_MONOTONIC) itself. Ticks are opaque;
 * convert them with perf_ticks_us().
 */
#ifndef MSGA_PERF_CLOCK_H
#define MSGA_PERF_CLOCK_H

#include <stdint.h>
#include <time.h>

enum perf_clock_kind { PERF_CLOCK_AUTO, PERF_CLOCK_TSC, PERF_CLOCK_MONO };

struct perf_clock {
	enum perf_clock_kind kind; /* TSC or MONO once initialised */
	double us_per_tick;
	double tsc_mhz;            /* 0 when the TSC is not used */
	double read_ns;            /* measured cost of one perf_now() */
	const char *why;           /* why this clock was chosen */
};

extern struct perf_clock perf_clock;

/*
 * Choose and calibrate. AUTO takes the TSC only when /proc/cpuinfo lists
 * constant_tsc and nonstop_tsc; TSC takes it without the flags but still
 * needs two calibrations to agree, else returns -ENOTSUP. Takes about
 * 100 ms when the TSC is considered.
 */
int perf_clock_init(enum perf_clock_kind want);

static inline uint64_t perf_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t perf_rdtsc(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#define PERF_HAVE_TSC 1
#else
static inline uint64_t perf_rdtsc(void)
{
	return 0;
}
#define PERF_HAVE_TSC 0
#endif

static inline uint64_t perf_now(void)
{
	if (perf_clock.kind == PERF_CLOCK_TSC)
		return perf_rdtsc();
	return perf_mono_ns();
}

static inline double perf_ticks_us(uint64_t ticks)
{
	return (double)ticks * perf_clock.us_per_tick;
}

static inline uint64_t perf_us_ticks(double us)
{
	return (uint64_t)(us / perf_clock.us_per_tick);
}

#endif
