/* SPDX-License-Identifier: MIT */
/*
 * fuzz_dgram_mac.c - the datagram MAC (lib/proto/dgram_mac.c) fed any
 * received datagram, as lib/ud/dgram_auth.c feeds it before anything
 * else reads it: msga__dgram_mac_find() and msga__dgram_mac_check()
 * must agree, read nothing past the datagram (an exact-size copy), and
 * pass a datagram only with the MAC of the key. Then the datagram, its
 * MAC flag cleared, is signed as a sender would (split anywhere into
 * header and data) and must check right, and wrong with a bit flipped
 * or under another key.
 */
#include <errno.h>
#include <sodium.h>
#include <string.h>

#include "dgram_mac.h"
#include "ud_wire.h"
#include "fuzz.h"

static const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN] = "fuzz mac key 16";
static const uint8_t other[MSGA__DGRAM_MAC_KEY_LEN] = "another key 16!";

/* Sign hdr (hl bytes) + data (len) and check it: right, then wrong. */
static void roundtrip(const uint8_t *in, uint32_t hl, uint32_t len)
{
	uint32_t n = hl + MSGA__UDW_MAC_LEN + len, got;
	uint8_t *hdr = fuzz_dup(in, hl + MSGA__UDW_MAC_LEN);
	uint8_t *scratch = malloc(n), *dgram = malloc(n), *again = malloc(n);

	FUZZ_CHECK(scratch && dgram && again);
	hdr[5] &= (uint8_t)~MSGA__UDW_MAC;
	got = msga__dgram_mac_sign(key, hdr, hl, in + hl, len, scratch);
	FUZZ_CHECK(got == hl + MSGA__UDW_MAC_LEN);
	FUZZ_CHECK(hdr[5] & MSGA__UDW_MAC);
	memcpy(dgram, hdr, got);
	memcpy(dgram + got, in + hl, len);
	memcpy(again, dgram, n);
	if (msga__udw_hdr_len(hdr[6], hdr[5]) != got) {
		/* a header that does not end where it was cut: not a header
		 * of ours (the library never signs one) */
		goto out;
	}
	FUZZ_CHECK(msga__dgram_mac_check(key, dgram, n) == 1);
	memcpy(dgram, again, n);
	FUZZ_CHECK(msga__dgram_mac_check(other, dgram, n) == -EBADMSG);
	memcpy(dgram, again, n);
	dgram[n - 1 - (in[0] % n)] ^= 0x01;
	/* (a flip of the flag or the name's length moves the MAC: refused
	 * as not ours or as no MAC; never accepted) */
	FUZZ_CHECK(msga__dgram_mac_check(key, dgram, n) != 1);
out:
	free(hdr);
	free(scratch);
	free(dgram);
	free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_dup(data, size);
	size_t off = 0;
	int found = msga__dgram_mac_find(copy, size, &off);
	int ret = msga__dgram_mac_check(key, copy, size);
	uint32_t hl;

	FUZZ_CHECK(found == 1 || found == 0 || found == -EBADMSG);
	FUZZ_CHECK(ret == 1 || ret == 0 || ret == -EBADMSG);
	if (found != 1) {
		FUZZ_CHECK(ret == 0);
	} else {
		FUZZ_CHECK(off + MSGA__UDW_MAC_LEN <= size);
		for (size_t i = off; i < off + MSGA__UDW_MAC_LEN; i++)
			FUZZ_CHECK(!copy[i]); /* left zero, right or wrong */
	}
	free(copy);
	if (size < MSGA__UDW_FIXED || found == -EBADMSG)
		return 0;
	hl = msga__udw_hdr_len(data[6], data[5] & ~MSGA__UDW_MAC);
	if (hl + MSGA__UDW_MAC_LEN <= size)
		roundtrip(data, hl, (uint32_t)(size - hl - MSGA__UDW_MAC_LEN));
	return 0;
}
