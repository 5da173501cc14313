/* SPDX-License-Identifier: MIT */
/* ud_stream.c - see ud_stream.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rx_clock.h"
#include "ud_stream.h"

int msga__ustreams_init(struct msga__ustreams *t, uint32_t max,
			uint32_t pmax)
{
	uint32_t all = max + pmax;

	memset(t, 0, sizeof(*t));
	if (!max || pmax > max)
		return -EINVAL;
	t->max = max;
	t->pmax = pmax;
	for (t->index_size = 16; t->index_size < 2 * all; t->index_size *= 2)
		;
	t->streams = calloc(all, sizeof(*t->streams));
	t->index = calloc(t->index_size, sizeof(*t->index));
	t->refused = calloc(t->index_size, sizeof(*t->refused));
	if (!t->streams || !t->index || !t->refused) {
		msga__ustreams_fini(t);
		return -ENOMEM;
	}
	return 0;
}

void msga__ustreams_fini(struct msga__ustreams *t)
{
	free(t->streams);
	free(t->index);
	free(t->refused);
	memset(t, 0, sizeof(*t));
}

static uint64_t stream_hash64(uint64_t origin, const char *topic, uint32_t len)
{
	uint64_t h = 14695981039346656037ull;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (uint8_t)topic[i]) * 1099511628211ull;
	h ^= origin;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ h >> 29;
}

static uint32_t stream_hash(uint64_t origin, const char *topic, uint32_t len)
{
	return (uint32_t)(stream_hash64(origin, topic, len) >> 32);
}

static int same(const struct msga__ustream *s, uint64_t origin,
		const char *topic, uint32_t len)
{
	return s->origin == origin && !memcmp(s->topic, topic, len) &&
	       s->topic[len] == '\0';
}

static struct msga__idx_array lru_array(struct msga__ustreams *t)
{
	return MSGA__IDX_ARRAY(t->streams, lru);
}

/* The list s is on: the verified, or those on probation. */
static struct msga__idx_list *list_of(struct msga__ustreams *t,
				      const struct msga__ustream *s)
{
	return s->verified ? &t->lru : &t->plru;
}

static void lru_unlink(struct msga__ustreams *t, struct msga__ustream *s)
{
	msga__idx_unlink(list_of(t, s), lru_array(t),
			 msga__ustreams_pos(t, s) + 1);
}

static void lru_append(struct msga__ustreams *t, struct msga__ustream *s)
{
	msga__idx_append(list_of(t, s), lru_array(t),
			 msga__ustreams_pos(t, s) + 1);
}

static void touch(struct msga__ustreams *t, struct msga__ustream *s,
		  uint64_t now_ns)
{
	s->last_ns = now_ns;
	if (list_of(t, s)->tail != msga__ustreams_pos(t, s) + 1) {
		lru_unlink(t, s);
		lru_append(t, s);
	}
}

/* Where s's entry sits in the index. */
static uint32_t slot_of(const struct msga__ustreams *t,
			const struct msga__ustream *s)
{
	uint32_t mask = t->index_size - 1, want = msga__ustreams_pos(t, s) + 1;
	uint32_t i = s->hash & mask;

	while (t->index[i] != want)
		i = (i + 1) & mask;
	return i;
}

/*
 * Remove entry i from the index: linear probing's backward shift, which
 * moves up the entries after it that would no longer be found, so lookups
 * stay bounded without tombstones.
 */
