/* SPDX-License-Identifier: MIT */
/*
 * reasm.h - reassembly of messages larger than a UD datagram (the path
 * MTU), with bounded memory. Fragments of one message go into one buffer at
 * their offset, in any order; a message completes when all its bytes
 * arrived.
 *
 * Memory is bounded per stream, then globally: each stream (a small index,
 * below the nstreams given at init) has at most one message in reassembly,
 * so senders never evict each other's messages; a stream's newer message
 * evicts only its own older incomplete one, and a fragment of a message
 * older than the stream's current one is ignored. The buffers are
 * allocated for a message's own size when its first fragment arrives, and
 * all messages in reassembly together stay within a byte budget: a new
 * message that does not fit is dropped (counted, and its later fragments
 * ignored) until a message completes or times out. An incomplete message
 * is dropped and counted when none of its fragments arrived for the
 * timeout (a big message still flowing is not stale, however long it
 * takes). Pure logic.
 */
#ifndef MSGA_REASM_H
#define MSGA_REASM_H

#include <stddef.h>
#include <stdint.h>

#include "idx_lru.h"

struct msga__reasm_counters {
	uint64_t completed;
	uint64_t dropped_timeout;  /* incomplete past the timeout */
	uint64_t dropped_evicted;  /* incomplete, its stream's next one began */
	uint64_t dropped_invalid;  /* fragment inconsistent with its message */
	uint64_t dup_fragments;    /* fragment already received: ignored */
	uint64_t dropped_budget;   /* new message beyond the byte budget */
	uint64_t stale_fragments;  /* of a message older than its stream's */
};

/* What one fragment says about itself (from its wire header). */
struct msga__frag {
	uint64_t stream;     /* stream index, below the reassembler's nstreams */
	uint64_t msg_seq;    /* the message's sequence number */
	uint32_t total_len;  /* whole message */
	uint32_t offset;     /* of this fragment's bytes */
	uint32_t len;        /* of this fragment */
	uint32_t frag_size;  /* its message's fragment size; 0 = frag_size */
	const void *data;
};

struct msga__reasm_slot;

/* Budget of bytes in reassembly at once: 16 messages of the largest size. */
#define MSGA__REASM_BUDGET_DEFAULT (16ull << 20)

struct msga__reasm {
	struct msga__reasm_slot *slots; /* one per stream */
	unsigned int nslots;  /* streams */
	uint32_t max_msg;     /* largest message accepted */
	uint32_t frag_size;   /* smallest fragment payload accepted */
	uint64_t timeout_ns;
	uint64_t budget;      /* bytes of buffers at once; the owner may set */
	uint64_t used;        /* bytes of buffers now */
	unsigned int pending; /* messages being reassembled */
	/* Filling slots by last fragment, oldest first: 1 + index, 0 none. */
	struct msga__idx_list lru;
	struct msga__reasm_counters c;
	/* Told of every message dropped incomplete, for per-stream counts. */
	void (*on_drop)(void *arg, uint64_t stream);
	void *drop_arg;
};

/*
 * Room for nstreams streams (fragments name a stream below it), with the
 * default byte budget. frag_size is the smallest fragment a message may be
 * cut into (each message says its own, at least this). 0 or -EINVAL /
 * -ENOMEM.
 */
int msga__reasm_init(struct msga__reasm *r, unsigned int nstreams,
		     uint32_t max_msg, uint32_t frag_size, uint64_t timeout_ns);
void msga__reasm_fini(struct msga__reasm *r);

/*
 * Add a fragment at time now_ns. Returns 1 when its message is complete:
 * *msg and *len give it, valid until msga__reasm_release(r, *msg) or the next
 * add; 0 when more fragments are needed (or the fragment was ignored or
 * its message dropped: see the counters); -EINVAL when the fragment does
 * not fit its message or names a stream out of range (counted in
 * dropped_invalid, the message dropped).
 */
int msga__reasm_add(struct msga__reasm *r, const struct msga__frag *f,
		    uint64_t now_ns, const void **msg, uint32_t *len);
/* Give a completed message's buffer back. */
void msga__reasm_release(struct msga__reasm *r, const void *msg);
/*
 * The stream is forgotten (its index will name another): drop its
 * incomplete message, counted as evicted.
 */
void msga__reasm_forget(struct msga__reasm *r, uint64_t stream);
/* Drop incomplete messages older than the timeout; returns how many. */
unsigned int msga__reasm_expire(struct msga__reasm *r, uint64_t now_ns);
/* Messages being reassembled now. */
unsigned int msga__reasm_pending(const struct msga__reasm *r);
/* When msga__reasm_expire would next drop one (UINT64_MAX: none pending). */
uint64_t msga__reasm_next_expiry(const struct msga__reasm *r);

#endif
