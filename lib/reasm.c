/* SPDX-License-Identifier: MIT */
/* reasm.c - see reasm.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reasm.h"
#include "rx_clock.h"

enum slot_state { SLOT_FREE, SLOT_FILLING, SLOT_DONE };

struct msga__reasm_slot {
	enum slot_state state;
	uint64_t stream, msg_seq, started_ns; /* last fragment's time */
	uint32_t total_len, got_len, frag_size;
	uint8_t *buf;
	uint64_t *have;      /* one bit per fragment */
};

static uint32_t max_frags(const struct msga__reasm *r)
{
	return (r->max_msg + r->frag_size - 1) / r->frag_size;
}

static size_t have_words(const struct msga__reasm *r)
{
	return (max_frags(r) + 63) / 64;
}

int msga__reasm_init(struct msga__reasm *r, unsigned int nslots,
		     uint32_t max_msg, uint32_t frag_size, uint64_t timeout_ns)
{
	memset(r, 0, sizeof(*r));
	if (!nslots || !max_msg || !frag_size || frag_size > max_msg ||
	    !timeout_ns)
		return -EINVAL;
	r->nslots = nslots;
	r->max_msg = max_msg;
	r->frag_size = frag_size;
	r->timeout_ns = timeout_ns;
	r->slots = calloc(nslots, sizeof(*r->slots));
	if (!r->slots)
		return -ENOMEM;
	for (unsigned int i = 0; i < nslots; i++) {
		r->slots[i].buf = malloc(max_msg);
		r->slots[i].have = calloc(have_words(r), sizeof(uint64_t));
		if (!r->slots[i].buf || !r->slots[i].have) {
			msga__reasm_fini(r);
			return -ENOMEM;
		}
	}
	return 0;
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

static void slot_reset(struct msga__reasm *r, struct msga__reasm_slot *s)
{
	if (s->state == SLOT_FILLING && r->on_drop)
		r->on_drop(r->drop_arg, s->stream);
	s->state = SLOT_FREE;
	s->got_len = 0;
	memset(s->have, 0, have_words(r) * sizeof(uint64_t));
}

/* The slot of (stream, msg_seq), or a free one, or the oldest evicted. */
static struct msga__reasm_slot *slot_for(struct msga__reasm *r,
					 const struct msga__frag *f,
					 uint64_t now_ns)
{
	struct msga__reasm_slot *free_slot = NULL, *oldest = NULL;

	for (unsigned int i = 0; i < r->nslots; i++) {
		struct msga__reasm_slot *s = &r->slots[i];

		if (s->state == SLOT_FILLING && s->stream == f->stream &&
		    s->msg_seq == f->msg_seq)
			return s;
		if (s->state == SLOT_FREE && !free_slot)
			free_slot = s;
		if (s->state == SLOT_FILLING &&
		    (!oldest || s->started_ns < oldest->started_ns))
			oldest = s;
	}
	if (!free_slot) {
		if (!oldest)
			return NULL; /* every slot holds a completed message */
		r->c.dropped_evicted++;
		slot_reset(r, oldest);
		free_slot = oldest;
	}
	free_slot->state = SLOT_FILLING;
	free_slot->stream = f->stream;
	free_slot->msg_seq = f->msg_seq;
	free_slot->total_len = f->total_len;
	free_slot->frag_size = f->frag_size ? f->frag_size : r->frag_size;
	free_slot->started_ns = now_ns;
	return free_slot;
}

/* Fragment geometry: every fragment but the last is frag_size long. */
static uint32_t frag_size_of(const struct msga__reasm *r,
			     const struct msga__frag *f)
{
	return f->frag_size ? f->frag_size : r->frag_size;
}

static int frag_valid(const struct msga__reasm *r, const struct msga__frag *f)
{
	uint32_t fs = frag_size_of(r, f), last_len;

	if (!f->total_len || f->total_len > r->max_msg || !f->len ||
	    fs < r->frag_size || f->offset % fs || f->offset >= f->total_len)
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
	if (!s) {
		r->c.dropped_evicted++; /* all slots await release */
		return 0;
	}
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
	s->started_ns = now_ns; /* the timeout counts from the last fragment */
	memcpy(s->buf + f->offset, f->data, f->len);
	s->got_len += f->len;
	if (s->got_len < s->total_len)
		return 0;
	s->state = SLOT_DONE;
	r->c.completed++;
	*msg = s->buf;
	*len = s->total_len;
	return 1;
}

void msga__reasm_release(struct msga__reasm *r, const void *msg)
{
	for (unsigned int i = 0; i < r->nslots; i++)
		if (r->slots[i].buf == msg && r->slots[i].state == SLOT_DONE)
			slot_reset(r, &r->slots[i]);
}

/* The first ns at which a filling slot is stale. */
static uint64_t stale_at(const struct msga__reasm *r,
			 const struct msga__reasm_slot *s)
{
	return s->started_ns + r->timeout_ns + 1;
}

unsigned int msga__reasm_expire(struct msga__reasm *r, uint64_t now_ns)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nslots; i++) {
		struct msga__reasm_slot *s = &r->slots[i];

		if (s->state == SLOT_FILLING &&
		    msga__time_reached(now_ns, stale_at(r, s))) {
			slot_reset(r, s);
			n++;
		}
	}
	r->c.dropped_timeout += n;
	return n;
}

unsigned int msga__reasm_pending(const struct msga__reasm *r)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < r->nslots; i++)
		n += r->slots[i].state == SLOT_FILLING;
	return n;
}

uint64_t msga__reasm_next_expiry(const struct msga__reasm *r)
{
	uint64_t next = UINT64_MAX;

	for (unsigned int i = 0; i < r->nslots; i++) {
		const struct msga__reasm_slot *s = &r->slots[i];

		if (s->state == SLOT_FILLING && stale_at(r, s) < next)
			next = stale_at(r, s);
	}
	return next;
}
