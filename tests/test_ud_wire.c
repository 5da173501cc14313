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

	cr_assert_eq(hl, msga__udw_hdr_len(7, 0));
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
	cr_assert_eq(msga__udw_get(buf, msga__udw_hdr_len(1, 0) + 208, &got), 0);
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
	buf[7] = MSGA__UDW_END + 1;  /* unknown type */
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
	uint32_t hl = msga__udw_hdr_len(1, 0);

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

/*
 * HEARTBEAT and END (since 0.6): a stream's topic and the last sequence
 * number it sent, nothing else.
 */
static struct msga__udw_hdr state_hdr(uint8_t type)
{
	return (struct msga__udw_hdr){ .type = type, .topic_len = 7,
				       .origin = 0x1122334455667788ull,
				       .seq = 0x0102030405060708ull,
				       .hb_ms = 0x3eef };
}

static const uint8_t state_types[] = { MSGA__UDW_HEARTBEAT, MSGA__UDW_END };

Test(ud_wire, heartbeat_and_end_round_trip)
{
	for (size_t i = 0; i < sizeof(state_types); i++) {
		struct msga__udw_hdr h = state_hdr(state_types[i]), got;
		uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

		memset(&got, 0xa5, sizeof(got));
		cr_assert_eq(hl, msga__udw_hdr_len(7, 0));
		cr_assert_eq(msga__udw_get(buf, hl, &got), 0, "type %u",
			     state_types[i]);
		cr_assert_eq(got.type, state_types[i]);
		cr_assert_eq(got.seq, 0x0102030405060708ull);
		cr_assert_eq(got.origin, 0x1122334455667788ull);
		cr_assert_eq(got.hb_ms, 0x3eef);
		cr_assert_eq(got.topic_len, 7);
		cr_assert_eq(memcmp(got.topic, "md.AAPL", 7), 0);
		cr_assert_eq(got.hdr_len, hl);
		cr_assert_eq(got.payload, 0);
		cr_assert_eq(got.flags + got.msg_len + got.off + got.frag_size,
			     0);
	}
}

Test(ud_wire, a_heartbeat_names_a_topic_of_up_to_the_longest_length)
{
	char name[MSGA_TOPIC_MAX + 1];
	struct msga__udw_hdr h = state_hdr(MSGA__UDW_HEARTBEAT), got;
	uint32_t hl;

	memset(name, 'n', sizeof(name));
	h.topic_len = MSGA_TOPIC_MAX;
	hl = msga__udw_put(buf, &h, name);
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.topic_len, MSGA_TOPIC_MAX);
}

Test(ud_wire, hb_ms_is_at_offset_34_little_endian_in_data_too)
{
	struct msga__udw_hdr h = { .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = 1, .seq = 1, .msg_len = 8,
				   .hb_ms = 0x1234 };
	struct msga__udw_hdr got;
	uint32_t hl = msga__udw_put(buf, &h, "x");

	cr_assert_eq(buf[34], 0x34);
	cr_assert_eq(buf[35], 0x12);
	cr_assert_eq(buf[32] + buf[33], 0, "frag_size beside it untouched");
	cr_assert_eq(buf[36], 'x');
	cr_assert_eq(msga__udw_get(buf, hl + 8, &got), 0);
	cr_assert_eq(got.hb_ms, 0x1234);
	/* decoded from the bytes, not only round-tripped */
	buf[34] = 0xff;
	buf[35] = 0x01;
	cr_assert_eq(msga__udw_get(buf, hl + 8, &got), 0,
		     "any hb_ms: DATA has no rule for it");
	cr_assert_eq(got.hb_ms, 0x01ff);
	/* a per-datagram rewrite leaves it */
	h.seq = 2;
	msga__udw_restamp(buf, &h);
	cr_assert_eq(buf[34], 0xff);
	cr_assert_eq(buf[35], 0x01);
}

/*
 * The header h with one rule broken must be refused as HEARTBEAT and as
 * END; the same header unbroken is accepted, so it is that rule.
 */
