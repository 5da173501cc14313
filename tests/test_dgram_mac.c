/* SPDX-License-Identifier: MIT */
/*
 * The datagram MAC (lib/proto/dgram_mac.c, ud_wire.h's MAC flag): where
 * it lies, what it covers, and that the decoder skips it. The Q_Key and
 * MAC key of a context (lib/core/auth.c) too: derived, and apart.
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include <criterion/criterion.h>
#include <rdma/rdma_cma.h>

#include "auth.h"
#include "dgram_mac.h"
#include "msgaccel.h"
#include "ud_wire.h"

static const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN] = "0123456789abcde";
static uint8_t hdr[MSGA__UDW_HDR_MAX + MSGA__UDW_MAC_LEN];
static uint8_t dgram[MSGA__UDW_HDR_MAX + MSGA__UDW_MAC_LEN + 4096];
static uint8_t scratch[sizeof(dgram)];

static void setup(void)
{
	cr_assert_geq(sodium_init(), 0);
}

/* A signed datagram of topic, flags and len payload bytes in dgram. */
static uint32_t signed_dgram(const char *topic, uint8_t type, uint8_t flags,
			     uint32_t len, uint32_t *hl_out)
{
	struct msga__udw_hdr h = {
		.type = type, .flags = flags,
		.topic_len = (uint8_t)strlen(topic), .msg_len = len,
		.origin = 0x1122334455667788ull, .seq = 7,
	};
	uint8_t payload[4096];
	uint32_t hl = msga__udw_put(hdr, &h, topic);

	for (uint32_t i = 0; i < len; i++)
		payload[i] = (uint8_t)(i * 7 + 1);
	hl = msga__dgram_mac_sign(key, hdr, hl, payload, len, scratch);
	memcpy(dgram, hdr, hl);
	memcpy(dgram + hl, payload, len);
	*hl_out = hl;
	return hl + len;
}

Test(dgram_mac, is_siphashx24_of_the_datagram_with_its_mac_zero,
     .init = setup)
{
	uint8_t want[16], copy[sizeof(dgram)];
	uint32_t hl, n = signed_dgram("a.b", MSGA__UDW_DATA,
				      MSGA__UDW_FIRST | MSGA__UDW_LAST, 64,
				      &hl);

	/* the flag, and the MAC last in the header: 40 + 16 */
	cr_assert_eq(dgram[5], MSGA__UDW_FIRST | MSGA__UDW_LAST |
			       MSGA__UDW_MAC);
	cr_assert_eq(hl, 40 + MSGA__UDW_MAC_LEN);
	memcpy(copy, dgram, n);
	memset(copy + 40, 0, 16);
	crypto_shorthash_siphashx24(want, copy, n, key);
	cr_assert_arr_eq(dgram + 40, want, 16);
	cr_assert_eq(msga__dgram_mac_check(key, dgram, n), 1);
}

Test(dgram_mac, comes_after_rpos_and_the_decoder_skips_it, .init = setup)
{
	struct msga__udw_hdr h;
	uint32_t hl, n = signed_dgram("topic.x", MSGA__UDW_DATA,
				      MSGA__UDW_FIRST | MSGA__UDW_LAST |
				      MSGA__UDW_RPOS, 100, &hl);
	size_t off;

	cr_assert_eq(msga__dgram_mac_find(dgram, n, &off), 1);
	cr_assert_eq(off, 48 + MSGA__UDW_RPOS_LEN);
	cr_assert_eq(msga__udw_get(dgram, n, &h), 0);
	cr_assert_eq(h.hdr_len, hl);
	cr_assert_eq(h.payload, 100);
	cr_assert(h.flags & MSGA__UDW_MAC);
	cr_assert_eq(dgram[h.hdr_len], 1); /* the payload's first byte */
}

