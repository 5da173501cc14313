/* SPDX-License-Identifier: MIT */
/*
 * The walk over a copied span of a retention ring (lib/proto/
 * retain_scan.c), on rings filled by msga__retain_put and copied the way
 * a subscriber's RDMA READ copies them: the bytes of positions lo..hi,
 * each at ring offset position % cap, into one contiguous buffer. A good
 * span gives exactly the records put there, in order; a damaged header
 * stops the walk with -EBADMSG after the records before it. A span
 * longer than one READ, read in repair_sched.c's overlapping chunks and
 * each walked from where the one before stopped, gives each record once.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "retain.h"
#include "retain_scan.h"
#include "repair_sched.h"

static struct msga__retain r;

/* What was put, and where (msga__retain_next_pos, asked before). */
struct sent {
	uint32_t topic, len;
	uint64_t seq, pos;
};

#define MAX_SENT 4096
static struct sent sent[MAX_SENT];
static size_t nsent;

static uint8_t byte_of(uint32_t topic, uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 29 + topic * 101 + i * 3);
}

static void put(uint32_t topic, uint64_t seq, uint32_t len)
{
	uint8_t data[4096];
	struct sent *s = &sent[nsent++];

	cr_assert_leq(len, sizeof(data));
	cr_assert_lt(nsent, MAX_SENT);
	for (uint32_t i = 0; i < len; i++)
		data[i] = byte_of(topic, seq, i);
	*s = (struct sent){ topic, len, seq, msga__retain_next_pos(&r, len) };
	cr_assert_eq(msga__retain_put(&r, topic, seq, data, len), 0);
}

/* A reader's copy of [lo, hi): a heap block of exactly hi - lo bytes. */
static uint8_t *copy_span(uint64_t lo, uint64_t hi)
{
	uint8_t *c = malloc(hi > lo ? hi - lo : 1);

	cr_assert_not_null(c);
	for (uint64_t p = lo; p < hi; p++)
		c[p - lo] = r.buf[p % r.cap];
	return c;
}

/* What fn saw, and when it asks the walk to stop. */
struct seen {
	struct msga__rscan_rec recs[MAX_SENT];
	size_t n;
	size_t stop_at;  /* return stop_ret at this record (0: never) */
	int stop_ret;
	const uint8_t *buf;
	uint64_t lo, hi;
};

static int on_rec(void *arg, const struct msga__rscan_rec *rec)
{
	struct seen *s = arg;
	const uint8_t *data = rec->data;

	/* the record lies in the copy: data is what follows its header */
	cr_assert_geq(rec->pos, s->lo);
	cr_assert_leq(rec->pos + sizeof(struct msga__retain_rec) + rec->len,
		      s->hi);
	cr_assert_eq(data, s->buf + (rec->pos - s->lo) +
				   sizeof(struct msga__retain_rec));
	cr_assert_lt(s->n, MAX_SENT);
	s->recs[s->n++] = *rec;
	return s->n == s->stop_at ? s->stop_ret : 0;
}

static int scan(struct seen *s, const uint8_t *buf, uint64_t lo,
		uint64_t hi, uint32_t max_len)
{
	s->n = 0;
	s->buf = buf;
	s->lo = lo;
	s->hi = hi;
	return msga__retain_scan(buf, lo, hi, r.cap, max_len, on_rec, s);
}

/* fn saw sent[first..first+n) and nothing else, bytes and all. */
static void assert_saw(const struct seen *s, size_t first, size_t n)
{
	cr_assert_eq(s->n, n, "saw %zu records, want %zu", s->n, n);
	for (size_t k = 0; k < n; k++) {
		const struct sent *w = &sent[first + k];
		const struct msga__rscan_rec *g = &s->recs[k];
		const uint8_t *data = g->data;

		cr_assert_eq(g->pos, w->pos, "record %zu: pos %lu", k,
			     (unsigned long)g->pos);
		cr_assert_eq(g->topic_id, w->topic);
		cr_assert_eq(g->seq, w->seq);
		cr_assert_eq(g->len, w->len);
		for (uint32_t i = 0; i < w->len; i++)
			cr_assert_eq(data[i], byte_of(w->topic, w->seq, i));
	}
}

