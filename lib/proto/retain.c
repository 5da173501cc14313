/* SPDX-License-Identifier: MIT */
/* retain.c - see retain.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msgaccel.h"
#include "retain.h"

/* Messages start 8-byte aligned behind their header. */
_Static_assert(sizeof(struct msga__retain_rec) == 24, "record header");

/*
 * A topic's records, chained oldest to newest through their headers'
 * next: dropping the ring's oldest record, which is its topic's oldest,
 * tells that topic its new oldest without a search.
 */
struct msga__retain_topic {
	uint64_t last;     /* last seq put, once put_any */
	uint64_t oldest;   /* oldest seq kept, while count */
	uint32_t newest;   /* its newest record, 1 + offset / 8, while count */
	uint32_t count;    /* records kept */
	uint32_t put_any;  /* a seq was put: last holds it */
};

int msga__retain_init(struct msga__retain *r, size_t bytes,
		      uint32_t max_topics)
{
	size_t most, slots = 16;

	memset(r, 0, sizeof(*r));
	bytes &= ~(size_t)7;
	/* offsets are kept as 1 + offset / 8 in 32 bits */
	if (!max_topics || bytes < sizeof(struct msga__retain_rec) ||
	    bytes / 8 > UINT32_MAX)
		return -EINVAL;
	/* every record is at least a header: the most the ring can hold */
	most = bytes / sizeof(struct msga__retain_rec);
	while (slots < 2 * most)
		slots *= 2;
	r->cap = bytes;
	r->wrap = bytes;
	r->max_topics = max_topics;
	r->index_mask = slots - 1;
	r->mem_len = MSGA__RETAIN_CTRL + bytes;
	/* page-aligned: the whole block is registered for remote READ */
	if (posix_memalign((void **)&r->mem, 4096, r->mem_len))
		r->mem = NULL;
	r->ctrl = (struct msga__retain_ctrl *)r->mem;
	r->buf = r->mem ? r->mem + MSGA__RETAIN_CTRL : NULL;
	r->index = calloc(slots, sizeof(*r->index));
	r->topics = calloc(max_topics, sizeof(*r->topics));
	if (!r->buf || !r->index || !r->topics) {
		msga__retain_fini(r);
		return -ENOMEM;
	}
	/*
	 * Touch every page now: put() is on the publisher's hot path, and a
	 * first touch there is a page fault (each record's page, and the
	 * index's random slots), measured at doubling a multicast
	 * ping-pong's latency in the test VM. calloc's zero pages are only
	 * mapped, so they are written too.
	 */
	memset(r->mem, 0, r->mem_len);
	memset(r->index, 0, slots * sizeof(*r->index));
	r->ctrl->cap = bytes;
	return 0;
}

void msga__retain_fini(struct msga__retain *r)
{
	free(r->mem);
	free(r->index);
	free(r->topics);
	memset(r, 0, sizeof(*r));
}

static uint32_t pos_of(size_t off)
{
	return (uint32_t)(off / 8 + 1);
}

static struct msga__retain_rec *rec_at(const struct msga__retain *r,
				       uint32_t pos)
{
	return (struct msga__retain_rec *)(r->buf + (size_t)(pos - 1) * 8);
}

/*
 * A topic's seqs are mostly consecutive, and put() is on the publisher's
 * hot path: a block of 64 consecutive seqs of a topic takes 64
 * consecutive slots (256 bytes), so the index is written a few cache
 * lines and one page per 64 puts, like the ring; hashed slot by slot,
 * each put touched a page of its own. The blocks are hashed apart, so no
 * run of used slots grows past a block for long and a probe stays short.
 */
#define HOME_BLOCK_SHIFT 6

static size_t home(const struct msga__retain *r, uint32_t topic,
		   uint64_t seq)
{
	uint64_t h = (seq >> HOME_BLOCK_SHIFT ^ topic * 0xc2b2ae3d27d4eb4full) *
		     0x9e3779b97f4a7c15ull;

	h ^= h >> 32;
	return (size_t)((h << HOME_BLOCK_SHIFT) +
			(seq & ((1u << HOME_BLOCK_SHIFT) - 1))) & r->index_mask;
}

/* Never full: at most half its slots are used (init). */
static void index_add(struct msga__retain *r, uint32_t topic, uint64_t seq,
		      uint32_t pos)
{
	size_t i = home(r, topic, seq);

	while (r->index[i])
		i = (i + 1) & r->index_mask;
	r->index[i] = pos;
}

/*
 * Remove the record at pos: linear probing's backward shift (as in
 * ud_stream.c), so lookups stay short without tombstones.
 */
static void index_remove(struct msga__retain *r,
			 const struct msga__retain_rec *rec, uint32_t pos)
{
	size_t mask = r->index_mask, i = home(r, rec->topic, rec->seq), j;

	while (r->index[i] != pos)
		i = (i + 1) & mask;
	r->index[i] = 0;
	for (j = i;;) {
		const struct msga__retain_rec *o;
		size_t h;

		j = (j + 1) & mask;
		if (!r->index[j])
			return;
		o = rec_at(r, r->index[j]);
		h = home(r, o->topic, o->seq);
		/* j's entry stays if its home lies cyclically in (i, j] */
		if (i <= j ? (i < h && h <= j) : (i < h || h <= j))
			continue;
		r->index[i] = r->index[j];
		r->index[j] = 0;
		i = j;
	}
}

