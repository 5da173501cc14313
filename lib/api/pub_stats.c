/* SPDX-License-Identifier: MIT */
/*
 * pub_stats.c - msga_pub_stats and msga_pub_conn_stats: a publisher's
 * counters, copied out at the caller's size. The publisher's own are
 * pub->st (counted where the code touches the publisher anyway); what
 * its transport keeps (subscribers, retention, refusals by cause, each
 * subscriber's figures) is read through its table (struct msga__pub_ops
 * stats and conn_stats), so this file names no transport.
 */
#include <string.h>

#include "pubsub.h"

/* The structs may grow at their end: see sub_stats.c. */
#define PUB_STATS_MIN (offsetof(struct msga_pub_stats, spoofed) + 8)
#define CONN_STATS_MIN (offsetof(struct msga_pub_conn_stats, held_ns) + 8)

static uint32_t size_for(uint32_t asked, size_t ours)
{
	return asked < ours ? asked : (uint32_t)ours;
}

MSGA_API int msga_pub_stats(const struct msga_pub *pub,
			    struct msga_pub_stats *out)
{
	struct msga_pub_stats st;

	if (!pub || !out || out->size < PUB_STATS_MIN)
		return -EINVAL;
	st = pub->st;
	st.refused_keys = pub->rejects.keys;
	st.refused_allow = pub->rejects.allow;
	st.refused_limits += pub->rejects.limits;
	st.refused_timeout = pub->rejects.timeouts;
	pub->ops->stats(pub, &st);
	st.size = size_for(out->size, sizeof(st));
	memcpy(out, &st, st.size);
	return 0;
}

MSGA_API int msga_pub_conn_stats(const struct msga_pub *pub, uint32_t idx,
				 struct msga_pub_conn_stats *out)
{
	struct msga_pub_conn_stats st = { 0 };
	int ret;

	if (!pub || !out || out->size < CONN_STATS_MIN)
		return -EINVAL;
	ret = pub->ops->conn_stats(pub, idx, &st);
	if (ret)
		return ret;
	st.size = size_for(out->size, sizeof(st));
	memcpy(out, &st, st.size);
	return 0;
}
