/* SPDX-License-Identifier: MIT */
/* repair.c - see repair.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "repair.h"
#include "repair_sched.h"

/*
 * The pool: a binary buddy allocator over one arena of 64-byte units. A
 * block of order k is 64 << k bytes at a unit index that is a multiple of
 * 1 << k; its buddy is the one its index differs from in bit k. The map
 * has a byte per unit, non-zero only at a block's first unit: its order,
 * and whether it is free or in use. Free blocks of each order are a list
 * threaded through their own first bytes.
 */
#define UNIT_SHIFT 6
#define MAP_FREE 0x80
#define MAP_USED 0x40
#define MAP_ORDER 0x3f
#define MAX_UNITS (1u << 31) /* 128 GiB: pos and counts stay 32-bit */

struct free_link {
	uint32_t prev, next;
};

static void *block_at(const struct msga__repair *r, uint32_t pos)
{
	return r->arena + ((size_t)(pos - 1) << UNIT_SHIFT);
}

static struct free_link *free_link(const struct msga__repair *r, uint32_t pos)
{
	return block_at(r, pos);
}

static struct msga__repair_held *held_at(const struct msga__repair *r,
					 uint32_t pos)
{
	return block_at(r, pos);
}

static uint64_t block_bytes(const struct msga__repair *r, uint32_t pos)
{
	return 64ull << (r->map[pos - 1] & MAP_ORDER);
}

static void free_push(struct msga__repair *r, uint32_t pos, unsigned int k)
{
	struct free_link *l = free_link(r, pos);

	l->prev = 0;
	l->next = r->free_head[k];
	if (l->next)
		free_link(r, l->next)->prev = pos;
	r->free_head[k] = pos;
	r->map[pos - 1] = (uint8_t)(MAP_FREE | k);
}

static void free_unlink(struct msga__repair *r, uint32_t pos, unsigned int k)
{
	struct free_link *l = free_link(r, pos);

	if (l->prev)
		free_link(r, l->prev)->next = l->next;
	else
		r->free_head[k] = l->next;
	if (l->next)
		free_link(r, l->next)->prev = l->prev;
	r->map[pos - 1] = 0;
}

/* The order of the block a copy of len bytes needs. */
static unsigned int order_of(uint32_t len)
{
	uint64_t units = (sizeof(struct msga__repair_held) + (uint64_t)len +
			  63) >> UNIT_SHIFT;
	unsigned int k = 0;

	while ((1ull << k) < units)
		k++;
	return k;
}

/* A block of order k: its pos, or 0 when none is free. */
static uint32_t pool_alloc(struct msga__repair *r, unsigned int k)
{
	unsigned int j = k;
	uint32_t pos;

	while (j <= r->max_order && !r->free_head[j])
		j++;
	if (j > r->max_order)
		return 0;
	pos = r->free_head[j];
	free_unlink(r, pos, j);
	while (j > k) { /* keep the lower half, free the upper */
		j--;
		free_push(r, pos + (1u << j), j);
	}
	r->map[pos - 1] = (uint8_t)(MAP_USED | k);
	r->free_bytes -= (size_t)64 << k;
	return pos;
}

/* Give a block back, merged with its free buddies. */
static void pool_free(struct msga__repair *r, uint32_t pos)
{
	unsigned int k = r->map[pos - 1] & MAP_ORDER;
	uint32_t i = pos - 1;

	r->free_bytes += (size_t)64 << k;
	r->map[i] = 0;
	while (k < r->max_order) {
		uint32_t b = i ^ (1u << k);

		if ((uint64_t)b + (1u << k) > r->nunits ||
		    r->map[b] != (MAP_FREE | k))
			break;
		free_unlink(r, b + 1, k);
		i &= ~(1u << k);
		k++;
	}
	free_push(r, i + 1, k);
}

/* Cut the arena into the largest aligned blocks, from its start. */
static void pool_carve(struct msga__repair *r)
{
	for (uint32_t i = 0; i < r->nunits;) {
		unsigned int k = 0;

		while (k < MSGA__REPAIR_ORDERS - 1 && !(i & (1u << k)) &&
		       (uint64_t)i + (2ull << k) <= r->nunits)
			k++;
		free_push(r, i + 1, k);
		if (k > r->max_order)
			r->max_order = k;
		i += 1u << k;
	}
	r->free_bytes = (size_t)r->nunits << UNIT_SHIFT;
}

