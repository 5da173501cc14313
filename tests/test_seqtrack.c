/* SPDX-License-Identifier: MIT */
/* Host unit tests: sequence tracking, gap / duplicate / reorder detection. */
#include <string.h>

#include <criterion/criterion.h>

#include "seqtrack.h"

static struct msga__seqtrack t;

static void setup(void)
{
	msga__seq_init(&t);
}

TestSuite(seqtrack, .init = setup);

Test(seqtrack, in_order_stream_has_no_events)
{
	for (uint64_t s = 1; s <= 5000; s++)
		cr_assert_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(t.c.delivered, 5000);
	cr_expect_eq(t.c.gaps + t.c.dups + t.c.late + t.c.missing, 0);
}

Test(seqtrack, late_joiner_starts_at_the_live_position)
{
	cr_expect_eq(msga__seq_accept(&t, 1000, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(msga__seq_accept(&t, 1001, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(t.c.missing, 0, "nothing before the join is lost");
	cr_expect_eq(msga__seq_accept(&t, 999, NULL), MSGA__SEQ_BEFORE_JOIN);
	cr_expect_eq(t.c.before_join, 1);
	cr_expect_eq(t.c.delivered, 2);
}

Test(seqtrack, gap_is_reported_exactly)
{
	uint64_t missing = 0;

	msga__seq_accept(&t, 1, NULL);
	msga__seq_accept(&t, 2, NULL);
	cr_expect_eq(msga__seq_accept(&t, 7, &missing), MSGA__SEQ_GAP);
	cr_expect_eq(missing, 4, "3, 4, 5, 6 are missing");
	cr_expect_eq(msga__seq_accept(&t, 8, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(t.c.gaps, 1);
	cr_expect_eq(t.c.missing, 4);
}

Test(seqtrack, late_fill_is_reorder_and_second_copy_is_duplicate)
{
	msga__seq_accept(&t, 1, NULL);
	msga__seq_accept(&t, 4, NULL);           /* gap: 2, 3 */
	cr_expect_eq(msga__seq_accept(&t, 3, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, 3, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(msga__seq_accept(&t, 4, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(t.c.late, 1);
	cr_expect_eq(t.c.missing, 1, "only 2 is still missing");
	cr_expect_eq(t.c.dups, 3);
	cr_expect_eq(t.c.delivered, 3);
}

Test(seqtrack, window_edges)
{
	uint64_t w = MSGA__SEQ_WINDOW;

	msga__seq_accept(&t, 1, NULL);
	/* Jump far ahead: 2 .. w+9 missing; the window is then [11, w+11). */
	cr_expect_eq(msga__seq_accept(&t, w + 10, NULL), MSGA__SEQ_GAP);
	cr_expect_eq(msga__seq_accept(&t, 11, NULL), MSGA__SEQ_LATE,
		     "the oldest number inside the window can still fill");
	cr_expect_eq(msga__seq_accept(&t, 10, NULL), MSGA__SEQ_DUP,
		     "older than the window cannot be told apart: dropped");
	cr_expect_eq(msga__seq_accept(&t, w + 9, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(t.c.missing, w + 8 - 2);
}

Test(seqtrack, bits_are_reused_correctly_as_the_window_slides)
{
	/* Every other number for several windows, then fill them in late. */
	msga__seq_accept(&t, 1, NULL);
	for (uint64_t s = 3; s < 4 * MSGA__SEQ_WINDOW; s += 2)
		cr_assert_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_GAP);
	for (uint64_t s = 4 * MSGA__SEQ_WINDOW - 2; s > 3 * MSGA__SEQ_WINDOW;
	     s -= 2)
		cr_assert_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_LATE,
			     "seq %lu", (unsigned long)s);
	/* The odd ones in the window were seen: duplicates. */
	cr_expect_eq(msga__seq_accept(&t, 4 * MSGA__SEQ_WINDOW - 1, NULL),
		     MSGA__SEQ_DUP);
}

Test(seqtrack, zero_is_invalid)
{
	cr_expect_eq(msga__seq_accept(&t, 0, NULL), MSGA__SEQ_INVALID);
	cr_expect_eq(t.c.delivered, 0);
	cr_expect_eq(msga__seq_accept(&t, 5, NULL), MSGA__SEQ_NEXT,
		     "an invalid number does not set the join point");
}

/*
 * UINT64_MAX is a stream's last number: after it nothing is new, and the
 * tracker never goes back to "not joined" (which took any number as the
 * new live position and delivered old numbers again).
 */
Test(seqtrack, the_largest_number_ends_the_stream)
{
	uint64_t max = UINT64_MAX;

	cr_assert_eq(msga__seq_accept(&t, max - 2, NULL), MSGA__SEQ_NEXT);
	cr_assert_eq(msga__seq_accept(&t, max, NULL), MSGA__SEQ_GAP);
	cr_assert_eq(msga__seq_accept(&t, max, NULL), MSGA__SEQ_DUP);
	cr_assert_eq(msga__seq_accept(&t, max - 2, NULL), MSGA__SEQ_DUP);
	cr_assert_eq(msga__seq_accept(&t, max - 1, NULL), MSGA__SEQ_LATE);
	cr_assert_eq(msga__seq_accept(&t, max - 1, NULL), MSGA__SEQ_DUP);
	cr_assert_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_BEFORE_JOIN,
		     "not a new join after the end");
	cr_assert_eq(msga__seq_accept(&t, max - 3, NULL),
		     MSGA__SEQ_BEFORE_JOIN);
	cr_expect_eq(t.c.delivered, 3);
	cr_expect_eq(t.c.missing, 0);
	cr_expect_eq(t.first, max - 2);
}

Test(seqtrack, in_order_up_to_the_end_then_only_duplicates)
{
	uint64_t max = UINT64_MAX;

	for (uint64_t s = max - 5; s != 0; s++)
		cr_assert_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_NEXT,
			     "seq max-%llu", (unsigned long long)(max - s));
	for (uint64_t s = max - 5; s != 0; s++)
		cr_assert_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(t.c.delivered, 6);
	cr_expect_eq(t.c.gaps + t.c.late + t.c.missing, 0);
}

Test(seqtrack, a_jump_to_the_end_reports_the_gap_without_wrapping)
{
	uint64_t missing = 0;

	cr_assert_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_NEXT);
	cr_assert_eq(msga__seq_accept(&t, UINT64_MAX, &missing),
		     MSGA__SEQ_GAP);
	cr_expect_eq(missing, UINT64_MAX - 2);
	cr_assert_eq(msga__seq_accept(&t, 2, NULL), MSGA__SEQ_DUP,
		     "older than the window");
	cr_assert_eq(msga__seq_accept(&t, 5, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(t.c.delivered, 2);
}

/*
 * Reference model: random arrivals (new, repeated, reordered, far jumps)
 * near the bottom, the middle and the top of the number space, checked
 * verdict by verdict against a plain model that keeps every delivered
 * number. No number is ever delivered twice, and the counters agree.
 */
#define MODEL_SPAN (4 * MSGA__SEQ_WINDOW)

struct model {
	uint64_t base;          /* numbers are base + [0, MODEL_SPAN) */
	int joined;
	uint64_t first, last;   /* offsets */
	uint8_t delivered[MODEL_SPAN];
	struct msga__seq_counters c;
};

static enum msga__seq_verdict model_accept(struct model *m, uint64_t off)
{
	if (m->base + off == 0)
		return MSGA__SEQ_INVALID;
	if (!m->joined) {
		m->joined = 1;
		m->first = m->last = off;
		m->delivered[off] = 1;
		m->c.delivered++;
		return MSGA__SEQ_NEXT;
	}
	if (off < m->first) {
		m->c.before_join++;
		return MSGA__SEQ_BEFORE_JOIN;
	}
	if (off > m->last) {
		uint64_t skipped = off - m->last - 1;

		m->last = off;
		m->delivered[off] = 1;
		m->c.delivered++;
		if (!skipped)
			return MSGA__SEQ_NEXT;
		m->c.gaps++;
		m->c.missing += skipped;
		return MSGA__SEQ_GAP;
	}
	if (m->last - off >= MSGA__SEQ_WINDOW || m->delivered[off]) {
		m->c.dups++;
		return MSGA__SEQ_DUP;
	}
	m->delivered[off] = 1;
	m->c.delivered++;
	m->c.late++;
	m->c.missing--;
	return MSGA__SEQ_LATE;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* The next arrival: mostly near the model's live position. */
static uint64_t next_offset(const struct model *m)
{
	uint64_t r = rnd() % 100, pos = m->joined ? m->last : 0;

	if (r < 60)
		pos += 1 + rnd() % 3;                   /* next or a small gap */
	else if (r < 90)
		pos -= pos < 40 ? pos : rnd() % 40;     /* reorder or repeat */
	else if (r < 97)
		pos = rnd() % MODEL_SPAN;               /* anywhere */
	else
		pos += MSGA__SEQ_WINDOW + rnd() % 8;    /* past the window */
	return pos < MODEL_SPAN ? pos : MODEL_SPAN - 1;
}

static void run_model(uint64_t base)
{
	static struct model m;
	uint64_t deliveries[MODEL_SPAN] = { 0 };

	memset(&m, 0, sizeof(m));
	m.base = base;
	msga__seq_init(&t);
	for (int i = 0; i < 20000; i++) {
		uint64_t off = next_offset(&m);
		enum msga__seq_verdict want = model_accept(&m, off);
		enum msga__seq_verdict got = msga__seq_accept(&t, base + off,
							      NULL);

		cr_assert_eq(got, want, "base %llu step %d offset %llu: "
			     "verdict %d, model %d", (unsigned long long)base,
			     i, (unsigned long long)off, got, want);
		if (got == MSGA__SEQ_NEXT || got == MSGA__SEQ_GAP ||
		    got == MSGA__SEQ_LATE)
			cr_assert_eq(++deliveries[off], 1,
				     "offset %llu delivered twice",
				     (unsigned long long)off);
	}
	cr_assert_eq(memcmp(&t.c, &m.c, sizeof(m.c)), 0,
		     "counters differ from the model (base %llu)",
		     (unsigned long long)base);
}

Test(seqtrack, agrees_with_a_reference_model_at_the_bottom)
{
	for (int run = 0; run < 20; run++)
		run_model(run % 2); /* base 0 makes offset 0 the invalid 0 */
}

Test(seqtrack, agrees_with_a_reference_model_in_the_middle)
{
	for (int run = 0; run < 20; run++)
		run_model(1ull << 40 | rnd() >> 30);
}

Test(seqtrack, agrees_with_a_reference_model_at_the_top)
{
	for (int run = 0; run < 20; run++)
		run_model(UINT64_MAX - MODEL_SPAN + 1 - run % 3);
}

/*
 * msga__seq_advance: a heartbeat or an END says the publisher sent every
 * number up to last_sent. What had not arrived of them is a tail gap no
 * later message would have shown.
 */
#define UNTOUCHED 0xdeadbeefull

Test(seqtrack, advance_counts_the_tail_gap_exactly)
{
	uint64_t first = UNTOUCHED;

	for (uint64_t s = 1; s <= 3; s++)
		msga__seq_accept(&t, s, NULL);
	cr_expect_eq(msga__seq_advance(&t, 7, &first), 4, "4, 5, 6, 7 lost");
	cr_expect_eq(first, 4);
	cr_expect_eq(t.c.gaps, 1, "one gap event, not one per number");
	cr_expect_eq(t.c.missing, 4);
	cr_expect_eq(t.c.delivered, 3, "a heartbeat delivers nothing");
	cr_expect_eq(msga__seq_accept(&t, 8, NULL), MSGA__SEQ_NEXT,
		     "after the heartbeat the next is last_sent + 1");
	cr_expect_eq(t.c.gaps, 1);
}

Test(seqtrack, advance_when_up_to_date_or_behind_is_no_gap)
{
	uint64_t first = UNTOUCHED;

	for (uint64_t s = 1; s <= 5; s++)
		msga__seq_accept(&t, s, NULL);
	cr_expect_eq(msga__seq_advance(&t, 5, &first), 0, "up to date");
	/* behind: a heartbeat overtaken by data on the way */
	cr_expect_eq(msga__seq_advance(&t, 3, &first), 0);
	cr_expect_eq(first, UNTOUCHED, "no gap, no first_missing");
	cr_expect_eq(t.c.gaps + t.c.missing + t.c.dups + t.c.late, 0);
	cr_expect_eq(t.last, 5);
	cr_expect_eq(msga__seq_accept(&t, 6, NULL), MSGA__SEQ_NEXT);
}

/* A gap after a heartbeat counts only the numbers after last_sent. */
Test(seqtrack, a_gap_after_an_advance_does_not_count_the_tail_again)
{
	uint64_t first = 0, missing = 0;

	msga__seq_accept(&t, 1, NULL);
	cr_expect_eq(msga__seq_advance(&t, 3, &first), 2);
	cr_expect_eq(msga__seq_accept(&t, 6, &missing), MSGA__SEQ_GAP);
	cr_expect_eq(missing, 2, "4 and 5, not 2 and 3 again");
	cr_expect_eq(t.c.gaps, 2);
	cr_expect_eq(t.c.missing, 4);
}

Test(seqtrack, advance_joins_an_unjoined_tracker_at_last_sent)
{
	uint64_t first = UNTOUCHED;

	cr_expect_eq(msga__seq_advance(&t, 100, &first), 0,
		     "nothing before the join is lost");
	cr_expect_eq(first, UNTOUCHED);
	cr_expect_eq(t.c.gaps + t.c.missing + t.c.delivered, 0);
	cr_expect_eq(t.first, 101, "the join point is the next number");
	cr_expect_eq(msga__seq_accept(&t, 100, NULL), MSGA__SEQ_BEFORE_JOIN,
		     "last_sent itself was sent before we joined");
	cr_expect_eq(msga__seq_accept(&t, 101, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(msga__seq_accept(&t, 50, NULL), MSGA__SEQ_BEFORE_JOIN);
	cr_expect_eq(t.c.before_join, 2);
	cr_expect_eq(t.c.delivered, 1);
	cr_expect_eq(t.c.missing, 0);
}

/* Joined by a heartbeat, then a later heartbeat shows a lost tail. */
Test(seqtrack, advance_after_an_advance_join_counts_from_the_join)
{
	uint64_t first = 0;

	msga__seq_advance(&t, 100, &first);
	cr_expect_eq(msga__seq_advance(&t, 103, &first), 3);
	cr_expect_eq(first, 101);
	cr_expect_eq(msga__seq_accept(&t, 101, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(t.c.missing, 2);
}

Test(seqtrack, a_late_fill_of_the_tail_gap_is_late_last_sent_included)
{
	uint64_t first = 0;

	msga__seq_accept(&t, 1, NULL);
	cr_assert_eq(msga__seq_advance(&t, 4, &first), 3);
	cr_expect_eq(msga__seq_accept(&t, 4, NULL), MSGA__SEQ_LATE,
		     "last_sent was announced, not received");
	cr_expect_eq(t.c.missing, 2);
	cr_expect_eq(msga__seq_accept(&t, 2, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, 3, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(t.c.missing, 0);
	cr_expect_eq(t.c.late, 3);
	cr_expect_eq(t.c.delivered, 4);
	/* filled: every second copy is a duplicate */
	for (uint64_t s = 1; s <= 4; s++)
		cr_expect_eq(msga__seq_accept(&t, s, NULL), MSGA__SEQ_DUP,
			     "seq %llu", (unsigned long long)s);
	cr_expect_eq(t.c.dups, 4);
	cr_expect_eq(t.c.missing, 0, "duplicates do not touch missing");
	cr_expect_eq(msga__seq_accept(&t, 5, NULL), MSGA__SEQ_NEXT);
}

Test(seqtrack, advance_past_the_window_counts_every_number)
{
	uint64_t w = MSGA__SEQ_WINDOW, first = 0;

	msga__seq_accept(&t, 1, NULL);
	/* 2 .. w+11 lost; the window is then (11, w+11] */
	cr_expect_eq(msga__seq_advance(&t, w + 11, &first), w + 10);
	cr_expect_eq(first, 2);
	cr_expect_eq(t.c.missing, w + 10);
	cr_expect_eq(msga__seq_accept(&t, w + 11, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, 12, NULL), MSGA__SEQ_LATE,
		     "the oldest number inside the window can still fill");
	cr_expect_eq(msga__seq_accept(&t, 11, NULL), MSGA__SEQ_DUP,
		     "older than the window cannot be told apart: dropped");
	cr_expect_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(t.c.missing, w + 8);
	cr_expect_eq(msga__seq_accept(&t, w + 12, NULL), MSGA__SEQ_NEXT);
}

Test(seqtrack, advance_to_zero_is_ignored)
{
	uint64_t first = UNTOUCHED;

	cr_expect_eq(msga__seq_advance(&t, 0, &first), 0);
	cr_expect_eq(t.last, 0, "0 does not join: a stream that sent "
		     "nothing says nothing");
	cr_expect_eq(msga__seq_accept(&t, 5, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(t.first, 5);
	cr_expect_eq(msga__seq_advance(&t, 0, &first), 0);
	cr_expect_eq(first, UNTOUCHED);
	cr_expect_eq(t.last, 5);
	cr_expect_eq(t.c.gaps + t.c.missing, 0);
}

Test(seqtrack, advance_to_the_largest_number_counts_the_tail_without_wrapping)
{
	uint64_t max = UINT64_MAX, first = 0;

	cr_assert_eq(msga__seq_accept(&t, max - 3, NULL), MSGA__SEQ_NEXT);
	cr_expect_eq(msga__seq_advance(&t, max, &first), 3);
	cr_expect_eq(first, max - 2);
	cr_expect_eq(msga__seq_advance(&t, max, &first), 0, "said twice");
	cr_expect_eq(msga__seq_accept(&t, max, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, max, NULL), MSGA__SEQ_DUP);
	cr_expect_eq(msga__seq_accept(&t, max - 2, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, max - 1, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_BEFORE_JOIN,
		     "not a new join after the end");
	cr_expect_eq(t.c.missing, 0);
	cr_expect_eq(t.c.delivered, 4);
}

Test(seqtrack, advance_from_the_bottom_to_the_top_counts_all_between)
{
	uint64_t first = 0;

	msga__seq_accept(&t, 1, NULL);
	cr_expect_eq(msga__seq_advance(&t, UINT64_MAX, &first),
		     UINT64_MAX - 1);
	cr_expect_eq(first, 2);
	cr_expect_eq(msga__seq_accept(&t, UINT64_MAX, NULL), MSGA__SEQ_LATE);
	cr_expect_eq(t.c.missing, UINT64_MAX - 2);
}

/* Joined at the very end: nothing is ever new, nothing delivered. */
Test(seqtrack, advance_join_at_the_largest_number_delivers_nothing)
{
	uint64_t max = UINT64_MAX, first = UNTOUCHED;
	enum msga__seq_verdict v;

	cr_expect_eq(msga__seq_advance(&t, max, &first), 0);
	cr_expect_eq(first, UNTOUCHED);
	v = msga__seq_accept(&t, max, NULL);
	cr_expect(v == MSGA__SEQ_DUP || v == MSGA__SEQ_BEFORE_JOIN,
		  "last_sent was sent before the join: verdict %d", v);
	cr_expect_eq(msga__seq_accept(&t, max - 1, NULL),
		     MSGA__SEQ_BEFORE_JOIN);
	cr_expect_eq(msga__seq_accept(&t, 1, NULL), MSGA__SEQ_BEFORE_JOIN);
	cr_expect_eq(t.c.delivered, 0);
	cr_expect_eq(t.c.missing, 0);
}

/*
 * The reference model again, with heartbeats among the arrivals: a
 * heartbeat's last_sent counts every number after the highest one seen
 * as missing (they are then LATE if they come), or joins there.
 */
static uint64_t model_advance(struct model *m, uint64_t off, uint64_t *first)
{
	uint64_t skipped;

	if (m->base + off == 0)
		return 0;
	if (!m->joined) {
		m->joined = 1;
		m->last = off;
		/*
		 * last_sent + 1 is the next; at UINT64_MAX, which has no
		 * next, last_sent is the join point and reads as seen.
		 */
		m->first = m->base + off == UINT64_MAX ? off : off + 1;
		m->delivered[off] = 1;
		return 0;
	}
	if (off <= m->last)
		return 0;
	skipped = off - m->last;
	*first = m->base + m->last + 1;
	m->last = off;
	m->c.gaps++;
	m->c.missing += skipped;
	return skipped;
}

static void run_model_with_heartbeats(uint64_t base)
{
	static struct model m;
	uint64_t deliveries[MODEL_SPAN] = { 0 };

	memset(&m, 0, sizeof(m));
	m.base = base;
	msga__seq_init(&t);
	for (int i = 0; i < 20000; i++) {
		uint64_t off = next_offset(&m);

		if (rnd() % 8 == 0) {
			uint64_t want_first = 0, got_first = 0;
			uint64_t want = model_advance(&m, off, &want_first);
			uint64_t got = msga__seq_advance(&t, base + off,
							 &got_first);

			cr_assert_eq(got, want, "base %llu step %d offset "
				     "%llu: advance %llu, model %llu",
				     (unsigned long long)base, i,
				     (unsigned long long)off,
				     (unsigned long long)got,
				     (unsigned long long)want);
			cr_assert_eq(got_first, want_first, "step %d", i);
		} else {
			enum msga__seq_verdict want = model_accept(&m, off);
			enum msga__seq_verdict got =
				msga__seq_accept(&t, base + off, NULL);

			cr_assert_eq(got, want, "base %llu step %d offset "
				     "%llu: verdict %d, model %d",
				     (unsigned long long)base, i,
				     (unsigned long long)off, got, want);
			if (got == MSGA__SEQ_NEXT || got == MSGA__SEQ_GAP ||
			    got == MSGA__SEQ_LATE)
				cr_assert_eq(++deliveries[off], 1,
					     "offset %llu delivered twice",
					     (unsigned long long)off);
		}
		cr_assert_eq(memcmp(&t.c, &m.c, sizeof(m.c)), 0,
			     "step %d: counters differ from the model", i);
	}
}

Test(seqtrack, heartbeats_agree_with_a_reference_model_at_the_bottom)
{
	for (int run = 0; run < 20; run++)
		run_model_with_heartbeats(run % 2);
}

Test(seqtrack, heartbeats_agree_with_a_reference_model_at_the_top)
{
	for (int run = 0; run < 20; run++)
		run_model_with_heartbeats(UINT64_MAX - MODEL_SPAN + 1 - run % 3);
}

/* ---- the far-ahead guard (issue 26) ---- */

#define W1 (MSGA__SEQ_WINDOW - 1)

static struct msga__seqguard guard_at(uint64_t top)
{
	struct msga__seqguard g = { 0 };

	cr_assert_eq(msga__seq_guard(&g, top, 0, W1), MSGA__GUARD_PASS);
	return g;
}

Test(seqguard, in_order_traffic_is_never_held_and_confirms)
{
	struct msga__seqguard g = { 0 };

	for (uint64_t s = 1; s <= 5000; s++)
		cr_assert_eq(msga__seq_guard(&g, s, 0, 0), MSGA__GUARD_PASS);
	cr_assert_eq(g.far_ahead, 0);
	cr_assert_eq(g.confirms, 255, "saturates");
	cr_assert_eq(g.top, 5000);
}

Test(seqguard, the_first_number_is_taken_wherever_it_is)
{
	struct msga__seqguard g = { 0 };

	cr_assert_eq(msga__seq_guard(&g, UINT64_MAX - 1, 0, 0),
		     MSGA__GUARD_PASS);
	cr_assert_eq(msga__seq_guard(&g, UINT64_MAX, 0, 0), MSGA__GUARD_PASS);
	cr_assert_eq(g.confirms, 1);
	cr_assert_eq(msga__seq_guard(&g, 0, 0, 0), MSGA__GUARD_PASS,
		     "0 is the tracker's to refuse");
}

Test(seqguard, a_gap_inside_the_bound_passes_on_its_own_word)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 100 + W1 + 1, 0, W1),
		     MSGA__GUARD_PASS, "a gap of W - 1: the window tells");
	cr_assert_eq(g.top, 100 + W1 + 1);
	cr_assert_eq(g.confirms, 0, "a gap confirms nothing");
	/* old and late numbers are the tracker's business */
	cr_assert_eq(msga__seq_guard(&g, 150, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(msga__seq_guard(&g, 1, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.far_ahead, 0);
}

Test(seqguard, one_forged_number_far_ahead_is_held_and_changes_nothing)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 100 + W1 + 2, 0, W1),
		     MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 1ull << 62, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 1ull << 62, 0, W1), MSGA__GUARD_HOLD,
		     "the same number again corroborates nothing");
	cr_assert_eq(g.far_ahead, 3);
	cr_assert_eq(g.top, 100, "the stream stays where it was");
	for (uint64_t s = 101; s <= 3000; s++)
		cr_assert_eq(msga__seq_guard(&g, s, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.far_ahead, 3);
}

Test(seqguard, the_next_number_corroborates_a_real_jump)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 5000, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 5001, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.top, 5001);
	cr_assert_eq(g.cand, 0);
	cr_assert_eq(msga__seq_guard(&g, 5002, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.far_ahead, 1);
}

Test(seqguard, a_heartbeat_covering_it_corroborates_a_real_jump)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 5000, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 4999, 1, W1), MSGA__GUARD_HOLD,
		     "a heartbeat before it does not cover it");
	/* (and it is the new candidate: a heartbeat of 4999 ...) */
	cr_assert_eq(msga__seq_guard(&g, 4999, 1, W1), MSGA__GUARD_PASS,
		     "... the publisher's next heartbeat says the same");
	g = guard_at(100);
	cr_assert_eq(msga__seq_guard(&g, 5000, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 5000, 1, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.top, 5000);
	g = guard_at(100);
	cr_assert_eq(msga__seq_guard(&g, 5000, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 5000 + W1 + 2, 1, W1),
		     MSGA__GUARD_HOLD, "too far past it: a new candidate");
}

Test(seqguard, a_heartbeat_far_ahead_waits_for_another)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 100 + W1, 1, W1), MSGA__GUARD_PASS,
		     "a tail gap of W - 1");
	g = guard_at(100);
	cr_assert_eq(msga__seq_guard(&g, 100 + W1 + 1, 1, W1),
		     MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 100 + W1 + 2, 0, W1),
		     MSGA__GUARD_PASS, "the next message after it");
}

Test(seqguard, stop_on_gap_corroborates_every_gap)
{
	struct msga__seqguard g = guard_at(100);

	cr_assert_eq(msga__seq_guard(&g, 101, 0, 0), MSGA__GUARD_PASS);
	cr_assert_eq(msga__seq_guard(&g, 101, 1, 0), MSGA__GUARD_PASS,
		     "a heartbeat of what we have");
	cr_assert_eq(msga__seq_guard(&g, 103, 0, 0), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 102, 0, 0), MSGA__GUARD_PASS,
		     "the number it skipped came: no gap after all");
	cr_assert_eq(msga__seq_guard(&g, 103, 0, 0), MSGA__GUARD_PASS);
	cr_assert_eq(msga__seq_guard(&g, 104, 1, 0), MSGA__GUARD_HOLD,
		     "a tail gap of one, on one heartbeat's word");
	cr_assert_eq(msga__seq_guard(&g, 104, 1, 0), MSGA__GUARD_PASS,
		     "its repetition");
	cr_assert_eq(g.far_ahead, 2);
}

Test(seqguard, the_top_of_the_numbers_does_not_wrap)
{
	struct msga__seqguard g = guard_at(UINT64_MAX - 5000);

	cr_assert_eq(msga__seq_guard(&g, UINT64_MAX, 0, W1), MSGA__GUARD_HOLD);
	cr_assert_eq(msga__seq_guard(&g, 0, 0, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.top, UINT64_MAX - 5000, "UINT64_MAX + 1 is not 0");
	cr_assert_eq(msga__seq_guard(&g, UINT64_MAX, 1, W1), MSGA__GUARD_PASS);
	cr_assert_eq(g.top, UINT64_MAX);
}
