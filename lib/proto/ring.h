/* SPDX-License-Identifier: MIT */
/*
 * ring.h - the RDMA WRITE ring of one RC connection: a byte ring in the
 * subscriber's registered memory that the publisher writes records into
 * and the subscriber finds by polling memory, with no receive to post and
 * no completion to reap per message (the FaRM/HERD design; perftest's
 * ib_write_lat measures the same primitive). Pure logic, no verbs: the
 * glue is rc_ring.c, the tests test_ring.c.
 *
 * A record starts on a 16-byte boundary of the ring, all fields
 * little-endian, and starts with a u32 word that says which of three
 * forms it is:
 *
 *   short (bit 30 set): a whole DATA message whose sequence number is the
 *     one after the last its topic had on this connection (the reader
 *     counts); 4 bytes of head:
 *       bits 0-12 payload length, bits 13-22 topic, bits 23-29 zero
 *   long (bits 30, 31 clear): everything else; 20 bytes of head:
 *     0  u32 word   bits 0-23 payload length, bit 28 (EXT) a 16-byte
 *                   extension follows the head, bits 24-27, 29 zero
 *     4  u64 seq    DATA: per-topic sequence; CREDIT: the writer's credit
 *    12  u16 topic
 *    14  u8  type   wire.h's DATA, TOPIC, CREDIT, REFUSE, (0.10) BYE or
 *                   (0.12) LAST_VALUE
 *    15  u8  flags  FIRST, LAST
 *    16  u32 zero
 *    20  [u32 total, u32 off, u64 zero]   EXT only: a fragment's message
 *                   length and its offset in the message
 *   then the payload, zero padding to 4 bytes, and the u64 stamp (trailer).
 *   The WRITE ends with the trailer; the record takes the ring up to the
 *   next 16-byte boundary (the 0-12 bytes after the trailer are never
 *   written, never read).
 *
 *   PAD (bit 31 set): 16 bytes, u32 (bit 31 | bytes to the ring's end), u32
 *     zero, u64 stamp: when a record would cross the end of the ring, the
 *     writer marks the rest as PAD and starts again at offset 0. Records
 *     and the ring are multiples of 16 bytes, so the rest is one PAD.
 *
 * Every head is 4 bytes past a multiple of 16, and the subscriber's ring
 * starts 12 bytes past a 16-byte boundary (MSGA__RING_BASE_SKEW), so
 * every payload, msg->data, is 16-byte aligned in memory.
 *
 * The reader keeps nothing it needs in the ring: a record is read once,
 * when its trailer matches, and checked; which records the application
 * holds is a bitmap in the reader's private memory (the publisher can
 * rewrite any ring byte at any time, even of a record being held). The
 * ring is a struct msga__peer_mem (peer_mem.h), which cannot be read but
 * through its accessors: every look at a ring byte is one of those calls.
 *
 * Ring format 2 (msgaccel 0.4): 16-byte records; format 1 (0.3) was 4.
 * The subscriber offers a ring with MSGA__RING_OFFER_FMT2 set in the
 * hello's ring_size; an earlier publisher refuses that size (it has bit
 * 31), and a publisher of this version accepts only that offer, so two
 * versions fall back to SEND/RECV instead of misreading each other.
 *
 * Why so tight: a 64-byte message is a 76-byte WRITE (4 + 64 + 8). Bytes
 * cost on soft RDMA, and one threshold costs a lot: soft-RoCE checksums a
 * packet's payload with the kernel's crc32, whose x86 PCLMUL version
 * saves and restores the user's FPU state for 79 bytes or more. In the
 * test VM a 76-byte RDMA WRITE had a median RTT/2 of 15.0 us and an
 * 80-byte one 17.4 us (12 interleaved runs of each). The sequence number
 * goes implicit because a feed's messages on a topic are consecutive; the
 * writer sends it whenever they are not (the first message of a topic, a
 * fragment), and the reader takes any explicit one as the new base.
 *
 * The stamp is a 64-bit mix of the record's index on the connection:
 * distinct for every index, so a stale lap's bytes (or a payload) match
 * the awaited stamp only by a 2^-64 accident. The reader trusts nothing
 * in a record before its trailer matches, so a stale head is never
 * mistaken for a bad one: it only points the reader at a trailer that
 * does not match yet.
 *
 * ORDERING: the reader relies on the bytes of one RDMA WRITE being placed
 * in ascending address order: when the trailer is visible, the rest of
 * the record is. rxe and siw copy in order, and x86 hosts with strict
 * PCIe ordering see a HCA's writes in order, but the IB spec does not
 * promise it, and a relaxed-ordering memory region (IBV_ACCESS_RELAXED_
 * ORDERING) explicitly gives it up: the ring is never registered so
 * (rc_ring.c); perftest's last-byte polling relies on the same order.
 * The trailer need not be 8-byte aligned, and need not land in one store:
 * if any of its bytes has landed, everything before it has, and a byte
 * not yet written that already holds its final value changes nothing. Only all eight matching while still stale is an error.
 *
 * Flow control is by bytes: the reader reports how far it has freed (a
 * CREDIT message's credit field, mod 2^32) once a quarter of the ring is
 * unreported, and the writer only starts a record when twice the largest
 * record fits, so a wrap's PAD never needs room it does not have.
 */
