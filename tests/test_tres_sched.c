/* SPDX-License-Identifier: MIT */
/*
 * Topic resolution's advert schedule and byte budget
 * (lib/proto/tres_sched.c): the fast phase and its doubling, the sustain
 * period, a query's answer within its bound, and a budget that holds the
 * adverts of 100 000 topics to its rate however often it is asked.
 */
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "tres_sched.h"

#define MS 1000000ull
#define S 1000000000ull

static const struct msga__tres_timing *T = &msga__tres_defaults;

Test(tres_sched, defaults_are_usable_and_bad_timings_refused)
{
	struct msga__tres_timing t = msga__tres_defaults;

	cr_assert_eq(msga__tres_timing_check(&t), 0);
	t.initial_min_ns = 0;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
	t = msga__tres_defaults;
	t.initial_min_ns = t.initial_max_ns + 1;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
	t = msga__tres_defaults;
	t.sustain_ns = 0;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
	t = msga__tres_defaults;
	t.bytes_per_s = 0;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
	t = msga__tres_defaults;
	t.burst = 0;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
	t = msga__tres_defaults;
	t.burst = 1ull << 40;
	cr_expect_eq(msga__tres_timing_check(&t), -EINVAL);
}

/* At once, then 10, 20, 40 ... ms up to 500 ms while younger than 5 s,
 * then every second. */
Test(tres_sched, fast_phase_then_sustain)
{
	struct msga__tres_topic s;
	uint64_t now = 1000 * S, want = 10 * MS;
	int n = 0;

	msga__tres_topic_new(&s, now);
	cr_assert_eq(s.due_ns, now, "a new topic is due at once");
	while (now - s.born_ns < T->initial_ns) {
		msga__tres_topic_sent(&s, T, now);
		cr_assert_eq(s.due_ns - now, want, "advert %d", n);
		now = s.due_ns;
		want = want * 2 > T->initial_max_ns ? T->initial_max_ns
						    : want * 2;
		n++;
	}
	/* at 0, 10, 30, 70, 150, 310 ms (waits 10 to 320 ms), then every
	 * 500 ms from 630 ms to 4630 ms */
	cr_expect_eq(n, 6 + 9, "%d adverts in the fast phase", n);
	msga__tres_topic_sent(&s, T, now);
	cr_expect_eq(s.due_ns - now, T->sustain_ns);
	now = s.due_ns;
	msga__tres_topic_sent(&s, T, now);
	cr_expect_eq(s.due_ns - now, T->sustain_ns);
}

/* A query brings the advert forward, never back, within answer_max,
 * and the answers of many topics spread out. */
Test(tres_sched, a_query_is_answered_within_its_bound)
{
	uint64_t now = 50 * S, rand = 0, lo = UINT64_MAX, hi = 0;
	struct msga__tres_topic s;

	for (int i = 0; i < 1000; i++) {
		msga__tres_topic_new(&s, now - 10 * S);
		msga__tres_topic_sent(&s, T, now); /* due in 1 s */
		msga__tres_topic_asked(&s, T, now, &rand);
		cr_assert_geq(s.due_ns, now);
		cr_assert_leq(s.due_ns, now + T->answer_max_ns);
		lo = s.due_ns < lo ? s.due_ns : lo;
		hi = s.due_ns > hi ? s.due_ns : hi;
	}
	cr_expect_gt(hi - lo, T->answer_max_ns / 2, "answers spread out");
	msga__tres_topic_new(&s, now);
	msga__tres_topic_asked(&s, T, now, &rand);
	cr_expect_eq(s.due_ns, now, "already due: stays due");
}

Test(tres_sched, budget_grants_its_burst_then_its_rate)
{
	struct msga__tres_budget b;
	uint64_t now = 7 * S, got = 0;

	msga__tres_budget_init(&b, T, now);
	while (msga__tres_budget_take(&b, T, now, 1000))
		got += 1000;
	cr_expect_eq(got, T->burst / 1000 * 1000, "the burst at once");
	cr_expect_eq(msga__tres_budget_take(&b, T, now, 1000), 0);
	cr_expect_gt(msga__tres_budget_when(&b, T, now, 1000), now);
	cr_expect_eq(msga__tres_budget_when(&b, T, now, T->burst + 1),
		     UINT64_MAX, "more than a burst: never");
	cr_expect_eq(msga__tres_budget_take(&b, T, now + 3600 * S,
					    T->burst + 1), 0);
}

/*
 * Asked every 10 us for 10 s by adverts of about 90 bytes (100 000 topics
 * all due), the budget grants its burst plus its rate, and no more; and
 * msga__tres_budget_when() is exact: a take at that time is granted.
 */
Test(tres_sched, budget_holds_its_rate_however_often_asked)
{
	struct msga__tres_budget b;
	uint64_t start = 3 * S, now, got = 0, dur = 10 * S;

	msga__tres_budget_init(&b, T, start);
	for (now = start; now < start + dur; now += 10000)
		while (msga__tres_budget_take(&b, T, now, 90))
			got += 90;
	cr_expect_leq(got, T->burst + T->bytes_per_s * dur / S);
	cr_expect_geq(got, T->bytes_per_s * dur / S - 90 * 2,
		      "%llu bytes in 10 s", (unsigned long long)got);
	for (int i = 0; i < 100; i++) {
		uint64_t when = msga__tres_budget_when(&b, T, now, 1400);

		cr_assert_geq(when, now);
		cr_assert(msga__tres_budget_take(&b, T, when, 1400),
			  "not granted at its time");
		if (when > now)
			cr_assert_eq(msga__tres_budget_take(&b, T, when, 1), 0,
				     "granted exactly, nothing left over");
		now = when;
	}
}

/* A clock that stands still or steps back grants nothing new. */
Test(tres_sched, budget_ignores_a_clock_that_steps_back)
{
	struct msga__tres_budget b;
	uint64_t now = 100 * S;

	msga__tres_budget_init(&b, T, now);
	cr_assert(msga__tres_budget_take(&b, T, now, T->burst));
	cr_expect_eq(msga__tres_budget_take(&b, T, now - S, 1), 0);
	cr_expect_eq(msga__tres_budget_take(&b, T, now, 1), 0);
}
