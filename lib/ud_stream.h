/* SPDX-License-Identifier: MIT */
/*
 * ud_stream.h - a subscriber's table of multicast streams. A stream is one
 * publisher's (origin id) one topic; each has its sequence tracker and its
 * counters. Open addressing over a fixed array, so a lookup on the receive
 * path costs a hash and usually one compare, and memory is bounded. Pure
 * logic: no verbs.
 */
#ifndef MSGA_UD_STREAM_H
#define MSGA_UD_STREAM_H

#include <stdint.h>

#include "msgaccel.h"
#include "seqtrack.h"

struct msga__ustream {
	uint64_t origin;
	char topic[MSGA_TOPIC_MAX + 1];
	uint32_t conn_id;
	uint64_t bytes;
	uint64_t reasm_drops;
	uint64_t last_seq;
	struct msga__seqtrack seq;
};

struct msga__ustreams {
	struct msga__ustream *streams;  /* in order of arrival */
	uint32_t n;
	uint32_t *index;                /* hash -> 1 + position, 0 = empty */
	uint32_t index_size;            /* a power of two, >= 2 * max */
	uint32_t max;
};

int msga__ustreams_init(struct msga__ustreams *t, uint32_t max);
void msga__ustreams_fini(struct msga__ustreams *t);
/*
 * The stream of (origin, topic[0, topic_len)), added if new. NULL when it
 * is new and the table is full.
 */
struct msga__ustream *msga__ustreams_get(struct msga__ustreams *t,
					 uint64_t origin, const char *topic,
					 uint32_t topic_len, uint32_t conn_id);
/* Position of s in arrival order (its msga_stream_stats index). */
static inline uint32_t msga__ustreams_pos(const struct msga__ustreams *t,
					  const struct msga__ustream *s)
{
	return (uint32_t)(s - t->streams);
}

void msga__ustream_stats(const struct msga__ustream *s,
			 struct msga_stream_stats *st);

#endif
