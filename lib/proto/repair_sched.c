/* SPDX-License-Identifier: MIT */
/* repair_sched.c - see repair_sched.h (the design, and why, is there). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "repair_sched.h"

#define TABLE_MAX (1u << 20)

int msga__rsched_init(struct msga__rsched *s, const struct msga__rsched_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	if (cfg->chunk_max <= cfg->overlap || !cfg->max_inflight ||
	    cfg->max_regions <= cfg->max_inflight ||
	    cfg->max_regions >= TABLE_MAX)
		return -EINVAL;
	s->cfg = *cfg;
	/* one above max_regions: an insert first, then a merge for room */
	s->reg = calloc((size_t)cfg->max_regions + 1, sizeof(*s->reg));
	s->ch = calloc(cfg->max_inflight, sizeof(*s->ch));
	if (!s->reg || !s->ch) {
		msga__rsched_fini(s);
		return -ENOMEM;
	}
	return 0;
}

void msga__rsched_fini(struct msga__rsched *s)
{
	free(s->reg);
	free(s->ch);
	memset(s, 0, sizeof(*s));
}

/* Not started: no chunk of it handed out yet, so its lo may still move. */
static int idle(const struct msga__rsched_region *r)
{
	return !r->out && r->next == r->lo;
}

static void reg_remove(struct msga__rsched *s, uint32_t i)
{
	memmove(&s->reg[i], &s->reg[i + 1],
		(s->nreg - i - 1) * sizeof(*s->reg));
	s->nreg--;
}

static uint32_t new_gen(struct msga__rsched *s)
{
	if (!++s->next_gen) /* 0 marks a free chunk slot */
		s->next_gen = 1;
	return s->next_gen;
}

/*
 * Over max_regions: merge the pair of neighbours with the smallest hole
 * whose upper one has no chunk out (the lower may be started: growing
 * its hi only adds chunks after its own). The hole, and what the upper
 * one had read already, is read again for nothing (repair drops numbers
 * it has): that costs bytes, where evicting a span, as before, cost a
 * whole NAK. At most max_inflight regions have a chunk out, and the
 * table holds more, so there is always such a pair.
 */
static int make_room(struct msga__rsched *s)
{
	uint64_t best = UINT64_MAX;
	uint32_t at = 0;

	if (s->nreg <= s->cfg.max_regions)
		return 0;
	for (uint32_t i = 0; i + 1 < s->nreg; i++) {
		uint64_t hole = s->reg[i + 1].lo - s->reg[i].hi;

		if (!s->reg[i + 1].out && hole < best) {
			best = hole;
			at = i + 1;
		}
	}
	if (best == UINT64_MAX)
		return -ENOSPC;
	s->reg[at - 1].hi = s->reg[at].hi;
	reg_remove(s, at);
	s->merged++;
	return 0;
}

/* [lo, hi), overlapping no region, goes in at its place, merged if touching. */
static int insert(struct msga__rsched *s, uint64_t lo, uint64_t hi)
{
	uint32_t i = 0;

	while (i < s->nreg && s->reg[i].lo < lo)
		i++;
	if (i > 0 && s->reg[i - 1].hi == lo) {
		s->reg[i - 1].hi = hi;
		if (i < s->nreg && s->reg[i].lo == hi && idle(&s->reg[i])) {
			s->reg[i - 1].hi = s->reg[i].hi;
			reg_remove(s, i);
		}
		return 0;
	}
	if (i < s->nreg && s->reg[i].lo == hi && idle(&s->reg[i])) {
		s->reg[i].lo = s->reg[i].next = s->reg[i].walk = lo;
		return 0;
	}
	memmove(&s->reg[i + 1], &s->reg[i], (s->nreg - i) * sizeof(*s->reg));
	s->reg[i] = (struct msga__rsched_region){ .lo = lo, .hi = hi,
		.next = lo, .walk = lo, .gen = new_gen(s) };
	s->nreg++;
	return make_room(s);
}

