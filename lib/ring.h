/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the RDMA WRITE ring of one RC connection: a byte ring in the
 * subscriber's registered memory that the publisher writes records into
 * and the subscriber finds by polling memory, with no receive to post and
 * no completion to reap per message (the FaRM/HERD design; perftest's
 * ib_write_lat measures the same primitive). Pure logic, no verbs: the
 * glue is rc_ring.c, the tests test_ring.c.
 *
 * A record, 8-byte aligned, all fields little-endian:
 *
 *   0  u32 word     payload length; bit 30 (EXT) says an 8-byte extension
 *                   follows the head; bit 31 is clear
 *   4  u8  type     wire.h's DATA, TOPIC or CREDIT
 *   5  u8  flags    FIRST, LAST (the reader marks HELD in its own copy)
 *   6  u16 topic
 *   8  u64 seq      DATA: per-topic sequence; CREDIT: the writer's credit
 *  16  [u32 total, u32 off]   EXT only: a fragment's message length and
 *                   its offset in the message
 *  16 or 24  payload, then zero padding to 8 bytes
 * end-8 u64 stamp   the record's stamp (trailer)
 *
 * A PAD is 16 bytes, u32 (bit 31 | bytes to the ring's end), u32 zero,
 * u64 stamp: when a record would cross the end of the ring, the writer
 * marks the rest as PAD and starts again at offset 0. A record that would
 * leave exactly 8 bytes before the end, too few for a PAD, takes them as
 * padding; both sides apply that rule, so sizes stay in step.
 *
 * The head is 16 bytes, not the SEND path's 24 (wire.h): a whole message
 * needs no total or offset, and a data record no credit. Bytes cost: on
 * soft RDMA every byte is copied and checksummed several times (in the
 * test VM a 64-byte WRITE with 40 more bytes took 2-3 us longer).
 *
 * The stamp is a 64-bit mix of the record's index on the connection:
 * distinct for every index, so a stale lap's bytes (or a payload) match
 * the awaited stamp only by a 2^-64 accident. The reader trusts nothing
 * in a record before its trailer matches, so a stale head is never
 * mistaken for a bad one: it only points the reader at a trailer that
 * does not match yet. A WRITE is placed in ascending address order on rxe,
 * siw and (in practice) every HCA, which is what perftest's last-byte
 * polling relies on too.
 *
 * Flow control is by bytes: the reader reports how far it has freed (a
 * CREDIT message's credit field, mod 2^32) once a quarter of the ring is
 * unreported, and the writer only starts a record when twice the largest
 * record fits, so a wrap's PAD never needs room it does not have.
 */
#ifndef MSGA_RING_H
#define MSGA_RING_H

#include <stdint.h>

#include "msgaccel.h"
#include "wire.h"

#define MSGA__RING_ALIGN 8u
#define MSGA__RING_HEAD 16u
#define MSGA__RING_EXT 8u
#define MSGA__RING_TRAILER 8u
#define MSGA__RING_PAD_LEN 16u
#define MSGA__RING_PAD_BIT 0x80000000u
#define MSGA__RING_EXT_BIT 0x40000000u
#define MSGA__RING_LEN_MASK 0x3fffffffu
#define MSGA__RING_FLAGS_OFF 5u  /* the flags byte, where HELD is marked */
/* Largest record: one full fragment, plus the 8 bytes a record may take. */
#define MSGA__RING_REC_MAX \
	(MSGA__RING_HEAD + MSGA__RING_EXT + MSGA_FRAG_MAX + \
	 MSGA__RING_TRAILER + MSGA__RING_ALIGN)
/* Smallest ring a writer accepts: 16 full fragments. */
#define MSGA__RING_MIN (16u * MSGA__RING_REC_MAX)

/*
 * Bytes of a record with plen payload bytes (and an extension if ext),
 * before the rule about the last 8 bytes of the ring.
 */
static inline uint32_t msga__ring_rec_size(uint32_t plen, int ext)
{
	return (MSGA__RING_HEAD + (ext ? MSGA__RING_EXT : 0) + plen +
		MSGA__RING_TRAILER + MSGA__RING_ALIGN - 1) &
	       ~(MSGA__RING_ALIGN - 1);
}

/* Stamp of record number n: never 0, and its high half never 0. */
uint64_t msga__ring_stamp(uint64_t n);

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
	uint32_t off, rec;  /* rec: its bytes, padding included */
	uint64_t stamp;
};

void msga__ring_writer_init(struct msga__ring_writer *w, uint64_t addr,
			    uint32_t rkey, uint32_t size);
/* Room for any one record, with a PAD before it, and reserve more. */
int msga__ring_can_place(const struct msga__ring_writer *w,
			 uint32_t reserve);
/* Place a record of plen payload bytes (caller checked can_place). */
void msga__ring_place(struct msga__ring_writer *w, uint32_t plen, int ext,
		      struct msga__ring_place *p);
/* The reader's report (mod 2^32); -EPROTO if it claims unwritten bytes. */
int msga__ring_on_report(struct msga__ring_writer *w, uint32_t freed);

/* The head of a record: struct msga__wire_hdr's fields, 16 or 24 bytes. */
void msga__ring_head_put(void *rec, uint32_t plen, int ext,
			 const struct msga__wire_hdr *h);
/*
 * Decode the head of a record whose trailer matched (rec_len bytes in
 * all): *h as wire.h would have it, *payload and *plen its payload; 0 or
 * -EPROTO for a record the writer cannot have sent.
 */
int msga__ring_head_get(const char *rec, uint32_t rec_len,
			struct msga__wire_hdr *h, const char **payload,
			uint32_t *plen);

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
 * The next complete record, PADs skipped: 1 with *rec at its head and
 * *rec_len its bytes; 0 when it has not (fully) arrived.
 */
int msga__ring_peek(struct msga__ring_reader *r, char **rec,
		    uint32_t *rec_len);
/* Done parsing the record peek returned (it may still be held). */
void msga__ring_consume(struct msga__ring_reader *r, uint32_t rec_len);
/*
 * Move freed up to rd, stopping at the first record is_held() says is
 * still in use (a held message). PADs are never held.
 */
void msga__ring_free(struct msga__ring_reader *r,
		     int (*is_held)(const char *rec));
/* Whether the writer should hear about freed bytes now. */
int msga__ring_need_report(const struct msga__ring_reader *r);

#endif
