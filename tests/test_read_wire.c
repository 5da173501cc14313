/* SPDX-License-Identifier: MIT */
/*
 * The READ endpoint's offer (lib/proto/read_wire.c), 32 bytes of rdma_cm
 * private data from the publisher: layout, round trip, and every reason a
 * subscriber refuses one, since it then READs by what the offer says.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "byteorder.h"
#include "read_wire.h"
#include "retain.h"

static uint8_t buf[64];

static const struct msga__rdw_offer good = {
	.rkey = 0x11223344u,
	.len = MSGA__RETAIN_CTRL + (1u << 20),
	.cap = 1u << 20,
};

static void put(uint64_t len, uint64_t cap)
{
	struct msga__rdw_offer o = good;

	o.len = len;
	o.cap = cap;
	msga__rdw_put(buf, &o);
}

static int get(uint32_t n)
{
	struct msga__rdw_offer o;

	return msga__rdw_get(buf, n, &o);
}

Test(read_wire, layout_is_little_endian)
{
	static const uint8_t want[MSGA__RDW_LEN] = {
		'M', 'S', 'G', 'R', 1, 0, 0, 0,
		0x44, 0x33, 0x22, 0x11, 0, 0, 0, 0,
		0x40, 0, 0x10, 0, 0, 0, 0, 0,
		0, 0, 0x10, 0, 0, 0, 0, 0,
	};

	memset(buf, 0xee, sizeof(buf));
	msga__rdw_put(buf, &good);
	cr_assert_arr_eq(buf, want, sizeof(want));
	cr_assert_eq(buf[MSGA__RDW_LEN], 0xee, "32 bytes, no more");
}

Test(read_wire, round_trip)
{
	struct msga__rdw_offer got;
	uint64_t caps[] = { 8, 4096, 1ull << 35 };

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct msga__rdw_offer o = { .rkey = (uint32_t)i * 0x9e3779b9u,
					     .len = MSGA__RETAIN_CTRL + caps[i],
					     .cap = caps[i] };

		memset(&got, 0xa5, sizeof(got));
		msga__rdw_put(buf, &o);
		cr_assert_eq(msga__rdw_get(buf, MSGA__RDW_LEN, &got), 0,
			     "cap %lu", (unsigned long)caps[i]);
		cr_assert_eq(got.rkey, o.rkey);
		cr_assert_eq(got.len, o.len);
		cr_assert_eq(got.cap, o.cap);
	}
	/* private data may be longer than the offer (rdma_cm pads it) */
	cr_assert_eq(get(sizeof(buf)), 0);
}

Test(read_wire, short_is_refused)
{
	msga__rdw_put(buf, &good);
	for (uint32_t n = 0; n < MSGA__RDW_LEN; n++)
		cr_assert_eq(get(n), -EPROTO, "%u bytes", n);
	cr_assert_eq(get(MSGA__RDW_LEN), 0);
}

Test(read_wire, bad_magic_or_version_is_refused)
{
	for (int i = 0; i < 4; i++) {
		msga__rdw_put(buf, &good);
		buf[i] ^= 0x20;
		cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "magic byte %d", i);
	}
	msga__rdw_put(buf, &good);
	msga__put16(buf + 4, 0);
	cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "version 0");
	msga__put16(buf + 4, 2);
	cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "version 2");
	msga__put16(buf + 4, 0x101);
	cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "version 257");
}

Test(read_wire, a_ring_size_no_ring_can_have_is_refused)
{
	uint64_t bad[] = { 0, 4, 1020, (1ull << 35) + 8, 1ull << 36,
			   UINT64_MAX - 7 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* len consistent with it, so the cap is what is refused */
		put(MSGA__RETAIN_CTRL + bad[i], bad[i]);
		cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "cap %lu",
			     (unsigned long)bad[i]);
	}
	put(MSGA__RETAIN_CTRL + (1ull << 35), 1ull << 35);
	cr_assert_eq(get(MSGA__RDW_LEN), 0, "2^35 is the largest");
}

Test(read_wire, a_block_that_is_not_control_block_and_ring_is_refused)
{
	/* none, the ring alone, 8 bytes short or over, the whole space */
	uint64_t lens[] = { 0, 4096, 4096 + MSGA__RETAIN_CTRL - 8,
			    4096 + MSGA__RETAIN_CTRL + 8, UINT64_MAX };

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		put(lens[i], 4096);
		cr_assert_eq(get(MSGA__RDW_LEN), -EPROTO, "len %lu",
			     (unsigned long)lens[i]);
	}
	put(4096 + MSGA__RETAIN_CTRL, 4096);
	cr_assert_eq(get(MSGA__RDW_LEN), 0);
}

Test(read_wire, no_private_data_is_refused)
{
	struct msga__rdw_offer o;

	cr_assert_eq(msga__rdw_get(NULL, 0, &o), -EPROTO);
	cr_assert_eq(msga__rdw_get(NULL, MSGA__RDW_LEN, &o), -EPROTO);
}
