/* SPDX-License-Identifier: MIT */
/*
 * msga_feed's latency-stable rate (bench/feed/feed_stable.h) from recorded
 * step statistics, among them the run issue 39 reported: the steps' answers
 * are known by hand.
 */
#include <criterion/criterion.h>

#include "feed_stable.h"

#define EPS 1e-9

/*
 * The README's main job on 2026-11-27 (SupplyToReceive, us), shaped:
 * 30-40 us medians up to 18000 msg/s, 1.7 ms at 20000, no failure; the
 * first step carried the run's worst tail (cold start counted). The
 * reference is the lower of the first two steps' figures, so that tail
 * does not loosen the p99 bound.
 */
Test(feed_stable, the_2026_11_27_report)
{
	struct feed_step_stat s[10];
	struct feed_stable r;

	for (int i = 0; i < 10; i++)
		s[i] = (struct feed_step_stat){ .rate = 2000 * (i + 1),
						.median_us = 30 + 5 * (i % 3),
						.p99_us = 150 + 10 * i };
	s[0].p99_us = 4000; /* the cold start's tail */
	s[9].median_us = 1700;
	feed_stable_rate(s, 10, &r);
	cr_expect_eq(r.ref_steps, 2);
	cr_expect_float_eq(r.ref_median_us, 30, EPS);
	cr_expect_float_eq(r.ref_p99_us, 160, EPS);
	/* the first step's own p99 (4000 > 3 x 160) ends it at once */
	cr_expect_eq(r.rate, 0);
	cr_expect_eq(r.broken_at, 0);
	cr_expect_str_eq(r.broken_by, "p99");
	/* warmed up, the first step is like the others */
	s[0].p99_us = 150;
	feed_stable_rate(s, 10, &r);
	cr_expect_float_eq(r.ref_p99_us, 150, EPS);
	cr_expect_eq(r.rate, 18000);
	cr_expect_eq(r.steps, 9);
	cr_expect_eq(r.broken_at, 9);
	cr_expect_str_eq(r.broken_by, "median");
}

/* Decide over s[0..n-1]: stable up to rate, ended at step at by why. */
static void expect_ended(const struct feed_step_stat *s, size_t n, long rate,
			 long at, const char *why)
{
	struct feed_stable r;

	feed_stable_rate(s, n, &r);
	cr_expect_eq(r.rate, rate);
	cr_expect_eq(r.steps, at);
	cr_expect_eq(r.broken_at, at);
	cr_expect_str_eq(r.broken_by, why);
}

Test(feed_stable, bounds_are_inclusive)
{
	struct feed_step_stat s[] = {
		{ .rate = 100, .median_us = 10, .p99_us = 20 },
		{ .rate = 200, .median_us = 12, .p99_us = 30 },
		{ .rate = 300, .median_us = 15, .p99_us = 60 }, /* 1.5x, 3x */
		{ .rate = 400, .median_us = 15.001, .p99_us = 20 },
	};

	expect_ended(s, 4, 300, 3, "median");
}

/*
 * 300 breaks the p99 bound; 400 falls back within it, but a rate past a
 * break is not stable. Then 300 is within both bounds but failed (its
 * messages late or lost): never stable either.
 */
Test(feed_stable, contiguous_from_the_bottom_and_passed)
{
	struct feed_step_stat s[] = {
		{ .rate = 100, .median_us = 10, .p99_us = 20 },
		{ .rate = 200, .median_us = 10, .p99_us = 20 },
		{ .rate = 300, .median_us = 10, .p99_us = 61 },
		{ .rate = 400, .median_us = 10, .p99_us = 20 },
	};

	expect_ended(s, 4, 200, 2, "p99");
	s[2].p99_us = 20;
	s[2].failed = 1;
	expect_ended(s, 4, 200, 2, "failure");
}

Test(feed_stable, reference_from_the_passed_steps_only)
{
	/* the second step failed: the reference is the first's alone */
	struct feed_step_stat s[] = {
		{ .rate = 100, .median_us = 10, .p99_us = 20 },
		{ .rate = 200, .median_us = 1, .p99_us = 1, .failed = 1 },
	};
	struct feed_stable r;

	feed_stable_rate(s, 2, &r);
	cr_expect_eq(r.ref_steps, 1);
	cr_expect_float_eq(r.ref_median_us, 10, EPS);
	cr_expect_float_eq(r.ref_p99_us, 20, EPS);
	cr_expect_eq(r.rate, 100);
	/* one step, passed: it is its own reference */
	feed_stable_rate(s, 1, &r);
	cr_expect_eq(r.rate, 100);
	cr_expect_eq(r.broken_at, -1);
	cr_expect_null(r.broken_by);
}

Test(feed_stable, no_stable_rate_without_a_passed_first_step)
{
	struct feed_step_stat s[] = {
		{ .rate = 100, .median_us = 10, .p99_us = 20, .failed = 1 },
	};
	struct feed_stable r;

	feed_stable_rate(s, 1, &r);
	cr_expect_eq(r.rate, 0);
	cr_expect_eq(r.ref_steps, 0);
	cr_expect_eq(r.broken_at, 0);
	cr_expect_str_eq(r.broken_by, "failure");
	feed_stable_rate(NULL, 0, &r);
	cr_expect_eq(r.rate, 0);
	cr_expect_eq(r.steps, 0);
	cr_expect_eq(r.broken_at, -1);
}