static void expect_refused(void (*breaks)(struct msga__udw_hdr *h,
					  uint32_t *extra),
			   const char *rule)
{
	char name[MSGA_TOPIC_MAX + 1];

	memset(name, 'n', sizeof(name));
	for (size_t i = 0; i < sizeof(state_types); i++) {
		struct msga__udw_hdr h = state_hdr(state_types[i]), got;
		uint32_t extra = 0, hl;

		hl = msga__udw_put(buf, &h, name);
		cr_assert_eq(msga__udw_get(buf, hl, &got), 0, "type %u",
			     state_types[i]);
		breaks(&h, &extra);
		hl = msga__udw_put(buf, &h, name);
		cr_assert_eq(msga__udw_get(buf, hl + extra, &got), -EPROTO,
			     "type %u with %s", state_types[i], rule);
	}
}

static void with_payload(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)h;
	*extra = 1;
}

static void with_first_last(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->flags = MSGA__UDW_FIRST | MSGA__UDW_LAST;
}

static void with_unknown_flag(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->flags = 0x80;
}

static void with_seq_0(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->seq = 0;
}

static void with_msg_len(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->msg_len = 1;
}

static void with_off(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->off = 1;
}

static void with_frag_size(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->frag_size = 1;
}

static void with_pattern_length(struct msga__udw_hdr *h, uint32_t *extra)
{
	(void)extra;
	h->topic_len = MSGA_TOPIC_MAX + 1; /* fine for a SUBSCRIBE only */
}

Test(ud_wire, a_heartbeat_or_end_with_a_payload_is_refused)
{
	expect_refused(with_payload, "a payload byte");
}

Test(ud_wire, a_heartbeat_or_end_with_flags_is_refused)
{
	expect_refused(with_first_last, "FIRST|LAST");
	expect_refused(with_unknown_flag, "an unknown flag");
}

Test(ud_wire, a_heartbeat_or_end_with_seq_0_is_refused)
{
	expect_refused(with_seq_0, "seq 0");
}

Test(ud_wire, a_heartbeat_or_end_with_message_fields_is_refused)
{
	expect_refused(with_msg_len, "msg_len 1");
	expect_refused(with_off, "off 1");
	expect_refused(with_frag_size, "frag_size 1");
}

Test(ud_wire, a_heartbeat_or_end_with_a_pattern_long_name_is_refused)
{
	expect_refused(with_pattern_length, "topic_len MSGA_TOPIC_MAX + 1");
}

Test(ud_wire, types_after_cookie_are_refused)
{
	struct msga__udw_hdr h = state_hdr(MSGA__UDW_HEARTBEAT), got;
	uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	buf[7] = 9;
	cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "type 9");
	buf[7] = 255;
	cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "type 255");
}

/* NAK and LOST name a topic and a range [seq, seq + msg_len), nothing else. */
Test(ud_wire, nak_and_lost_carry_a_bounded_range)
{
	uint8_t types[2] = { MSGA__UDW_NAK, MSGA__UDW_LOST };

	for (int i = 0; i < 2; i++) {
		struct msga__udw_hdr h = { .type = types[i], .topic_len = 7,
					   .origin = 42, .seq = 100,
					   .msg_len = 5 }, got;
		uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

		cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
		cr_assert_eq(got.type, types[i]);
		cr_assert_eq(got.seq, 100);
		cr_assert_eq(got.msg_len, 5);
		cr_assert_eq(got.origin, 42);
		h.msg_len = 0;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "empty");
		h.msg_len = MSGA__UDW_RANGE_MAX + 1;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "too wide");
		h.msg_len = 2;
		h.seq = UINT64_MAX;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "wraps");
		h.msg_len = 1;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), 0, "the last number");
		h.seq = 0;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "seq 0");
		h.seq = 1;
		h.flags = MSGA__UDW_RETX;
		msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "flags");
	}
}

