/* SPDX-License-Identifier: MIT */
/*
 * peer_mem.h - memory a peer may RDMA WRITE at any time: the subscriber's
 * ring (ring.h), registered for remote writes. It lives in our address
 * space, but its bytes are the peer's: a hostile or broken publisher can
 * change any of them between two of our loads, even while the
 * application holds a message in it.
 *
 * THE RULE: validate once, never trust again. Every ring byte the library
 * uses is read once, through the accessors below, into private memory
 * (the reader's state, a decoded header on the stack), checked there, and
 * only that private copy is used afterwards. Nothing the library needs
 * later (the length of a record already read, which messages are held)
 * is ever looked up in the ring again. (The same discipline as the Linux
 * kernel's __user pointers and copy_from_user: a reviewer sees at a
 * glance where a peer's bytes enter.)
 *
 * The type keeps the rule visible: struct msga__peer_mem holds a pointer
 * to a struct that is never defined, so the compiler refuses to read
 * through it, index it or do arithmetic on it. The only ways in are:
 *
 *   msga__peer_load32    an acquire load of one aligned 32-bit word (the
 *                        ring's polling: see ring.h, ORDERING), and
 *   msga__peer_load64_halves  two of them, for a 64-bit field;
 *   msga__peer_copy      n bytes copied out into private memory, read
 *                        once (a record's head);
 *   msga__peer_in_place  a pointer to bytes handed on, never read again by
 *                        the library: the zero-copy payload an
 *                        application's callback reads, or copies once
 *                        (reassembly, a topic's name). Whoever reads it
 *                        reads bytes a hostile peer can change under it;
 *                        msgaccel(7) says so to the application.
 *   msga__peer_offset_of where an address handed out earlier lies in the
 *                        memory: address arithmetic, no byte is read (a
 *                        hold or release names its message so).
 *
 * Only the memory's owner makes a handle: rc_ring.c, which registers the
 * ring (and the host tests and fuzzer, which play its part).
 *
 * Offsets are the caller's to bound, from private state only (the
 * reader's position, a record size checked against the room left). Host
 * tests and fuzzers build with -DMSGA__PEER_MEM_HOOK: then every access
 * is checked to lie inside the memory (abort if not), and every load or
 * copy first calls msga__peer_mem_hook(), which the test defines, so that
 * the "NIC" can write between any two of the reader's looks. In the library the
 * accessors are a plain load, a memcpy and an addition: the ring poll is
 * the latency-critical path.
 */
#ifndef MSGA_PEER_MEM_H
#define MSGA_PEER_MEM_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

/* Never defined: a peer's bytes are not an object of ours. */
struct msga__peer_bytes;

struct msga__peer_mem {
	const struct msga__peer_bytes *base_; /* the accessors' only */
	uint32_t size;                        /* bytes (our own copy) */
};

/* The handle of the size bytes at base a peer writes: owners only. */
static inline struct msga__peer_mem msga__peer_mem_of(void *base,
						      uint32_t size)
{
	return (struct msga__peer_mem){
		.base_ = (const struct msga__peer_bytes *)base, .size = size };
}

/* Its address, as the peer is told where to write (no byte is read). */
static inline uintptr_t msga__peer_mem_addr(const struct msga__peer_mem *m)
{
	return (uintptr_t)m->base_;
}

#ifdef MSGA__PEER_MEM_HOOK
#include <stdlib.h>
/* The test's: called before each load or copy, which lies inside m. */
void msga__peer_mem_hook(const struct msga__peer_mem *m, uint32_t off,
			 uint32_t n);

static inline void msga__peer_mem_bound_(const struct msga__peer_mem *m,
					 uint32_t off, uint32_t n)
{
	if (off > m->size || n > m->size - off)
		abort(); /* a library bug: an access outside the memory */
}
#define msga__peer_mem_read_(m, off, n) \
	(msga__peer_mem_bound_(m, off, n), msga__peer_mem_hook(m, off, n))
#else
#define msga__peer_mem_bound_(m, off, n) ((void)(m), (void)(off), (void)(n))
#define msga__peer_mem_read_(m, off, n) msga__peer_mem_bound_(m, off, n)
#endif

static inline const unsigned char *
msga__peer_mem_at_(const struct msga__peer_mem *m, uint32_t off)
{
	return (const unsigned char *)(const void *)m->base_ + off;
}

/*
 * The little-endian 32-bit word at off (4-byte aligned), loaded with
 * acquire order: what the peer's NIC placed before it is visible after.
 */
static inline uint32_t msga__peer_load32(const struct msga__peer_mem *m,
					 uint32_t off)
{
	msga__peer_mem_read_(m, off, 4);
	return le32toh(__atomic_load_n(
		(const uint32_t *)(const void *)msga__peer_mem_at_(m, off),
		__ATOMIC_ACQUIRE));
}

/*
 * A little-endian 64-bit field at off (4-byte aligned) as two such loads,
 * the low half first: a 64-bit load of a field not 8-byte aligned would
 * not be atomic anyway (ring.h says why the halves are safe). The base
 * is read once for both (the first acquire would make it be read again).
 */
static inline uint64_t msga__peer_load64_halves(const struct msga__peer_mem *m,
						uint32_t off)
{
	const uint32_t *p;
	uint64_t lo;

	msga__peer_mem_read_(m, off, 8);
	p = (const uint32_t *)(const void *)msga__peer_mem_at_(m, off);
	lo = le32toh(__atomic_load_n(p, __ATOMIC_ACQUIRE));
	return lo | (uint64_t)le32toh(__atomic_load_n(p + 1, __ATOMIC_ACQUIRE))
		<< 32;
}

/* Copy n bytes at off out into dst, private memory: read them there. */
static inline void msga__peer_copy(const struct msga__peer_mem *m,
				   uint32_t off, void *dst, uint32_t n)
{
	msga__peer_mem_read_(m, off, n);
	memcpy(dst, msga__peer_mem_at_(m, off), n);
}

/*
 * The bytes at off, n of them, to hand on in place (see the top: the
 * library never reads them again; whoever does reads the peer's bytes).
 */
static inline const void *msga__peer_in_place(const struct msga__peer_mem *m,
					      uint32_t off, uint32_t n)
{
	msga__peer_mem_bound_(m, off, n);
	return msga__peer_mem_at_(m, off);
}

/*
 * Whether p, an address handed out earlier, lies inside the memory: 1
 * with *off its offset, else 0. Compares addresses; reads no byte.
 */
static inline int msga__peer_offset_of(const struct msga__peer_mem *m,
				       const void *p, uint32_t *off)
{
	uintptr_t at = (uintptr_t)p, base = (uintptr_t)m->base_;

	if (at < base || at - base >= m->size)
		return 0;
	*off = (uint32_t)(at - base);
	return 1;
}

#endif
