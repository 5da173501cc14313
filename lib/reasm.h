/* SPDX-License-Identifier: MIT */
/*
 * reasm.h - reassembly of messages larger than a UD datagram (the path
 * MTU), with bounded memory. A fixed number of slots, each as large as the
 * largest message, is allocated once; fragments of one message go into one
 * slot at their offset, in any order. A message completes when all its
 * bytes arrived. Incomplete messages are dropped and counted when none of
 * their fragments arrived for the timeout (a big message still flowing is
 * not stale, however long it takes), or when every slot is busy and a new
 * message needs one (the least recently fed is evicted: fresh market data
 * beats stale). Pure logic.
 */
#ifndef MSGA_REASM_H
#define MSGA_REASM_H

#include <stddef.h>
#include <stdint.h>

struct msga__reasm_counters {
	uint64_t completed;
	uint64_t dropped_timeout;  /* incomplete past the timeout */
	uint64_t dropped_evicted;  /* incomplete, slot needed for a newer one */
	uint64_t dropped_invalid;  /* fragment inconsistent with its message */
	uint64_t dup_fragments;    /* fragment already received: ignored */
};

/* What one fragment says about itself (from its wire header). */
struct msga__frag {
	uint64_t stream;     /* publisher stream id */
	uint64_t msg_seq;    /* the message's sequence number */
	uint32_t total_len;  /* whole message */
	uint32_t offset;     /* of this fragment's bytes */
	uint32_t len;        /* of this fragment */
	uint32_t frag_size;  /* its message's fragment size; 0 = frag_size */
	const void *data;
};

struct msga__reasm_slot;

struct msga__reasm {
	struct msga__reasm_slot *slots;
	unsigned int nslots;
	uint32_t max_msg;     /* largest message accepted */
	uint32_t frag_size;   /* smallest fragment payload accepted */
	uint64_t timeout_ns;
	struct msga__reasm_counters c;
	/* Told of every message dropped incomplete, for per-stream counts. */
	void (*on_drop)(void *arg, uint64_t stream);
	void *drop_arg;
};

/*
 * Allocate nslots * max_msg bytes up front. frag_size is the smallest
 * fragment a message may be cut into (each message says its own, at
 * least this). 0 or -EINVAL / -ENOMEM.
 */
int msga__reasm_init(struct msga__reasm *r, unsigned int nslots,
		     uint32_t max_msg, uint32_t frag_size, uint64_t timeout_ns);
void msga__reasm_fini(struct msga__reasm *r);

/*
 * Add a fragment at time now_ns. Returns 1 when its message is complete:
 * *msg and *len give it, valid until msga__reasm_release(r, *msg) or the next
 * add; 0 when more fragments are needed; -EINVAL when the fragment does
 * not fit its message (counted in dropped_invalid, the message dropped).
 */
int msga__reasm_add(struct msga__reasm *r, const struct msga__frag *f,
		    uint64_t now_ns, const void **msg, uint32_t *len);
/* Give a completed message's slot back. */
void msga__reasm_release(struct msga__reasm *r, const void *msg);
/* Drop incomplete messages older than the timeout; returns how many. */
unsigned int msga__reasm_expire(struct msga__reasm *r, uint64_t now_ns);
/* Messages being reassembled now. */
unsigned int msga__reasm_pending(const struct msga__reasm *r);
/* When msga__reasm_expire would next drop one (UINT64_MAX: none pending). */
uint64_t msga__reasm_next_expiry(const struct msga__reasm *r);

#endif
