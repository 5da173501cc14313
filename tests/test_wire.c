/* SPDX-License-Identifier: MIT */
/* The wire format codec (lib/wire.c): layout, round trips, rejection. */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"
#include "wire.h"

static uint8_t buf[MSGA__WIRE_HDR_LEN + MSGA_FRAG_MAX + 8];

Test(wire, header_layout_is_little_endian)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .flags = MSGA__WF_FIRST,
		.topic = 0x0102, .credit = 0x03040506,
		.seq = 0x0708090a0b0c0d0eull, .len = 0x100000, .off = 0,
	};
	static const uint8_t want[MSGA__WIRE_HDR_LEN] = {
		1, 1, 0x02, 0x01, 0x06, 0x05, 0x04, 0x03,
		0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07,
		0x00, 0x00, 0x10, 0x00, 0, 0, 0, 0,
	};

	msga__wire_hdr_put(buf, &h);
	cr_assert_arr_eq(buf, want, sizeof(want));
}

Test(wire, data_round_trip)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
		.topic = 7, .credit = 99, .seq = 12345, .len = 64,
	}, g;

	msga__wire_hdr_put(buf, &h);
	cr_assert_eq(msga__wire_hdr_get(buf, MSGA__WIRE_HDR_LEN + 64, &g), 0);
	cr_expect_eq(g.type, h.type);
	cr_expect_eq(g.flags, h.flags);
	cr_expect_eq(g.topic, 7);
	cr_expect_eq(g.credit, 99);
	cr_expect_eq(g.seq, 12345);
	cr_expect_eq(g.len, 64);
	cr_expect_eq(g.off, 0);
}

static int check(const struct msga__wire_hdr *h, size_t payload)
{
	struct msga__wire_hdr g;

	msga__wire_hdr_put(buf, h);
	return msga__wire_hdr_get(buf, MSGA__WIRE_HDR_LEN + payload, &g);
}

Test(wire, fragments_must_fit_their_message)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .len = 10000 };

	h.flags = MSGA__WF_FIRST;
	cr_expect_eq(check(&h, MSGA_FRAG_MAX), 0);
	h.flags = 0;
	h.off = MSGA_FRAG_MAX;
	cr_expect_eq(check(&h, MSGA_FRAG_MAX), 0, "middle fragment");
	h.flags = MSGA__WF_LAST;
	h.off = 2 * MSGA_FRAG_MAX;
	cr_expect_eq(check(&h, 10000 - 2 * MSGA_FRAG_MAX), 0, "last fragment");
	cr_expect_eq(check(&h, 10), -EPROTO, "LAST must end the message");
	h.flags = MSGA__WF_FIRST;
	h.off = 1;
	cr_expect_eq(check(&h, 10), -EPROTO, "FIRST must start at 0");
	h.flags = 0;
	h.off = 9990;
	cr_expect_eq(check(&h, 20), -EPROTO, "fragment past the end");
	h.off = 0;
	cr_expect_eq(check(&h, MSGA_FRAG_MAX + 1), -EPROTO, "oversize fragment");
	h.len = MSGA_MSG_MAX + 1;
	h.flags = MSGA__WF_FIRST;
	cr_expect_eq(check(&h, 100), -EPROTO, "message over MSGA_MSG_MAX");
	h.len = 100;
	h.flags = 0x80 | MSGA__WF_FIRST | MSGA__WF_LAST;
	cr_expect_eq(check(&h, 100), -EPROTO, "unknown flag");
}

/* BYE (0.10): a clean end; nothing but the credit field is set. */
Test(wire, bye)
{
	struct msga__wire_hdr h = { .type = MSGA__W_BYE, .credit = 7 };

	cr_expect_eq(check(&h, 0), 0);
	cr_expect_eq(check(&h, 1), -EPROTO, "BYE has no payload");
	h.seq = 1;
	cr_expect_eq(check(&h, 0), -EPROTO, "BYE with a seq");
	h.seq = 0;
	h.len = 1;
	cr_expect_eq(check(&h, 0), -EPROTO, "BYE with a length");
	h.len = 0;
	h.topic = 1;
	cr_expect_eq(check(&h, 0), -EPROTO, "BYE with a topic");
	h.topic = 0;
	h.flags = MSGA__WF_FIRST;
	cr_expect_eq(check(&h, 0), -EPROTO, "BYE with flags");
	h.flags = 0;
	h.off = 4;
	cr_expect_eq(check(&h, 0), -EPROTO, "BYE with an offset");
}

