/* SPDX-License-Identifier: MIT */
/*
 * The publisher's retention buffer (lib/proto/retain.c): copies kept and
 * found, the oldest dropped first across topics, skipped seqs, bounds.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"
#include "retain.h"

static struct msga__retain r;
static uint8_t msg[MSGA_MSG_MAX + 8];

/* A message's bytes say which (topic, seq) it is. */
static const void *fill(uint32_t topic, uint64_t seq, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		msg[i] = (uint8_t)(seq * 131 + topic * 17 + i * 7);
	return msg;
}

static int put(uint32_t topic, uint64_t seq, uint32_t len)
{
	return msga__retain_put(&r, topic, seq, fill(topic, seq, len), len);
}

/* (topic, seq) is kept, len bytes, its own, 8-byte aligned. */
static void assert_kept(uint32_t topic, uint64_t seq, uint32_t len)
{
	const void *data = NULL;
	uint32_t got = UINT32_MAX;
	int ret = msga__retain_get(&r, topic, seq, &data, &got);

	cr_assert_eq(ret, 0, "topic %u seq %lu: %d", topic,
		     (unsigned long)seq, ret);
	cr_assert_eq(got, len, "topic %u seq %lu: len %u", topic,
		     (unsigned long)seq, got);
	cr_assert_not_null(data);
	cr_assert_eq((uintptr_t)data % 8, 0);
	fill(topic, seq, len);
	cr_assert(!memcmp(data, msg, len), "topic %u seq %lu: bytes", topic,
		  (unsigned long)seq);
}

static void assert_gone(uint32_t topic, uint64_t seq)
{
	const void *data = NULL;
	uint32_t len = 0;

	cr_assert_eq(msga__retain_get(&r, topic, seq, &data, &len), -ENOENT,
		     "topic %u seq %lu", topic, (unsigned long)seq);
}

static void assert_range(uint32_t topic, int count, uint64_t oldest,
			 uint64_t newest)
{
	uint64_t o = 1234, n = 5678;

	cr_assert_eq(msga__retain_range(&r, topic, &o, &n), count,
		     "topic %u", topic);
	cr_assert_eq(o, oldest, "topic %u oldest %lu", topic,
		     (unsigned long)o);
	cr_assert_eq(n, newest, "topic %u newest %lu", topic,
		     (unsigned long)n);
}

static void teardown(void)
{
	msga__retain_fini(&r);
}

TestSuite(retain, .fini = teardown);

Test(retain, round_trip)
{
	cr_assert_eq(msga__retain_init(&r, 1 << 16, 4), 0);
	assert_range(0, 0, 0, 0);
	for (uint64_t s = 1; s <= 20; s++)
		for (uint32_t t = 0; t < 4; t++)
			cr_assert_eq(put(t, s, (uint32_t)(s * 13 + t) % 200),
				     0);
	for (uint64_t s = 1; s <= 20; s++)
		for (uint32_t t = 0; t < 4; t++)
			assert_kept(t, s, (uint32_t)(s * 13 + t) % 200);
	for (uint32_t t = 0; t < 4; t++)
		assert_range(t, 20, 1, 20);
	cr_assert_eq(r.dropped, 0);
}

Test(retain, zero_length_message)
{
	const void *data = NULL;
	uint32_t len = 99;

	cr_assert_eq(msga__retain_init(&r, 4096, 1), 0);
	cr_assert_eq(msga__retain_put(&r, 0, 1, NULL, 0), 0);
	cr_assert_eq(put(0, 2, 5), 0);
	cr_assert_eq(msga__retain_put(&r, 0, 3, NULL, 0), 0);
	cr_assert_eq(msga__retain_get(&r, 0, 1, &data, &len), 0);
	cr_assert_eq(len, 0);
	cr_assert_not_null(data);
	assert_kept(0, 2, 5);
	assert_kept(0, 3, 0);
	assert_range(0, 3, 1, 3);
}

/* The smallest buffer holds one empty message: each put drops the last. */
Test(retain, one_record_buffer)
{
	cr_assert_eq(msga__retain_init(&r, sizeof(struct msga__retain_rec), 2),
		     0);
	cr_assert_eq(put(0, 1, 1), -EMSGSIZE);
	for (uint64_t s = 1; s <= 5; s++) {
		cr_assert_eq(put(s % 2, s, 0), 0);
		assert_kept(s % 2, s, 0);
		assert_range(s % 2, 1, s, s);
		assert_range((s + 1) % 2, 0, 0, 0);
		if (s > 1)
			assert_gone((s - 1) % 2, s - 1);
	}
	cr_assert_eq(r.dropped, 4);
}

