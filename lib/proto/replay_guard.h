/* SPDX-License-Identifier: MIT */
/*
 * replay_guard.h - what makes a one-message handshake single-use: the
 * READ endpoint (lib/ud/read_auth.c) takes a reader on the word of one
 * connect request, so a recorded request must not work twice. A request
 * carries its sender's clock and a random nonce; the guard refuses one
 * whose clock is more than a window away from ours, and one whose nonce
 * it has seen within the window. It remembers at most a fixed number of
 * nonces: when all are younger than the window, a new request is refused
 * (a flood of valid requests then waits, it does not evict the record
 * that keeps a replay out).
 */
#ifndef MSGA_REPLAY_GUARD_H
#define MSGA_REPLAY_GUARD_H

#include <stdint.h>

#define MSGA__REPLAY_NONCE_LEN 16u
#define MSGA__REPLAY_SLOTS 256u

struct msga__replay_guard {
	uint64_t window_ms;    /* clocks may differ by this, either way */
	struct {
		uint64_t ts_ms;    /* its request's clock; 0: free */
		uint8_t nonce[MSGA__REPLAY_NONCE_LEN];
	} seen[MSGA__REPLAY_SLOTS];
};

enum msga__replay_verdict {
	MSGA__REPLAY_OK = 0,   /* fresh: now remembered */
	MSGA__REPLAY_STALE,    /* its clock is outside the window */
	MSGA__REPLAY_SEEN,     /* a replay */
	MSGA__REPLAY_FULL,     /* no room to remember it: refused */
};

void msga__replay_guard_init(struct msga__replay_guard *g,
			     uint64_t window_ms);
/* A request stamped ts_ms with nonce, at our clock now_ms (real time). */
enum msga__replay_verdict
msga__replay_check(struct msga__replay_guard *g, uint64_t now_ms,
		   uint64_t ts_ms, const uint8_t *nonce);

#endif