/* LAST_VALUE (0.12): one whole message; SUBSCRIBE's WANT_LV asks for it. */
Test(wire, last_value)
{
	static const struct {
		struct msga__wire_hdr h;
		size_t payload;
		int ret;
		const char *why;
	} cases[] = {
		{ { .type = MSGA__W_LAST_VALUE, .topic = 3, .seq = 42, .len = 10 },
		  10, 0, "a value" },
		{ { .type = MSGA__W_LAST_VALUE, .topic = 3, .seq = 42, .len = 10 },
		  9, -EPROTO, "length is the payload" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1 }, 0, 0, "empty" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1, .len = MSGA_FRAG_MAX },
		  MSGA_FRAG_MAX, 0, "one fragment" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1,
		    .len = MSGA_FRAG_MAX + 1 },
		  MSGA_FRAG_MAX + 1, -EPROTO, "one record at most" },
		{ { .type = MSGA__W_LAST_VALUE, .len = 10 }, 10, -EPROTO,
		  "a value has a real seq" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1, .len = 10,
		    .flags = MSGA__WF_FIRST | MSGA__WF_LAST },
		  10, -EPROTO, "no flags" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1, .len = 10, .off = 1 },
		  10, -EPROTO, "no offset" },
		{ { .type = MSGA__W_LAST_VALUE, .seq = 1, .len = 10,
		    .topic = MSGA_PUB_TOPICS_MAX },
		  10, -EPROTO, "topic out of range" },
		{ { .type = MSGA__W_SUBSCRIBE, .len = 4,
		    .flags = MSGA__WF_WANT_LV }, 4, 0, "WANT_LV" },
		{ { .type = MSGA__W_SUBSCRIBE, .len = 4 }, 4, 0,
		  "without the request, as before" },
		{ { .type = MSGA__W_SUBSCRIBE, .len = 4,
		    .flags = MSGA__WF_WANT_LV | MSGA__WF_FIRST },
		  4, -EPROTO, "unknown SUBSCRIBE flag" },
	};

	cr_expect_eq(MSGA__W_LAST_VALUE, 9);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_expect_eq(check(&cases[i].h, cases[i].payload), cases[i].ret,
			     "%s", cases[i].why);
}

Test(wire, control_messages)
{
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };

	cr_expect_eq(check(&h, 0), 0);
	cr_expect_eq(check(&h, 1), -EPROTO, "CREDIT has no payload");
	h.type = MSGA__W_TOPIC;
	h.len = 5;
	cr_expect_eq(check(&h, 5), 0);
	cr_expect_eq(check(&h, 4), -EPROTO, "name length mismatch");
	h.len = MSGA_TOPIC_MAX + 1;
	cr_expect_eq(check(&h, h.len), -EPROTO, "topic name too long");
	h.type = MSGA__W_SUBSCRIBE;
	cr_expect_eq(check(&h, h.len), 0, "a pattern may have a '*' more");
	h.len = 0;
	cr_expect_eq(check(&h, 0), -EPROTO, "empty pattern");
	h.type = 0;
	cr_expect_eq(check(&h, 0), -EPROTO, "type 0");
	h.type = 9;
	cr_expect_eq(check(&h, 0), -EPROTO, "unknown type");
	cr_expect_eq(msga__wire_hdr_get(buf, MSGA__WIRE_HDR_LEN - 1, &h),
		     -EPROTO, "short header");
}

Test(wire, hello)
{
	struct msga__wire_hello h = { .role = 2, .recv_depth = 256,
				      .slot_size = 4096 }, g;
	uint8_t b[64] = { 0 };

	msga__wire_hello_put(b, &h);
	cr_assert_eq(msga__wire_hello_get(b, MSGA__WIRE_HELLO_LEN, &g), 0);
	cr_expect_eq(g.magic, MSGA__WIRE_MAGIC);
	cr_expect_eq(g.version, MSGA__WIRE_VERSION);
	cr_expect_eq(g.role, 2);
	cr_expect_eq(g.recv_depth, 256);
	cr_expect_eq(g.slot_size, 4096);
	cr_expect_eq(msga__wire_hello_get(b, sizeof(b), &g), 0,
		     "IB pads private data; longer is fine");
	cr_expect_eq(g.ring_size, 0, "no ring offered");
	cr_expect_eq(msga__wire_hello_get(b, MSGA__WIRE_HELLO_V1_LEN - 1, &g),
		     -EPROTO);
	cr_expect_eq(msga__wire_hello_get(NULL, 0, &g), -EPROTO);
	b[0] ^= 1;
	cr_expect_eq(msga__wire_hello_get(b, sizeof(b), &g), -EPROTO,
		     "bad magic");
	b[0] ^= 1;
	h.role = 3;
	msga__wire_hello_put(b, &h);
	cr_expect_eq(msga__wire_hello_get(b, sizeof(b), &g), -EPROTO,
		     "bad role");
	h.role = 1;
	h.recv_depth = 1;
	msga__wire_hello_put(b, &h);
	cr_expect_eq(msga__wire_hello_get(b, sizeof(b), &g), -EPROTO,
		     "too few receives");
}