#ifndef MSGA_RING_H
#define MSGA_RING_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

#include "byteorder.h"
#include "msgaccel.h"
#include "peer_mem.h"
#include "wire.h"

#define MSGA__RING_ALIGN 16u      /* records: start and size */
#define MSGA__RING_WORD 4u        /* the trailer follows the payload so */
#define MSGA__RING_SHORT_HEAD 4u
#define MSGA__RING_HEAD 20u       /* the long form's */
#define MSGA__RING_EXT 16u
/* The reader's ring starts this far past a 16-byte boundary. */
#define MSGA__RING_BASE_SKEW (MSGA__RING_ALIGN - MSGA__RING_SHORT_HEAD)
/* In the hello's ring_size: the ring is in format 2 (above). */
#define MSGA__RING_OFFER_FMT2 0x80000000u
#define MSGA__RING_TRAILER 8u
#define MSGA__RING_PAD_LEN 16u
#define MSGA__RING_PAD_BIT 0x80000000u
#define MSGA__RING_SHORT_BIT 0x40000000u
#define MSGA__RING_FLAGS_OFF 15u           /* long form: the flags byte */
#define MSGA__RING_EXT_BIT 0x10000000u
#define MSGA__RING_LEN_MASK 0x00ffffffu    /* long form */
#define MSGA__RING_SHORT_LEN_MASK 0x1fffu  /* short form, bits 0-12 */
#define MSGA__RING_SHORT_TOPIC_SHIFT 13
#define MSGA__RING_SHORT_TOPIC_MASK 0x3ffu /* MSGA_PUB_TOPICS_MAX - 1 */
#define MSGA__RING_UP(x, a) (((x) + (a) - 1) & ~((a) - 1))
/* Largest record: one full fragment. */
#define MSGA__RING_REC_MAX \
	MSGA__RING_UP(MSGA__RING_UP(MSGA__RING_HEAD + MSGA__RING_EXT + \
				    MSGA_FRAG_MAX, MSGA__RING_WORD) + \
		      MSGA__RING_TRAILER, MSGA__RING_ALIGN)
/* Most bytes a whole message's WRITE adds to its payload (long head). */
#define MSGA__RING_REC_EXTRA_MAX \
	(MSGA__RING_HEAD + MSGA__RING_WORD - 1 + MSGA__RING_TRAILER)
/* Smallest ring a writer accepts: 16 full fragments. */
#define MSGA__RING_MIN (16u * MSGA__RING_REC_MAX)

