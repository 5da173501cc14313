/* SPDX-License-Identifier: MIT */
/* reasm.c - see reasm.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reasm.h"
#include "rx_clock.h"

enum slot_state {
	SLOT_FREE,
	SLOT_FILLING,
	SLOT_DONE,      /* complete, until released */
	SLOT_REFUSED,   /* msg_seq was over budget: its fragments are ignored */
};

/* A stream's message in reassembly. */
struct msga__reasm_slot {
	enum slot_state state;
	uint64_t msg_seq, last_ns;   /* last fragment's time */
	uint32_t total_len, got_len, frag_size;
	struct msga__idx_link lru;   /* FILLING: on r->lru */
	uint64_t bytes;              /* of buf and have, against the budget */
	uint8_t *buf;
	uint64_t *have;              /* one bit per fragment */
};

int msga__reasm_init(struct msga__reasm *r, unsigned int nstreams,
		     uint32_t max_msg, uint32_t frag_size, uint64_t timeout_ns)
{
	memset(r, 0, sizeof(*r));
	if (!nstreams || !max_msg || !frag_size || frag_size > max_msg ||
	    !timeout_ns)
		return -EINVAL;
	r->nslots = nstreams;
	r->max_msg = max_msg;
	r->frag_size = frag_size;
	r->timeout_ns = timeout_ns;
	r->budget = MSGA__REASM_BUDGET_DEFAULT;
	r->slots = calloc(nstreams, sizeof(*r->slots));
	return r->slots ? 0 : -ENOMEM;
}

void msga__reasm_fini(struct msga__reasm *r)
{
	for (unsigned int i = 0; r->slots && i < r->nslots; i++) {
		free(r->slots[i].buf);
		free(r->slots[i].have);
	}
	free(r->slots);
	r->slots = NULL;
	r->nslots = 0;
}

static uint32_t index_of(const struct msga__reasm *r,
			 const struct msga__reasm_slot *s)
{
	return (uint32_t)(s - r->slots);
}

static void lru_unlink(struct msga__reasm *r, struct msga__reasm_slot *s)
{
	msga__idx_unlink(&r->lru, MSGA__IDX_ARRAY(r->slots, lru),
			 index_of(r, s) + 1);
}

/* s got a fragment: it is now the most recently fed. */
static void lru_append(struct msga__reasm *r, struct msga__reasm_slot *s)
{
	msga__idx_append(&r->lru, MSGA__IDX_ARRAY(r->slots, lru),
			 index_of(r, s) + 1);
}

/* Free s's buffer; a message dropped incomplete is told to on_drop. */
static void slot_reset(struct msga__reasm *r, struct msga__reasm_slot *s)
{
	if (s->state == SLOT_FILLING) {
		lru_unlink(r, s);
		r->pending--;
		if (r->on_drop)
			r->on_drop(r->drop_arg, index_of(r, s));
	}
	free(s->buf);
	free(s->have);
	s->buf = NULL;
	s->have = NULL;
	r->used -= s->bytes;
	s->bytes = 0;
	s->got_len = 0;
	s->state = SLOT_FREE;
}

/* Fragment geometry: every fragment but the last is frag_size long. */
static uint32_t frag_size_of(const struct msga__reasm *r,
			     const struct msga__frag *f)
{
	return f->frag_size ? f->frag_size : r->frag_size;
}

/*
 * Begin f's message in s, within the budget. 0, or -ENOBUFS when it does
 * not fit (s is then REFUSED for it, so the drop is counted once).
 */
static int slot_start(struct msga__reasm *r, struct msga__reasm_slot *s,
		      const struct msga__frag *f, uint64_t now_ns)
{
	uint32_t fs = frag_size_of(r, f);
	size_t words = ((f->total_len + fs - 1) / fs + 63) / 64;
	uint64_t bytes = f->total_len + words * sizeof(uint64_t);

	s->msg_seq = f->msg_seq;
	if (bytes > r->budget - r->used ||
	    !(s->buf = malloc(f->total_len)) ||
	    !(s->have = calloc(words, sizeof(uint64_t)))) {
		free(s->buf);
		s->buf = NULL;
		s->state = SLOT_REFUSED;
		r->c.dropped_budget++;
		if (r->on_drop)
			r->on_drop(r->drop_arg, index_of(r, s));
		return -ENOBUFS;
	}
	s->bytes = bytes;
	r->used += bytes;
	s->state = SLOT_FILLING;
	s->total_len = f->total_len;
	s->frag_size = fs;
	s->last_ns = now_ns;
	r->pending++;
	lru_append(r, s);
	return 0;
}