Test(wire, hello_ring_offer_round_trips_and_a_v1_hello_has_none)
{
	struct msga__wire_hello h = { .role = 2, .recv_depth = 4,
				      .slot_size = 4096,
				      .ring_addr = 0x7f0012345000ull,
				      .ring_rkey = 0xabcdef01u,
				      .ring_size = 256u * 1024u }, g;
	uint8_t b[64] = { 0 };

	msga__wire_hello_put(b, &h);
	cr_assert_eq(msga__wire_hello_get(b, MSGA__WIRE_HELLO_LEN, &g), 0);
	cr_expect_eq(g.ring_addr, 0x7f0012345000ull);
	cr_expect_eq(g.ring_rkey, 0xabcdef01u);
	cr_expect_eq(g.ring_size, 256u * 1024u);
	/* A 0.2 peer sends 16 bytes: it neither offers nor accepts a ring. */
	cr_assert_eq(msga__wire_hello_get(b, MSGA__WIRE_HELLO_V1_LEN, &g), 0);
	cr_expect_eq(g.ring_size, 0);
	cr_expect_eq(g.ring_addr, 0);
}

Test(wire, batch_records)
{
	static uint8_t b[256];
	struct msga__wire_hdr r = { .type = MSGA__W_DATA,
				    .flags = MSGA__WF_FIRST | MSGA__WF_LAST },
			      g, bh = { .type = MSGA__W_BATCH };
	size_t off = 0, n;

	r.topic = 1;
	r.seq = 10;
	r.len = 5;
	msga__wire_hdr_put(b, &r);
	memcpy(b + MSGA__WIRE_HDR_LEN, "hello", 5);
	n = MSGA__WIRE_ALIGN(MSGA__WIRE_HDR_LEN + 5);
	cr_assert_eq(n, 32, "records are 8-byte aligned");
	r.topic = 2;
	r.seq = 11;
	r.len = 0;
	msga__wire_hdr_put(b + n, &r);
	n += MSGA__WIRE_HDR_LEN;
	cr_assert_eq(msga__wire_batch_next(b, n, &off, &g), 1);
	cr_expect_eq(g.topic, 1);
	cr_expect_eq(g.seq, 10);
	cr_expect_eq(g.len, 5);
	cr_expect_eq(off, 32);
	cr_assert_eq(msga__wire_batch_next(b, n, &off, &g), 1);
	cr_expect_eq(g.topic, 2);
	cr_expect_eq(g.len, 0);
	cr_expect_eq(msga__wire_batch_next(b, n, &off, &g), 0, "end");

	off = 0;
	cr_expect_eq(msga__wire_batch_next(b, 20, &off, &g), -EPROTO,
		     "short record header");
	off = 0;
	cr_expect_eq(msga__wire_batch_next(b, 28, &off, &g), -EPROTO,
		     "payload past the batch");
	r.flags = MSGA__WF_FIRST;
	r.len = 5;
	msga__wire_hdr_put(b, &r);
	off = 0;
	cr_expect_eq(msga__wire_batch_next(b, 64, &off, &g), -EPROTO,
		     "a fragment inside a batch");
	r.type = MSGA__W_CREDIT;
	r.flags = 0;
	r.len = 0;
	msga__wire_hdr_put(b, &r);
	off = 0;
	cr_expect_eq(msga__wire_batch_next(b, 64, &off, &g), -EPROTO,
		     "only DATA records");

	bh.len = 40;
	cr_expect_eq(check(&bh, 40), 0);
	cr_expect_eq(check(&bh, 41), -EPROTO, "len must match");
	bh.len = 8;
	cr_expect_eq(check(&bh, 8), -EPROTO, "a batch holds a record");
}