/*
 * 64-byte records (40-byte messages) in a 640-byte ring: ten fit. The
 * oldest go first, whatever their topic, one for one, then two for a
 * record twice the size.
 */
Test(retain, eviction_order_across_topics)
{
	uint64_t seq[3] = { 0 };

	cr_assert_eq(msga__retain_rec_size(40), 64);
	cr_assert_eq(msga__retain_init(&r, 640, 3), 0);
	/* t0: 1 2 3 4 (puts 0 3 6 9), t1: 1 2 3, t2: 1 2 3 */
	for (uint32_t i = 0; i < 10; i++)
		cr_assert_eq(put(i % 3, ++seq[i % 3], 40), 0);
	cr_assert_eq(r.dropped, 0);
	cr_assert_eq(r.used, 640);
	assert_range(0, 4, 1, 4);
	assert_range(1, 3, 1, 3);
	assert_range(2, 3, 1, 3);

	/* the ring is full: t0 seq 1, the oldest of all, goes */
	cr_assert_eq(put(1, 4, 40), 0);
	cr_assert_eq(r.dropped, 1);
	assert_gone(0, 1);
	assert_range(0, 3, 2, 4);
	assert_range(1, 4, 1, 4);
	assert_range(2, 3, 1, 3);

	/* twice the size: the next two oldest, t1 seq 1 and t2 seq 1 */
	cr_assert_eq(put(2, 4, 104), 0);
	cr_assert_eq(r.dropped, 3);
	assert_gone(1, 1);
	assert_gone(2, 1);
	assert_range(0, 3, 2, 4);
	assert_range(1, 3, 2, 4);
	assert_range(2, 3, 2, 4);
	for (uint64_t s = 2; s <= 4; s++) {
		assert_kept(0, s, 40);
		assert_kept(1, s, 40);
	}
	assert_kept(2, 2, 40);
	assert_kept(2, 3, 40);
	assert_kept(2, 4, 104);
}

/*
 * A record that does not fit before the ring's end starts at 0 and leaves
 * the end unused; the end is free again once the records before it go.
 */
Test(retain, wrap_leaves_the_end_unused)
{
	cr_assert_eq(msga__retain_init(&r, 640, 1), 0);
	for (uint64_t s = 1; s <= 9; s++)
		cr_assert_eq(put(0, s, 40), 0);
	/* 64 bytes left at the end: seq 10 (128) goes to 0, 1 and 2 go */
	cr_assert_eq(put(0, 10, 104), 0);
	cr_assert_eq(r.dropped, 2);
	assert_gone(0, 1);
	assert_gone(0, 2);
	assert_range(0, 8, 3, 10);
	assert_kept(0, 10, 104);
	cr_assert_eq(r.used, 640, "the unused end counts");
	/* 11..17 each drop one: 3..9, the last of them with the end */
	for (uint64_t s = 11; s <= 17; s++)
		cr_assert_eq(put(0, s, 40), 0);
	cr_assert_eq(r.dropped, 9);
	assert_range(0, 8, 10, 17);
	cr_assert_eq(r.used, 576);
	/* so 18 fits at the end without a drop */
	cr_assert_eq(put(0, 18, 40), 0);
	cr_assert_eq(r.dropped, 9);
	assert_range(0, 9, 10, 18);
	for (uint64_t s = 11; s <= 18; s++)
		assert_kept(0, s, 40);
	assert_kept(0, 10, 104);
}

Test(retain, get_of_what_is_not_kept)
{
	cr_assert_eq(msga__retain_init(&r, 640, 2), 0);
	assert_gone(0, 0);
	assert_gone(0, 1);
	for (uint64_t s = 1; s <= 12; s++)
		cr_assert_eq(put(0, s, 40), 0);
	assert_gone(0, 1); /* dropped */
	assert_gone(0, 2);
	assert_kept(0, 3, 40);
	assert_gone(0, 13); /* not yet */
	assert_gone(0, UINT64_MAX);
	assert_gone(1, 3); /* another topic: never */
	/* skipped */
	cr_assert_eq(put(0, 20, 40), 0);
	for (uint64_t s = 13; s < 20; s++)
		assert_gone(0, s);
	assert_kept(0, 20, 40);
	assert_gone(0, 3);
	assert_range(0, 10, 4, 20);
}