static void index_remove(struct msga__ustreams *t, uint32_t i)
{
	uint32_t mask = t->index_size - 1, j = i;

	t->index[i] = 0;
	for (;;) {
		uint32_t home;

		j = (j + 1) & mask;
		if (!t->index[j])
			return;
		home = t->streams[t->index[j] - 1].hash & mask;
		/* j's entry stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		t->index[i] = t->index[j];
		t->index[j] = 0;
		i = j;
	}
}

static void add_totals(struct msga__ustream_totals *g,
		       const struct msga__ustream *s)
{
	g->msgs += s->seq.c.delivered;
	g->bytes += s->bytes;
	g->gaps += s->seq.c.gaps;
	g->missing += s->seq.c.missing;
	g->dups += s->seq.c.dups;
	g->late += s->seq.c.late;
	g->reasm_drops += s->reasm_drops;
	g->far_ahead += s->guard.far_ahead;
}

void msga__ustreams_evict(struct msga__ustreams *t, struct msga__ustream *s)
{
	uint32_t idx = msga__ustreams_pos(t, s);

	if (!s->used)
		return;
	if (t->on_evict)
		t->on_evict(t->evict_arg, idx);
	add_totals(&t->gone, s);
	if (s->verified)
		t->evicted++;
	else
		t->prob_evicted++, t->nprob--;
	index_remove(t, slot_of(t, s));
	lru_unlink(t, s);
	memset(s, 0, sizeof(*s));
	msga__idx_push(&t->free_head, lru_array(t), idx + 1);
	t->n--;
}

void msga__ustreams_retire(struct msga__ustreams *t, struct msga__ustream *s)
{
	s->retired = 1;
	s->silent = 1;
	/* heard at time 0: scans for silence pass over it (ud_stream.h) */
	s->last_ns = 0;
	lru_unlink(t, s);
	msga__idx_prepend(list_of(t, s), lru_array(t),
			  msga__ustreams_pos(t, s) + 1);
}

uint32_t msga__ustreams_evict_conn(struct msga__ustreams *t, uint32_t conn_id)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < t->top; i++)
		if (t->streams[i].used && t->streams[i].conn_id == conn_id) {
			msga__ustreams_evict(t, &t->streams[i]);
			n++;
		}
	return n;
}

/* The oldest verified stream if it may go (idle, or ended), or NULL. */
static struct msga__ustream *evictable(struct msga__ustreams *t,
				       uint64_t now_ns)
{
	struct msga__ustream *oldest;

	if (!t->lru.head)
		return NULL;
	oldest = &t->streams[t->lru.head - 1];
	if (!oldest->retired && (!t->idle_ns ||
	    !msga__time_reached(now_ns, oldest->last_ns + t->idle_ns + 1)))
		return NULL;
	return oldest;
}

/* A verified place: a free one, or the oldest verified stream's if idle. */
static int verified_room(struct msga__ustreams *t, uint64_t now_ns, int take)
{
	struct msga__ustream *oldest;

	if (t->n - t->nprob < t->max)
		return 1;
	oldest = evictable(t, now_ns);
	if (oldest && take)
		msga__ustreams_evict(t, oldest);
	return oldest != NULL;
}

/*
 * Room for one more. Without probation: a verified place. With it: a
 * place on probation (the least recently heard there goes if it is
 * full), if the stream could ever be verified.
 */
static int make_room(struct msga__ustreams *t, uint64_t now_ns)
{
	if (!t->pmax)
		return verified_room(t, now_ns, 1);
	if (!verified_room(t, now_ns, 0))
		return 0;
	if (t->nprob >= t->pmax)
		msga__ustreams_evict(t, &t->streams[t->plru.head - 1]);
	return 1;
}

int msga__ustreams_verify(struct msga__ustreams *t, struct msga__ustream *s,
			  uint64_t now_ns)
{
	if (s->verified)
		return 1;
	if (!verified_room(t, now_ns, 1))
		return 0;
	lru_unlink(t, s);
	t->nprob--;
	s->verified = 1;
	if (s->retired)
		msga__idx_prepend(&t->lru, lru_array(t),
				  msga__ustreams_pos(t, s) + 1);
	else
		lru_append(t, s);
	return 1;
}

static struct msga__ustream *take_index(struct msga__ustreams *t)
{
	uint32_t idx;

	idx = msga__idx_pop(&t->free_head, lru_array(t));
	if (idx)
		idx--;
	else
		idx = t->top++;
	t->n++;
	return &t->streams[idx];
}

struct msga__ustream *msga__ustreams_find(struct msga__ustreams *t,
					  uint64_t origin, const char *topic,
					  uint32_t topic_len)
{
	uint32_t mask = t->index_size - 1, hash, i;

	if (topic_len > MSGA_TOPIC_MAX)
		return NULL;
	hash = stream_hash(origin, topic, topic_len);
	for (i = hash & mask; t->index[i]; i = (i + 1) & mask) {
		struct msga__ustream *s = &t->streams[t->index[i] - 1];

		if (s->hash == hash && same(s, origin, topic, topic_len))
			return s;
	}
	return NULL;
}

