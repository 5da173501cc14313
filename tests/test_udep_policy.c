/* SPDX-License-Identifier: MIT */
/* udep_policy.c: a UD publisher's datagram size and the rejoin schedule. */
#include <errno.h>

#include <criterion/criterion.h>

#include "msgaccel.h"
#include "udep_policy.h"

Test(dgram, the_smallest_limit_wins)
{
	cr_assert_eq(msga__dgram_size(4096, 0, 0), 4096);
	cr_assert_eq(msga__dgram_size(4096, 2048, 0), 2048);
	cr_assert_eq(msga__dgram_size(2048, 4096, 0), 2048);
	cr_assert_eq(msga__dgram_size(4096, 2048, 1024), 1024);
	cr_assert_eq(msga__dgram_size(1024, 0, 1500), 1024,
		     "a configured size never raises the MTU");
	cr_assert_eq(msga__dgram_size(4096, 0, MSGA_DATAGRAM_MIN),
		     MSGA_DATAGRAM_MIN);
}

Test(dgram, a_configured_size_below_the_minimum_is_invalid)
{
	cr_assert_eq(msga__dgram_check(0), 0);
	cr_assert_eq(msga__dgram_check(MSGA_DATAGRAM_MIN), 0);
	cr_assert_eq(msga__dgram_check(MSGA_DATAGRAM_MIN - 1), -EINVAL);
	cr_assert_eq(msga__dgram_check(1), -EINVAL);
	cr_assert_eq(msga__dgram_check(UINT32_MAX), 0);
}

Test(rejoin, backoff_doubles_to_its_cap_then_gives_up)
{
	uint64_t total = 0;

	cr_assert_eq(msga__rejoin_delay_ns(0), MSGA__REJOIN_BASE_NS);
	for (uint32_t i = 1; i < MSGA__REJOIN_ATTEMPTS; i++) {
		uint64_t prev = msga__rejoin_delay_ns(i - 1);
		uint64_t d = msga__rejoin_delay_ns(i);

		cr_assert(d == 2 * prev || d == MSGA__REJOIN_CAP_NS,
			  "attempt %u: %llu after %llu", i,
			  (unsigned long long)d, (unsigned long long)prev);
		cr_assert_leq(d, MSGA__REJOIN_CAP_NS);
		total += d;
	}
	cr_assert_eq(msga__rejoin_delay_ns(MSGA__REJOIN_ATTEMPTS), UINT64_MAX);
	cr_assert_eq(msga__rejoin_delay_ns(UINT32_MAX), UINT64_MAX);
	cr_assert_lt(total, 120ull * 1000000000ull, "bounded: about a minute");
}
