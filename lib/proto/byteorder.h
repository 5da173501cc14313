/* SPDX-License-Identifier: MIT */
/*
 * byteorder.h - little-endian loads and stores for the wire codecs, through
 * memcpy so unaligned fields are safe; on x86 they compile to plain moves.
 */
#ifndef MSGA_BYTEORDER_H
#define MSGA_BYTEORDER_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void msga__put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void msga__put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void msga__put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t msga__get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t msga__get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t msga__get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#endif
