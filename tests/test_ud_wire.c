/* SPDX-License-Identifier: MIT */
/* The datagram codec (lib/ud_wire.c): layout, round trips, rejection. */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"
#include "ud_wire.h"

static uint8_t buf[MSGA__UDW_HDR_MAX + 4096];

static uint32_t put_whole(const char *topic, uint64_t seq, uint32_t len)
{
	struct msga__udw_hdr h = {
		.flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
		.topic_len = (uint8_t)strlen(topic), .msg_len = len,
		.origin = 0x1122334455667788ull, .seq = seq,
	};

	return msga__udw_put(buf, &h, topic);
}

Test(ud_wire, layout_is_little_endian_and_padded)
{
	static const uint8_t want[40] = {
		'M', 'S', 'G', 'U', 1, 3, 3, 0,
		0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
		5, 0, 0, 0, 0, 0, 0, 0,
		64, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 'a', '.', 'b', 0,
	};

	cr_assert_eq(put_whole("a.b", 5, 64), 40);
	cr_assert_arr_eq(buf, want, sizeof(want));
}

Test(ud_wire, whole_message_round_trip)
{
	struct msga__udw_hdr h;
	uint32_t hl = put_whole("md.AAPL", 42, 100);

	cr_assert_eq(hl, msga__udw_hdr_len(7));
	cr_assert_eq(msga__udw_get(buf, hl + 100, &h), 0);
	cr_assert_eq(h.seq, 42);
	cr_assert_eq(h.origin, 0x1122334455667788ull);
	cr_assert_eq(h.topic_len, 7);
	cr_assert_eq(memcmp(h.topic, "md.AAPL", 7), 0);
	cr_assert_eq(h.hdr_len, hl);
	cr_assert_eq(h.payload, 100);
}

Test(ud_wire, restamp_changes_only_per_datagram_fields)
{
	struct msga__udw_hdr h = { .flags = MSGA__UDW_FIRST, .frag_size = 896,
				   .seq = 9, .msg_len = 2000, .off = 0,
				   .topic_len = 1, .origin = 7 };
	struct msga__udw_hdr got;

	msga__udw_put(buf, &h, "x");
	h.flags = MSGA__UDW_LAST;
	h.off = 1792;
	msga__udw_restamp(buf, &h);
	cr_assert_eq(msga__udw_get(buf, msga__udw_hdr_len(1) + 208, &got), 0);
	cr_assert_eq(got.off, 1792);
	cr_assert_eq(got.flags, MSGA__UDW_LAST);
	cr_assert_eq(got.origin, 7);
	cr_assert_eq(got.frag_size, 896);
}

Test(ud_wire, foreign_and_malformed_are_refused)
{
	struct msga__udw_hdr h;
	uint32_t hl = put_whole("t", 1, 8);

	cr_assert_eq(msga__udw_get(buf, 10, &h), -EBADMSG);
	buf[0] ^= 1;
	cr_assert_eq(msga__udw_get(buf, hl + 8, &h), -EBADMSG);
	buf[0] ^= 1;
	buf[4] = 2;  /* unknown version */
	cr_assert_eq(msga__udw_get(buf, hl + 8, &h), -EPROTO);
	buf[4] = 1;
	cr_assert_eq(msga__udw_get(buf, hl + 7, &h), -EPROTO); /* short */
	buf[6] = 0;  /* empty topic */
	cr_assert_eq(msga__udw_get(buf, hl + 8, &h), -EPROTO);
	buf[6] = MSGA_TOPIC_MAX + 1; /* a data topic is at most 63 */
	cr_assert_eq(msga__udw_get(buf, sizeof(buf), &h), -EPROTO);
	buf[6] = 1;
	buf[7] = 4;  /* unknown type */
	cr_assert_eq(msga__udw_get(buf, hl + 8, &h), -EPROTO);
	buf[7] = 0;
	put_whole("t", 0, 8); /* sequence 0 is never sent */
	cr_assert_eq(msga__udw_get(buf, hl + 8, &h), -EPROTO);
}

Test(ud_wire, fragments_must_fit_their_message)
{
	struct msga__udw_hdr h = { .frag_size = 100, .seq = 3, .msg_len = 250,
				   .topic_len = 1 };
	struct msga__udw_hdr got;
	uint32_t hl = msga__udw_hdr_len(1);

	h.flags = MSGA__UDW_FIRST;
	msga__udw_put(buf, &h, "f");
	cr_assert_eq(msga__udw_get(buf, hl + 100, &got), 0);
	cr_assert_eq(msga__udw_get(buf, hl + 99, &got), -EPROTO);
	h.flags = 0;
	h.off = 100;
	msga__udw_restamp(buf, &h);
	cr_assert_eq(msga__udw_get(buf, hl + 100, &got), 0);
	h.off = 150; /* not on a fragment boundary */
	msga__udw_restamp(buf, &h);
	cr_assert_eq(msga__udw_get(buf, hl + 100, &got), -EPROTO);
	h.flags = MSGA__UDW_LAST;
	h.off = 200;
	msga__udw_restamp(buf, &h);
	cr_assert_eq(msga__udw_get(buf, hl + 50, &got), 0);
	cr_assert_eq(msga__udw_get(buf, hl + 49, &got), -EPROTO);
	h.msg_len = MSGA_MSG_MAX + 1;
	msga__udw_restamp(buf, &h);
	cr_assert_eq(msga__udw_get(buf, hl + 50, &got), -EPROTO);
}

Test(ud_wire, control_datagrams_carry_a_pattern_and_nothing_else)
{
	char pat[MSGA_TOPIC_MAX + 2];
	struct msga__udw_hdr h = { .type = MSGA__UDW_SUBSCRIBE,
				   .topic_len = MSGA_TOPIC_MAX + 1 };
	struct msga__udw_hdr got;
	uint32_t hl;

	memset(pat, 'a', MSGA_TOPIC_MAX);
	pat[MSGA_TOPIC_MAX] = '*';
	hl = msga__udw_put(buf, &h, pat);
	cr_assert_leq(hl, MSGA__UDW_HDR_MAX);
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.type, MSGA__UDW_SUBSCRIBE);
	cr_assert_eq(got.topic_len, MSGA_TOPIC_MAX + 1);
	cr_assert_eq(got.topic[MSGA_TOPIC_MAX], '*');
	cr_assert_eq(msga__udw_get(buf, hl + 1, &got), -EPROTO,
		     "a control datagram has no payload");
	buf[7] = MSGA__UDW_SUBACK;
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.type, MSGA__UDW_SUBACK);
}
