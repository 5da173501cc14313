/* SPDX-License-Identifier: MIT */
/*
 * The slow-consumer rule (lib/slow_consumer.c): when a subscriber that
 * holds up its publisher is dropped, in simulated time.
 */
#include <stdint.h>

#include <criterion/criterion.h>

#include "slow_consumer.h"

#define MS 1000000ull
#define LIMIT (1000 * MS)
#define T0 (1000000 * MS) /* any clock value far from 0 */

static enum msga__slow_verdict check(struct msga__slow_consumer *s,
				     uint64_t now, int room, uint64_t *next)
{
	return msga__slow_check(s, now, room, 0, LIMIT, next);
}

Test(slow_consumer, a_subscriber_never_blocking_is_never_dropped)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next;

	/* no room, but no publish wanted any: nothing is held up */
	for (uint64_t t = T0; t < T0 + 10 * LIMIT; t += MS)
		cr_assert_eq(check(&s, t, 0, &next), MSGA__SLOW_OK);
	cr_expect_eq(next, UINT64_MAX, "no look is needed");
}

Test(slow_consumer, dropped_once_it_blocked_for_the_whole_limit)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, t = T0;

	msga__slow_blocked(&s, t, 0, LIMIT);
	for (; t < T0 + LIMIT; t += MS) {
		cr_assert_eq(check(&s, t, 0, &next), MSGA__SLOW_OK, "at %llu",
			     (unsigned long long)(t - T0));
		cr_assert_leq(next, T0 + LIMIT);
		cr_assert_gt(next, t);
	}
	cr_expect_eq(check(&s, T0 + LIMIT, 0, &next), MSGA__SLOW_DROP);
}

Test(slow_consumer, blocking_publishes_do_not_restart_the_time)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, t;

	for (t = T0; t < T0 + LIMIT; t += MS)
		msga__slow_blocked(&s, t, 0, LIMIT);
	cr_expect_eq(check(&s, t, 0, &next), MSGA__SLOW_DROP);
}

/* Looks every millisecond from from to before to, none with room. */
static void look_without_room(struct msga__slow_consumer *s, uint64_t from,
			      uint64_t to)
{
	uint64_t next;

	for (uint64_t t = from; t < to; t += MS)
		cr_assert_eq(check(s, t, 0, &next), MSGA__SLOW_OK,
			     "dropped %llu ms after T0",
			     (unsigned long long)((t - T0) / MS));
}

Test(slow_consumer, room_clears_the_mark_and_the_time_starts_over)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, t = T0;

	msga__slow_blocked(&s, t, 0, LIMIT);
	look_without_room(&s, t, t + LIMIT);
	t += LIMIT - MS;
	cr_expect_eq(check(&s, t, 1, &next), MSGA__SLOW_OK);
	cr_expect_eq(next, UINT64_MAX);
	/* a new block: a whole new limit */
	msga__slow_blocked(&s, t, 0, LIMIT);
	look_without_room(&s, t, t + LIMIT);
	cr_expect_eq(check(&s, t + LIMIT, 0, &next), MSGA__SLOW_DROP);
}

Test(slow_consumer, room_at_the_last_moment_saves_it)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next;

	msga__slow_blocked(&s, T0, 0, LIMIT);
	look_without_room(&s, T0, T0 + LIMIT);
	cr_expect_eq(check(&s, T0 + LIMIT, 1, &next), MSGA__SLOW_OK);
}

/* We did not look for longer than a pause: our absence, not its fault. */
Test(slow_consumer, a_pause_of_ours_restarts_its_time)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, t = T0;

	msga__slow_blocked(&s, t, 0, LIMIT);
	t += LIMIT / 8;
	cr_expect_eq(check(&s, t, 0, &next), MSGA__SLOW_OK);
	t += 2 * LIMIT; /* stopped in a debugger */
	cr_expect_eq(check(&s, t, 0, &next), MSGA__SLOW_OK,
		     "blamed for our own pause");
	/* looked at often from here on: the whole limit, counted anew */
	for (uint64_t u = t + MS; u < t + LIMIT; u += MS)
		cr_assert_eq(check(&s, u, 0, &next), MSGA__SLOW_OK);
	cr_expect_eq(check(&s, t + LIMIT, 0, &next), MSGA__SLOW_DROP);
}