Test(retain, jumps_keep_the_older_records)
{
	uint64_t seqs[] = { 0, 1, 2, 10, 1000, 1ull << 40, UINT64_MAX - 1,
			    UINT64_MAX };

	cr_assert_eq(msga__retain_init(&r, 1 << 16, 2), 0);
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		cr_assert_eq(put(1, seqs[i], (uint32_t)i * 9), 0);
	for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++)
		assert_kept(1, seqs[i], (uint32_t)i * 9);
	assert_gone(1, 3);
	assert_gone(1, 999);
	assert_gone(1, (1ull << 40) + 1);
	assert_range(1, 8, 0, UINT64_MAX);
	/* nothing is above UINT64_MAX */
	cr_assert_eq(put(1, UINT64_MAX, 0), -EINVAL);
	assert_range(0, 0, 0, 0);
}

Test(retain, too_big_keeps_everything)
{
	size_t cap = 640;

	cr_assert_eq(msga__retain_init(&r, cap, 1), 0);
	for (uint64_t s = 1; s <= 10; s++)
		cr_assert_eq(put(0, s, 40), 0);
	cr_assert_eq(put(0, 11, (uint32_t)(cap - 24 + 1)), -EMSGSIZE);
	cr_assert_eq(r.dropped, 0);
	for (uint64_t s = 1; s <= 10; s++)
		assert_kept(0, s, 40);
	assert_range(0, 10, 1, 10);
	/* the refused seq is not the topic's last: it may come again */
	cr_assert_eq(put(0, 11, (uint32_t)(cap - 24)), 0);
	cr_assert_eq(r.dropped, 10);
	assert_kept(0, 11, (uint32_t)(cap - 24));
	assert_range(0, 1, 11, 11);
}

Test(retain, largest_message)
{
	size_t cap = msga__retain_rec_size(MSGA_MSG_MAX);

	cr_assert_eq(msga__retain_init(&r, cap + 8, 1), 0);
	cr_assert_eq(put(0, 1, MSGA_MSG_MAX), 0);
	assert_kept(0, 1, MSGA_MSG_MAX);
	cr_assert_eq(put(0, 2, MSGA_MSG_MAX + 1), -EMSGSIZE);
	assert_kept(0, 1, MSGA_MSG_MAX);
	/* 8 bytes left at the end: the next record wraps and drops it */
	cr_assert_eq(put(0, 2, 0), 0);
	assert_gone(0, 1);
	assert_kept(0, 2, 0);
}

Test(retain, invalid)
{
	const void *data;
	uint32_t len;
	uint64_t o, n;

	cr_assert_eq(msga__retain_init(&r, 4096, 0), -EINVAL);
	cr_assert_eq(msga__retain_init(&r, 23, 1), -EINVAL);
	cr_assert_eq(msga__retain_init(&r, 31, 1), 0);
	cr_assert_eq(r.cap, 24, "rounded down to 8");
	msga__retain_fini(&r);
	cr_assert_eq(msga__retain_init(&r, 0, 1), -EINVAL);
#if SIZE_MAX > UINT32_MAX
	cr_assert_eq(msga__retain_init(&r, (size_t)8 << 32, 1), -EINVAL);
#endif
	cr_assert_eq(msga__retain_init(&r, 640, 2), 0);
	cr_assert_eq(put(2, 1, 0), -EINVAL);
	cr_assert_eq(put(UINT32_MAX, 1, 0), -EINVAL);
	cr_assert_eq(msga__retain_get(&r, 2, 1, &data, &len), -EINVAL);
	cr_assert_eq(msga__retain_range(&r, 2, &o, &n), -EINVAL);
	cr_assert_eq(put(0, 5, 8), 0);
	cr_assert_eq(put(0, 5, 8), -EINVAL);
	cr_assert_eq(put(0, 4, 8), -EINVAL);
	cr_assert_eq(put(0, 0, 8), -EINVAL);
	/* a bad seq changes nothing */
	assert_kept(0, 5, 8);
	assert_range(0, 1, 5, 5);
	/* dropped, the topic still remembers its last seq */
	for (uint64_t s = 1; s <= 20; s++)
		cr_assert_eq(put(1, s, 40), 0);
	assert_range(0, 0, 0, 0);
	cr_assert_eq(put(0, 5, 8), -EINVAL);
	cr_assert_eq(put(0, 6, 8), 0);
}