int msga__rsched_add(struct msga__rsched *s, uint64_t lo, uint64_t hi)
{
	uint64_t cur = lo;

	if (lo >= hi)
		return -EINVAL;
	/* only what no region covers: a region being read reads it already */
	while (cur < hi) {
		uint32_t i = 0;
		int ret;

		while (i < s->nreg && s->reg[i].hi <= cur)
			i++;
		if (i == s->nreg || s->reg[i].lo >= hi)
			return insert(s, cur, hi);
		if (s->reg[i].lo > cur) {
			uint64_t end = s->reg[i].lo, after = s->reg[i].hi;

			ret = insert(s, cur, end);
			if (ret)
				return ret;
			cur = after;
		} else {
			cur = s->reg[i].hi;
		}
	}
	return 0;
}

int msga__rsched_next(struct msga__rsched *s, uint32_t *id, uint64_t *lo,
		      uint64_t *hi)
{
	struct msga__rsched_region *r = NULL;
	uint32_t slot = 0;

	if (s->inflight >= s->cfg.max_inflight)
		return 0;
	/* the lowest ring position first: the oldest records, awaited first */
	for (uint32_t i = 0; i < s->nreg && !r; i++)
		if (s->reg[i].next < s->reg[i].hi)
			r = &s->reg[i];
	if (!r)
		return 0;
	while (s->ch[slot].gen)
		slot++;
	*lo = r->next;
	*hi = r->hi - r->next > s->cfg.chunk_max ? r->next + s->cfg.chunk_max :
						     r->hi;
	/* a record not ending in this chunk starts in the overlap: see .h */
	r->next = *hi < r->hi ? *hi - s->cfg.overlap : r->hi;
	s->ch[slot] = (struct msga__rsched_chunk){ .lo = *lo, .hi = *hi,
		.gen = r->gen, .first = *lo == r->lo };
	r->out++;
	s->inflight++;
	*id = slot;
	return 1;
}

static struct msga__rsched_region *region_of(const struct msga__rsched *s,
					     uint32_t gen)
{
	for (uint32_t i = 0; i < s->nreg; i++)
		if (s->reg[i].gen == gen)
			return &s->reg[i];
	return NULL;
}

static const struct msga__rsched_chunk *chunk_out(const struct msga__rsched *s,
						  uint32_t id)
{
	return id < s->cfg.max_inflight && s->ch[id].gen ? &s->ch[id] : NULL;
}

int msga__rsched_walk_from(const struct msga__rsched *s, uint32_t id,
			   uint64_t *from)
{
	const struct msga__rsched_chunk *c = chunk_out(s, id);
	const struct msga__rsched_region *r;

	if (!c)
		return -EINVAL;
	r = region_of(s, c->gen);
	if (!r)
		return -ENOENT; /* dropped, or started again: nothing to walk */
	for (uint32_t i = 0; i < s->cfg.max_inflight; i++)
		if (i != id && s->ch[i].gen == c->gen && s->ch[i].lo < c->lo)
			return -EAGAIN;
	if (r->walk < c->lo || r->walk > c->hi)
		return -ESPIPE;
	*from = r->walk;
	return 0;
}

static void chunk_free(struct msga__rsched *s, uint32_t id,
		       struct msga__rsched_region *r)
{
	s->ch[id].gen = 0;
	s->inflight--;
	if (r)
		r->out--;
}

int msga__rsched_done(struct msga__rsched *s, uint32_t id, uint64_t stopped)
{
	const struct msga__rsched_chunk *c = chunk_out(s, id);
	struct msga__rsched_region *r;
	uint64_t from;

	if (!c)
		return -EINVAL;
	r = region_of(s, c->gen);
	if (!r) {
		chunk_free(s, id, NULL);
		return 0;
	}
	if (msga__rsched_walk_from(s, id, &from) || stopped < from ||
	    stopped > c->hi)
		return -EINVAL;
	r->walk = stopped;
	chunk_free(s, id, r);
	if (!r->out && r->next == r->hi) {
		reg_remove(s, (uint32_t)(r - s->reg));
		return 1;
	}
	return 0;
}

