/* SPDX-License-Identifier: MIT */
/* auth.c - keyed primitives (auth.h), each a libsodium call. */
#include <rdma/rdma_cma.h>
#include <sodium.h>
#include <string.h>

#include "auth.h"

void msga__auth_tag(const uint8_t key[MSGA_KEY_LEN], const char *label,
		    const struct msga__auth_piece *pieces, int npieces,
		    uint8_t tag[MSGA__AUTH_TAG_LEN])
{
	crypto_generichash_blake2b_state st;
	/* (the label's NUL too: "a" + "bc" and "ab" + "c" must differ) */
	size_t llen = strlen(label) + 1;

	crypto_generichash_blake2b_init(&st, key, MSGA_KEY_LEN,
					MSGA__AUTH_TAG_LEN);
	crypto_generichash_blake2b_update(&st, (const void *)label, llen);
	for (int i = 0; i < npieces; i++) {
		uint8_t len[8];

		/* each piece's length first, for the same reason */
		for (int b = 0; b < 8; b++)
			len[b] = (uint8_t)((uint64_t)pieces[i].n >> (8 * b));
		crypto_generichash_blake2b_update(&st, len, sizeof(len));
		crypto_generichash_blake2b_update(&st, pieces[i].p,
						  pieces[i].n);
	}
	crypto_generichash_blake2b_final(&st, tag, MSGA__AUTH_TAG_LEN);
	sodium_memzero(&st, sizeof(st));
}

int msga__auth_tag_equal(const uint8_t *a, const uint8_t *b)
{
	return crypto_verify_16(a, b) == 0;
}

void msga__auth_random(void *buf, size_t n)
{
	randombytes_buf(buf, n);
}

void msga__auth_derive(const uint8_t key[MSGA_KEY_LEN], const char *label,
		       void *out, size_t n)
{
	crypto_generichash_blake2b(out, n, (const void *)label,
				   strlen(label) + 1, key, MSGA_KEY_LEN);
}

uint64_t msga__auth_key_id(const uint8_t key[MSGA_KEY_LEN])
{
	uint8_t tag[MSGA__AUTH_TAG_LEN];
	uint64_t id = 0;

	msga__auth_tag(key, "msgaccel key id v1", NULL, 0, tag);
	for (int b = 0; b < 8; b++)
		id |= (uint64_t)tag[b] << (8 * b);
	return id ? id : 1; /* 0 is "no key" on the wire */
}

uint32_t msga__auth_qkey(const uint8_t key[MSGA_KEY_LEN])
{
	uint8_t b[4];
	uint32_t q;

	msga__auth_derive(key, "msgaccel ud qkey v1", b, sizeof(b));
	q = ((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	     (uint32_t)b[3] << 24) & 0x7fffffffu;
	/* (the one value it must never be) */
	return q == RDMA_UDP_QKEY ? q ^ 1u : q;
}