/* The index is sized once, for the most records the budget can hold. */
Test(retain, index_bounded_by_the_budget)
{
	size_t budgets[] = { 24, 100, 640, 4096, 1 << 20, (1 << 20) + 24 };

	for (size_t i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
		size_t most = budgets[i] / sizeof(struct msga__retain_rec);
		size_t slots;

		cr_assert_eq(msga__retain_init(&r, budgets[i], 1), 0);
		slots = r.index_mask + 1;
		cr_assert_eq(slots & (slots - 1), 0);
		cr_assert_geq(slots, 2 * most, "load at most 1/2");
		cr_assert_leq(slots, 4 * most > 16 ? 4 * most : 16);
		msga__retain_fini(&r);
	}
}

/* Topic ids below max_topics are all usable; each has its own seqs. */
Test(retain, max_topics_bound)
{
	cr_assert_eq(msga__retain_init(&r, 1 << 16, 100), 0);
	for (uint32_t t = 0; t < 100; t++)
		cr_assert_eq(put(t, 7, t), 0);
	cr_assert_eq(put(100, 7, 0), -EINVAL);
	for (uint32_t t = 0; t < 100; t++) {
		assert_kept(t, 7, t);
		assert_range(t, 1, 7, 7);
	}
}

/*
 * The reference: records placed one after the other in a line of bytes,
 * a record that would cross a multiple of cap moved up to it (the ring's
 * unused end); a record is kept while it and every later one span at
 * most cap bytes, up to the end of the newest.
 */
struct model_rec {
	uint32_t topic, len;
	uint64_t seq, start; /* in the line */
};

struct model {
	struct model_rec *recs;
	size_t n, first; /* recs[first..n) kept */
	uint64_t end;
	size_t cap;
};

static void model_put(struct model *m, uint32_t topic, uint64_t seq,
		      uint32_t len)
{
	size_t sz = msga__retain_rec_size(len);
	uint64_t start = m->end;

	if (start % m->cap + sz > m->cap)
		start += m->cap - start % m->cap;
	m->end = start + sz;
	m->recs[m->n++] = (struct model_rec){ topic, len, seq, start };
	while (m->end - m->recs[m->first].start > m->cap)
		m->first++;
}

static void model_check(const struct model *m, uint32_t ntopics)
{
	for (uint32_t t = 0; t < ntopics; t++) {
		uint64_t oldest = 0, newest = 0;
		int count = 0;

		for (size_t i = m->first; i < m->n; i++)
			if (m->recs[i].topic == t) {
				if (!count++)
					oldest = m->recs[i].seq;
				newest = m->recs[i].seq;
			}
		assert_range(t, count, oldest, newest);
	}
	/* every kept record, and the ones dropped last */
	for (size_t i = m->first > 50 ? m->first - 50 : 0; i < m->n; i++) {
		const struct model_rec *x = &m->recs[i];

		if (i >= m->first)
			assert_kept(x->topic, x->seq, x->len);
		else
			assert_gone(x->topic, x->seq);
	}
	cr_assert_eq(r.nrec, m->n - m->first);
}

Test(retain, many_wraps_against_a_reference)
{
	enum { NTOPICS = 5, PUTS = 20000 };
	struct model m = { .cap = 3000 };
	uint64_t last[NTOPICS] = { 0 }, total = 0;

	srand(42);
	m.recs = calloc(PUTS, sizeof(*m.recs));
	cr_assert_not_null(m.recs);
	cr_assert_eq(msga__retain_init(&r, m.cap + 5, NTOPICS), 0);
	cr_assert_eq(r.cap, m.cap);
	for (int i = 0; i < PUTS; i++) {
		uint32_t t = (uint32_t)rand() % NTOPICS;
		uint32_t len = (uint32_t)rand() % (rand() % 8 ? 100 : 1200);
		uint64_t seq = last[t] + (rand() % 10 ? 1 : 1 + rand() % 5);

		if (rand() % 500 == 0)
			seq += 1ull << 33;
		last[t] = seq;
		cr_assert_eq(put(t, seq, len), 0);
		model_put(&m, t, seq, len);
		total += msga__retain_rec_size(len);
		cr_assert_leq(r.used, r.cap);
		if (i % 7 == 0 || i > PUTS - 10)
			model_check(&m, NTOPICS);
		/* now and then one that can never fit */
		if (rand() % 100 == 0) {
			cr_assert_eq(put(t, last[t] + 1, (uint32_t)m.cap),
				     -EMSGSIZE);
			model_check(&m, NTOPICS);
		}
	}
	cr_assert_gt(total / m.cap, 500, "the ring wrapped many times");
	cr_assert_eq(r.dropped, m.first);
	free(m.recs);
}

