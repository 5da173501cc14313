/* SPDX-License-Identifier: MIT */
/*
 * stat_export.c - a subscriber's counters into its context's live-counters
 * file (lib/core/stat_file.h), for msga_stat -p: on the subscriber's
 * timer tick, at most every MSGA__STAT_INTERVAL_NS, never on the message
 * path. What goes out is what msga_sub_stats(3) and
 * msga_sub_stream_stats(3) return, the public structs as they are: a
 * reader needs no other layout.
 */
#include <stdlib.h>

#include "pubsub.h"
#include "stat_export.h"
#include "stat_file.h"

struct msga__sub_export {
	uint64_t next_ns;
	uint32_t id;
	struct msga__shm_slot *slot;
	struct msga__shm_slot *streams[MSGA_SUB_STREAMS_MAX];
};

static uint32_t export_id(struct msga_ctx *ctx)
{
	return ++ctx->stat_ids;
}

static void export_streams(struct msga_sub *sub, struct msga__sub_export *x,
			   uint32_t n)
{
	for (uint32_t i = 0; i < MSGA_SUB_STREAMS_MAX; i++) {
		struct msga_stream_stats ss = { .size = sizeof(ss) };
		int live = i < n && !msga_sub_stream_stats(sub, i, &ss);

		if (!live) {
			msga__stat_slot_put(sub->ctx, x->streams[i]);
			x->streams[i] = NULL;
			continue;
		}
		if (!x->streams[i])
			x->streams[i] = msga__stat_slot_get(sub->ctx,
							    MSGA__SHM_STREAM,
							    export_id(sub->ctx),
							    x->id, ss.topic);
		if (x->streams[i])
			msga__stat_slot_set(x->streams[i], &ss, sizeof(ss));
	}
}

void msga__sub_export(struct msga_sub *sub, uint64_t now)
{
	struct msga__sub_export *x = sub->exp;
	struct msga_sub_stats st = { .size = sizeof(st) };

	if (!sub->ctx->stat_file || (x && now < x->next_ns))
		return;
	if (!x) {
		x = sub->exp = calloc(1, sizeof(*x));
		if (!x)
			return;
		x->id = export_id(sub->ctx);
	}
	x->next_ns = now + MSGA__STAT_INTERVAL_NS;
	if (!x->slot)
		x->slot = msga__stat_slot_get(sub->ctx, MSGA__SHM_SUB, x->id, 0,
					      sub->pattern);
	if (!x->slot || msga_sub_stats(sub, &st))
		return;
	msga__stat_slot_set(x->slot, &st, sizeof(st));
	export_streams(sub, x, st.streams);
}

void msga__sub_export_free(struct msga_sub *sub)
{
	struct msga__sub_export *x = sub->exp;

	if (!x)
		return;
	for (uint32_t i = 0; i < MSGA_SUB_STREAMS_MAX; i++)
		msga__stat_slot_put(sub->ctx, x->streams[i]);
	msga__stat_slot_put(sub->ctx, x->slot);
	free(x);
	sub->exp = NULL;
}
