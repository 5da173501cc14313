/* SPDX-License-Identifier: MIT */
/*
 * msga_feed's message header (bench/feed/feed_wire.h): the layout follows
 * the length both ways, and a message too short for either is refused
 * without a byte read. Each message here sits in a heap block of exactly
 * its length, so a read past it is a sanitizer report, not luck.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "feed_wire.h"

static const struct feed_msg sample = { .seq = 0x0102030405060708ull,
					.flags = FEED_FLAG_STOP,
					.due_ns = 111, .sent_ns = 222 };

/* A message of exactly len bytes, filled with 0xAA (the "filler"). */
static unsigned char *message(size_t len)
{
	unsigned char *m = malloc(len ? len : 1);

	cr_assert_not_null(m);
	memset(m, 0xAA, len);
	return m;
}

static void round_trip(size_t len, struct feed_msg *out)
{
	unsigned char *m = message(len);

	cr_assert_eq(feed_wire_encode(m, len, &sample), 0, "encode %zu", len);
	cr_assert_eq(feed_wire_decode(m, len, out), 0, "decode %zu", len);
	free(m);
}

Test(feed_wire, full_layout_from_32_bytes_carries_the_stamps)
{
	static const size_t lens[] = { FEED_WIRE_FULL_LEN, 40, 64, 232, 2048 };
	struct feed_msg got;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		round_trip(lens[i], &got);
		cr_expect(got.stamped, "%zu B: full layout", lens[i]);
		cr_expect_eq(got.seq, sample.seq);
		cr_expect_eq(got.flags, sample.flags);
		cr_expect_eq(got.due_ns, 111);
		cr_expect_eq(got.sent_ns, 222);
	}
}

Test(feed_wire, compact_layout_below_32_bytes_has_no_stamps)
{
	static const size_t lens[] = { FEED_WIRE_COMPACT_LEN, 20,
				       FEED_WIRE_FULL_LEN - 1 };
	struct feed_msg got;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		round_trip(lens[i], &got);
		cr_expect(!got.stamped, "%zu B: compact layout", lens[i]);
		cr_expect_eq(got.seq, sample.seq);
		cr_expect_eq(got.flags, sample.flags);
		cr_expect_eq(got.due_ns, 0);
		cr_expect_eq(got.sent_ns, 0);
	}
}

/* The probe and the stop must survive the compact layout (mcast). */
Test(feed_wire, compact_layout_keeps_probe_and_stop_flags)
{
	unsigned char *m = message(FEED_WIRE_COMPACT_LEN);
	struct feed_msg in = { .seq = 0, .flags = FEED_FLAG_PROBE }, got;

	cr_assert_eq(feed_wire_encode(m, FEED_WIRE_COMPACT_LEN, &in), 0);
	cr_assert_eq(feed_wire_decode(m, FEED_WIRE_COMPACT_LEN, &got), 0);
	cr_expect_eq(got.flags, FEED_FLAG_PROBE);
	in = (struct feed_msg){ .seq = 7, .flags = FEED_FLAG_STOP };
	cr_assert_eq(feed_wire_encode(m, FEED_WIRE_COMPACT_LEN, &in), 0);
	cr_assert_eq(feed_wire_decode(m, FEED_WIRE_COMPACT_LEN, &got), 0);
	cr_expect_eq(got.flags, FEED_FLAG_STOP);
	cr_expect_eq(got.seq, 7);
	free(m);
}

/* The header is written, the filler after it is not. */
Test(feed_wire, encode_leaves_the_filler)
{
	unsigned char *m = message(64);

	cr_assert_eq(feed_wire_encode(m, 20, &sample), 0);
	for (size_t i = FEED_WIRE_COMPACT_LEN; i < 64; i++)
		cr_expect_eq(m[i], 0xAA, "byte %zu written", i);
	cr_assert_eq(feed_wire_encode(m, 64, &sample), 0);
	for (size_t i = FEED_WIRE_FULL_LEN; i < 64; i++)
		cr_expect_eq(m[i], 0xAA, "byte %zu written", i);
	free(m);
}

/* ERRORS: -EBADMSG below 12 bytes, nothing read, *out zeroed. */
Test(feed_wire, decode_refuses_messages_shorter_than_12_bytes)
{
	for (size_t len = 0; len < FEED_WIRE_COMPACT_LEN; len++) {
		unsigned char *m = message(len);
		struct feed_msg got = sample;

		cr_expect_eq(feed_wire_decode(m, len, &got), -EBADMSG,
			     "%zu B", len);
		cr_expect_eq(got.seq, 0);
		cr_expect_eq(got.flags, 0);
		cr_expect(!got.stamped);
		free(m);
	}
}

/* ERRORS: -EMSGSIZE below 12 bytes, nothing written. */
Test(feed_wire, encode_refuses_messages_shorter_than_12_bytes)
{
	unsigned char *m = message(FEED_WIRE_COMPACT_LEN - 1);

	cr_expect_eq(feed_wire_encode(m, FEED_WIRE_COMPACT_LEN - 1, &sample),
		     -EMSGSIZE);
	for (size_t i = 0; i < FEED_WIRE_COMPACT_LEN - 1; i++)
		cr_expect_eq(m[i], 0xAA, "byte %zu written", i);
	free(m);
}
