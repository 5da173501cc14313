/* SPDX-License-Identifier: MIT */
/*
 * dgram_mac.h - the MAC of one msgaccel datagram (ud_wire.h, MAC flag):
 * SipHash-2-4 with a 128-bit output (libsodium's
 * crypto_shorthash_siphashx24) over the whole datagram, header and
 * payload, its 16 MAC bytes zero, keyed with a 16-byte key derived from
 * the context's own key. Pure: the key and the bytes come from the
 * caller (lib/ud/dgram_auth.c), so the host tests and the fuzzers reach
 * every branch.
 *
 * SipHash over BLAKE2b: a datagram is short, and SipHash takes about a
 * fifth of keyed BLAKE2b's time at 64 bytes (README of lib/ud, "What a
 * MAC costs"); 128 bits leave forging to chance alone (2^-128 a try).
 */
#ifndef MSGA_DGRAM_MAC_H
#define MSGA_DGRAM_MAC_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__DGRAM_MAC_KEY_LEN 16u
#define MSGA__DGRAM_MAC_LABEL "msgaccel ud mac v1"

/*
 * Where the datagram's MAC lies: 1 with *off set (the MAC flag is set,
 * and the header it makes fits in n bytes), 0 when it has no MAC flag,
 * -EBADMSG when it is not msgaccel's at all (magic, version, length).
 */
int msga__dgram_mac_find(const void *buf, size_t n, size_t *off);
/*
 * Check the datagram of n bytes in buf, in place: 1 when its MAC is
 * right, 0 when it has none (nor is ours), -EBADMSG when it is wrong.
 * The MAC bytes are left zero.
 */
int msga__dgram_mac_check(const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN],
			  void *buf, size_t n);
/*
 * MAC a datagram about to be sent: header hdr of hdr_len bytes (written
 * by msga__udw_put, without the MAC flag; room for MSGA__UDW_MAC_LEN
 * more), then len bytes of data. Sets the flag, appends the MAC to the
 * header and returns the header's new length. scratch holds hdr_len +
 * MSGA__UDW_MAC_LEN + len bytes (the bytes hashed, in one piece).
 */
uint32_t msga__dgram_mac_sign(const uint8_t key[MSGA__DGRAM_MAC_KEY_LEN],
			      void *hdr, uint32_t hdr_len, const void *data,
			      uint32_t len, uint8_t *scratch);

#endif
