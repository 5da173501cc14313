/* SPDX-License-Identifier: MIT */
/*
 * lat_stats.h - latency statistics for the benchmark tools: order
 * statistics, percentiles and quantiles, mean and standard deviation in
 * double precision, and a logarithmic histogram. Pure functions, unit-tested on the host.
 */
#ifndef MSGA_LAT_STATS_H
#define MSGA_LAT_STATS_H

#include <stddef.h>
#include <stdint.h>

struct lat_summary {
	uint64_t n;
	double min, max;
	double median;  /* mean of the two middle samples when n is even */
	double avg;
	double stdev;   /* population standard deviation (divides by n) */
	double p99, p999, p9999;
};

/*
 * Sort samples[0..n) in place and fill *out. Returns 0, or -EINVAL when
 * n is 0 or a sample is negative or not finite.
 */
int lat_stats_compute(double *samples, size_t n, struct lat_summary *out);

/*
 * Nearest-rank percentile of sorted[0..n): the smallest sample such that at
 * least pct percent of the samples are <= it. pct in (0, 100].
 */
double lat_stats_percentile(const double *sorted, size_t n, double pct);

/*
 * The q-quantile (q in [0, 1]) of sorted[0..n), linearly interpolated
 * between the two nearest ranks (R's and numpy's default). For quartiles
 * of a few dozen ratios, where a nearest-rank value would jump between
 * samples; q = 0.5 is the median lat_stats_compute gives. 0.0 when n is 0.
 */
double lat_stats_quantile(const double *sorted, size_t n, double q);

/*
 * Histogram buckets: each power of two is split into LAT_HIST_SUB equal
 * ratio steps, starting at LAT_HIST_BASE_US. Bucket k covers
 * [base * 2^(k/SUB), base * 2^((k+1)/SUB)); bucket 0 also holds everything
 * below base, the last bucket everything above.
 */
#define LAT_HIST_BASE_US 0.125
#define LAT_HIST_SUB 4
#define LAT_HIST_BUCKETS 96

struct lat_hist {
	uint64_t count[LAT_HIST_BUCKETS];
	uint64_t total;
};

int lat_hist_bucket(double us);
double lat_hist_lower(int bucket);
double lat_hist_upper(int bucket);
void lat_hist_fill(struct lat_hist *h, const double *samples, size_t n);

#endif
