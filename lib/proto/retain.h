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
 * Read from afar (0.7): subscribers read the ring with RDMA READ (see
 * mcast_serve.c and mcast_read.c), so the ring lives in one block, after
 * a small control block, and its bytes have positions that are never
 * reused: a record's position counts the bytes written before it since
 * init (unused ring ends included), its ring offset is position % cap.
 * A record's header names its own position (check), an unused end of at
 * least a header's size starts with a SKIP header, and ctrl->head is the
 * position of the oldest byte still kept, stored before any older byte
 * is written over: a reader that copied a span and then reads head no
 * higher than the span's start knows the copy was not torn
 * (msga__retain_scan validates the records).
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
	uint32_t topic;  /* MSGA__RETAIN_SKIP: the ring's end is unused */
	uint32_t len;
	uint64_t seq;
	uint32_t next;   /* its topic's next record: 1 + offset / 8, 0 none */
	uint32_t check;  /* (uint32_t)(its position / 8) */
};

#define MSGA__RETAIN_SKIP UINT32_MAX

/*
 * The control block before the ring, in the same memory (readers fetch
 * it). Little-endian hosts only, as the rest of the READ path.
 */
struct msga__retain_ctrl {
	uint64_t head;   /* position of the oldest byte kept */
	uint64_t cap;    /* ring bytes */
	uint64_t unused[6];
};

#define MSGA__RETAIN_CTRL 64u /* the ring starts this far into mem */

struct msga__retain_topic;

struct msga__retain {
	uint8_t *mem;     /* control block, then the ring: mem_len bytes */
	size_t mem_len;
	struct msga__retain_ctrl *ctrl;
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
	uint64_t head_pos; /* position of head (as ctrl->head) */
	uint64_t tail_pos; /* position of tail */
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
 * The position a put of a len-byte message would give its record now
 * (a put that then fails leaves no record there).
 */
uint64_t msga__retain_next_pos(const struct msga__retain *r, uint32_t len);

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
