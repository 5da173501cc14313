/* SPDX-License-Identifier: MIT */
/*
 * fuzz_feed_wire.c - msga_feed's message decoder (bench/feed/feed_wire.c),
 * fed any message. The messages are the other msga_feed process's, but
 * the decoder is the one place a received message's bytes are read, and
 * it must take no more than the message has: the input is decoded from
 * an exact-size heap copy, so AddressSanitizer sees a read past it.
 * Checked: under 12 bytes the message is refused and the result zeroed;
 * otherwise the layout is the one its length names (stamps only from 32
 * bytes on), and encoding what was read gives back the header's bytes
 * (the full layout's reserved word aside, which the encoder zeroes).
 */
#include <errno.h>
#include <string.h>

#include "feed_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct feed_msg zero;
	uint8_t *copy = malloc(size ? size : 1), back[FEED_WIRE_FULL_LEN];
	struct feed_msg m;
	int ret;

	FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	ret = feed_wire_decode(copy, size, &m);
	if (size < FEED_WIRE_COMPACT_LEN) {
		FUZZ_CHECK(ret == -EBADMSG);
		FUZZ_CHECK(!memcmp(&m, &zero, sizeof(m)));
		FUZZ_CHECK(feed_wire_encode(back, size, &m) == -EMSGSIZE);
		free(copy);
		return 0;
	}
	FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(m.stamped == (size >= FEED_WIRE_FULL_LEN));
	FUZZ_CHECK(m.stamped || (!m.due_ns && !m.sent_ns));
	{
		size_t hl = m.stamped ? FEED_WIRE_FULL_LEN :
					FEED_WIRE_COMPACT_LEN;

		FUZZ_CHECK(feed_wire_encode(back, hl, &m) == 0);
		/* (the full layout's last word is reserved: written 0) */
		FUZZ_CHECK(!memcmp(back, copy, m.stamped ? hl - 4 : hl));
	}
	free(copy);
	return 0;
}
