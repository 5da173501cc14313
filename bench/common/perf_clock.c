/* SPDX-License-Identifier: MIT */
/*
 * perf_clock.c - see perf_clock.h. Under QEMU TCG, or on CPUs without an
 * invariant TSC, the TSC can drift or stall; two independent calibration
 * windows that disagree by more than 0.5 % (in each of three tries) reveal
 * that, and the tools then fall back to clock_gettime (slower to read, but
 * always right).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "perf_clock.h"

struct perf_clock perf_clock = {
	.kind = PERF_CLOCK_MONO,
	.us_per_tick = 1e-3,
	.why = "not calibrated",
};

/* Does /proc/cpuinfo list both constant_tsc and nonstop_tsc? */
static int tsc_invariant(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[4096];
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		found = strstr(line, " constant_tsc") &&
			strstr(line, " nonstop_tsc");
		break;
	}
	fclose(f);
	return found;
}

/* TSC ticks per microsecond over a window of about ms milliseconds. */
static double tsc_per_us(unsigned int ms)
{
	uint64_t t0 = perf_mono_ns(), c0 = perf_rdtsc(), t1, c1;

	usleep(ms * 1000);
	t1 = perf_mono_ns();
	c1 = perf_rdtsc();
	if (t1 <= t0 || c1 <= c0)
		return 0.0;
	return (double)(c1 - c0) * 1e3 / (double)(t1 - t0);
}

static void use_mono(const char *why)
{
	perf_clock.kind = PERF_CLOCK_MONO;
	perf_clock.us_per_tick = 1e-3;
	perf_clock.tsc_mhz = 0.0;
	perf_clock.why = why;
}

/* What one clock read costs: a cost inside every timed interval. */
static void measure_read_cost(void)
{
	uint64_t t0 = perf_mono_ns(), t1;
	volatile uint64_t sink = 0;

	for (int i = 0; i < 1000; i++)
		sink += perf_now();
	t1 = perf_mono_ns();
	perf_clock.read_ns = (double)(t1 - t0) / 1000.0;
	(void)sink;
}

/* Two calibrations (ticks per us) within 0.5 % of each other. */
static int calibrations_agree(double a, double b)
{
	return a >= 1.0 && b >= 1.0 && (a > b ? a - b : b - a) <= 0.005 * b;
}

/*
 * auto: the TSC only when the CPU flags promise it is invariant and two
 * calibrations agree. tsc: the user vouches for it (e.g. a VM that hides
 * the flags); the calibrations must still agree.
 */
static int choose(enum perf_clock_kind want)
{
	int invariant = PERF_HAVE_TSC && tsc_invariant();
	double a, b;

	if (want == PERF_CLOCK_MONO) {
		use_mono("requested");
		return 0;
	}
	if (!PERF_HAVE_TSC || (!invariant && want == PERF_CLOCK_AUTO)) {
		use_mono("no invariant TSC (constant_tsc and nonstop_tsc)");
		return want == PERF_CLOCK_TSC ? -ENOTSUP : 0;
	}
	/*
	 * A busy host can preempt us at a window's edge once; a TSC that
	 * drifts or stalls disagrees every time. So up to three pairs.
	 */
	for (int tries = 0; tries < 3; tries++) {
		a = tsc_per_us(40);
		b = tsc_per_us(60);
		if (calibrations_agree(a, b))
			break;
	}
	if (!calibrations_agree(a, b)) {
		use_mono("TSC calibrations disagree");
		return want == PERF_CLOCK_TSC ? -ENOTSUP : 0;
	}
	perf_clock.kind = PERF_CLOCK_TSC;
	perf_clock.tsc_mhz = (a + b) / 2.0;
	perf_clock.us_per_tick = 1.0 / perf_clock.tsc_mhz;
	perf_clock.why = invariant ?
		"invariant TSC, calibrated against CLOCK_MONOTONIC" :
		"TSC forced by --clock tsc (CPU flags do not promise it), calibrated";
	return 0;
}

int perf_clock_init(enum perf_clock_kind want)
{
	int ret = choose(want);

	measure_read_cost();
	return ret;
}
