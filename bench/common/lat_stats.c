/* SPDX-License-Identifier: MIT */
/*
 * lat_stats.c - see lat_stats.h. perftest truncates every deviation to
 * whole microseconds before squaring it, which makes its stdev useless at
 * soft-RDMA and hardware latencies alike; here everything stays double.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lat_stats.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double lat_stats_percentile(const double *sorted, size_t n, double pct)
{
	/* 99.9 / 100 * 1000 is 999.0000000000001 in binary: trim the noise. */
	double rank = ceil(pct / 100.0 * (double)n - 1e-9);
	size_t idx;

	if (n == 0)
		return 0.0;
	idx = rank < 1.0 ? 0 : (size_t)rank - 1;
	if (idx >= n)
		idx = n - 1;
	return sorted[idx];
}

double lat_stats_quantile(const double *sorted, size_t n, double q)
{
	double x;
	size_t i;

	if (n == 0)
		return 0.0;
	x = q * (double)(n - 1);
	i = (size_t)x;
	if (i + 1 >= n)
		return sorted[n - 1];
	return sorted[i] + (x - (double)i) * (sorted[i + 1] - sorted[i]);
}

static double median_of(const double *sorted, size_t n)
{
	if (n % 2)
		return sorted[n / 2];
	return (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

/*
 * Two passes over the samples shifted by the smallest one (s is sorted):
 * the shifted values are small, so a million samples near 1e6 us still
 * give their mean and spread to well under a nanosecond.
 */
static void mean_stdev(const double *s, size_t n, double *avg, double *sd)
{
	double shift = s[0], sum = 0.0, mean, sq = 0.0;

	for (size_t i = 0; i < n; i++)
		sum += s[i] - shift;
	mean = sum / (double)n;
	for (size_t i = 0; i < n; i++) {
		double d = (s[i] - shift) - mean;

		sq += d * d;
	}
	*avg = shift + mean;
	*sd = sqrt(sq / (double)n);
}

int lat_stats_compute(double *samples, size_t n, struct lat_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(samples[i]) || samples[i] < 0.0)
			return -EINVAL;
	qsort(samples, n, sizeof(*samples), cmp_double);
	out->n = n;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->median = median_of(samples, n);
	mean_stdev(samples, n, &out->avg, &out->stdev);
	out->p99 = lat_stats_percentile(samples, n, 99.0);
	out->p999 = lat_stats_percentile(samples, n, 99.9);
	out->p9999 = lat_stats_percentile(samples, n, 99.99);
	return 0;
}

int lat_hist_bucket(double us)
{
	double k;

	if (!(us > LAT_HIST_BASE_US))
		return 0;
	k = floor(log2(us / LAT_HIST_BASE_US) * LAT_HIST_SUB + 1e-9);
	if (k >= LAT_HIST_BUCKETS - 1)
		return LAT_HIST_BUCKETS - 1;
	return (int)k;
}

double lat_hist_lower(int bucket)
{
	return LAT_HIST_BASE_US * exp2((double)bucket / LAT_HIST_SUB);
}

double lat_hist_upper(int bucket)
{
	return lat_hist_lower(bucket + 1);
}

void lat_hist_fill(struct lat_hist *h, const double *samples, size_t n)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < n; i++)
		h->count[lat_hist_bucket(samples[i])]++;
	h->total = n;
}