_Static_assert(MSGA__RING_HEAD % MSGA__RING_ALIGN == MSGA__RING_SHORT_HEAD &&
	       MSGA__RING_EXT % MSGA__RING_ALIGN == 0 &&
	       MSGA__RING_PAD_LEN == MSGA__RING_ALIGN,
	       "every head ends on the same 16-byte phase; a PAD fills any gap");
_Static_assert(MSGA_PUB_TOPICS_MAX == MSGA__RING_SHORT_TOPIC_MASK + 1 &&
	       MSGA_FRAG_MAX <= MSGA__RING_SHORT_LEN_MASK,
	       "a short record can name every topic and carry a fragment");

/*
 * Where the trailer of a record with a head of head_len bytes
 * (MSGA__RING_SHORT_HEAD, MSGA__RING_HEAD, or that plus MSGA__RING_EXT)
 * and plen payload bytes sits; its WRITE is this plus the trailer.
 */
static inline uint32_t msga__ring_trailer_off(uint32_t head_len, uint32_t plen)
{
	return MSGA__RING_UP(head_len + plen, MSGA__RING_WORD);
}

/* The ring bytes such a record takes: a multiple of 16. */
static inline uint32_t msga__ring_rec_size(uint32_t head_len, uint32_t plen)
{
	return MSGA__RING_UP(msga__ring_trailer_off(head_len, plen) +
			     MSGA__RING_TRAILER, MSGA__RING_ALIGN);
}

static inline int msga__ring_is_short(uint32_t word)
{
	return (word & (MSGA__RING_PAD_BIT | MSGA__RING_SHORT_BIT)) ==
	       MSGA__RING_SHORT_BIT;
}

/* A short record's word: a whole message of len bytes on topic. */
static inline uint32_t msga__ring_short_word(uint32_t topic, uint32_t len)
{
	return MSGA__RING_SHORT_BIT | len |
	       topic << MSGA__RING_SHORT_TOPIC_SHIFT;
}

/* A record's head bytes and payload length, from its first word. */
static inline uint32_t msga__ring_head_len_of(uint32_t word, uint32_t *plen)
{
	if (msga__ring_is_short(word)) {
		*plen = word & MSGA__RING_SHORT_LEN_MASK;
		return MSGA__RING_SHORT_HEAD;
	}
	*plen = word & MSGA__RING_LEN_MASK;
	return MSGA__RING_HEAD +
	       (word & MSGA__RING_EXT_BIT ? MSGA__RING_EXT : 0);
}

/*
 * Stamp of record number n: never 0, and its high half never 0. (Inline:
 * both sides take one per record.)
 */
static inline uint64_t msga__ring_stamp(uint64_t n)
{
	/* splitmix64's finaliser: consecutive n give unrelated stamps. */
	uint64_t z = n + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z | 0x0000000100000001ull;
}

/* Whether size is a ring both sides can use. */
int msga__ring_size_ok(uint32_t size);
/* The hello's ring_size for a ring of size bytes in this format. */
static inline uint32_t msga__ring_offer(uint32_t size)
{
	return size | MSGA__RING_OFFER_FMT2;
}
/* The size of a ring offered in this format, or 0 (none, or another). */
uint32_t msga__ring_offered_size(uint32_t offer);

/* ---------------------------------------------------- writer (publisher) */

/*
 * The reader registers its ring zero-based (rc_ring.c) from the page it
 * starts in (the kernel wants an iova with the address's page offset),
 * so ring offset off is remote address MSGA__RING_REMOTE(off): the
 * hello's ring_addr, always 0, is where that registration starts.
 */
#define MSGA__RING_REMOTE(off) ((uint64_t)(off) + MSGA__RING_BASE_SKEW)
struct msga__ring_writer {
	uint32_t rkey;
	uint32_t size;
	uint64_t tail;      /* bytes placed so far (monotonic) */
	uint64_t head;      /* bytes the reader reported freed */
	uint64_t nrec;      /* records placed so far, PADs included */
	uint32_t off;       /* tail % size, kept: a division is slow */
	/* per topic: the seq a short record would stand for (0: none yet) */
	uint64_t next_seq[MSGA_PUB_TOPICS_MAX];
};