/* A program asleep on its timer wakes within a pause, so never resets. */
Test(slow_consumer, the_next_look_is_due_within_a_pause)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, t = T0;
	int looks = 0;

	msga__slow_blocked(&s, t, 0, LIMIT);
	while (check(&s, t, 0, &next) == MSGA__SLOW_OK) {
		cr_assert_neq(next, UINT64_MAX);
		cr_assert_gt(next, t);
		t = next; /* sleep exactly until told */
		cr_assert_lt(++looks, 100);
	}
	cr_expect_eq(t, T0 + LIMIT, "dropped at %llu ms, not at the limit",
		     (unsigned long long)((t - T0) / MS));
}

/*
 * Slow but keeping up: it frees some room every tenth of the limit, and a
 * busy publisher takes it at once, so no look ever finds room left. The
 * room it made is progress: never dropped. Once it stops making room, the
 * whole limit from then on drops it.
 */
Test(slow_consumer, a_subscriber_making_room_within_the_limit_is_kept)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next, made = 0, t = T0, stop = T0 + 10 * LIMIT;

	msga__slow_blocked(&s, t, made, LIMIT);
	for (; t < stop; t += MS) {
		if ((t - T0) % (LIMIT / 10) == 0)
			made += 4096;
		msga__slow_blocked(&s, t, made, LIMIT); /* took it: full */
		cr_assert_eq(msga__slow_check(&s, t, 0, made, LIMIT, &next),
			     MSGA__SLOW_OK, "dropped %llu ms after T0",
			     (unsigned long long)((t - T0) / MS));
	}
	/* stuck from here: its last room was made at stop - LIMIT / 10 */
	for (; t < stop - LIMIT / 10 + LIMIT; t += MS) {
		msga__slow_blocked(&s, t, made, LIMIT);
		cr_assert_eq(msga__slow_check(&s, t, 0, made, LIMIT, &next),
			     MSGA__SLOW_OK);
	}
	cr_expect_eq(msga__slow_check(&s, t, 0, made, LIMIT, &next),
		     MSGA__SLOW_DROP);
}

/* Its keepalives say it is alive, not that it made room. */
Test(slow_consumer, room_made_before_it_blocked_is_no_progress)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next;

	cr_expect_eq(msga__slow_check(&s, T0, 1, 100, LIMIT, &next),
		     MSGA__SLOW_OK);
	msga__slow_blocked(&s, T0 + MS, 200, LIMIT);
	for (uint64_t t = T0 + MS; t < T0 + MS + LIMIT; t += MS)
		cr_assert_eq(msga__slow_check(&s, t, 0, 200, LIMIT, &next),
			     MSGA__SLOW_OK);
	cr_expect_eq(msga__slow_check(&s, T0 + MS + LIMIT, 0, 200, LIMIT,
				      &next), MSGA__SLOW_DROP);
}

Test(slow_consumer, the_blocking_wait_outlasts_the_limit)
{
	cr_expect_gt(msga__slow_wait_ns(LIMIT), LIMIT);
}

/* The counters msga_pub_conn_stats reads: stalls and the time held up. */
Test(slow_consumer, counts_each_stall_and_the_time_it_held)
{
	struct msga__slow_consumer s = { 0 };
	uint64_t next;

	msga__slow_blocked(&s, T0, 0, LIMIT);
	msga__slow_blocked(&s, T0 + MS, 0, LIMIT); /* the same stall */
	cr_expect_eq(s.stalls, 1);
	cr_expect_eq(check(&s, T0 + 10 * MS, 0, &next), MSGA__SLOW_OK);
	cr_expect_eq(s.held_ns, 0, "still held up: not counted yet");
	cr_expect_eq(check(&s, T0 + 20 * MS, 1, &next), MSGA__SLOW_OK);
	cr_expect_eq(s.held_ns, 20 * MS);
	cr_expect_eq(check(&s, T0 + 30 * MS, 1, &next), MSGA__SLOW_OK);
	cr_expect_eq(s.held_ns, 20 * MS, "room again: nothing more");
	msga__slow_blocked(&s, T0 + 40 * MS, 1, LIMIT);
	cr_expect_eq(s.stalls, 2);
	cr_expect_eq(check(&s, T0 + 45 * MS, 1, &next), MSGA__SLOW_OK);
	cr_expect_eq(s.held_ns, 25 * MS);
}
