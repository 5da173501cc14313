/* SPDX-License-Identifier: MIT */
/* replay_guard.c - see replay_guard.h. */
#include <string.h>

#include "replay_guard.h"

void msga__replay_guard_init(struct msga__replay_guard *g,
			     uint64_t window_ms)
{
	memset(g, 0, sizeof(*g));
	g->window_ms = window_ms;
}

enum msga__replay_verdict
msga__replay_check(struct msga__replay_guard *g, uint64_t now_ms,
		   uint64_t ts_ms, const uint8_t *nonce)
{
	uint32_t free_slot = MSGA__REPLAY_SLOTS;

	if (!ts_ms || ts_ms > now_ms + g->window_ms ||
	    ts_ms + g->window_ms < now_ms)
		return MSGA__REPLAY_STALE;
	for (uint32_t i = 0; i < MSGA__REPLAY_SLOTS; i++) {
		uint64_t t = g->seen[i].ts_ms;

		/* (a slot whose request is out of the window can go: a
		 * replay of it would be refused as stale) */
		if (!t || t + g->window_ms < now_ms) {
			if (free_slot == MSGA__REPLAY_SLOTS)
				free_slot = i;
			continue;
		}
		if (!memcmp(g->seen[i].nonce, nonce, MSGA__REPLAY_NONCE_LEN))
			return MSGA__REPLAY_SEEN;
	}
	if (free_slot == MSGA__REPLAY_SLOTS)
		return MSGA__REPLAY_FULL;
	g->seen[free_slot].ts_ms = ts_ms;
	memcpy(g->seen[free_slot].nonce, nonce, MSGA__REPLAY_NONCE_LEN);
	return MSGA__REPLAY_OK;
}