/* Where a record goes: a PAD first (pad_len > 0) at pad_off, then it. */
struct msga__ring_place {
	uint32_t pad_off, pad_len;
	uint64_t pad_stamp;
	uint32_t off, rec;  /* rec: its ring bytes, a multiple of 16 */
	uint32_t len;       /* the bytes its WRITE carries, trailer last */
	uint64_t stamp;
};

void msga__ring_writer_init(struct msga__ring_writer *w, uint32_t rkey,
			    uint32_t size);
/* The record of size bytes at off is placed: move on, and its stamp. */
static inline uint64_t msga__ring_advance(struct msga__ring_writer *w,
					  uint32_t off, uint32_t size)
{
	w->tail += size;
	w->off = off + size == w->size ? 0 : off + size;
	return msga__ring_stamp(w->nrec++);
}

/* Room for any one record, with a PAD before it, and reserve more. */
static inline int msga__ring_can_place(const struct msga__ring_writer *w,
				       uint32_t reserve)
{
	return w->size - (w->tail - w->head) >=
	       2u * MSGA__RING_REC_MAX + reserve;
}
/*
 * The head a record for h with plen payload bytes gets: short, long, or
 * long with the extension (MSGA__RING_SHORT_HEAD, MSGA__RING_HEAD, or
 * MSGA__RING_HEAD + MSGA__RING_EXT). Call once per record, in order: it
 * counts the topic's sequence as the reader will.
 */
uint32_t msga__ring_head_len(struct msga__ring_writer *w,
			     const struct msga__wire_hdr *h, uint32_t plen);
/* Place a record (caller checked can_place). */
void msga__ring_place(struct msga__ring_writer *w, uint32_t head_len,
		      uint32_t plen, struct msga__ring_place *p);
/* The reader's report (mod 2^32); -EPROTO if it claims unwritten bytes. */
int msga__ring_on_report(struct msga__ring_writer *w, uint32_t freed);

/* The head of a record, head_len bytes as msga__ring_head_len() said. */
void msga__ring_head_put(void *rec, uint32_t head_len, uint32_t plen,
			 const struct msga__wire_hdr *h);

/* The bytes msga__ring_put_short() may write for a len-byte payload. */
#define MSGA__RING_SHORT_BUF(len) ((len) + MSGA__RING_SHORT_HEAD + \
				    MSGA__RING_PAD_LEN + MSGA__RING_TRAILER)

/*
 * The fast path's writer (rc_ring.c): a whole DATA message of len bytes,
 * seq the next of its topic, as one short record built whole in rec
 * (which holds MSGA__RING_SHORT_BUF(len) bytes): head, payload, zeros,
 * trailer. Returns the bytes of its WRITE, with *off where in the ring
 * they go; or 0, and nothing changed, when the message cannot be a short
 * record of a WRITE of at most max bytes there without a PAD first (the
 * general path, head_len + place + head_put, then takes it, by the same
 * rules). The caller checked can_place.
 */
static inline uint32_t msga__ring_put_short(struct msga__ring_writer *w,
					    char *rec, uint32_t max,
					    uint32_t topic, uint64_t seq,
					    const void *data, uint32_t len,
					    uint32_t *off)
{
	uint32_t size = msga__ring_rec_size(MSGA__RING_SHORT_HEAD, len);
	uint32_t trailer = msga__ring_trailer_off(MSGA__RING_SHORT_HEAD, len);

	if (topic >= MSGA_PUB_TOPICS_MAX || !seq ||
	    seq != w->next_seq[topic] || len > MSGA_FRAG_MAX ||
	    size > w->size - w->off || trailer + MSGA__RING_TRAILER > max)
		return 0;
	/*
	 * Zeros from the payload's end to the trailer: at most 3 bytes, all
	 * within the 16 after the payload's last whole word (a fixed-size
	 * store, not a memset call); the payload then overwrites its part.
	 */
	memset(rec + MSGA__RING_SHORT_HEAD + (len & ~(MSGA__RING_WORD - 1)),
	       0, MSGA__RING_PAD_LEN);
	msga__put32((uint8_t *)rec, msga__ring_short_word(topic, len));
	memcpy(rec + MSGA__RING_SHORT_HEAD, data, len);
	*off = w->off;
	msga__put64((uint8_t *)rec + trailer,
		    msga__ring_advance(w, w->off, size));
	w->next_seq[topic] = seq + 1;
	return trailer + MSGA__RING_TRAILER;
}

