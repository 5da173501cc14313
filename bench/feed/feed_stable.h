/* SPDX-License-Identifier: MIT */
/*
 * feed_stable - msga_feed's latency-stable rate, decided from the steps'
 * recorded statistics alone (no device, no clock: a host test feeds it
 * numbers).
 *
 * "Max rate without failure" says only that every message came back
 * within the deadline; on 2026-11-27 it said 20000 msg/s for a run whose
 * median at 20000 msg/s was 1.7 ms against 30-60 us below. The stable
 * rate is the highest step up to which latency still looks like it does
 * at the bottom of the run:
 *
 *   reference median = the lower of the first FEED_STABLE_REF_STEPS
 *                      passed steps' medians, reference p99 the lower of
 *                      their p99s (the lower: one noisy step of the two
 *                      must not loosen the bound);
 *   stable rate      = the rate of the last step k such that steps 0..k
 *                      all passed and each has median <= 1.5 x reference
 *                      median and p99 <= 3 x reference p99 (contiguous
 *                      from the bottom: a step that breaks the bound ends
 *                      it, even if a later one falls back within it);
 *                      0 if the first step failed or there is none.
 */
#ifndef MSGA_BENCH_FEED_STABLE_H
#define MSGA_BENCH_FEED_STABLE_H

#include <stddef.h>

#define FEED_STABLE_REF_STEPS 2
#define FEED_STABLE_MEDIAN_X 1.5
#define FEED_STABLE_P99_X 3.0

/* One measured step: its rate, its latency, whether it failed. */
struct feed_step_stat {
	long rate;
	double median_us, p99_us;
	int failed;
};

struct feed_stable {
	long rate;              /* the latency-stable rate, msg/s; 0: none */
	long steps;             /* steps 0..steps-1 are stable */
	int ref_steps;          /* steps the reference came from (0, 1, 2) */
	double ref_median_us, ref_p99_us;
	/* The step that ended it (-1: none did, the run ran out of steps)
	 * and why: "median", "p99" or "failure". */
	long broken_at;
	const char *broken_by;
};

/* Decide over the n steps, in the order they ran (rising rate). */
void feed_stable_rate(const struct feed_step_stat *steps, size_t n,
		      struct feed_stable *out);

#endif