static uint64_t end_of(size_t i)
{
	return sent[i].pos + msga__retain_rec_size(sent[i].len);
}

/* The first record still kept: at or above head. */
static size_t first_kept(void)
{
	size_t i = nsent;

	while (i > 0 && sent[i - 1].pos >= r.ctrl->head)
		i--;
	return i;
}

static void setup(void)
{
	nsent = 0;
}

static void teardown(void)
{
	msga__retain_fini(&r);
}

TestSuite(retain_scan, .init = setup, .fini = teardown);

/*
 * Many topics, lengths from 0 to about a quarter of the ring (unused ends
 * of every size), many wraps; after each put, the whole kept span
 * [head, tail) and a random span between two kept records.
 */
Test(retain_scan, spans_give_exactly_the_records_put_there)
{
	static struct seen s;
	uint64_t last[9] = { 0 };

	srand(3);
	cr_assert_eq(msga__retain_init(&r, 2000, 9), 0);
	for (int i = 0; i < 3000; i++) {
		uint32_t t = (uint32_t)rand() % 9;
		size_t first, a, b;
		uint8_t *c;

		put(t, ++last[t], (uint32_t)rand() % 480);
		first = first_kept();
		cr_assert_eq(sent[first].pos, r.ctrl->head);
		c = copy_span(r.ctrl->head, r.tail_pos);
		cr_assert_eq(scan(&s, c, r.ctrl->head, r.tail_pos, 4096), 0);
		assert_saw(&s, first, nsent - first);
		free(c);
		/* from record a's start to record b's start or end */
		a = first + (size_t)rand() % (nsent - first);
		b = a + (size_t)rand() % (nsent - a);
		c = copy_span(sent[a].pos, end_of(b));
		cr_assert_eq(scan(&s, c, sent[a].pos, end_of(b), 4096), 0);
		assert_saw(&s, a, b - a + 1);
		free(c);
		c = copy_span(sent[a].pos, sent[b].pos);
		cr_assert_eq(scan(&s, c, sent[a].pos, sent[b].pos, 4096), 0);
		assert_saw(&s, a, b - a);
		free(c);
	}
	cr_assert_gt(r.tail_pos / r.cap, 100, "the ring wrapped many times");
}

/*
 * A ring of 640 bytes, nine 64-byte records, then one of 128 that wraps:
 * the end at 576..640 holds a SKIP. Then, in a ring of 624 bytes, the
 * same plus a 32-byte record, leaving a 16-byte end, too short for any
 * header: nothing marks it, the walk passes it by its size.
 */
static void span_across_the_end(size_t cap, int short_end)
{
	static struct seen s;
	size_t w = short_end ? 10 : 9; /* the record that wrapped */
	uint64_t lo, hi, end;
	uint8_t *c;

	cr_assert_eq(msga__retain_init(&r, cap, 2), 0);
	for (uint64_t q = 1; q <= 9; q++)
		put((uint32_t)q % 2, q, 40);
	if (short_end)
		put(0, 10, 8);
	put(1, 11, 104);
	put(0, 12, 0);
	end = end_of(w - 1);
	cr_assert_eq(sent[w].pos, cap, "record %zu wrapped", w);
	cr_assert_eq(cap - end, short_end ? 16 : 64);
	lo = sent[5].pos;
	hi = r.tail_pos;
	c = copy_span(lo, hi);
	cr_assert_eq(scan(&s, c, lo, hi, 4096), 0);
	assert_saw(&s, 5, nsent - 5);
	free(c);
	/* a span that ends at the unused end, then one that ends in it */
	c = copy_span(lo, end);
	cr_assert_eq(scan(&s, c, lo, end, 4096), 0);
	assert_saw(&s, 5, w - 5);
	free(c);
	c = copy_span(lo, end + 8);
	/* a SKIP cut short is a cut header; a short end has none */
	cr_assert_eq(scan(&s, c, lo, end + 8, 4096), short_end ? 0 : -EBADMSG);
	assert_saw(&s, 5, w - 5);
	free(c);
	/* a span that starts in a short end, where no header can be */
	if (short_end) {
		c = copy_span(end + 8, hi);
		cr_assert_eq(scan(&s, c, end + 8, hi, 4096), 0);
		assert_saw(&s, w, nsent - w);
		free(c);
	}
}