/* Random first NAK delays: splitmix64, any seed. */
static uint64_t rnd(struct msga__repair *r)
{
	uint64_t z = (r->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

int msga__repair_init(struct msga__repair *r, const struct msga__repair_cfg *cfg)
{
	size_t units;

	memset(r, 0, sizeof(*r));
	if (!cfg->max_streams || !cfg->max_gaps || !cfg->give_up_ns ||
	    !cfg->nak_retry_ns || cfg->max_bytes < 64 ||
	    cfg->max_bytes / 64 > MAX_UNITS || cfg->max_gaps > UINT32_MAX / 4)
		return -EINVAL;
	r->cfg = *cfg;
	/* out of order, given-up ranges wait beside the missing (repair.h) */
	r->gap_cap = cfg->out_of_order ? 2 * cfg->max_gaps + 2 : cfg->max_gaps;
	units = cfg->max_bytes >> UNIT_SHIFT;
	r->nunits = (uint32_t)units;
	r->rng = cfg->seed;
	r->streams = calloc(cfg->max_streams, sizeof(*r->streams));
	r->gap_mem = calloc((size_t)cfg->max_streams * r->gap_cap,
			    sizeof(*r->gap_mem));
	r->map = calloc(units, 1);
	r->arena = malloc(units << UNIT_SHIFT);
	if (!r->streams || !r->gap_mem || !r->map || !r->arena) {
		msga__repair_fini(r);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < cfg->max_streams; i++)
		r->streams[i].gaps = r->gap_mem + (size_t)i * r->gap_cap;
	/*
	 * Touch the pool now, not on the delivery path: a copy held there
	 * would otherwise pay a page fault for each new page it lands in.
	 */
	memset(r->arena, 0, units << UNIT_SHIFT);
	pool_carve(r);
	return 0;
}

void msga__repair_fini(struct msga__repair *r)
{
	free(r->streams);
	free(r->gap_mem);
	free(r->map);
	free(r->arena);
	memset(r, 0, sizeof(*r));
}

/* The copy handed out by the last pop lives until the next call. */
static void flush(struct msga__repair *r)
{
	if (r->defer) {
		pool_free(r, r->defer);
		r->defer = 0;
	}
}

static struct msga__repair_stream *stream_of(const struct msga__repair *r,
					     uint32_t idx)
{
	if (idx >= r->cfg.max_streams || !r->streams[idx].active)
		return NULL;
	return &r->streams[idx];
}

static uint32_t stream_pos(const struct msga__repair *r,
			   const struct msga__repair_stream *s)
{
	return (uint32_t)(s - r->streams) + 1;
}

static int has_ready(const struct msga__repair_stream *s)
{
	return (s->head && s->head != s->unready) || s->has_lost;
}

/* Keep s on r->gapped and r->ready exactly while it belongs there. */
static void update_lists(struct msga__repair *r, struct msga__repair_stream *s)
{
	uint8_t gapped = s->ngaps != 0, ready = (uint8_t)has_ready(s);

	if (gapped != s->on_gapped) {
		struct msga__idx_array a = MSGA__IDX_ARRAY(r->streams,
							   gapped_link);

		if (gapped)
			msga__idx_append(&r->gapped, a, stream_pos(r, s));
		else
			msga__idx_unlink(&r->gapped, a, stream_pos(r, s));
		s->on_gapped = gapped;
	}
	if (ready != s->on_ready) {
		struct msga__idx_array a = MSGA__IDX_ARRAY(r->streams,
							   ready_link);

		if (ready)
			msga__idx_append(&r->ready, a, stream_pos(r, s));
		else
			msga__idx_unlink(&r->ready, a, stream_pos(r, s));
		s->on_ready = ready;
	}
}

static void gap_insert(struct msga__repair_stream *s, uint32_t i,
		       const struct msga__repair_gap *g)
{
	memmove(&s->gaps[i + 1], &s->gaps[i],
		(s->ngaps - i) * sizeof(s->gaps[0]));
	s->gaps[i] = *g;
	s->ngaps++;
}

static void gap_remove(struct msga__repair_stream *s, uint32_t i)
{
	s->ngaps--;
	memmove(&s->gaps[i], &s->gaps[i + 1],
		(s->ngaps - i) * sizeof(s->gaps[0]));
}

/* The first range whose last is at or above seq (ngaps if none). */
static uint32_t gap_lower(const struct msga__repair_stream *s, uint64_t seq)
{
	uint32_t lo = 0, hi = s->ngaps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->gaps[mid].last < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The range holding seq, or -1. */
static int64_t gap_find(const struct msga__repair_stream *s, uint64_t seq)
{
	uint32_t i = gap_lower(s, seq);

	return i < s->ngaps && s->gaps[i].first <= seq ? (int64_t)i : -1;
}

/*
 * gaps[0] was given up: it joins the ready part as lost numbers, with the
 * ones lost just before it. They are a LOSS item before the next copy
 * when that copy follows at once; otherwise a range still missing (or the
 * end) follows, and they stay the stream's last LOSS item.
 */
static void absorb(struct msga__repair *r, struct msga__repair_stream *s)
{
	struct msga__repair_gap g = s->gaps[0];
	uint64_t first = s->has_lost ? s->lost_first : g.first;

	gap_remove(s, 0);
	s->ngone--;
	if (g.succ && held_at(r, g.succ)->seq - 1 == g.last) {
		held_at(r, g.succ)->lost_before += g.last - first + 1;
		s->has_lost = 0;
	} else {
		s->lost_first = first;
		s->lost_last = g.last;
		s->has_lost = 1;
	}
}

/*
 * After a change at the front: ranges given up there join the ready part,
 * and the copies before the first range still missing become ready.
 */
static void settle(struct msga__repair *r, struct msga__repair_stream *s)
{
	if (r->cfg.out_of_order) {
		/* nothing held: the front is the first range, gone or not */
		s->out = s->ngaps ? s->gaps[0].first - 1 : s->last;
		s->has_lost = s->ngone != 0;
		update_lists(r, s);
		return;
	}
	while (s->ngaps && s->gaps[0].gone)
		absorb(r, s);
	while (s->unready && (!s->ngaps ||
			      held_at(r, s->unready)->seq < s->gaps[0].first)) {
		uint64_t b = block_bytes(r, s->unready);

		s->ready_bytes += b;
		r->ready_bytes += b;
		s->unready = held_at(r, s->unready)->next;
	}
	update_lists(r, s);
}

/*
 * Give up range i: it merges with given-up neighbours (one LOSS item, one
 * slot). Returns where it is now; 0 when it was the front, which settled
 * (in order, it went to the ready part, and the ranges moved down).
 */
static uint32_t give_up(struct msga__repair *r, struct msga__repair_stream *s,
			uint32_t i)
{
	struct msga__repair_gap *g = s->gaps;

	g[i].gone = 1;
	s->ngone++;
	if (i + 1 < s->ngaps && g[i + 1].gone &&
	    g[i].last + 1 == g[i + 1].first) {
		g[i].last = g[i + 1].last;
		g[i].succ = g[i + 1].succ;
		gap_remove(s, i + 1);
		s->ngone--;
	}
	if (i > 0 && g[i - 1].gone && g[i - 1].last + 1 == g[i].first) {
		g[i - 1].last = g[i].last;
		g[i - 1].succ = g[i].succ;
		gap_remove(s, i);
		s->ngone--;
		i--;
	}
	if (!i || r->cfg.out_of_order)
		settle(r, s); /* (in order, absorb takes them out of ngone) */
	return i;
}

/*
 * The stream's oldest range still missing is given up: in order, always
 * gaps[0]; out of order, given-up ones may wait before it to be popped.
 */
static void give_up_first(struct msga__repair *r,
			  struct msga__repair_stream *s)
{
	uint32_t i = 0;

	while (i < s->ngaps && s->gaps[i].gone)
		i++;
	if (i < s->ngaps)
		give_up(r, s, i);
}

/*
 * Whether stream s may have need more ranges still missing (max_gaps; in
 * order, the given-up ones count too), and has the slots for them.
 */
static int missing_room(const struct msga__repair *r,
			const struct msga__repair_stream *s, uint32_t need)
{
	uint32_t n = r->cfg.out_of_order ? s->ngaps - s->ngone : s->ngaps;

	return n + need <= r->cfg.max_gaps;
}

static int slot_room(const struct msga__repair *r,
		     const struct msga__repair_stream *s, uint32_t need)
{
	return s->ngaps + need <= r->gap_cap;
}

unsigned int msga__repair_hist_bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned int i = 0;

	/* i = bit length of us: us < 2^i and, from 1 up, us >= 2^(i-1) */
	while (us && i < MSGA__REPAIR_HIST_BUCKETS - 1) {
		us >>= 1;
		i++;
	}
	return i;
}

/*
 * A number of s missing since opened_ns arrived at now_ns and was taken:
 * s made progress (cfg.stall_ns counts from it).
 */
static void count_repair(struct msga__repair *r, struct msga__repair_stream *s,
			 uint64_t opened_ns, uint64_t now_ns)
{
	uint64_t took = now_ns > opened_ns ? now_ns - opened_ns : 0;

	r->c.hist[msga__repair_hist_bucket(took)]++;
	if (now_ns > s->progress_ns)
		s->progress_ns = now_ns;
}

/*
 * Room for a copy of order k: a block, or 0 when none is free. Then the
 * subscriber's oldest ranges are given up until, once the ready copies
 * are popped, the block could be there (see repair.h).
 */
static uint32_t hold_alloc(struct msga__repair *r, uint32_t len)
{
	unsigned int k = order_of(len);
	uint32_t pos;

	if (k > r->max_order)
		return 0; /* no block is that big: giving up would not help */
	pos = pool_alloc(r, k);
	if (pos)
		return pos;
	while (r->free_bytes + r->ready_bytes < (64ull << k) &&
	       r->gapped.head) {
		struct msga__repair_stream *old = NULL;

		for (uint32_t p = r->gapped.head; p;
		     p = r->streams[p - 1].gapped_link.next) {
			struct msga__repair_stream *s = &r->streams[p - 1];

			if (!old || s->gaps[0].opened_ns < old->gaps[0].opened_ns)
				old = s;
		}
		give_up_first(r, old);
		r->c.over_memory++;
	}
	return 0;
}

/*
 * Numbers first..last, past the highest accounted for, are missing: 0, or
 * -1 when out of order the given-up ranges not yet popped leave no slot.
 */
static int open_gap(struct msga__repair *r, struct msga__repair_stream *s,
		    uint64_t first, uint64_t last, uint64_t now_ns)
{
	struct msga__repair_gap g = { .first = first, .last = last,
				      .opened_ns = now_ns };
	uint64_t d = r->cfg.nak_delay_ns;

	/* (out of order, giving up frees no slot: none would be wasted) */
	if (r->cfg.out_of_order && !slot_room(r, s, 1))
		return -1;
	while (!missing_room(r, s, 1)) {
		give_up_first(r, s);
		r->c.over_max_gaps++;
	}
	g.nak_ns = add_sat(now_ns, d == UINT64_MAX ? rnd(r) : rnd(r) % (d + 1));
	gap_insert(s, s->ngaps, &g);
	s->last = last;
	r->c.gaps++;
	settle(r, s);
	return 0;
}

static void store(struct msga__repair *r, uint32_t pos, uint64_t seq,
		  const void *data, uint32_t len)
{
	struct msga__repair_held *h = held_at(r, pos);

	h->seq = seq;
	h->lost_before = 0;
	h->len = len;
	if (len)
		memcpy(h + 1, data, len);
}

/* Link pos into s's copies before the copy at `before` (0: at the end). */
static void link_before(struct msga__repair *r, struct msga__repair_stream *s,
			uint32_t pos, uint32_t before)
{
	struct msga__repair_held *h = held_at(r, pos);

	h->next = before;
	h->prev = before ? held_at(r, before)->prev : s->tail;
	if (h->prev)
		held_at(r, h->prev)->next = pos;
	else
		s->head = pos;
	if (before)
		held_at(r, before)->prev = pos;
	else
		s->tail = pos;
}

/*
 * A copy was linked in: it takes the stream's last LOSS item when it
 * follows it at once, and it is ready unless a missing range precedes it.
 */
static void mark_held(struct msga__repair *r, struct msga__repair_stream *s,
		      uint32_t pos)
{
	struct msga__repair_held *h = held_at(r, pos);

	if (s->has_lost && s->lost_last + 1 == h->seq) {
		h->lost_before = h->seq - s->lost_first;
		s->has_lost = 0;
	}
	if (!s->ngaps || h->seq < s->gaps[0].first) {
		s->ready_bytes += block_bytes(r, pos);
		r->ready_bytes += block_bytes(r, pos);
	} else if (!s->unready || h->seq < held_at(r, s->unready)->seq) {
		s->unready = pos;
	}
	r->c.held++;
}

/* seq is above everything accounted for, and cannot be delivered yet. */
static enum msga__repair_verdict arrive_new(struct msga__repair *r,
					    struct msga__repair_stream *s,
					    uint64_t seq, const void *data,
					    uint32_t len, uint64_t now_ns)
{
	uint32_t pos = hold_alloc(r, len);

	if (!pos) { /* as if it had not arrived: missing, NAKed */
		open_gap(r, s, s->last + 1, seq, now_ns);
		r->c.refused++;
		r->c.dropped++;
		return MSGA__REPAIR_DROP;
	}
	if (seq > s->last + 1)
		open_gap(r, s, s->last + 1, seq - 1, now_ns);
	store(r, pos, seq, data, len);
	link_before(r, s, pos, 0);
	/* the ranges at the end, after every copy so far, precede it */
	for (uint32_t j = s->ngaps; j-- && !s->gaps[j].succ;)
		s->gaps[j].succ = pos;
	s->last = seq;
	mark_held(r, s, pos);
	settle(r, s);
	return MSGA__REPAIR_HELD;
}

/*
 * Missing seq arrived: it leaves range i (which it splits when inside:
 * the part before it then precedes copy pos, the part after keeps the
 * range's successor).
 */
static void cut_out(struct msga__repair_stream *s, uint32_t i, uint64_t seq,
		    uint32_t pos)
{
	struct msga__repair_gap *g = &s->gaps[i];

	if (seq == g->first && seq == g->last) {
		gap_remove(s, i);
	} else if (seq == g->first) {
		g->first++;
	} else if (seq == g->last) {
		g->last--;
		g->succ = pos;
	} else {
		struct msga__repair_gap right = *g;

		right.first = seq + 1;
		g->last = seq - 1;
		g->succ = pos;
		gap_insert(s, i + 1, &right);
	}
}

/* seq is within what is accounted for: it may fill a missing number. */
static enum msga__repair_verdict arrive_fill(struct msga__repair *r,
					     struct msga__repair_stream *s,
					     uint64_t seq, const void *data,
					     uint32_t len, uint64_t now_ns)
{
	int64_t i = gap_find(s, seq);
	struct msga__repair_gap *g;
	uint32_t pos, old;

	if (i < 0 || s->gaps[i].gone)
		goto drop; /* held already, or given up */
	if (seq == s->out + 1) { /* the front of gaps[0]: in place */
		count_repair(r, s, s->gaps[0].opened_ns, now_ns);
		s->out = seq;
		cut_out(s, 0, seq, 0);
		settle(r, s);
		r->c.delivered++;
		return MSGA__REPAIR_DELIVER;
	}
	pos = hold_alloc(r, len);
	if (!pos) { /* it stays missing (or went with a range given up) */
		r->c.refused++;
		goto drop;
	}
	/* Splitting a range needs a slot: the oldest range may give it. */
	for (;;) {
		i = gap_find(s, seq);
		if (i < 0 || s->gaps[i].gone) {
			pool_free(r, pos);
			goto drop;
		}
		g = &s->gaps[i];
		if (seq == g->first || seq == g->last ||
		    s->ngaps < r->cfg.max_gaps)
			break;
		give_up_first(r, s);
		r->c.over_max_gaps++;
	}
	store(r, pos, seq, data, len);
	count_repair(r, s, g->opened_ns, now_ns);
	old = g->succ;
	cut_out(s, (uint32_t)i, seq, pos);
	/* ranges before it with no copy between now precede this copy */
	for (int64_t j = i; j-- && s->gaps[j].succ == old;)
		s->gaps[j].succ = pos;
	link_before(r, s, pos, old);
	mark_held(r, s, pos);
	settle(r, s);
	return MSGA__REPAIR_HELD;
drop:
	r->c.dropped++;
	return MSGA__REPAIR_DROP;
}

/*
 * Out of order, seq is above the highest accounted for: delivered now,
 * the numbers between it and that missing. (s->top stays behind the hot
 * path's deliveries, which is enough: they all precede the next range.)
 */
static enum msga__repair_verdict ooo_new(struct msga__repair *r,
					 struct msga__repair_stream *s,
					 uint64_t seq, uint64_t now_ns)
{
	if (seq > s->last + 1 &&
	    open_gap(r, s, s->last + 1, seq - 1, now_ns)) {
		r->c.refused++; /* as if lost: the next range takes it in */
		r->c.dropped++;
		return MSGA__REPAIR_DROP;
	}
	s->last = s->top = seq;
	r->c.delivered++;
	return MSGA__REPAIR_DELIVER;
}

/* Out of order, seq is within what is accounted for: delivered if missing. */
static enum msga__repair_verdict ooo_fill(struct msga__repair *r,
					  struct msga__repair_stream *s,
					  uint64_t seq, uint64_t now_ns)
{
	int64_t i;

	for (;;) { /* splitting a range needs a slot, as in arrive_fill */
		i = gap_find(s, seq);
		if (i < 0 || s->gaps[i].gone) {
			r->c.dropped++;
			return MSGA__REPAIR_DROP;
		}
		if (seq == s->gaps[i].first || seq == s->gaps[i].last)
			break;
		if (!slot_room(r, s, 1)) { /* given-up ranges not popped */
			r->c.refused++; /* it stays missing */
			r->c.dropped++;
			return MSGA__REPAIR_DROP;
		}
		if (missing_room(r, s, 1))
			break;
		give_up_first(r, s);
		r->c.over_max_gaps++;
	}
	count_repair(r, s, s->gaps[i].opened_ns, now_ns);
	cut_out(s, (uint32_t)i, seq, 0);
	settle(r, s);
	if (seq < s->top) {
		r->c.late++;
		return MSGA__REPAIR_LATE;
	}
	s->top = seq; /* (a tail a heartbeat showed: no higher one came) */
	r->c.delivered++;
	return MSGA__REPAIR_DELIVER;
}

enum msga__repair_verdict msga__repair_arrive(struct msga__repair *r, uint32_t idx,
		uint64_t seq, const void *data, uint32_t len, uint64_t now_ns)
{
	struct msga__repair_stream *s;

	flush(r);
	s = stream_of(r, idx);
	if (!s || !seq || seq <= s->out) {
		r->c.dropped++;
		return MSGA__REPAIR_DROP;
	}
	/* Nothing held or missing, and the next one: the hot path. */
	if (s->out == s->last && seq == s->last + 1) {
		s->out = s->last = seq;
		r->c.delivered++;
		return MSGA__REPAIR_DELIVER;
	}
	if (r->cfg.out_of_order)
		return seq > s->last ? ooo_new(r, s, seq, now_ns) :
				       ooo_fill(r, s, seq, now_ns);
	if (seq > s->last)
		return arrive_new(r, s, seq, data, len, now_ns);
	return arrive_fill(r, s, seq, data, len, now_ns);
}

void msga__repair_sent(struct msga__repair *r, uint32_t idx, uint64_t last,
		       uint64_t now_ns)
{
	struct msga__repair_stream *s;

	flush(r);
	s = stream_of(r, idx);
	if (s && last > s->last) /* (no slot: the next heartbeat says it) */
		(void)open_gap(r, s, s->last + 1, last, now_ns);
}

void msga__repair_gone(struct msga__repair *r, uint32_t idx, uint64_t seq,
		       uint64_t count)
{
	struct msga__repair_stream *s;
	uint64_t a, b;

	flush(r);
	s = stream_of(r, idx);
	if (!s || !count || (!seq && !--count))
		return;
	a = seq ? seq : 1;
	b = count - 1 > UINT64_MAX - a ? UINT64_MAX : a + (count - 1);
	/* only what is known missing: later numbers may still be in flight */
	if (s->out == UINT64_MAX || b <= s->out || a > s->last)
		return;
	if (a <= s->out)
		a = s->out + 1;
	if (b > s->last)
		b = s->last;
	for (;;) {
		uint32_t i = gap_lower(s, a), need;
		struct msga__repair_gap *g, piece;
		uint64_t lo, hi;

		while (i < s->ngaps && s->gaps[i].gone && s->gaps[i].first <= b)
			i++;
		if (i >= s->ngaps || s->gaps[i].first > b)
			break;
		g = &s->gaps[i];
		lo = g->first > a ? g->first : a;
		hi = g->last < b ? g->last : b;
		need = (g->first < lo) + (g->last > hi);
		if (r->cfg.out_of_order && !slot_room(r, s, need)) {
			lo = g->first; /* not popped, no slot: all of it goes */
			hi = g->last;
		} else if (!missing_room(r, s, need)) {
			give_up_first(r, s);
			r->c.over_max_gaps++;
			continue;
		}
		/* cut [lo, hi] out of it; every piece keeps its successor */
		if (g->first < lo) {
			piece = *g;
			piece.first = lo;
			g->last = lo - 1;
			gap_insert(s, ++i, &piece);
			g = &s->gaps[i];
		}
		if (g->last > hi) {
			piece = *g;
			piece.first = hi + 1;
			g->last = hi;
			gap_insert(s, i + 1, &piece);
		}
		give_up(r, s, i);
		r->c.gone++;
		if (hi >= b)
			break;
		a = hi + 1;
	}
}

/* Out of order: the lowest range given up is the next LOSS item. */
static int ooo_pop(struct msga__repair *r, struct msga__repair_stream *s,
		   struct msga__repair_item *it)
{
	uint32_t i = 0;

	if (!s->ngone)
		return 0;
	while (!s->gaps[i].gone)
		i++;
	*it = (struct msga__repair_item){
		.loss = 1, .seq = s->gaps[i].first,
		.count = s->gaps[i].last - s->gaps[i].first + 1 };
	gap_remove(s, i);
	s->ngone--;
	r->c.loss_items++;
	r->c.lost += it->count;
	settle(r, s);
	return 1;
}

int msga__repair_pop(struct msga__repair *r, uint32_t idx,
		     struct msga__repair_item *it)
{
	struct msga__repair_stream *s;

	flush(r);
	s = stream_of(r, idx);
	if (!s)
		return 0;
	if (r->cfg.out_of_order)
		return ooo_pop(r, s, it);
	if (s->head && s->head != s->unready) {
		uint32_t pos = s->head;
		struct msga__repair_held *h = held_at(r, pos);

		if (h->lost_before) {
			*it = (struct msga__repair_item){
				.loss = 1, .seq = h->seq - h->lost_before,
				.count = h->lost_before };
			h->lost_before = 0;
			s->out = h->seq - 1;
		} else {
			*it = (struct msga__repair_item){
				.seq = h->seq, .count = 1, .data = h + 1,
				.len = h->len };
			s->head = h->next;
			if (s->head)
				held_at(r, s->head)->prev = 0;
			else
				s->tail = 0;
			s->ready_bytes -= block_bytes(r, pos);
			r->ready_bytes -= block_bytes(r, pos);
			s->out = h->seq;
			r->defer = pos;
			r->c.popped++;
		}
	} else if (s->has_lost) {
		*it = (struct msga__repair_item){
			.loss = 1, .seq = s->lost_first,
			.count = s->lost_last - s->lost_first + 1 };
		s->has_lost = 0;
		s->out = s->lost_last;
	} else {
		return 0;
	}
	if (it->loss) {
		r->c.loss_items++;
		r->c.lost += it->count;
	}
	update_lists(r, s);
	return 1;
}

int msga__repair_next_ready(const struct msga__repair *r, uint32_t *idx)
{
	if (!r->ready.head)
		return 0;
	*idx = r->ready.head - 1;
	return 1;
}

/*
 * The give-up rule (repair_sched.h): 0.8's, give_up_ns from the opening,
 * when stall_ns is 0; else stall_ns without progress on the stream, or
 * give_up_ns from the opening as the latency bound.
 */
static struct msga__rsched_giveup give_up_rule(const struct msga__repair *r)
{
	if (!r->cfg.stall_ns)
		return (struct msga__rsched_giveup){
			.stall_ns = r->cfg.give_up_ns };
	return (struct msga__rsched_giveup){ .stall_ns = r->cfg.stall_ns,
					     .bound_ns = r->cfg.give_up_ns };
}

/* Since when g's stream's clock of no progress runs. */
static uint64_t stall_since(const struct msga__repair *r,
			    const struct msga__repair_stream *s,
			    const struct msga__repair_gap *g)
{
	return r->cfg.stall_ns && s->progress_ns > g->opened_ns ?
	       s->progress_ns : g->opened_ns;
}

static int gap_dead(const struct msga__repair *r,
		    const struct msga__repair_stream *s,
		    const struct msga__repair_gap *g, uint64_t now_ns)
{
	struct msga__rsched_giveup rule = give_up_rule(r);

	return msga__rsched_give_up(&rule, g->first, g->opened_ns,
				    r->cfg.stall_ns ? s->progress_ns : 0, 0,
				    now_ns) != MSGA__RSCHED_KEEP;
}

/* When range g's next timer is due. */
static uint64_t gap_due(const struct msga__repair *r,
			const struct msga__repair_stream *s,
			const struct msga__repair_gap *g)
{
	struct msga__rsched_giveup rule = give_up_rule(r);
	uint64_t dead = add_sat(stall_since(r, s, g), rule.stall_ns);

	if (rule.bound_ns && add_sat(g->opened_ns, rule.bound_ns) < dead)
		dead = add_sat(g->opened_ns, rule.bound_ns);
	return g->nak_ns < dead ? g->nak_ns : dead;
}

uint64_t msga__repair_tick(struct msga__repair *r, uint64_t now_ns,
		void (*nak)(void *arg, uint32_t idx, uint64_t seq, uint64_t count),
		void *arg)
{
	uint64_t due = UINT64_MAX;
	uint32_t p, next;

	flush(r);
	for (p = r->gapped.head; p; p = next) {
		struct msga__repair_stream *s = &r->streams[p - 1];

		next = s->gapped_link.next;
		for (uint32_t i = 0; i < s->ngaps; i++) {
			struct msga__repair_gap *g = &s->gaps[i];

			if (g->gone)
				continue;
			if (gap_dead(r, s, g, now_ns)) {
				/* on from where it is; the front: from 0 */
				i = give_up(r, s, i);
				r->c.timed_out++;
				if (!i)
					i = (uint32_t)-1;
				continue;
			}
			if (now_ns >= g->nak_ns) {
				nak(arg, p - 1, g->first, g->last - g->first + 1);
				g->nak_ns = add_sat(now_ns, r->cfg.nak_retry_ns);
				r->c.naks++;
			}
		}
		for (uint32_t i = 0; i < s->ngaps; i++)
			if (!s->gaps[i].gone && gap_due(r, s, &s->gaps[i]) < due)
				due = gap_due(r, s, &s->gaps[i]);
		settle(r, s);
	}
	return due;
}

int msga__repair_missing(const struct msga__repair *r, uint32_t idx, uint64_t seq)
{
	const struct msga__repair_stream *s;
	uint32_t lo = 0, hi;

	if (idx >= r->cfg.max_streams || !r->streams[idx].active)
		return 0;
	s = &r->streams[idx];
	if (seq <= s->out || seq > s->last)
		return 0;
	/* the ranges are in seq order and disjoint: the last starting <= seq */
	hi = s->ngaps;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (s->gaps[mid].first <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && seq <= s->gaps[lo - 1].last && !s->gaps[lo - 1].gone;
}

uint64_t msga__repair_next_due(const struct msga__repair *r)
{
	uint64_t due = UINT64_MAX;

	for (uint32_t p = r->gapped.head; p;
	     p = r->streams[p - 1].gapped_link.next) {
		const struct msga__repair_stream *s = &r->streams[p - 1];

		for (uint32_t i = 0; i < s->ngaps; i++)
			if (!s->gaps[i].gone && gap_due(r, s, &s->gaps[i]) < due)
				due = gap_due(r, s, &s->gaps[i]);
	}
	return due;
}

void msga__repair_start(struct msga__repair *r, uint32_t idx, uint64_t next_seq)
{
	struct msga__repair_stream *s;

	if (idx >= r->cfg.max_streams)
		return;
	msga__repair_forget(r, idx);
	s = &r->streams[idx];
	s->out = s->last = s->top = next_seq ? next_seq - 1 : 0;
	s->progress_ns = 0;
	s->active = 1;
}

void msga__repair_forget(struct msga__repair *r, uint32_t idx)
{
	struct msga__repair_stream *s;
	uint32_t pos, next;

	flush(r);
	s = stream_of(r, idx);
	if (!s)
		return;
	for (pos = s->head; pos; pos = next) {
		next = held_at(r, pos)->next;
		pool_free(r, pos);
	}
	r->ready_bytes -= s->ready_bytes;
	s->ready_bytes = 0;
	s->head = s->tail = s->unready = 0;
	s->ngaps = s->ngone = 0;
	s->has_lost = 0;
	update_lists(r, s);
	s->active = 0;
}

int msga__repair_active(const struct msga__repair *r, uint32_t idx)
{
	return stream_of(r, idx) != NULL;
}

size_t msga__repair_copy_size(const struct msga__repair *r, uint32_t len)
{
	unsigned int k = order_of(len);

	return k > r->max_order ? 0 : (size_t)64 << k;
}

uint32_t msga__repair_ranges(const struct msga__repair *r, uint32_t idx)
{
	const struct msga__repair_stream *s = stream_of(r, idx);

	return s ? s->ngaps : 0;
}
