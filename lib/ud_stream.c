/* SPDX-License-Identifier: MIT */
/* ud_stream.c - see ud_stream.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ud_stream.h"

int msga__ustreams_init(struct msga__ustreams *t, uint32_t max)
{
	memset(t, 0, sizeof(*t));
	if (!max)
		return -EINVAL;
	t->max = max;
	for (t->index_size = 16; t->index_size < 2 * max; t->index_size *= 2)
		;
	t->streams = calloc(max, sizeof(*t->streams));
	t->index = calloc(t->index_size, sizeof(*t->index));
	if (!t->streams || !t->index) {
		msga__ustreams_fini(t);
		return -ENOMEM;
	}
	return 0;
}

void msga__ustreams_fini(struct msga__ustreams *t)
{
	free(t->streams);
	free(t->index);
	memset(t, 0, sizeof(*t));
}

static uint32_t stream_hash(uint64_t origin, const char *topic, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)topic[i]) * 16777619u;
	h ^= (uint32_t)origin ^ (uint32_t)(origin >> 32);
	return h * 2654435761u;
}

static int same(const struct msga__ustream *s, uint64_t origin,
		const char *topic, uint32_t len)
{
	return s->origin == origin && !memcmp(s->topic, topic, len) &&
	       s->topic[len] == '\0';
}

struct msga__ustream *msga__ustreams_get(struct msga__ustreams *t,
					 uint64_t origin, const char *topic,
					 uint32_t topic_len, uint32_t conn_id)
{
	uint32_t mask = t->index_size - 1;
	uint32_t i = stream_hash(origin, topic, topic_len) & mask;
	struct msga__ustream *s;

	if (topic_len > MSGA_TOPIC_MAX)
		return NULL;
	for (; t->index[i]; i = (i + 1) & mask) {
		s = &t->streams[t->index[i] - 1];
		if (same(s, origin, topic, topic_len))
			return s;
	}
	if (t->n == t->max)
		return NULL;
	s = &t->streams[t->n++];
	t->index[i] = t->n;
	s->origin = origin;
	memcpy(s->topic, topic, topic_len);
	s->topic[topic_len] = '\0';
	s->conn_id = conn_id;
	msga__seq_init(&s->seq);
	return s;
}

void msga__ustream_stats(const struct msga__ustream *s,
			 struct msga_stream_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	st->conn_id = s->conn_id;
	memcpy(st->topic, s->topic, sizeof(st->topic));
	st->origin = s->origin;
	st->first_seq = s->seq.first;
	st->last_seq = s->last_seq;
	st->msgs = s->seq.c.delivered;
	st->bytes = s->bytes;
	st->gaps = s->seq.c.gaps;
	st->missing = s->seq.c.missing;
	st->dups = s->seq.c.dups;
	st->late = s->seq.c.late;
	st->reasm_drops = s->reasm_drops;
}
