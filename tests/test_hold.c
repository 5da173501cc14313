/* SPDX-License-Identifier: MIT */
/*
 * A receive buffer's holds (lib/proto/hold.c): messages are named by
 * their delivery stamps, so a copy of an earlier message that sat in the
 * same buffer neither holds nor releases the message there now (issue
 * 33), and nothing of it lives in the buffer's bytes.
 */
#include <errno.h>

#include <criterion/criterion.h>

#include "hold.h"
#include "rx_clock.h"

Test(hold, a_held_message_is_held_until_released_once)
{
	struct msga__holds h = { 0 };

	cr_assert(!msga__holds_has(&h, 1000));
	cr_assert_eq(msga__holds_take(&h, 1000), 0);
	cr_assert(msga__holds_has(&h, 1000));
	cr_assert_eq(msga__holds_take(&h, 1000), -EALREADY);
	cr_assert_eq(h.n, 1);
	cr_assert_eq(msga__holds_give(&h, 1000), 1);
	cr_assert_eq(msga__holds_give(&h, 1000), 0, "a second release");
	cr_assert_eq(h.n, 0);
}

/* The case: A released twice while B, in A's buffer, is held. */
Test(hold, a_stale_copy_of_the_buffers_earlier_message_releases_nothing)
{
	struct msga__holds h = { 0 };
	uint64_t a = 5000, b = 9000;

	cr_assert_eq(msga__holds_take(&h, a), 0);
	cr_assert_eq(msga__holds_give(&h, a), 1);
	/* the buffer is re-posted and filled again: B */
	cr_assert_eq(msga__holds_take(&h, b), 0);
	cr_assert_eq(msga__holds_give(&h, a), 0);
	cr_assert_eq(msga__holds_give(&h, a), 0);
	cr_assert(!msga__holds_has(&h, a));
	cr_assert(msga__holds_has(&h, b));
	cr_assert_eq(h.n, 1, "B is still held: the buffer stays ours");
	cr_assert_eq(msga__holds_give(&h, b), 1);
}

Test(hold, batch_records_are_held_and_released_each_on_its_own)
{
	struct msga__holds h = { 0 };
	uint64_t first = 777;

	/* records 0..169 of one fill: stamps first .. first + 169 */
	cr_assert_eq(msga__holds_take(&h, first + 3), 0);
	cr_assert_eq(msga__holds_take(&h, first + 4), 0);
	cr_assert_eq(msga__holds_take(&h, first + 169), 0);
	cr_assert(!msga__holds_has(&h, first + 2), "delivered, not held");
	cr_assert(!msga__holds_has(&h, first + 5));
	cr_assert_eq(msga__holds_give(&h, first + 2), 0);
	cr_assert_eq(msga__holds_give(&h, first + 4), 1);
	cr_assert_eq(msga__holds_give(&h, first + 4), 0);
	cr_assert(msga__holds_has(&h, first + 3));
	cr_assert_eq(h.n, 2);
	cr_assert_eq(msga__holds_give(&h, first + 169), 1);
	cr_assert_eq(msga__holds_give(&h, first + 3), 1);
	cr_assert_eq(h.n, 0);
}

Test(hold, a_fill_longer_than_a_buffer_can_carry_is_refused)
{
	struct msga__holds h = { 0 };

	cr_assert_eq(msga__holds_take(&h, 100), 0);
	cr_assert_eq(msga__holds_take(&h, 100 + MSGA__HOLD_RECS_MAX - 1), 0);
	cr_assert_eq(msga__holds_take(&h, 100 + MSGA__HOLD_RECS_MAX), -EINVAL);
	cr_assert_eq(msga__holds_take(&h, 99), -EINVAL);
	cr_assert_eq(h.n, 2);
	cr_assert(!msga__holds_has(&h, 100 + MSGA__HOLD_RECS_MAX));
}

/* What makes a stamp a name: holdable deliveries never share one. */
Test(hold, delivery_stamps_strictly_increase_even_from_one_poll)
{
	struct msga__rx_clock c;
	uint64_t s1, s2, s3, s4;

	msga__rx_clock_init(&c, 0);
	s1 = msga__rx_clock_unique(&c, 1000);
	s2 = msga__rx_clock_unique(&c, 1000);
	s3 = msga__rx_clock_unique(&c, 1000);
	s4 = msga__rx_clock_unique(&c, 900); /* an earlier poll's stamp */
	cr_assert_eq(s1, 1000, "the poll's stamp, when it is new");
	cr_assert_eq(s2, 1001);
	cr_assert_eq(s3, 1002);
	cr_assert_eq(s4, 1003);
	cr_assert_eq(msga__rx_clock_unique(&c, 5000), 5000);
}
