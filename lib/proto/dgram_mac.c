/* SPDX-License-Identifier: MIT */
/* dgram_mac.c - a datagram's MAC (dgram_mac.h). */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "byteorder.h"
#include "dgram_mac.h"
#include "ud_wire.h"

_Static_assert(crypto_shorthash_siphashx24_BYTES == MSGA__UDW_MAC_LEN,
	       "the MAC field holds one SipHash-2-4-128");
_Static_assert(crypto_shorthash_siphashx24_KEYBYTES ==
	       MSGA__DGRAM_MAC_KEY_LEN, "a SipHash key");

int msga__dgram_mac_find(const void *buf, size_t n, size_t *off)
{
	const uint8_t *p = buf;
	uint32_t hl;

	if (n < MSGA__UDW_FIXED || msga__get32(p) != MSGA__UDW_MAGIC ||
	    p[4] != MSGA__UDW_VERSION)
		return -EBADMSG;
	if (!(p[5] & MSGA__UDW_MAC))
		return 0;
	hl = msga__udw_hdr_len(p[6], p[5]);
	if (hl > n)
		return -EBADMSG;
	*off = hl - MSGA__UDW_MAC_LEN;
	return 1;
}

int msga__dgram_mac_check(const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN],
			  void *buf, size_t n)
{
	uint8_t got[MSGA__UDW_MAC_LEN], want[MSGA__UDW_MAC_LEN];
	uint8_t *p = buf;
	size_t off;
	int ret = msga__dgram_mac_find(buf, n, &off);

	if (ret <= 0)
		return 0; /* no MAC, or not ours: msga__udw_get() says which */
	memcpy(got, p + off, sizeof(got));
	memset(p + off, 0, sizeof(got));
	crypto_shorthash_siphashx24(want, p, n, key);
	return crypto_verify_16(got, want) ? -EBADMSG : 1;
}

uint32_t msga__dgram_mac_sign(const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN],
			      void *hdr, uint32_t hdr_len, const void *data,
			      uint32_t len, uint8_t *scratch)
{
	uint8_t *h = hdr;

	h[5] |= MSGA__UDW_MAC;
	memset(h + hdr_len, 0, MSGA__UDW_MAC_LEN);
	memcpy(scratch, h, hdr_len + MSGA__UDW_MAC_LEN);
	if (len)
		memcpy(scratch + hdr_len + MSGA__UDW_MAC_LEN, data, len);
	crypto_shorthash_siphashx24(h + hdr_len, scratch,
				    hdr_len + MSGA__UDW_MAC_LEN + len, key);
	return hdr_len + MSGA__UDW_MAC_LEN;
}