Test(retain_scan, a_skip_marker_is_passed)
{
	span_across_the_end(640, 0);
	cr_assert_eq(((struct msga__retain_rec *)(r.buf + 576))->topic,
		     MSGA__RETAIN_SKIP);
}

Test(retain_scan, an_end_too_short_for_a_header_is_passed)
{
	span_across_the_end(624, 1);
}

/*
 * Eight records of 64 bytes in a 1024-byte ring, copied whole: the
 * damaged copies below are this one with one header changed.
 */
static uint8_t *eight_records(void)
{
	cr_assert_eq(msga__retain_init(&r, 1024, 3), 0);
	for (uint64_t q = 1; q <= 8; q++)
		put((uint32_t)q % 3, q, 40);
	return copy_span(0, 512);
}

static struct msga__retain_rec *hdr_in(uint8_t *c, size_t k)
{
	return (struct msga__retain_rec *)(c + sent[k].pos);
}

/* fn saw the records before record k, then the walk said -EBADMSG. */
static void assert_stops_at(uint8_t *c, uint64_t hi, uint32_t max_len,
			    size_t k, const char *why)
{
	static struct seen s;

	cr_assert_eq(scan(&s, c, 0, hi, max_len), -EBADMSG, "%s", why);
	assert_saw(&s, 0, k);
}

Test(retain_scan, a_wrong_check_ends_the_walk)
{
	uint8_t *c = eight_records();

	hdr_in(c, 5)->check ^= 1;
	assert_stops_at(c, 512, 4096, 5, "check off by one");
	hdr_in(c, 5)->check ^= 1;
	/* a header that names the position a lap later: an old copy */
	hdr_in(c, 5)->check += 1024 / 8;
	assert_stops_at(c, 512, 4096, 5, "check a lap ahead");
	free(c);
}

Test(retain_scan, a_length_above_max_len_ends_the_walk)
{
	static struct seen s;
	uint8_t *c = eight_records();

	assert_stops_at(c, 512, 39, 0, "every record is 40 bytes");
	cr_assert_eq(scan(&s, c, 0, 512, 40), 0);
	assert_saw(&s, 0, 8);
	hdr_in(c, 3)->len = UINT32_MAX;
	assert_stops_at(c, 512, UINT32_MAX, 3, "len UINT32_MAX");
	free(c);
}

Test(retain_scan, a_record_past_the_span_ends_the_walk)
{
	uint8_t *c = eight_records();

	/* the span ends inside record 6: its bytes were not copied */
	assert_stops_at(c, sent[6].pos + 48, 4096, 6, "hi inside the data");
	/* a header whose length takes it past the span's end */
	hdr_in(c, 7)->len = 48;
	assert_stops_at(c, 512, 4096, 7, "len 48 crosses hi");
	free(c);
}

Test(retain_scan, a_record_past_the_ring_end_ends_the_walk)
{
	static struct seen s;
	uint8_t *c, *big;

	/* 1024-byte ring, last record at 960..1024: 64 bytes to the end */
	cr_assert_eq(msga__retain_init(&r, 1024, 1), 0);
	for (uint64_t q = 1; q <= 16; q++)
		put(0, q, 40);
	c = copy_span(0, 1024);
	cr_assert_eq(scan(&s, c, 0, 1024, 4096), 0);
	assert_saw(&s, 0, 16);
	free(c);
	/*
	 * A record never runs into the next lap: the last one made 72 bytes
	 * long (len 48) is refused, in a span ending at the lap's end and in
	 * one that goes on 64 bytes past it, where only the ring end is
	 * crossed.
	 */
	big = malloc(1088);
	cr_assert_not_null(big);
	for (uint64_t p = 0; p < 1088; p++)
		big[p] = r.buf[p % 1024];
	((struct msga__retain_rec *)(big + 960))->len = 48;
	cr_assert_eq(scan(&s, big, 0, 1024, 4096), -EBADMSG);
	assert_saw(&s, 0, 15);
	cr_assert_eq(scan(&s, big + 64, 64, 1088, 4096), -EBADMSG);
	assert_saw(&s, 1, 14);
	free(big);
}