/*
 * Positions (0.7): what a subscriber reading the ring from afar relies
 * on. The reference above already lays records out by position (its
 * start is the count of bytes written before the record, unused ends
 * included), so each check below compares the ring's own bookkeeping,
 * and the headers it wrote, with it.
 */
static const struct msga__retain_rec *rec_at_pos(uint64_t pos)
{
	return (const struct msga__retain_rec *)(r.buf + pos % r.cap);
}

/* The record of x is in the ring at its position, header and bytes. */
static void assert_rec_at(const struct model_rec *x)
{
	const struct msga__retain_rec *h = rec_at_pos(x->start);

	cr_assert_eq(h->check, (uint32_t)(x->start / 8), "pos %lu: check %u",
		     (unsigned long)x->start, h->check);
	cr_assert_eq(h->topic, x->topic);
	cr_assert_eq(h->seq, x->seq);
	cr_assert_eq(h->len, x->len);
	fill(x->topic, x->seq, x->len);
	cr_assert(!memcmp(h + 1, msg, x->len), "pos %lu: bytes",
		  (unsigned long)x->start);
}

/*
 * A random run across many wraps: lengths from 0 to a third of the ring,
 * so ends of every size are left unused, from 8 bytes to over a header.
 * Calls check(m, i) after put i.
 */
static void run_positions(struct model *m, int puts,
			  void (*check)(const struct model *m, int i))
{
	enum { NTOPICS = 7 };
	uint64_t last[NTOPICS] = { 0 };

	srand(7);
	m->recs = calloc((size_t)puts, sizeof(*m->recs));
	cr_assert_not_null(m->recs);
	cr_assert_eq(msga__retain_init(&r, m->cap, NTOPICS), 0);
	for (int i = 0; i < puts; i++) {
		uint32_t t = (uint32_t)rand() % NTOPICS;
		uint32_t len = (uint32_t)rand() % (uint32_t)(m->cap / 3);

		cr_assert_eq(put(t, ++last[t], len), 0);
		model_put(m, t, last[t], len);
		check(m, i);
	}
	cr_assert_gt(m->end / m->cap, 100, "the ring wrapped many times");
}

static void check_next_pos(const struct model *m, int i)
{
	const struct model_rec *x = &m->recs[i];

	cr_assert_eq(x->start % 8, 0);
	if (i)
		cr_assert_gt(x->start, m->recs[i - 1].start);
	cr_assert_eq(r.tail_pos, x->start + msga__retain_rec_size(x->len));
	assert_rec_at(x);
}

Test(retain, next_pos_is_where_the_put_places_its_record)
{
	struct model m = { .cap = 1000 };
	uint64_t last = 0;

	run_positions(&m, 3000, check_next_pos);
	free(m.recs);
	msga__retain_fini(&r);
	/* and it is a prediction: asked before the put, with the same len */
	srand(11);
	cr_assert_eq(msga__retain_init(&r, 1000, 1), 0);
	for (int i = 0; i < 3000; i++) {
		uint32_t len = (uint32_t)rand() % 400;
		uint64_t want = msga__retain_next_pos(&r, len);

		cr_assert_eq(msga__retain_next_pos(&r, len), want,
			     "asking changes nothing");
		/* one that cannot fit leaves no record, and moves nothing */
		cr_assert_eq(put(0, last + 1, 1000), -EMSGSIZE);
		cr_assert_eq(msga__retain_next_pos(&r, len), want);
		cr_assert_eq(put(0, ++last, len), 0);
		cr_assert_eq(rec_at_pos(want)->check, (uint32_t)(want / 8),
			     "put %d: predicted %lu", i, (unsigned long)want);
		cr_assert_eq(rec_at_pos(want)->seq, last);
		cr_assert_geq(want, r.head_pos);
	}
}

