/* SPDX-License-Identifier: MIT */
/*
 * retain.h - a UD publisher's retention buffer, for loss recovery on
 * multicast: copies of the messages it sent last, across all its topics,
 * so that it can send one again when a subscriber reports it lost (a NAK).
 * Pure logic: no verbs, no I/O.
 *
 * The copies are records in one byte ring, written one after the other:
 * a header, then the message padded to 8 bytes, so each message is
 * contiguous and 8-byte aligned where msga__retain_get hands it out. A
 * record that does not fit before the ring's end starts again at 0 and
 * the end is left unused. Room for a new record is made by dropping the
 * oldest records, whatever their topic: what is kept is always the latest
 * messages sent, as many as fit, which is what a NAK of a recent loss
 * asks for.
 *
 * A topic's messages are found by (topic, seq) in an open-addressing table
 * sized at init for the most records the ring can hold. A ring of offsets
 * per topic indexed by seq - oldest would also be O(1), but it needs a slot
 * for every skipped seq (a jump may skip any number of them) and room for
 * one topic holding the whole buffer, for every topic at once; the table
 * holds only what is kept, so its size follows from the byte budget alone.
 *
 * Memory: the byte budget; the table, at most 16 bytes for each 24 the
 * budget could hold as empty messages (load 1/2 at most: a lookup probes
 * about 1.5 slots); and 32 bytes a topic. Nothing is allocated after init:
 * msga__retain_put is one memcpy plus O(1) table work per record written
 * or dropped (amortized O(1): each record is dropped once).
 */
#ifndef MSGA_RETAIN_H
#define MSGA_RETAIN_H

#include <stddef.h>
#include <stdint.h>

/* A record's header in the ring; the message follows, padded to 8. */
struct msga__retain_rec {
	uint32_t topic;
	uint32_t len;
	uint64_t seq;
	uint32_t next;   /* its topic's next record: 1 + offset / 8, 0 none */
	uint32_t unused; /* keeps the message 8-byte aligned */
};

struct msga__retain_topic;

struct msga__retain {
	uint8_t *buf;     /* the ring, cap bytes */
	size_t cap;       /* a multiple of 8 */
	size_t head;      /* the oldest record (when nrec) */
	size_t tail;      /* where the next record goes, unless it wraps */
	size_t wrap;      /* head's lap of records ends here; cap: no wrap */
	size_t used;      /* bytes from head to tail, unused end included */
	size_t nrec;      /* records kept */
	uint32_t *index;  /* (topic, seq) -> 1 + offset / 8; 0 empty */
	size_t index_mask; /* slots - 1, slots a power of two */
	struct msga__retain_topic *topics;
	uint32_t max_topics;
	uint64_t dropped; /* records dropped to make room */
};

/*
 * bytes: the budget for kept messages, records with their headers
 * (rounded down to 8; at least one empty message's record, under 32
 * GiB); max_topics: topic ids are 0..max_topics-1. 0 or -ENOMEM/-EINVAL.
 */
int msga__retain_init(struct msga__retain *r, size_t bytes,
		      uint32_t max_topics);
void msga__retain_fini(struct msga__retain *r);

/* The ring bytes one message of len bytes takes: header and padding. */
static inline size_t msga__retain_rec_size(uint32_t len)
{
	return sizeof(struct msga__retain_rec) +
	       (((size_t)len + 7) & ~(size_t)7);
}

/*
 * Keep a copy of message seq of topic_id (len bytes, 0..MSGA_MSG_MAX). A
 * topic's seqs come in increasing order, normally +1 each time; a jump
 * (seq > last + 1) is allowed and the skipped ones are simply not kept.
 * The oldest records (of any topic) are dropped to make room. Returns 0;
 * -EMSGSIZE when len is above MSGA_MSG_MAX or its record does not fit the
 * whole buffer (nothing kept or dropped, and the topic's last seq stays
 * what it was); -EINVAL for a bad topic_id or a seq not above the topic's
 * last put (kept or since dropped).
 */
int msga__retain_put(struct msga__retain *r, uint32_t topic_id, uint64_t seq,
		     const void *data, uint32_t len);

/*
 * The kept copy of (topic_id, seq): 0 with *data (8-byte aligned) and *len
 * set, valid until the next put or fini; -ENOENT when it is not kept
 * (dropped, skipped, never put); -EINVAL for a bad topic_id.
 */
int msga__retain_get(const struct msga__retain *r, uint32_t topic_id,
		     uint64_t seq, const void **data, uint32_t *len);

/*
 * The oldest and newest seq of topic_id still kept. Returns how many of
 * its records are kept (skipped seqs in between are not counted); 0, with
 * both set to 0, when none; -EINVAL for a bad topic_id.
 */
int msga__retain_range(const struct msga__retain *r, uint32_t topic_id,
		       uint64_t *oldest, uint64_t *newest);

#endif