/*
 * The slot that takes f, or NULL when f is to be ignored: a stream's newer
 * message replaces its older incomplete one, never the other way round.
 */
static struct msga__reasm_slot *slot_for(struct msga__reasm *r,
					 const struct msga__frag *f,
					 uint64_t now_ns)
{
	struct msga__reasm_slot *s = &r->slots[f->stream];

	switch (s->state) {
	case SLOT_FILLING:
		if (f->msg_seq == s->msg_seq)
			return s;
		if (f->msg_seq < s->msg_seq) {
			r->c.stale_fragments++;
			return NULL;
		}
		r->c.dropped_evicted++;
		slot_reset(r, s);
		break;
	case SLOT_REFUSED:
		if (f->msg_seq == s->msg_seq)
			return NULL;
		slot_reset(r, s);
		break;
	case SLOT_DONE: /* a new fragment while the last one is delivered */
		r->c.dropped_evicted++;
		return NULL;
	case SLOT_FREE:
		break;
	}
	return slot_start(r, s, f, now_ns) ? NULL : s;
}

static int frag_valid(const struct msga__reasm *r, const struct msga__frag *f)
{
	uint32_t fs = frag_size_of(r, f), last_len;

	if (f->stream >= r->nslots || !f->total_len ||
	    f->total_len > r->max_msg || !f->len || fs < r->frag_size ||
	    f->offset % fs || f->offset >= f->total_len)
		return 0;
	last_len = f->total_len - f->offset < fs ? f->total_len - f->offset :
						   fs;
	return f->len == last_len;
}

int msga__reasm_add(struct msga__reasm *r, const struct msga__frag *f,
		    uint64_t now_ns, const void **msg, uint32_t *len)
{
	struct msga__reasm_slot *s;
	uint32_t idx;

	if (!frag_valid(r, f)) {
		r->c.dropped_invalid++;
		return -EINVAL;
	}
	s = slot_for(r, f, now_ns);
	if (!s)
		return 0;
	if (s->total_len != f->total_len || s->frag_size != frag_size_of(r, f)) {
		r->c.dropped_invalid++;
		slot_reset(r, s);
		return -EINVAL;
	}
	idx = f->offset / s->frag_size;
	if (s->have[idx / 64] & (1ull << (idx % 64))) {
		r->c.dup_fragments++;
		return 0;
	}
	s->have[idx / 64] |= 1ull << (idx % 64);
	s->last_ns = now_ns; /* the timeout counts from the last fragment */
	lru_unlink(r, s);
	lru_append(r, s);
	memcpy(s->buf + f->offset, f->data, f->len);
	s->got_len += f->len;
	if (s->got_len < s->total_len)
		return 0;
	lru_unlink(r, s);
	r->pending--;
	s->state = SLOT_DONE;
	r->c.completed++;
	*msg = s->buf;
	*len = s->total_len;
	return 1;
}

/* Walks the streams: once per completed message, which took 2 datagrams. */
void msga__reasm_release(struct msga__reasm *r, const void *msg)
{
	for (unsigned int i = 0; msg && i < r->nslots; i++)
		if (r->slots[i].buf == msg && r->slots[i].state == SLOT_DONE) {
			slot_reset(r, &r->slots[i]);
			return;
		}
}

void msga__reasm_forget(struct msga__reasm *r, uint64_t stream)
{
	struct msga__reasm_slot *s;

	if (stream >= r->nslots)
		return;
	s = &r->slots[stream];
	if (s->state == SLOT_FILLING)
		r->c.dropped_evicted++;
	if (s->state != SLOT_DONE) /* a message being delivered stays */
		slot_reset(r, s);
}

/* The first ns at which a filling slot is stale. */
static uint64_t stale_at(const struct msga__reasm *r,
			 const struct msga__reasm_slot *s)
{
	return s->last_ns + r->timeout_ns + 1;
}

/* The oldest filling slots come first: stop at the first one not stale. */
unsigned int msga__reasm_expire(struct msga__reasm *r, uint64_t now_ns)
{
	unsigned int n = 0;

	while (r->lru.head) {
		struct msga__reasm_slot *s = &r->slots[r->lru.head - 1];

		if (!msga__time_reached(now_ns, stale_at(r, s)))
			break;
		slot_reset(r, s);
		n++;
	}
	r->c.dropped_timeout += n;
	return n;
}

unsigned int msga__reasm_pending(const struct msga__reasm *r)
{
	return r->pending;
}

uint64_t msga__reasm_next_expiry(const struct msga__reasm *r)
{
	return r->lru.head ? stale_at(r, &r->slots[r->lru.head - 1]) :
			     UINT64_MAX;
}