/* A resend is DATA with the RETX flag; bit 15 of hb says "I keep them". */
Test(ud_wire, a_resend_and_the_retains_bit_round_trip)
{
	struct msga__udw_hdr h = { .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST |
					    MSGA__UDW_RETX,
				   .topic_len = 7, .origin = 1, .seq = 9,
				   .msg_len = 0, .hb_ms = MSGA__UDW_HB_MS_MAX,
				   .retains = 1 }, got;
	uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.flags, h.flags);
	cr_assert_eq(got.retains, 1);
	cr_assert_eq(got.hb_ms, MSGA__UDW_HB_MS_MAX);
	cr_assert_eq(buf[35], 0xff, "bit 15 of hb, little-endian");
	h.retains = 0;
	msga__udw_put(buf, &h, "md.AAPL");
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.retains, 0);
	cr_assert_eq(got.hb_ms, MSGA__UDW_HB_MS_MAX);
	/* 8 is RPOS since 0.7 (refused here only for want of its bytes) */
	h.flags = MSGA__UDW_RETX | 0x10;
	msga__udw_put(buf, &h, "md.AAPL");
	cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO, "an unknown flag");
}

/*
 * RPOS (0.7): 16 bytes after the padded name, {u64 rpos, u32 topic_id,
 * u16 read_port, u16 zero}, on DATA, HEARTBEAT and END. The other types
 * (NAK, LOST and the unicast control types) have no ring position to
 * give, so the flag there means a confused or hostile sender.
 */
static struct msga__udw_hdr rpos_hdr(uint8_t type)
{
	struct msga__udw_hdr h = state_hdr(type);

	h.flags = MSGA__UDW_RPOS;
	if (type == MSGA__UDW_DATA) {
		h.flags |= MSGA__UDW_FIRST | MSGA__UDW_LAST;
		h.msg_len = 3;
	}
	h.rpos = 0x8877665544332211ull;
	h.topic_id = 0xa1b2c3d4u;
	h.read_port = 0x4e21;
	return h;
}

static const uint8_t rpos_types[] = { MSGA__UDW_DATA, MSGA__UDW_HEARTBEAT,
				      MSGA__UDW_END };

Test(ud_wire, rpos_round_trips_on_data_heartbeat_and_end)
{
	static const uint8_t ext[16] = {
		0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
		0xd4, 0xc3, 0xb2, 0xa1, 0x21, 0x4e, 0, 0,
	};

	for (size_t i = 0; i < sizeof(rpos_types); i++) {
		struct msga__udw_hdr h = rpos_hdr(rpos_types[i]), got;
		uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");
		uint32_t n = hl + h.msg_len;

		cr_assert_eq(hl, msga__udw_hdr_len(7, 0) + MSGA__UDW_RPOS_LEN);
		cr_assert_eq(hl, msga__udw_hdr_len(7, MSGA__UDW_RPOS));
		cr_assert_arr_eq(buf + msga__udw_hdr_len(7, 0), ext,
				 sizeof(ext), "type %u", rpos_types[i]);
		memset(&got, 0xa5, sizeof(got));
		cr_assert_eq(msga__udw_get(buf, n, &got), 0, "type %u",
			     rpos_types[i]);
		cr_assert_eq(got.flags, h.flags);
		cr_assert_eq(got.rpos, h.rpos);
		cr_assert_eq(got.topic_id, h.topic_id);
		cr_assert_eq(got.read_port, h.read_port);
		cr_assert_eq(got.hdr_len, hl, "the payload starts after it");
		cr_assert_eq(got.payload, h.msg_len);
		cr_assert_eq(got.seq, h.seq);
		cr_assert_eq(memcmp(got.topic, "md.AAPL", 7), 0);
		/* a restamp moves rpos with seq, and leaves the rest */
		h.seq++;
		h.rpos += 1000;
		msga__udw_restamp(buf, &h);
		cr_assert_eq(msga__udw_get(buf, n, &got), 0);
		cr_assert_eq(got.seq, h.seq);
		cr_assert_eq(got.rpos, h.rpos);
		cr_assert_eq(got.topic_id, h.topic_id);
		cr_assert_eq(got.read_port, h.read_port);
	}
}

/* Without the flag, the fields read 0, whatever the caller had there. */
Test(ud_wire, no_rpos_decodes_as_zero)
{
	struct msga__udw_hdr h = state_hdr(MSGA__UDW_END), got;
	uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

	memset(&got, 0xa5, sizeof(got));
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(got.rpos, 0);
	cr_assert_eq(got.topic_id, 0);
	cr_assert_eq(got.read_port, 0);
}