Test(dgram_mac, every_type_may_carry_it, .init = setup)
{
	static const uint8_t types[] = { MSGA__UDW_HEARTBEAT, MSGA__UDW_END,
					 MSGA__UDW_SUBSCRIBE };
	struct msga__udw_hdr h;
	uint32_t hl, n;

	for (size_t i = 0; i < sizeof(types); i++) {
		n = signed_dgram("t", types[i], 0, 0, &hl);
		cr_assert_eq(msga__udw_get(dgram, n, &h), 0, "type %u",
			     types[i]);
		cr_assert_eq(h.payload, 0);
	}
	/* a NAK: a range */
	{
		struct msga__udw_hdr nak = { .type = MSGA__UDW_NAK,
					     .topic_len = 1, .seq = 3,
					     .msg_len = 2, .origin = 9 };

		hl = msga__udw_put(hdr, &nak, "t");
		n = msga__dgram_mac_sign(key, hdr, hl, NULL, 0, scratch);
		cr_assert_eq(msga__udw_get(hdr, n, &h), 0);
		cr_assert_eq(msga__dgram_mac_check(key, hdr, n), 1);
	}
}

Test(dgram_mac, any_bit_changed_fails, .init = setup)
{
	uint8_t good[sizeof(dgram)];
	uint32_t hl, n = signed_dgram("a.b", MSGA__UDW_DATA,
				      MSGA__UDW_FIRST | MSGA__UDW_LAST, 64,
				      &hl);

	memcpy(good, dgram, n);
	for (uint32_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++) {
			memcpy(dgram, good, n);
			dgram[i] ^= (uint8_t)(1u << b);
			cr_assert_neq(msga__dgram_mac_check(key, dgram, n), 1,
				      "byte %u bit %d", i, b);
		}
	memcpy(dgram, good, n); /* one byte short, one more */
	cr_assert_eq(msga__dgram_mac_check(key, dgram, n - 1), -EBADMSG);
	memcpy(dgram, good, n);
	cr_assert_eq(msga__dgram_mac_check(key, dgram, n + 1), -EBADMSG);
}

Test(dgram_mac, another_key_fails, .init = setup)
{
	static const uint8_t other[16] = "0123456789abcdX";
	uint32_t hl, n = signed_dgram("a.b", MSGA__UDW_DATA,
				      MSGA__UDW_FIRST | MSGA__UDW_LAST, 8,
				      &hl);

	cr_assert_eq(msga__dgram_mac_check(other, dgram, n), -EBADMSG);
}

Test(dgram_mac, none_is_zero_and_foreign_is_zero, .init = setup)
{
	struct msga__udw_hdr h = { .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = 3, .seq = 1 };
	uint32_t n = msga__udw_put(dgram, &h, "a.b");
	size_t off;

	cr_assert_eq(msga__dgram_mac_find(dgram, n, &off), 0);
	cr_assert_eq(msga__dgram_mac_check(key, dgram, n), 0);
	dgram[0] = 'X';
	cr_assert_eq(msga__dgram_mac_find(dgram, n, &off), -EBADMSG);
	cr_assert_eq(msga__dgram_mac_check(key, dgram, n), 0);
	/* the flag on a header too short to hold the MAC */
	dgram[0] = 'M';
	dgram[5] |= MSGA__UDW_MAC;
	cr_assert_eq(msga__dgram_mac_find(dgram, n, &off), -EBADMSG);
}

Test(dgram_mac, qkey_and_mac_key_are_derived_apart, .init = setup)
{
	uint8_t k1[MSGA_KEY_LEN], k2[MSGA_KEY_LEN];
	uint8_t m1[16], m2[16];
	uint32_t q1, q2;

	memset(k1, 1, sizeof(k1));
	memset(k2, 2, sizeof(k2));
	q1 = msga__auth_qkey(k1);
	q2 = msga__auth_qkey(k2);
	cr_assert_eq(q1 & 0x80000000u, 0, "a controlled Q_Key");
	cr_assert_neq(q1, RDMA_UDP_QKEY);
	cr_assert_neq(q1, q2);
	cr_assert_eq(q1, msga__auth_qkey(k1));
	msga__auth_derive(k1, MSGA__DGRAM_MAC_LABEL, m1, sizeof(m1));
	msga__auth_derive(k2, MSGA__DGRAM_MAC_LABEL, m2, sizeof(m2));
	cr_assert(memcmp(m1, m2, 16));
	cr_assert(memcmp(m1, k1, 16));
}