/* Drop the oldest record; it is its topic's oldest too (FIFO). */
static void drop_oldest(struct msga__retain *r)
{
	struct msga__retain_rec *rec = (void *)(r->buf + r->head);
	struct msga__retain_topic *t = &r->topics[rec->topic];
	size_t sz = msga__retain_rec_size(rec->len);

	index_remove(r, rec, pos_of(r->head));
	if (--t->count)
		t->oldest = rec_at(r, rec->next)->seq;
	r->head += sz;
	r->head_pos += sz;
	r->used -= sz;
	r->nrec--;
	r->dropped++;
	if (r->head == r->wrap) {
		/* the unused end goes with the last record of the lap */
		r->used -= r->cap - r->wrap;
		r->head_pos += r->cap - r->wrap;
		r->head = 0;
		r->wrap = r->cap;
	}
}

/*
 * Readers learn what is being written over before it is: head is stored,
 * then (release fence: the stores after it stay after it) the bytes.
 */
static void publish_head(struct msga__retain *r)
{
	__atomic_store_n(&r->ctrl->head, r->head_pos, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

uint64_t msga__retain_next_pos(const struct msga__retain *r, uint32_t len)
{
	size_t sz = msga__retain_rec_size(len);

	return sz > r->cap - r->tail ? r->tail_pos + (r->cap - r->tail) :
				       r->tail_pos;
}

int msga__retain_put(struct msga__retain *r, uint32_t topic_id, uint64_t seq,
		     const void *data, uint32_t len)
{
	struct msga__retain_topic *t;
	struct msga__retain_rec *rec;
	size_t sz, off, waste = 0;
	uint64_t pos;

	if (topic_id >= r->max_topics)
		return -EINVAL;
	t = &r->topics[topic_id];
	if (t->put_any && seq <= t->last)
		return -EINVAL;
	/* checked before anything is dropped: a refusal changes nothing */
	if (len > MSGA_MSG_MAX)
		return -EMSGSIZE;
	sz = msga__retain_rec_size(len);
	if (sz > r->cap)
		return -EMSGSIZE;
	off = r->tail;
	if (sz > r->cap - off) { /* not before the end: at 0, the end unused */
		waste = r->cap - off;
		off = 0;
	}
	/*
	 * Free space runs from tail to head: the ring is FIFO, so the
	 * records to drop are the oldest until it covers the unused end and
	 * the record. A wrap still pending (head's lap ending before cap)
	 * is always passed by then when this record wraps too.
	 */
	while (r->nrec && r->used + waste + sz > r->cap)
		drop_oldest(r);
	pos = r->tail_pos + waste;
	if (waste >= sizeof(*rec)) { /* a reader walking the ring skips it */
		struct msga__retain_rec skip = {
			.topic = MSGA__RETAIN_SKIP,
			.check = (uint32_t)(r->tail_pos / 8),
		};

		if (!r->nrec)
			r->head_pos = pos;
		publish_head(r);
		memcpy(r->buf + r->tail, &skip, sizeof(skip));
	}
	if (!r->nrec) {
		r->head = off;
		r->head_pos = pos;
		r->used = 0;
		r->wrap = r->cap;
		waste = 0;
	} else if (waste) {
		r->wrap = r->tail;
	}
	publish_head(r);
	rec = (void *)(r->buf + off);
	rec->topic = topic_id;
	rec->len = len;
	rec->seq = seq;
	rec->next = 0;
	rec->check = (uint32_t)(pos / 8);
	if (len)
		memcpy(rec + 1, data, len);
	if (t->count)
		rec_at(r, t->newest)->next = pos_of(off);
	else
		t->oldest = seq;
	t->newest = pos_of(off);
	t->count++;
	t->last = seq;
	t->put_any = 1;
	index_add(r, topic_id, seq, pos_of(off));
	r->tail = off + sz;
	r->tail_pos = pos + sz;
	r->used += waste + sz;
	r->nrec++;
	return 0;
}

int msga__retain_get(const struct msga__retain *r, uint32_t topic_id,
		     uint64_t seq, const void **data, uint32_t *len)
{
	const struct msga__retain_topic *t;

	if (topic_id >= r->max_topics)
		return -EINVAL;
	t = &r->topics[topic_id];
	/* a NAK for what is long gone or not yet sent costs no probe */
	if (!t->count || seq < t->oldest || seq > t->last)
		return -ENOENT;
	for (size_t i = home(r, topic_id, seq); r->index[i];
	     i = (i + 1) & r->index_mask) {
		const struct msga__retain_rec *rec = rec_at(r, r->index[i]);

		if (rec->seq == seq && rec->topic == topic_id) {
			*data = rec + 1;
			*len = rec->len;
			return 0;
		}
	}
	return -ENOENT; /* skipped */
}

int msga__retain_range(const struct msga__retain *r, uint32_t topic_id,
		       uint64_t *oldest, uint64_t *newest)
{
	const struct msga__retain_topic *t;

	*oldest = *newest = 0;
	if (topic_id >= r->max_topics)
		return -EINVAL;
	t = &r->topics[topic_id];
	if (!t->count)
		return 0;
	/* drops take the oldest first: the last put is still kept */
	*oldest = t->oldest;
	*newest = t->last;
	return (int)t->count;
}