/* ---------------------------------------------------- reader (subscriber) */

/*
 * The reader. Everything here is the subscriber's private memory; only
 * mem is the ring the publisher writes, read through peer_mem.h.
 */
struct msga__ring_reader {
	struct msga__peer_mem mem; /* the ring, mem.size bytes, its base
				    * MSGA__RING_BASE_SKEW past 16 */
	uint64_t rd;        /* next record starts here (monotonic) */
	uint32_t off;       /* rd % size, kept: peek is hot */
	uint32_t free_off;  /* freed % size */
	uint64_t nrec;      /* its index, for the stamp */
	uint64_t stamp;     /* msga__ring_stamp(nrec), kept: peek is hot */
	uint64_t freed;     /* everything before this may be overwritten */
	uint64_t reported;  /* freed, as last told to the writer */
	uint32_t cur_payload; /* the payload being delivered, or NONE */
	uint32_t nheld;     /* bits set in held */
	/*
	 * One bit per 16 bytes of ring: set for the 16 bytes where a held
	 * message's word before its payload sits (freeing stops there).
	 */
	uint64_t *held;
	/*
	 * Which delivery a held bit is: a copy of a message from an earlier
	 * lap of the ring has the same bit. Held messages lie in [freed,
	 * rd], so in two laps at most, and every delivery of a lap comes
	 * after every delivery of the laps before it: a copy is the held
	 * message iff its stamp is at least the first hold's of the held
	 * message's lap (hold.h says why stamps name deliveries).
	 */
	struct {
		uint64_t lap;       /* rd / size at the hold */
		uint64_t since;     /* the stamp of the lap's first hold */
	} held_lap[2];          /* by lap parity */
	uint64_t next_seq[MSGA_PUB_TOPICS_MAX]; /* what a short record means */
};

#define MSGA__RING_NO_PAYLOAD UINT32_MAX

/*
 * A reader of the ring mem (its owner's handle: MSGA__RING_BASE_SKEW past
 * a 16-byte boundary, mem.size bytes); 0, -EINVAL (mem unfit), -ENOMEM.
 * fini frees what init took.
 */
int msga__ring_reader_init(struct msga__ring_reader *r,
			   struct msga__peer_mem mem);
void msga__ring_reader_fini(struct msga__ring_reader *r);

/* A record peek found at the read position, as read: private memory. */
struct msga__ring_rec {
	uint32_t word;      /* its first word, checked against its trailer */
	uint32_t len;       /* its ring bytes */
};

/*
 * The next complete record, PADs skipped: 1 with *rec filled in; 0 when
 * it has not (fully) arrived; -EPROTO for a complete PAD of the wrong
 * length.
 */
int msga__ring_peek(struct msga__ring_reader *r, struct msga__ring_rec *rec);
/*
 * Decode the record peek returned, once, in order: *h as wire.h would
 * have it (a short record's seq filled in), *payload and *plen its
 * payload, in place in the ring (peer_mem.h: the library reads it no
 * more); 0 or -EPROTO for a record the writer cannot have sent. The
 * payload is then the one msga__ring_hold() takes.
 */
