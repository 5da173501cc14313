/* SPDX-License-Identifier: MIT */
/*
 * perf_out.h - rdma_lat/rdma_bw reports: perftest-style text columns,
 * CSV with a header line, one JSON object, or the old OFED tools' lines
 * (--old-output). Field names and the old lines are part of the tools'
 * interface and documented in rdma_lat(1) and rdma_bw(1).
 */
#ifndef MSGA_PERF_OUT_H
#define MSGA_PERF_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "lat_stats.h"
#include "perf_ep.h"

struct perf_bw_result {
	uint64_t iterations;
	double bw_peak_mbps, bw_avg_mbps, msg_rate_mpps; /* MB = 2^20 bytes */
	uint64_t sent, received; /* every message, warm-up too (UD loss) */
};

struct perf_lat_extra {
	uint64_t sent, lost; /* --rate only */
};

void perf_out_begin(FILE *f, const struct perf_opts *o,
		    const struct perf_ep *ep);
void perf_out_lat(FILE *f, const struct perf_opts *o, uint32_t bytes,
		  const struct lat_summary *s, const struct lat_hist *h,
		  const struct perf_lat_extra *x);
void perf_out_bw(FILE *f, const struct perf_opts *o, uint32_t bytes,
		 const struct perf_bw_result *r);
void perf_out_end(FILE *f, const struct perf_opts *o);

#endif
