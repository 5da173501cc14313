/* SPDX-License-Identifier: MIT */
/* Host unit tests: sequence tracking, gap / duplicate / reorder detection. */
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
