/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the receive clock (lib/rx_clock.c): the rate and anchor
 * arithmetic with made-up readings, then the real clock against
 * clock_gettime() on this machine (through the TSC where the kernel uses
 * it, through clock_gettime() otherwise).
 */
#include <criterion/criterion.h>

#include "rx_clock.h"

/* A made-up TSC of 2.5 ticks per ns, from an arbitrary start. */
#define T0 1000000007ull
#define N0 5000000000ull
#define CAL MSGA__RX_CLOCK_CAL_NS
static uint64_t tsc_at(uint64_t ns_since) { return T0 + ns_since * 5 / 2; }

/* A clock with its first rate, anchored CAL ns after T0/N0. */
static void rated(struct msga__rx_clock *c, int tsc_ok)
{
	msga__rx_clock_init(c, tsc_ok);
	msga__rx_clock_anchor(c, T0, N0);
	cr_assert_eq(msga__rx_clock_anchor(c, tsc_at(CAL), N0 + CAL), 1);
}

Test(rx_clock, no_stamp_before_a_rate)
{
	struct msga__rx_clock c;

	msga__rx_clock_init(&c, 1);
	cr_expect_eq(msga__rx_clock_extrapolate(&c, T0), 0);
	cr_expect_eq(msga__rx_clock_anchor(&c, T0, N0), 0);
	cr_expect_eq(msga__rx_clock_extrapolate(&c, tsc_at(1000)), 0);
	/* Short of MSGA__RX_CLOCK_CAL_NS: still none. */
	cr_expect_eq(msga__rx_clock_anchor(&c, tsc_at(CAL - 1), N0 + CAL - 1),
		     0);
	cr_expect_eq(msga__rx_clock_extrapolate(&c, tsc_at(CAL)), 0);
}

Test(rx_clock, extrapolates_at_the_measured_rate)
{
	struct msga__rx_clock c;
	uint64_t cal = CAL;

	rated(&c, 1);
	for (uint64_t d = 0; d < MSGA__RX_CLOCK_REACH_NS; d += 999983) {
		uint64_t t = msga__rx_clock_extrapolate(&c, tsc_at(cal + d));

		cr_expect(t + 1 >= N0 + cal + d && t <= N0 + cal + d + 1,
			  "%llu ns past the anchor read as %lld",
			  (unsigned long long)d,
			  (long long)(t - N0 - cal));
	}
}

Test(rx_clock, reads_the_kernel_beyond_reach_or_before_the_anchor)
{
	struct msga__rx_clock c;
	uint64_t cal = CAL;

	rated(&c, 1);
	cr_expect_neq(msga__rx_clock_extrapolate(&c, tsc_at(cal +
				MSGA__RX_CLOCK_REACH_NS - 1)), 0);
	cr_expect_eq(msga__rx_clock_extrapolate(&c, tsc_at(cal +
				MSGA__RX_CLOCK_REACH_NS + 1)), 0);
	/* A TSC behind the anchor (another CPU's, a little behind) */
	cr_expect_eq(msga__rx_clock_extrapolate(&c, tsc_at(cal) - 1), 0);
}

Test(rx_clock, follows_a_new_rate_each_second)
{
	struct msga__rx_clock c;
	uint64_t cal = CAL, sec = MSGA__RX_CLOCK_RATE_NS;
	uint64_t tsc, ns, t;

	rated(&c, 1);
	/* Anchors within the second keep the rate... */
	cr_expect_eq(msga__rx_clock_anchor(&c, tsc_at(cal + sec / 2),
					   N0 + cal + sec / 2), 0);
	/* ...then CLOCK_MONOTONIC runs 100 ppm fast (NTP slewing): after the
	 * next second the rate follows, and 10 ms of extrapolation is off
	 * by at most a nanosecond or so. */
	tsc = tsc_at(cal + sec);
	ns = N0 + cal + sec + sec / 10000;
	cr_assert_eq(msga__rx_clock_anchor(&c, tsc, ns), 1);
	t = msga__rx_clock_extrapolate(&c, tsc + 24000000); /* 9.6 ms */
	cr_expect(t >= ns + 9600960 - 2 && t <= ns + 9600960 + 2,
		  "9.6 ms at +100 ppm read as %lld ns", (long long)(t - ns));
}

Test(rx_clock, never_extrapolates_without_the_tsc)
{
	struct msga__rx_clock c;

	rated(&c, 0);
	cr_expect_eq(msga__rx_clock_extrapolate(&c, tsc_at(CAL + 1000)), 0);
}

/*
 * The real clock, for 200 ms (past the first rate): every stamp within a
 * bracket of clock_gettime() reads around it, and never going back. The
 * slack covers the extrapolation's error (well under 1 us) many times.
 */
Test(rx_clock, agrees_with_clock_monotonic)
{
	const uint64_t slack = 50000;
	struct msga__rx_clock c;
	uint64_t start = msga__mono_ns(), prev = 0, before, t, after;
	long n = 0;

	msga__rx_clock_init(&c, msga__clocksource_is_tsc());
	do {
		before = msga__mono_ns();
		t = msga__rx_clock_now(&c);
		after = msga__mono_ns();
		cr_assert(t + slack >= before && t <= after + slack,
			  "stamp %lld ns from the bracket [0, %lld] (tsc %d)",
			  (long long)(t - before), (long long)(after - before),
			  c.tsc_ok);
		cr_assert_geq(t, prev);
		prev = t;
		n++;
	} while (after - start < 200000000u);
	cr_log_info("%ld stamps, through the %s", n,
		    c.tsc_ok ? "TSC" : "kernel's clock");
	/* On a TSC clocksource the fast path must have been taken. */
	if (msga__clocksource_is_tsc())
		cr_expect_neq(c.mult, 0);
}