Test(retain_scan, a_truncated_header_ends_the_walk)
{
	uint8_t *c = eight_records();

	for (uint64_t cut = 8; cut < 24; cut += 8)
		assert_stops_at(c, sent[4].pos + cut, 4096, 4,
				"a header cut short");
	free(c);
}

Test(retain_scan, fn_stops_the_walk_with_its_value)
{
	static struct seen s;
	uint8_t *c = eight_records();

	s.stop_at = 3;
	s.stop_ret = 42;
	cr_assert_eq(scan(&s, c, 0, 512, 4096), 42);
	assert_saw(&s, 0, 3);
	s.stop_ret = -5;
	cr_assert_eq(scan(&s, c, 0, 512, 4096), -5);
	assert_saw(&s, 0, 3);
	s.stop_at = 8;
	s.stop_ret = 1;
	cr_assert_eq(scan(&s, c, 0, 512, 4096), 1, "stopped on the last");
	assert_saw(&s, 0, 8);
	free(c);
}

static int must_not_be_called(void *arg, const struct msga__rscan_rec *rec)
{
	(void)arg;
	(void)rec;
	cr_assert_fail("fn called on bad arguments");
	return 0;
}

Test(retain_scan, bad_arguments)
{
	static const uint8_t buf[64];
	struct {
		uint64_t lo, hi, cap;
	} bad[] = {
		{ 0, 24, 0 },      /* no ring */
		{ 0, 24, 1028 },   /* cap not a multiple of 8 */
		{ 4, 28, 1024 },   /* lo */
		{ 0, 28, 1024 },   /* hi */
		{ 32, 8, 1024 },   /* hi below lo */
		{ 0, 40, 32 },     /* more than the ring */
		{ UINT64_MAX - 7, 0, 1024 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(msga__retain_scan(buf, bad[i].lo, bad[i].hi,
					       bad[i].cap, 4096,
					       must_not_be_called, NULL),
			     -EINVAL, "case %zu", i);
	/* an empty span is fine: nothing to walk */
	cr_assert_eq(msga__retain_scan(buf, 64, 64, 1024, 4096,
				       must_not_be_called, NULL), 0);
}

/*
 * Positions are the peer's numbers: a span at the very top of the 64-bit
 * range must end at hi like any other, not count on past 2^64 and back to
 * 0 (which would read before or after the copy). A copy of 24 bytes at
 * 2^64 - 32 holds a SKIP (a 32-byte end up to 2^64, a multiple of cap);
 * then 8 bytes at 2^64 - 16, a 16-byte end. Beyond each copy lies a
 * header that would be valid at position 0, which a walk that wrapped
 * would take for a record.
 */
Test(retain_scan, a_span_at_the_top_of_the_position_range)
{
	static struct seen s;
	uint64_t cap = 1ull << 35;
	struct msga__retain_rec skip = { .topic = MSGA__RETAIN_SKIP };
	struct msga__retain_rec bait = { .topic = 1, .seq = 7, .check = 0 };
	uint8_t mem[128] = { 0 };

	cr_assert_eq(msga__retain_init(&r, 1024, 1), 0); /* for teardown */
	skip.check = (uint32_t)((UINT64_MAX - 31) / 8);
	memcpy(mem, &skip, sizeof(skip));
	memcpy(mem + 32, &bait, sizeof(bait));
	s.buf = mem;
	s.lo = UINT64_MAX - 31;
	s.hi = UINT64_MAX - 7;
	s.n = 0;
	cr_assert_eq(msga__retain_scan(mem, UINT64_MAX - 31, UINT64_MAX - 7,
				       cap, 4096, on_rec, &s), 0);
	cr_assert_eq(s.n, 0);
	memset(mem, 0, sizeof(mem));
	memcpy(mem + 16, &bait, sizeof(bait));
	s.lo = UINT64_MAX - 15;
	cr_assert_eq(msga__retain_scan(mem, UINT64_MAX - 15, UINT64_MAX - 7,
				       cap, 4096, on_rec, &s), 0);
	cr_assert_eq(s.n, 0);
}

/*
 * Ring positions [lo, hi) read in chunks of at most chunk_max bytes that
 * overlap by the largest record, as msga__rsched_next hands them out
 * (two in flight, completing in order), each chunk's walk beginning
 * where the previous one stopped: fn sees exactly the records of the
 * span, once each, in order.
 */
static void walk_in_chunks(uint64_t lo, uint64_t hi, uint64_t chunk_max,
			   uint32_t max_len, size_t first, size_t n)
{
	static struct seen s;
	static struct msga__rscan_rec all[MAX_SENT];
	struct msga__rsched_cfg cfg = {
		.chunk_max = chunk_max,
		.overlap = msga__retain_rec_size(max_len),
		.max_inflight = 2, .max_regions = 4,
	};
	struct msga__rsched rs;
	size_t got = 0, chunks = 0;
	uint32_t id;
	uint64_t clo, chi;

	cr_assert_eq(msga__rsched_init(&rs, &cfg), 0);
	cr_assert_eq(msga__rsched_add(&rs, lo, hi), 0);
	while (msga__rsched_next(&rs, &id, &clo, &chi)) {
		uint64_t from, stopped;
		uint8_t *c = copy_span(clo, chi);
		int ret;

		cr_assert_leq(chi - clo, chunk_max);
		cr_assert_eq(msga__rsched_walk_from(&rs, id, &from), 0);
		s.n = 0;
		s.buf = c;
		s.lo = clo;
		s.hi = chi;
		ret = msga__retain_walk(c, clo, from, chi, r.cap, max_len,
					on_rec, &s, &stopped);
		cr_assert_eq(ret, 0, "chunk [%lu, %lu) from %lu: %d",
			     (unsigned long)clo, (unsigned long)chi,
			     (unsigned long)from, ret);
		cr_assert_geq(msga__rsched_done(&rs, id, stopped), 0);
		for (size_t k = 0; k < s.n; k++)
			all[got++] = s.recs[k];
		free(c);
		chunks++;
	}
	cr_assert_eq(rs.nreg, 0, "the span was walked to its end");
	cr_assert_eq(got, n, "saw %zu records in %zu chunks, want %zu", got,
		     chunks, n);
	for (size_t k = 0; k < n; k++) {
		cr_assert_eq(all[k].pos, sent[first + k].pos);
		cr_assert_eq(all[k].seq, sent[first + k].seq);
		cr_assert_eq(all[k].topic_id, sent[first + k].topic);
	}
	msga__rsched_fini(&rs);
}

Test(retain_scan, a_long_span_walked_in_overlapping_chunks_gives_each_record_once)
{
	uint64_t last[3] = { 0 };
	size_t first;

	srand(7);
	/* 64 KiB of ring, records of 0..480 bytes: spans across its end */
	cr_assert_eq(msga__retain_init(&r, 64 << 10, 3), 0);
	for (int i = 0; i < 1500; i++) {
		uint32_t t = (uint32_t)rand() % 3;

		put(t, ++last[t], (uint32_t)rand() % 481);
	}
	first = first_kept();
	cr_assert_gt(r.tail_pos, r.cap, "the ring wrapped");
	/* chunks of 4 KiB, of 1 KiB (barely above the overlap), of all */
	walk_in_chunks(r.ctrl->head, r.tail_pos, 4096, 480, first,
		       nsent - first);
	walk_in_chunks(r.ctrl->head, r.tail_pos,
		       msga__retain_rec_size(480) + 8, 480, first,
		       nsent - first);
	walk_in_chunks(sent[first + 10].pos, sent[nsent - 10].pos, 8192, 480,
		       first + 10, nsent - 10 - (first + 10));
}