int msga__ring_head_get(struct msga__ring_reader *r,
			const struct msga__ring_rec *rec,
			struct msga__wire_hdr *h, const char **payload,
			uint32_t *plen);
/*
 * The writer's NIC stores these words; the reader loads each with acquire
 * order. Records are 4-byte aligned, so a 64-bit field is read as two
 * halves: see the top of this file for why a trailer read so is safe.
 */
static inline uint32_t msga__ring_load32(const struct msga__ring_reader *r,
					 uint32_t off)
{
	return msga__peer_load32(&r->mem, off);
}

static inline uint64_t msga__ring_load64(const struct msga__ring_reader *r,
					 uint32_t off)
{
	return msga__peer_load64_halves(&r->mem, off);
}

/*
 * The ring bytes of the record at the read position whose first word is
 * word (a PAD's too), once all of it has arrived: its trailer is the
 * stamp awaited. 0 while not: a stale lap's head only points at a
 * trailer that does not match yet, or beyond the ring's end.
 */
static inline uint32_t msga__ring_arrived(const struct msga__ring_reader *r,
					  uint32_t word)
{
	uint32_t off = r->off, plen, head, size, trailer;

	if (word & MSGA__RING_PAD_BIT) {
		size = MSGA__RING_PAD_LEN; /* (the caller checks its word) */
		trailer = MSGA__RING_PAD_LEN - MSGA__RING_TRAILER;
	} else {
		head = msga__ring_head_len_of(word, &plen);
		if (plen > MSGA_FRAG_MAX)
			return 0;
		size = msga__ring_rec_size(head, plen);
		trailer = msga__ring_trailer_off(head, plen);
	}
	if (size > r->mem.size - off ||
	    msga__ring_load64(r, off + trailer) != r->stamp)
		return 0;
	return size;
}

/*
 * For idle polls, without a call: 0 if msga__ring_peek would find nothing.
 */
static inline int msga__ring_may_read(const struct msga__ring_reader *r)
{
	return !!msga__ring_arrived(r, msga__ring_load32(r, r->off));
}

/*
 * Whether a short record's (verified) word is one the writer can have
 * sent: bits 23-29 zero, a payload of at most a fragment, and a topic
 * whose sequence the reader knows.
 */
static inline int msga__ring_short_ok(const struct msga__ring_reader *r,
				      uint32_t word)
{
	const uint32_t valid = MSGA__RING_SHORT_BIT | MSGA__RING_SHORT_LEN_MASK |
			       MSGA__RING_SHORT_TOPIC_MASK <<
				       MSGA__RING_SHORT_TOPIC_SHIFT;

	return !(word & ~valid) && (word & MSGA__RING_SHORT_BIT) &&
	       (word & MSGA__RING_SHORT_LEN_MASK) <= MSGA_FRAG_MAX &&
	       r->next_seq[word >> MSGA__RING_SHORT_TOPIC_SHIFT &
			   MSGA__RING_SHORT_TOPIC_MASK];
}

/* A short record the fast path read (msga__ring_take_short). */
struct msga__ring_short {
	const char *payload; /* in place in the ring (peer_mem.h) */
	uint32_t len;
	uint32_t topic;
	uint64_t seq;
};

/* What msga__ring_take_short returns for a record it leaves to peek. */
#define MSGA__RING_TAKE_OTHER UINT32_MAX

/*
 * The fast path's reader: when the record at the read position is a
 * complete short record (a whole DATA message), its bytes, with *s filled
 * in and its topic's sequence counted, as msga__ring_head_get would; then
 * msga__ring_consume it. 0 when a short record's word is there but its
 * trailer is not yet (nothing more to read now: the caller need not ask
 * peek). MSGA__RING_TAKE_OTHER for anything else: a PAD, a long record,
 * or one that breaks a rule, complete or not, which msga__ring_peek and
 * msga__ring_head_get then take, or refuse with the reason.
 */
