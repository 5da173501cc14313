/* SPDX-License-Identifier: MIT */
/*
 * Latency statistics against data whose answers are known by hand:
 * percentiles by nearest rank, interpolated quantiles, the median, and a
 * standard deviation that stays exact below one microsecond (perftest's
 * truncates to whole us).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "lat_stats.h"

#define EPS 1e-9

Test(lat_stats, one_to_ten)
{
	double s[] = { 7, 3, 10, 1, 5, 2, 9, 4, 8, 6 };
	struct lat_summary m;

	cr_assert_eq(lat_stats_compute(s, 10, &m), 0);
	cr_expect_eq(m.n, 10);
	cr_expect_float_eq(m.min, 1.0, EPS);
	cr_expect_float_eq(m.max, 10.0, EPS);
	cr_expect_float_eq(m.median, 5.5, EPS);
	cr_expect_float_eq(m.avg, 5.5, EPS);
	cr_expect_float_eq(m.stdev, sqrt(8.25), EPS);
	cr_expect_float_eq(m.p99, 10.0, EPS);
	cr_expect_float_eq(m.p9999, 10.0, EPS);
	for (int i = 1; i < 10; i++)
		cr_expect(s[i - 1] <= s[i], "samples are sorted in place");
}

Test(lat_stats, thousand_shuffled_percentiles)
{
	static double s[1000];
	struct lat_summary m;

	for (int i = 0; i < 1000; i++)
		s[i] = (double)((i * 617) % 1000 + 1); /* 1..1000 permuted */
	cr_assert_eq(lat_stats_compute(s, 1000, &m), 0);
	cr_expect_float_eq(m.median, 500.5, EPS);
	cr_expect_float_eq(m.p99, 990.0, EPS);
	cr_expect_float_eq(m.p999, 999.0, EPS);
	cr_expect_float_eq(m.p9999, 1000.0, EPS);
	cr_expect_float_eq(m.max, 1000.0, EPS);
}

Test(lat_stats, odd_count_median_is_middle_sample)
{
	double s[] = { 30.5, 10.25, 20.125 };
	struct lat_summary m;

	cr_assert_eq(lat_stats_compute(s, 3, &m), 0);
	cr_expect_float_eq(m.median, 20.125, EPS);
	cr_expect_float_eq(lat_stats_percentile(s, 3, 50.0), 20.125, EPS);
	cr_expect_float_eq(lat_stats_percentile(s, 3, 33.0), 10.25, EPS);
	cr_expect_float_eq(lat_stats_percentile(s, 3, 34.0), 20.125, EPS);
}

/* Linear interpolation between ranks (numpy.quantile's default). */
Test(lat_stats, quantile_interpolates_between_ranks)
{
	const double s[] = { 1, 2, 4, 8, 16 };

	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.0), 1.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.25), 2.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.5), 4.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.6), 5.6, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.75), 8.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 0.9), 12.8, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 5, 1.0), 16.0, EPS);
	/* q = 0.5 agrees with the median of an even count */
	cr_expect_float_eq(lat_stats_quantile(s, 4, 0.5), 3.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 1, 0.75), 1.0, EPS);
	cr_expect_float_eq(lat_stats_quantile(s, 0, 0.5), 0.0, EPS);
}

Test(lat_stats, stdev_below_one_microsecond)
{
	double s[] = { 20.1, 20.2, 20.3, 20.4 };
	struct lat_summary m;

	cr_assert_eq(lat_stats_compute(s, 4, &m), 0);
	cr_expect_float_eq(m.avg, 20.25, 1e-12);
	/* deviations 0.15, 0.05, 0.05, 0.15: sqrt(0.05/4) */
	cr_expect_float_eq(m.stdev, sqrt(0.0125), 1e-12,
			   "stdev %.9f", m.stdev);
}

Test(lat_stats, stdev_survives_a_large_offset)
{
	/* Sum of squares minus square of sum would cancel catastrophically. */
	size_t n = 1000000;
	double *s = malloc(n * sizeof(*s));
	struct lat_summary m;

	cr_assert_not_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = 1e6 + (i % 2 ? 0.3 : 0.1);
	cr_assert_eq(lat_stats_compute(s, n, &m), 0);
	cr_expect_float_eq(m.stdev, 0.1, 1e-6, "stdev %.9f", m.stdev);
	cr_expect_float_eq(m.avg, 1e6 + 0.2, 1e-6);
	free(s);
}

Test(lat_stats, single_sample)
{
	double s[] = { 42.0 };
	struct lat_summary m;

	cr_assert_eq(lat_stats_compute(s, 1, &m), 0);
	cr_expect_float_eq(m.min, 42.0, EPS);
	cr_expect_float_eq(m.max, 42.0, EPS);
	cr_expect_float_eq(m.median, 42.0, EPS);
	cr_expect_float_eq(m.p99, 42.0, EPS);
	cr_expect_float_eq(m.stdev, 0.0, EPS);
}

Test(lat_stats, refuses_empty_and_bad_samples)
{
	double nan_s[] = { 1.0, NAN }, neg[] = { 1.0, -0.5 }, inf[] = { INFINITY };
	struct lat_summary m;

	cr_expect_eq(lat_stats_compute(nan_s, 0, &m), -EINVAL);
	cr_expect_eq(lat_stats_compute(nan_s, 2, &m), -EINVAL);
	cr_expect_eq(lat_stats_compute(neg, 2, &m), -EINVAL);
	cr_expect_eq(lat_stats_compute(inf, 1, &m), -EINVAL);
}

Test(lat_stats, histogram_bucket_edges)
{
	for (int k = 0; k < LAT_HIST_BUCKETS - 1; k++) {
		double lo = lat_hist_lower(k);

		cr_expect_eq(lat_hist_bucket(lo * 1.0001), k, "bucket of %g", lo);
		cr_expect_float_eq(lat_hist_upper(k), lat_hist_lower(k + 1), EPS);
	}
	cr_expect_float_eq(lat_hist_lower(4), 2 * LAT_HIST_BASE_US, EPS);
	cr_expect_eq(lat_hist_bucket(0.0), 0);
	cr_expect_eq(lat_hist_bucket(1e30), LAT_HIST_BUCKETS - 1);
}

Test(lat_stats, histogram_counts_every_sample)
{
	double s[] = { 0.01, 1.0, 1.1, 15.0, 15.5, 16.0, 1e9 };
	struct lat_hist h;
	uint64_t sum = 0;

	lat_hist_fill(&h, s, 7);
	for (int b = 0; b < LAT_HIST_BUCKETS; b++)
		sum += h.count[b];
	cr_expect_eq(sum, 7);
	cr_expect_eq(h.total, 7);
	cr_expect_eq(h.count[0], 1);
	cr_expect_eq(h.count[LAT_HIST_BUCKETS - 1], 1);
	cr_expect_eq(h.count[lat_hist_bucket(15.0)], 2, "15.0 and 15.5 share");
}
