/* SPDX-License-Identifier: MIT */
/*
 * retain_scan.h - walk a copy of part of a publisher's retention ring
 * (retain.h), as a subscriber gets it with RDMA READ: the records of the
 * positions [lo, hi), the bytes at lo first. Pure logic.
 *
 * The copy came from another host's memory, which this host does not
 * trust and which was being written while it was read, so every header is
 * checked before it is believed: its check names its own position, its
 * length is bounded, and the record lies wholly inside the span and the
 * ring. A header that fails ends the walk: what follows cannot be found
 * without it. Whether the copy was torn is not for the walk to say (the
 * caller compares the ring's head, read after, with lo).
 */
#ifndef MSGA_RETAIN_SCAN_H
#define MSGA_RETAIN_SCAN_H

#include <stddef.h>
#include <stdint.h>

struct msga__rscan_rec {
	uint32_t topic_id;
	uint32_t len;
	uint64_t seq;
	uint64_t pos;          /* its position */
	const void *data;      /* len bytes inside the copy */
};

/*
 * buf holds the hi - lo bytes of the positions [lo, hi) of a ring of cap
 * bytes (lo and hi multiples of 8, hi - lo at most cap); calls fn for each
 * record in order, up to max_len bytes each. Returns 0 when the walk
 * reached hi; -EBADMSG when a header is not valid there (fn was called
 * for the records before it); -EINVAL for bad arguments; or what fn
 * returned, when nonzero (it stops the walk).
 */
int msga__retain_scan(const void *buf, uint64_t lo, uint64_t hi, uint64_t cap,
		      uint32_t max_len,
		      int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		      void *arg);

/*
 * The walk of one chunk of a longer span read in overlapping chunks
 * (repair_sched.h): buf holds the positions [lo, hi) as above, and the
 * walk begins at from (lo <= from <= hi, a record's start: where the
 * previous chunk's walk stopped). A record that does not end by hi, its
 * header valid or cut by hi, or an unused end that reaches past hi, is
 * not an error here: the walk stops at its start, which the next chunk's
 * overlap holds (both are shorter than the largest record). Returns 0
 * and *stopped (hi when the walk reached it, else that start);
 * -EBADMSG and *stopped the position of a header that is not valid
 * there; -EINVAL (*stopped from) for bad arguments; or fn's nonzero
 * return (*stopped the position of the record it was given).
 */
int msga__retain_walk(const void *buf, uint64_t lo, uint64_t from, uint64_t hi,
		      uint64_t cap, uint32_t max_len,
		      int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		      void *arg, uint64_t *stopped);

#endif