int msga__rsched_fail(struct msga__rsched *s, uint32_t id)
{
	const struct msga__rsched_chunk *c = chunk_out(s, id);
	struct msga__rsched_region *r;

	if (!c)
		return -EINVAL;
	r = region_of(s, c->gen);
	chunk_free(s, id, r);
	if (r) {
		/* its other chunks, still out, find no region when done */
		s->dropped += r->hi - r->walk;
		reg_remove(s, (uint32_t)(r - s->reg));
	}
	return 0;
}

void msga__rsched_retained(struct msga__rsched *s, uint64_t oldest)
{
	uint32_t i = 0;

	while (i < s->nreg && s->reg[i].lo < oldest) {
		struct msga__rsched_region *r = &s->reg[i];

		if (r->hi <= oldest) { /* all of it is gone */
			s->dropped += r->hi - r->walk;
			reg_remove(s, i);
			continue;
		}
		if (r->walk < oldest) {
			/*
			 * oldest is a record's start: the walk may begin there.
			 * A chunk out of it below oldest is torn, and so would
			 * the walks after it be: the region starts afresh (a new
			 * gen: those chunks find no region when they complete).
			 */
			s->dropped += oldest - r->walk;
			if (!idle(r))
				r->gen = new_gen(s);
			r->lo = r->next = r->walk = oldest;
			r->out = 0;
		} else {
			/*
			 * Walked past it already: untorn. The next chunk starts
			 * an overlap before the last one ended, which may lie
			 * below oldest: it starts at oldest instead, still at
			 * or below the walk (a record start) that it must hold.
			 */
			r->lo = oldest;
			if (r->next < oldest)
				r->next = oldest;
		}
		i++;
	}
}

uint64_t msga__rsched_low(const struct msga__rsched *s)
{
	/* sorted and disjoint: the first region's walk is the lowest */
	return s->nreg ? s->reg[0].walk : UINT64_MAX;
}

void msga__rsched_clear(struct msga__rsched *s)
{
	for (uint32_t i = 0; i < s->nreg; i++)
		s->dropped += s->reg[i].hi - s->reg[i].walk;
	s->nreg = 0;
	memset(s->ch, 0, (size_t)s->cfg.max_inflight * sizeof(*s->ch));
	s->inflight = 0;
}

uint64_t msga__rsched_pending(const struct msga__rsched *s)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->nreg; i++)
		n += s->reg[i].hi - s->reg[i].next;
	return n;
}

int64_t msga__rsched_share(uint32_t n, const uint64_t *want, uint64_t budget,
			   uint32_t start, uint64_t *grant)
{
	uint64_t left = budget;
	uint32_t open = 0;

	if (!n || start >= n || budget > INT64_MAX)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		grant[i] = 0;
		open += want[i] > 0;
	}
	/* equal levels until the rest is less than one each */
	while (open && left >= open) {
		uint64_t level = left / open;

		open = 0;
		for (uint32_t i = 0; i < n; i++) {
			uint64_t more = want[i] - grant[i];

			if (!more)
				continue;
			more = more < level ? more : level;
			grant[i] += more;
			left -= more;
			open += grant[i] < want[i];
		}
	}
	/* the rest, one each, from a start that the caller rotates */
	for (uint32_t k = 0; k < n && left; k++) {
		uint32_t i = (start + k) % n;

		if (grant[i] < want[i]) {
			grant[i]++;
			left--;
		}
	}
	return (int64_t)(budget - left);
}

enum msga__rsched_verdict msga__rsched_give_up(
		const struct msga__rsched_giveup *g, uint64_t seq,
		uint64_t opened_ns, uint64_t progress_ns,
		uint64_t retained_first, uint64_t now_ns)
{
	uint64_t since = progress_ns > opened_ns ? progress_ns : opened_ns;

	if (retained_first && seq < retained_first)
		return MSGA__RSCHED_GONE;
	if (g->bound_ns && now_ns >= opened_ns &&
	    now_ns - opened_ns >= g->bound_ns)
		return MSGA__RSCHED_BOUND;
	if (now_ns >= since && now_ns - since >= g->stall_ns)
		return MSGA__RSCHED_STALLED;
	return MSGA__RSCHED_KEEP;
}
