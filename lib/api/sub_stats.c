/* SPDX-License-Identifier: MIT */
/*
 * sub_stats.c - msga_sub_stats, msga_sub_line_stats and
 * msga_sub_stream_stats: a subscriber's counters of its UD streams
 * (mcast:// and ud:// memberships), copied out at the caller's size. Each
 * counter is read where it is kept: the subscriber's own (sub->ud.st), the
 * stream table's (ud_stream.h), recovery's latency histogram (repair.h)
 * and each membership's line counters (mcast_sub.c).
 */
#include <string.h>

#include "pubsub.h"

/*
 * The stats structs may grow at their end: a caller built against an older
 * header passes a smaller size (at least the one of the version that
 * brought the call) and gets that much.
 */
#define SUB_STATS_MIN (offsetof(struct msga_sub_stats, overflow) + 8)
#define LINE_STATS_MIN (offsetof(struct msga_line_stats, behind) + 8)
#define STREAM_STATS_MIN (offsetof(struct msga_stream_stats, reasm_drops) + 8)
/* recovery_hist is repair.h's histogram, bucket for bucket */
_Static_assert(MSGA__REPAIR_HIST_BUCKETS == MSGA_RECOVERY_HIST_BUCKETS,
	       "one recovery latency histogram");

/* The caller's size, at most ours. */
static uint32_t size_for(uint32_t asked, size_t ours)
{
	return asked < ours ? asked : (uint32_t)ours;
}

MSGA_API int msga_sub_stats(const struct msga_sub *sub,
			    struct msga_sub_stats *out)
{
	struct msga__ustream_totals all;
	struct msga_sub_stats st;

	if (!sub || !out || out->size < SUB_STATS_MIN)
		return -EINVAL;
	st = sub->ud.st;
	st.size = size_for(out->size, sizeof(st));
	if (sub->ud.repair_on)
		memcpy(st.recovery_hist, sub->ud.repair.c.hist,
		       sizeof(st.recovery_hist));
	msga__ustreams_totals(&sub->ud.streams, &all);
	st.streams = sub->ud.streams.top;
	st.evicted = sub->ud.streams.evicted;
	st.msgs = all.msgs;
	st.bytes = all.bytes;
	st.gaps = all.gaps;
	st.missing = all.missing;
	st.dups = all.dups;
	st.late = all.late;
	st.reasm_drops = all.reasm_drops;
	st.far_ahead = all.far_ahead;
	st.probation = sub->ud.streams.nprob;
	st.probation_evicted = sub->ud.streams.prob_evicted;
	/* (datagrams came, of no topic the pattern matches) */
	st.unmatched = st.filtered && !st.streams;
	msga__sub_stats_more(sub, &st);
	memcpy(out, &st, st.size);
	return 0;
}

MSGA_API int msga_sub_line_stats(const struct msga_sub *sub, uint32_t conn_id,
				 struct msga_line_stats *out)
{
	struct msga_line_stats st = { .conn_id = conn_id };

	if (!sub || !out || out->size < LINE_STATS_MIN)
		return -EINVAL;
	if (msga__sub_line(sub, conn_id, &st))
		return -ENOENT;
	st.size = size_for(out->size, sizeof(st));
	memcpy(out, &st, st.size);
	return 0;
}

MSGA_API int msga_sub_stream_stats(const struct msga_sub *sub, uint32_t idx,
				   struct msga_stream_stats *out)
{
	const struct msga__ustream *s;
	struct msga_stream_stats st;

	if (!sub || !out || out->size < STREAM_STATS_MIN)
		return -EINVAL;
	s = msga__ustreams_at(&sub->ud.streams, idx);
	if (!s)
		return -ENOENT; /* never used, or evicted */
	msga__ustream_stats(s, &st);
	st.size = size_for(out->size, sizeof(st));
	memcpy(out, &st, st.size);
	return 0;
}
