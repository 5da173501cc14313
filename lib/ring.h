/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the RDMA WRITE ring of one RC connection: a byte ring in the
 * subscriber's registered memory that the publisher writes records into
 * and the subscriber finds by polling memory, with no receive to post and
 * no completion to reap per message (the FaRM/HERD design; perftest's
 * ib_write_lat measures the same primitive). Pure logic, no verbs: the
 * glue is rc_ring.c, the tests test_ring.c.
 *
 * A record, 16-byte aligned, all fields little-endian:
 *
 *   0  u64 word0    low 32 bits: payload length, or for a PAD the bytes
 *                   to the ring's end (bit 31 set); high 32: stamp >> 32
 *   8  24 B         wire header (wire.h): type, flags, topic, credit, ...
 *  32  payload      then zero padding to the record size
 * end-8 u64 stamp   the record's full stamp (trailer)
 *
 * The stamp is a 64-bit mix of the record's index on the connection, so a
 * stale byte pattern left from an earlier lap (or a payload) matches only
 * by a 2^-96 accident. The reader accepts a record when word0's stamp and
 * then the trailer match: a WRITE is placed in ascending address order on
 * rxe, siw and (in practice) every HCA, which is what perftest's
 * last-byte polling relies on too. A PAD is word0 alone: when a record
 * would cross the end of the ring, the writer marks the rest as PAD and
 * starts again at offset 0.
 *
 * Flow control is by bytes: the reader reports how far it has freed (the
 * CREDIT message's credit field, mod 2^32) once a quarter of the ring is
 * unreported, and the writer only starts a record when twice the largest
 * record fits, so a wrap's PAD never needs room it does not have.
 */
#ifndef MSGA_RING_H
#define MSGA_RING_H

#include <stdint.h>

#include "msgaccel.h"
#include "wire.h"

#define MSGA__RING_ALIGN 16u
#define MSGA__RING_WORD0 8u
#define MSGA__RING_TRAILER 8u
#define MSGA__RING_OVERHEAD \
	(MSGA__RING_WORD0 + MSGA__WIRE_HDR_LEN + MSGA__RING_TRAILER) /* 40 */
#define MSGA__RING_PAD_BIT 0x80000000u
/* Largest record: one full fragment. */
#define MSGA__RING_REC_MAX \
	((MSGA__RING_OVERHEAD + MSGA_FRAG_MAX + MSGA__RING_ALIGN - 1) & \
	 ~(MSGA__RING_ALIGN - 1))
/* Smallest ring a writer accepts: 16 full fragments. */
#define MSGA__RING_MIN (16u * MSGA__RING_REC_MAX)

static inline uint32_t msga__ring_rec_size(uint32_t plen)
{
	return (MSGA__RING_OVERHEAD + plen + MSGA__RING_ALIGN - 1) &
	       ~(MSGA__RING_ALIGN - 1);
}

/* Stamp of record number n: never 0, and its high half never 0. */
uint64_t msga__ring_stamp(uint64_t n);

static inline uint64_t msga__ring_word0(uint32_t len, uint64_t stamp)
{
	return (stamp & 0xffffffff00000000ull) | len;
}

/* Whether size is a ring both sides can use. */
int msga__ring_size_ok(uint32_t size);

/* ---------------------------------------------------- writer (publisher) */

struct msga__ring_writer {
	uint64_t addr;      /* the reader's ring, remote address */
	uint32_t rkey;
	uint32_t size;
	uint64_t tail;      /* bytes placed so far (monotonic) */
	uint64_t head;      /* bytes the reader reported freed */
	uint64_t nrec;      /* records placed so far, PADs included */
};

/* Where a record goes: a PAD first (pad_len > 0) at pad_off, then it. */
struct msga__ring_place {
	uint32_t pad_off, pad_len;
	uint64_t pad_stamp;
	uint32_t off, rec;
	uint64_t stamp;
};

void msga__ring_writer_init(struct msga__ring_writer *w, uint64_t addr,
			    uint32_t rkey, uint32_t size);
/* Room for any one record, with a PAD before it, and reserve more. */
int msga__ring_can_place(const struct msga__ring_writer *w,
			 uint32_t reserve);
/* Place a record of plen payload bytes (caller checked can_place). */
void msga__ring_place(struct msga__ring_writer *w, uint32_t plen,
		      struct msga__ring_place *p);
/* The reader's report (mod 2^32); -EPROTO if it claims unwritten bytes. */
int msga__ring_on_report(struct msga__ring_writer *w, uint32_t freed);

/* ---------------------------------------------------- reader (subscriber) */

struct msga__ring_reader {
	char *buf;
	uint32_t size;
	uint64_t rd;        /* next record starts here (monotonic) */
	uint64_t nrec;      /* its index, for the stamp */
	uint64_t stamp;     /* msga__ring_stamp(nrec), kept: peek is hot */
	uint64_t freed;     /* everything before this may be overwritten */
	uint64_t reported;  /* freed, as last told to the writer */
};

void msga__ring_reader_init(struct msga__ring_reader *r, char *buf,
			    uint32_t size);
/*
 * The next complete record, PADs skipped: 1 with *rec at its word0 and
 * *plen its payload length; 0 when it has not (fully) arrived; -EPROTO for
 * a record that cannot be.
 */
int msga__ring_peek(struct msga__ring_reader *r, char **rec, uint32_t *plen);
/* Done parsing the record peek returned (it may still be held). */
void msga__ring_consume(struct msga__ring_reader *r, uint32_t plen);
/*
 * Move freed up to rd, stopping at the first record is_held() says is
 * still in use (a held message). PADs are never held.
 */
void msga__ring_free(struct msga__ring_reader *r,
		     int (*is_held)(const char *rec));
/* Whether the writer should hear about freed bytes now. */
int msga__ring_need_report(const struct msga__ring_reader *r);

#endif