struct msga__ustream *msga__ustreams_get(struct msga__ustreams *t,
					 uint64_t origin, const char *topic,
					 uint32_t topic_len, uint32_t conn_id,
					 uint64_t now_ns)
{
	uint32_t mask = t->index_size - 1, hash, i;
	struct msga__ustream *s;

	if (topic_len > MSGA_TOPIC_MAX)
		return NULL;
	s = msga__ustreams_find(t, origin, topic, topic_len);
	if (s) {
		touch(t, s, now_ns);
		return s;
	}
	hash = stream_hash(origin, topic, topic_len);
	if (!make_room(t, now_ns))
		return NULL;
	for (i = hash & mask; t->index[i]; i = (i + 1) & mask)
		; /* an eviction may have moved the free entry */
	s = take_index(t);
	memset(s, 0, sizeof(*s));
	t->index[i] = msga__ustreams_pos(t, s) + 1;
	s->used = 1;
	s->hash = hash;
	s->origin = origin;
	memcpy(s->topic, topic, topic_len);
	s->topic[topic_len] = '\0';
	s->conn_id = conn_id;
	msga__seq_init(&s->seq);
	s->last_ns = now_ns;
	s->verified = !t->pmax;
	t->nprob += !s->verified;
	lru_append(t, s);
	return s;
}

int msga__ustreams_refused_first(struct msga__ustreams *t, uint64_t origin,
				 const char *topic, uint32_t topic_len)
{
	uint64_t h = stream_hash64(origin, topic, topic_len) | 1; /* 0: empty */
	uint64_t *seen = &t->refused[h & (t->index_size - 1)];

	if (*seen == h)
		return 0;
	*seen = h;
	return 1;
}

const struct msga__ustream *msga__ustreams_at(const struct msga__ustreams *t,
					      uint32_t idx)
{
	return idx < t->top && t->streams[idx].used ? &t->streams[idx] : NULL;
}

void msga__ustreams_totals(const struct msga__ustreams *t,
			   struct msga__ustream_totals *all)
{
	*all = t->gone;
	for (uint32_t i = 0; i < t->top; i++)
		if (t->streams[i].used)
			add_totals(all, &t->streams[i]);
}

static uint32_t scan_list(struct msga__ustreams *t, uint32_t pos,
			  uint64_t now_ns, uint64_t min_watch_ns,
			  void (*on_silent)(void *arg, struct msga__ustream *s),
			  void *arg)
{
	uint32_t told = 0;

	while (pos) {
		struct msga__ustream *s = &t->streams[pos - 1];

		if (!msga__time_reached(now_ns, s->last_ns + min_watch_ns))
			break; /* this one and every later one: heard lately */
		pos = s->lru.next;
		if (!s->watch_ns || s->silent ||
		    !msga__time_reached(now_ns, s->last_ns + s->watch_ns))
			continue;
		s->silent = 1;
		told++;
		on_silent(arg, s);
	}
	return told;
}

uint32_t msga__ustreams_scan_silent(struct msga__ustreams *t, uint64_t now_ns,
				    uint64_t min_watch_ns,
				    void (*on_silent)(void *arg,
						      struct msga__ustream *s),
				    void *arg)
{
	/* (on_silent does not evict: the probation list's head stays) */
	return scan_list(t, t->lru.head, now_ns, min_watch_ns, on_silent,
			 arg) +
	       scan_list(t, t->plru.head, now_ns, min_watch_ns, on_silent,
			 arg);
}

static uint64_t next_in(const struct msga__ustreams *t, uint32_t pos,
			uint64_t min_watch_ns, uint64_t next)
{
	for (; pos;) {
		const struct msga__ustream *s = &t->streams[pos - 1];

		if (s->last_ns + min_watch_ns >= next)
			break; /* this one and every later one: no earlier */
		if (s->watch_ns && !s->silent && s->last_ns + s->watch_ns < next)
			next = s->last_ns + s->watch_ns;
		pos = s->lru.next;
	}
	return next;
}

uint64_t msga__ustreams_next_silence(const struct msga__ustreams *t,
				     uint64_t min_watch_ns)
{
	return next_in(t, t->plru.head, min_watch_ns,
		       next_in(t, t->lru.head, min_watch_ns, UINT64_MAX));
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
	st->recovered = s->recovered;
	st->unrecoverable = s->unrecoverable;
	st->reads = s->reads;
	st->naks = s->naks;
	st->far_ahead = s->guard.far_ahead;
	st->verified = (uint64_t)s->verified;
}