/*
 * ctrl->head is the position of the oldest record kept, never less (a
 * reader would wait on bytes already gone) nor more (it would refuse a
 * good copy); it only grows; and every record at or above it is intact
 * in the ring: what head promises a reader is still there.
 */
static void check_head(const struct model *m, int i)
{
	static uint64_t before;
	uint64_t head = __atomic_load_n(&r.ctrl->head, __ATOMIC_RELAXED);

	if (!i)
		before = 0;
	cr_assert_eq(head, m->recs[m->first].start, "put %d: head %lu", i,
		     (unsigned long)head);
	cr_assert_eq(head, r.head_pos);
	cr_assert_geq(head, before, "put %d: head went back", i);
	before = head;
	cr_assert_eq(r.ctrl->cap, r.cap);
	cr_assert_eq((uint8_t *)r.ctrl, r.mem);
	cr_assert_eq(r.buf, r.mem + MSGA__RETAIN_CTRL);
	cr_assert_eq(r.mem_len, MSGA__RETAIN_CTRL + r.cap);
	for (size_t k = m->first; k < m->n; k++)
		assert_rec_at(&m->recs[k]);
}

Test(retain, head_is_the_oldest_kept_position_and_only_grows)
{
	struct model m = { .cap = 1000 };

	run_positions(&m, 3000, check_head);
	cr_assert_gt(m.first, 2000, "records were dropped");
	free(m.recs);
}

/*
 * Where a record jumped to the next lap, the end it left is marked SKIP
 * (with its own position in check) when a header fits there, so a reader
 * walking the ring knows to go on at the lap's start; shorter, it is left
 * as it was (the reader skips it by its size). Checked for every end
 * still kept, i.e. at or above head.
 */
static void check_skips(const struct model *m, int i)
{
	for (size_t k = m->first + 1; k <= (size_t)i; k++) {
		const struct model_rec *x = &m->recs[k - 1];
		uint64_t end = x->start + msga__retain_rec_size(x->len);
		uint64_t room = m->recs[k].start - end;
		const struct msga__retain_rec *h = rec_at_pos(end);

		if (room < sizeof(*h))
			continue;
		cr_assert_eq(m->recs[k].start % m->cap, 0);
		cr_assert_eq(h->topic, MSGA__RETAIN_SKIP, "end at %lu",
			     (unsigned long)end);
		cr_assert_eq(h->check, (uint32_t)(end / 8));
	}
}

Test(retain, an_unused_end_that_holds_a_header_is_marked_skip)
{
	struct model m = { .cap = 1000 };

	run_positions(&m, 3000, check_skips);
	free(m.recs);
}

/* The same, by hand: one end of 64 bytes, one of 16. */
Test(retain, skip_marker_by_hand)
{
	const struct msga__retain_rec *h;
	static const uint8_t zero[16];

	cr_assert_eq(msga__retain_init(&r, 640, 1), 0);
	for (uint64_t s = 1; s <= 9; s++)
		cr_assert_eq(put(0, s, 40), 0);
	cr_assert_eq(msga__retain_next_pos(&r, 104), 640);
	cr_assert_eq(put(0, 10, 104), 0);
	h = rec_at_pos(576);
	cr_assert_eq(h->topic, MSGA__RETAIN_SKIP);
	cr_assert_eq(h->check, 576 / 8);
	cr_assert_eq(rec_at_pos(640)->check, 640 / 8);
	/* head stayed on seq 3 (position 128): 1 and 2 went */
	cr_assert_eq(r.ctrl->head, 128);
	msga__retain_fini(&r);

	/* 608 bytes, then 16 left: too short for a SKIP, left untouched */
	cr_assert_eq(msga__retain_init(&r, 624, 1), 0);
	for (uint64_t s = 1; s <= 9; s++)
		cr_assert_eq(put(0, s, 40), 0);
	cr_assert_eq(put(0, 10, 8), 0);
	cr_assert_eq(r.tail_pos, 608);
	cr_assert_eq(msga__retain_next_pos(&r, 0), 624, "a header: wraps");
	cr_assert_eq(put(0, 11, 0), 0);
	cr_assert(!memcmp(r.buf + 608, zero, sizeof(zero)));
	cr_assert_eq(r.ctrl->head, 64, "seq 1 made room for seq 11");
	cr_assert_eq(rec_at_pos(624)->check, 624 / 8);
}
