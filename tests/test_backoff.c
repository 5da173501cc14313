/* SPDX-License-Identifier: MIT */
/* test_backoff.c - a subscriber's reconnection backoff (lib/proto). */
#include <errno.h>

#include <criterion/criterion.h>

#include "backoff.h"

Test(backoff, starts_at_the_minimum)
{
	cr_assert_eq(msga__backoff_next(0, 0), MSGA__BACKOFF_MIN_NS);
	cr_assert_eq(msga__backoff_next(0, 1), MSGA__BACKOFF_MIN_NS);
}

Test(backoff, doubles_up_to_the_maximum)
{
	uint64_t w = 0;
	int n = 0;

	do {
		uint64_t prev = w;

		w = msga__backoff_next(w, 0);
		if (prev && w != MSGA__BACKOFF_MAX_NS)
			cr_assert_eq(w, prev * 2);
		cr_assert_leq(w, MSGA__BACKOFF_MAX_NS);
	} while (w < MSGA__BACKOFF_MAX_NS && ++n < 64);
	cr_assert_eq(w, MSGA__BACKOFF_MAX_NS);
	cr_assert_leq(n, 8); /* 10 ms to 1 s: seven doublings */
	cr_assert_eq(msga__backoff_next(w, 0), MSGA__BACKOFF_MAX_NS);
	cr_assert_eq(msga__backoff_next(UINT64_MAX, 0), MSGA__BACKOFF_MAX_NS);
}

Test(backoff, starts_over_after_a_connection_was_up)
{
	cr_assert_eq(msga__backoff_next(MSGA__BACKOFF_MAX_NS, 1),
		     MSGA__BACKOFF_MIN_NS);
}

Test(backoff, due_in_the_upper_half_of_the_wait)
{
	uint64_t rand = 0, now = 1000, w = MSGA__BACKOFF_MIN_NS;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (int i = 0; i < 10000; i++) {
		uint64_t due = msga__backoff_due(now, w, &rand);

		cr_assert_geq(due, now + w / 2);
		cr_assert_leq(due, now + w);
		lo = due < lo ? due : lo;
		hi = due > hi ? due : hi;
	}
	cr_assert_lt(lo, now + w / 2 + w / 8, "spread: low end reached");
	cr_assert_gt(hi, now + w - w / 8, "spread: high end reached");
	cr_assert_neq(rand, 0);
}

Test(backoff, a_zero_wait_is_due_now)
{
	uint64_t rand = 7;

	cr_assert_eq(msga__backoff_due(5, 0, &rand), 5);
}

Test(backoff, final_statuses)
{
	cr_assert(msga__backoff_final(-EACCES));
	cr_assert(msga__backoff_final(-EPERM));
	cr_assert(msga__backoff_final(-ENODEV));
	cr_assert(msga__backoff_final(-EINVAL));
	cr_assert_not(msga__backoff_final(-ECONNREFUSED));
	cr_assert_not(msga__backoff_final(-ETIMEDOUT));
	cr_assert_not(msga__backoff_final(-EHOSTUNREACH));
	cr_assert_not(msga__backoff_final(-ECONNRESET));
	cr_assert_not(msga__backoff_final(0));
}
