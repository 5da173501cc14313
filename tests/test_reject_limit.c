/* SPDX-License-Identifier: MIT */
/*
 * How often a publisher reports refused peers (lib/proto/reject_limit.c):
 * at most one MSGA_EVENT_REJECTED per interval, and every refusal counted
 * in exactly one event, so a flood costs a bounded number of callbacks.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "reject_limit.h"

#define MS 1000000ull
#define SEC 1000000000ull

static struct msga__reject_limit l;

/* One refusal at now: the count its event reports, or 0 for none. */
static uint64_t hit(uint64_t now)
{
	uint64_t count = 0;

	if (!msga__reject_limit_hit(&l, now, &count))
		return 0;
	cr_assert_gt(count, 0, "an event reports at least its own refusal");
	return count;
}

Test(reject_limit, first_refusal_reports_one)
{
	uint64_t starts[] = { 0, 1, 5 * SEC, UINT64_MAX / 2 };

	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		msga__reject_limit_init(&l, 10);
		cr_expect_eq(hit(starts[i]), 1, "start %zu", i);
		cr_expect_eq(l.total, 1);
		cr_expect_eq(l.pending, 0);
	}
}

Test(reject_limit, refusals_within_the_interval_are_held)
{
	msga__reject_limit_init(&l, 10); /* one per 100 ms */
	cr_expect_eq(l.interval_ns, 100 * MS);
	cr_expect_eq(hit(1000 * MS), 1);
	for (uint64_t t = 1; t < 100; t++)
		cr_expect_eq(hit(1000 * MS + t * MS - 1), 0, "t %lu",
			     (unsigned long)t);
	cr_expect_eq(l.pending, 99);
	/* the next due one reports the held 99 and itself */
	cr_expect_eq(hit(1100 * MS), 100);
	cr_expect_eq(l.pending, 0);
	cr_expect_eq(hit(1100 * MS + 1), 0);
	cr_expect_eq(hit(1200 * MS - 1), 0);
	cr_expect_eq(hit(1200 * MS), 3);
}

Test(reject_limit, interval_runs_from_the_last_event)
{
	msga__reject_limit_init(&l, 10);
	cr_expect_eq(hit(0), 1);
	cr_expect_eq(hit(50 * MS), 0);
	/* late: due at 100 ms, reported at 730; the next due at 830 */
	cr_expect_eq(hit(730 * MS), 2);
	cr_expect_eq(hit(829 * MS), 0);
	cr_expect_eq(hit(830 * MS), 2);
	/* after a quiet spell, a refusal alone reports 1 */
	cr_expect_eq(hit(60 * SEC), 1);
}

Test(reject_limit, totals_count_every_refusal_once)
{
	uint64_t reported = 0, events = 0, now = 0;

	msga__reject_limit_init(&l, 4); /* one per 250 ms */
	/* a flood: one refusal a millisecond for 10 s */
	for (unsigned int i = 0; i < 10000; i++, now += MS) {
		uint64_t c = hit(now);

		reported += c;
		events += c != 0;
	}
	cr_expect_eq(l.total, 10000);
	cr_expect_eq(reported + l.pending, l.total, "none lost");
	cr_expect_eq(events, 40, "4 a second for 10 s");
	cr_expect_eq(l.pending, 249);
}

Test(reject_limit, per_second_zero_is_one)
{
	msga__reject_limit_init(&l, 0);
	cr_expect_eq(l.interval_ns, SEC);
	cr_expect_eq(hit(0), 1);
	cr_expect_eq(hit(SEC - 1), 0);
	cr_expect_eq(hit(SEC), 2);
	cr_expect_eq(l.total, 3);
}

Test(reject_limit, many_per_second)
{
	msga__reject_limit_init(&l, 1000000000u);
	cr_expect_eq(l.interval_ns, 1);
	cr_expect_eq(hit(7), 1);
	cr_expect_eq(hit(7), 0);
	cr_expect_eq(hit(8), 2);
	msga__reject_limit_init(&l, UINT32_MAX);
	cr_expect_eq(l.interval_ns, 0);
	cr_expect_eq(hit(7), 1);
	cr_expect_eq(hit(7), 1, "interval 0: every refusal reported");
}

Test(reject_limit, init_forgets)
{
	msga__reject_limit_init(&l, 1);
	cr_expect_eq(hit(0), 1);
	cr_expect_eq(hit(1), 0);
	msga__reject_limit_init(&l, 1);
	cr_expect_eq(l.total, 0);
	cr_expect_eq(l.pending, 0);
	cr_expect_eq(hit(1), 1);
}

/* ------------------------------------------------ the events themselves */

static struct {
	int events;
	uint64_t counted;
	int status;
	char peer[64];
} seen;

static void on_event(const struct msga_event *ev, void *user)
{
	cr_assert_eq(ev->type, MSGA_EVENT_REJECTED);
	cr_assert_eq(user, &seen);
	seen.events++;
	seen.counted += ev->count;
	seen.status = ev->status;
	snprintf(seen.peer, sizeof(seen.peer), "%s", ev->peer);
}

/*
 * Every refusal reaches exactly one event: those the limit holds back go
 * out with the tick once it allows, naming the last refusal.
 */
Test(reject_limit, report_and_due_count_every_refusal)
{
	memset(&seen, 0, sizeof(seen));
	msga__reject_limit_init(&l, 10);
	msga__reject_report(&l, 1000 * MS, -EACCES, "a:1", NULL, on_event,
			    &seen);
	cr_expect_eq(seen.events, 1);
	cr_expect_eq(seen.counted, 1);
	for (int i = 0; i < 5; i++)
		msga__reject_report(&l, 1000 * MS + 1 + i, -EPERM, "b:2", NULL,
				    on_event, &seen);
	cr_expect_eq(seen.events, 1, "held back");
	cr_expect_eq(msga__reject_report_due(&l, 1050 * MS, NULL, on_event,
					     &seen), 1100 * MS);
	cr_expect_eq(seen.events, 1);
	cr_expect_eq(msga__reject_report_due(&l, 1100 * MS, NULL, on_event,
					     &seen), UINT64_MAX);
	cr_expect_eq(seen.events, 2);
	cr_expect_eq(seen.counted, 6);
	cr_expect_eq(seen.status, -EPERM);
	cr_expect_str_eq(seen.peer, "b:2");
	cr_expect_eq(msga__reject_report_due(&l, 5000 * MS, NULL, on_event,
					     &seen), UINT64_MAX, "nothing held");
	cr_expect_eq(seen.events, 2);
	cr_expect_eq(l.total, 6);
}

/* Refusals by status, for msga_pub_stats. */
Test(reject_limit, counts_refusals_by_status)
{
	static const int st[] = { -EACCES, -EPERM, -EPERM, -ECONNREFUSED,
				  -ETIMEDOUT, -ETIMEDOUT, -ETIMEDOUT, -EIO };
	msga__reject_limit_init(&l, 10);
	for (unsigned i = 0; i < sizeof(st) / sizeof(*st); i++)
		msga__reject_report(&l, 1000, st[i], "p", NULL, NULL, NULL);
	cr_expect_eq(l.keys, 1);
	cr_expect_eq(l.allow, 2);
	cr_expect_eq(l.limits, 1);
	cr_expect_eq(l.timeouts, 3);
	cr_expect_eq(l.total, 8);
}