static inline uint32_t msga__ring_take_short(struct msga__ring_reader *r,
					     struct msga__ring_short *s)
{
	/* (a copy: kept in registers across the acquire loads) */
	const struct msga__peer_mem ring = r->mem;
	uint32_t off = r->off, word = msga__peer_load32(&ring, off), size;
	uint32_t len, topic;

	if (!msga__ring_is_short(word))
		return MSGA__RING_TAKE_OTHER;
	size = msga__ring_arrived(r, word);
	if (!size)
		return 0;
	/* The word read first may be a stale lap's (see peek): again. */
	word = msga__peer_load32(&ring, off);
	len = word & MSGA__RING_SHORT_LEN_MASK;
	topic = word >> MSGA__RING_SHORT_TOPIC_SHIFT &
		MSGA__RING_SHORT_TOPIC_MASK;
	if (!msga__ring_short_ok(r, word) ||
	    msga__ring_rec_size(MSGA__RING_SHORT_HEAD, len) != size)
		return MSGA__RING_TAKE_OTHER;
	s->payload = msga__peer_in_place(&ring, off + MSGA__RING_SHORT_HEAD,
					 len);
	s->len = len;
	s->topic = topic;
	s->seq = r->next_seq[topic]++;
	r->cur_payload = off + MSGA__RING_SHORT_HEAD;
	return size;
}

/* Done parsing the record peek returned (it may still be held). */
static inline void msga__ring_consume(struct msga__ring_reader *r,
				      uint32_t rec_len)
{
	r->rd += rec_len;
	r->off = r->off + rec_len == r->mem.size ? 0 : r->off + rec_len;
	r->stamp = msga__ring_stamp(++r->nrec);
	r->cur_payload = MSGA__RING_NO_PAYLOAD;
}

/*
 * Hold the message whose payload is data, delivered with the stamp stamp
 * (msga_msg.rx_time_ns): only the one being delivered (whose record peek
 * or take_short returned and is not yet consumed), with the stamp it was
 * given. 0; -EALREADY if it is held; -EINVAL if it is not that message.
 */
int msga__ring_hold(struct msga__ring_reader *r, const void *data,
		    uint64_t stamp);
/* Whether the message at data, delivered at stamp, is held now. */
int msga__ring_is_held(const struct msga__ring_reader *r, const void *data,
		       uint64_t stamp);
/*
 * Release the held message at data, delivered at stamp: 1 if it was held,
 * else 0 (no-op: a copy of an earlier lap's message at the same place, a
 * message never held, or one released already).
 */
int msga__ring_release(struct msga__ring_reader *r, const void *data,
		       uint64_t stamp);
/* msga__ring_free while a message is held: the bitmap says how far. */
void msga__ring_free_held(struct msga__ring_reader *r);
/*
 * Move freed up to rd, stopping where the first message still held
 * sits. Decided by the private hold bitmap alone: no ring byte is read.
 * (Inline: every record read calls it, and with nothing held it is rd,
 * whose offset off already is: no division.)
 */
static inline void msga__ring_free(struct msga__ring_reader *r)
{
	if (r->nheld) {
		msga__ring_free_held(r);
	} else if (r->rd > r->freed) {
		r->freed = r->rd;
		r->free_off = r->off;
	}
}
/* Whether the writer should hear about freed bytes now (every poll). */
static inline int msga__ring_need_report(const struct msga__ring_reader *r)
{
	return r->freed - r->reported >= r->mem.size / 4;
}

/*
 * Whether the writer may be waiting for room. It places nothing, not even
 * a control record, without two of the largest records free
 * (msga__ring_can_place), and it counts as used at least what we read but
 * have not reported free: held records, or a report not yet due. One more
 * record's worth allows for what is on its way. A writer we keep waiting
 * cannot send a keepalive either (liveness.h).
 */
static inline int msga__ring_writer_may_wait(const struct msga__ring_reader *r)
{
	return r->rd - r->reported + 3u * MSGA__RING_REC_MAX > r->mem.size;
}

#endif
