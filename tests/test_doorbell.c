/* SPDX-License-Identifier: MIT */
/*
 * The doorbell rule (lib/proto/doorbell.h): when a publisher's send is
 * held back to go with later ones, and that nothing is held past the cap.
 */
#include <criterion/criterion.h>

#include "doorbell.h"

Test(doorbell, busy_mark_is_two_signal_periods_at_most_half_the_queue)
{
	cr_assert_eq(msga__db_busy_mark(512, 32), 64);
	cr_assert_eq(msga__db_busy_mark(64, 32), 32);
	cr_assert_eq(msga__db_busy_mark(1, 32), 1);
	cr_assert_eq(msga__db_busy_mark(0, 0), 1);
}

Test(doorbell, an_idle_queue_sends_at_once)
{
	for (uint64_t out = 0; out < 64; out++)
		cr_assert_not(msga__db_hold(0, 1, out, 0, 512, 32));
}

Test(doorbell, a_busy_queue_holds_back_unless_turned_off)
{
	cr_assert(msga__db_hold(0, 1, 64, 0, 512, 32));
	cr_assert(msga__db_hold(0, 1, 500, 10, 512, 32));
	cr_assert_not(msga__db_hold(0, 0, 500, 10, 512, 32));
}

Test(doorbell, more_holds_back_even_when_idle_or_turned_off)
{
	cr_assert(msga__db_hold(1, 0, 0, 0, 512, 32));
	cr_assert(msga__db_hold(1, 1, 0, 5, 512, 32));
}

Test(doorbell, never_more_than_the_cap)
{
	uint32_t held = 0;

	/* a caller that always says more: the cap's request rings */
	while (msga__db_hold(1, 1, 500, held, 512, 32))
		held++;
	cr_assert_eq(held, MSGA__DB_HOLD_MAX - 1);
	cr_assert_not(msga__db_hold(1, 1, 500, MSGA__DB_HOLD_MAX, 512, 32));
}