Test(ud_wire, rpos_on_other_types_is_refused)
{
	static const uint8_t types[] = { MSGA__UDW_NAK, MSGA__UDW_LOST,
					 MSGA__UDW_SUBSCRIBE, MSGA__UDW_SUBACK,
					 MSGA__UDW_UNSUBSCRIBE };

	for (size_t i = 0; i < sizeof(types); i++) {
		/* a valid one of the type, then the same with RPOS */
		struct msga__udw_hdr h = { .type = types[i], .topic_len = 7,
					   .seq = 100, .msg_len = 5 }, got;
		uint32_t hl;

		if (types[i] != MSGA__UDW_NAK && types[i] != MSGA__UDW_LOST)
			h.seq = h.msg_len = 0;
		hl = msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), 0, "type %u",
			     types[i]);
		h.flags = MSGA__UDW_RPOS;
		hl = msga__udw_put(buf, &h, "md.AAPL");
		cr_assert_eq(msga__udw_get(buf, hl, &got), -EPROTO,
			     "type %u with RPOS", types[i]);
	}
}

Test(ud_wire, rpos_with_its_last_u16_nonzero_is_refused)
{
	for (size_t i = 0; i < sizeof(rpos_types); i++) {
		struct msga__udw_hdr h = rpos_hdr(rpos_types[i]), got;
		uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

		for (uint32_t b = 14; b < 16; b++) {
			buf[hl - MSGA__UDW_RPOS_LEN + b] = 1;
			cr_assert_eq(msga__udw_get(buf, hl + h.msg_len, &got),
				     -EPROTO, "type %u, byte %u",
				     rpos_types[i], b);
			buf[hl - MSGA__UDW_RPOS_LEN + b] = 0;
			cr_assert_eq(msga__udw_get(buf, hl + h.msg_len, &got),
				     0);
		}
	}
}

/*
 * A datagram that ends inside the extension is refused, as one cut in
 * the name is: the 16 bytes must all be there (a HEARTBEAT, no payload
 * to mistake for them).
 */
Test(ud_wire, rpos_past_the_datagram_is_refused)
{
	struct msga__udw_hdr h = rpos_hdr(MSGA__UDW_HEARTBEAT), got;
	uint32_t hl = msga__udw_put(buf, &h, "md.AAPL");

	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	for (uint32_t n = msga__udw_hdr_len(7, 0); n < hl; n++)
		cr_assert_eq(msga__udw_get(buf, n, &got), -EPROTO, "%u bytes",
			     n);
	/* with the longest name too: the longest header there is */
	h.topic_len = MSGA_TOPIC_MAX;
	memset(buf + 200, 'n', MSGA_TOPIC_MAX);
	hl = msga__udw_put(buf, &h, (const char *)buf + 200);
	cr_assert_leq(hl, MSGA__UDW_HDR_MAX);
	cr_assert_eq(msga__udw_get(buf, hl, &got), 0);
	cr_assert_eq(msga__udw_get(buf, hl - 1, &got), -EPROTO);
}

/*
 * ud:// control datagrams (0.8): the subscriber's nonce in seq, the
 * publisher's cookie in origin, a pattern, no payload; COOKIE is type 8.
 */
Test(ud_wire, control_datagrams_carry_nonce_and_cookie)
{
	uint8_t types[4] = { MSGA__UDW_SUBSCRIBE, MSGA__UDW_SUBACK,
			     MSGA__UDW_UNSUBSCRIBE, MSGA__UDW_COOKIE };

	for (int i = 0; i < 4; i++) {
		struct msga__udw_hdr h = { .type = types[i], .topic_len = 4,
					   .seq = 0x0123456789abcdefull,
					   .origin = UINT64_MAX }, got;
		uint32_t hl = msga__udw_put(buf, &h, "md.*");

		cr_assert_eq(msga__udw_get(buf, hl, &got), 0, "type %u",
			     types[i]);
		cr_assert_eq(got.type, types[i]);
		cr_assert_eq(got.seq, h.seq);
		cr_assert_eq(got.origin, h.origin);
		cr_assert_eq(msga__udw_get(buf, hl + 1, &got), -EPROTO,
			     "type %u with a payload", types[i]);
	}
}
