/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what every harness under tests/fuzz/ shares: the libFuzzer entry
 * point's prototype, an invariant check that aborts (libFuzzer and the
 * corpus replay both treat an abort as a crash, and keep the input), and a
 * reader that turns the fuzzer's bytes into the choices a structured
 * harness makes (which fragment next, how much time passes). The reader
 * returns zeros once the input runs out, so every input is a valid run.
 */
#ifndef MSGA_FUZZ_H
#define MSGA_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: invariant failed: %s\n",    \
				__FILE__, __LINE__, #cond);                 \
			abort();                                            \
		}                                                           \
	} while (0)

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline size_t fuzz_left(const struct fuzz_in *in)
{
	return in->n;
}

/* The next n bytes as a little-endian number (missing bytes read 0). */
static inline uint64_t fuzz_uint(struct fuzz_in *in, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n && in->n; i++, in->p++, in->n--)
		v |= (uint64_t)*in->p << (8 * i);
	return v;
}

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	return (uint8_t)fuzz_uint(in, 1);
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	return (uint16_t)fuzz_uint(in, 2);
}

static inline uint32_t fuzz_u32(struct fuzz_in *in)
{
	return (uint32_t)fuzz_uint(in, 4);
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	return fuzz_uint(in, 8);
}

/* A number in [lo, hi], from as few bytes as the range needs. */
static inline uint64_t fuzz_range(struct fuzz_in *in, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo, v;

	if (span < 0x100)
		v = fuzz_u8(in);
	else if (span < 0x10000)
		v = fuzz_u16(in);
	else if (span < 0x100000000ull)
		v = fuzz_u32(in);
	else
		v = fuzz_u64(in);
	return span == UINT64_MAX ? v : lo + v % (span + 1);
}

/*
 * A heap copy of exactly n bytes, so AddressSanitizer reports a decoder
 * that reads one byte past what the peer sent.
 */
static inline void *fuzz_dup(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);

	FUZZ_CHECK(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

#endif
