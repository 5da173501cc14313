/* SPDX-License-Identifier: MIT */
/* msga_feed's latency-stable rate (feed_stable.h says what it is). */
#include "feed_stable.h"

void feed_stable_rate(const struct feed_step_stat *steps, size_t n,
		      struct feed_stable *out)
{
	*out = (struct feed_stable){ .broken_at = -1 };
	for (size_t i = 0; i < n && i < FEED_STABLE_REF_STEPS; i++) {
		if (steps[i].failed)
			break;
		if (!out->ref_steps || steps[i].median_us < out->ref_median_us)
			out->ref_median_us = steps[i].median_us;
		if (!out->ref_steps || steps[i].p99_us < out->ref_p99_us)
			out->ref_p99_us = steps[i].p99_us;
		out->ref_steps++;
	}
	if (n && !out->ref_steps) { /* the first step failed */
		out->broken_at = 0;
		out->broken_by = "failure";
	}
	for (size_t i = 0; i < n && out->ref_steps; i++) {
		const char *why = NULL;

		if (steps[i].failed)
			why = "failure";
		else if (steps[i].median_us >
			 FEED_STABLE_MEDIAN_X * out->ref_median_us)
			why = "median";
		else if (steps[i].p99_us > FEED_STABLE_P99_X * out->ref_p99_us)
			why = "p99";
		if (why) {
			out->broken_at = (long)i;
			out->broken_by = why;
			break;
		}
		out->rate = steps[i].rate;
		out->steps = (long)i + 1;
	}
}
