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
