/* SPDX-License-Identifier: MIT */
/*
 * The READ endpoint's replay guard (lib/proto/replay_guard.c): a request
 * is taken once, only within the clock window, and a full guard refuses
 * rather than forgets a nonce that could still be replayed.
 */
#include <string.h>

#include <criterion/criterion.h>

#include "replay_guard.h"

#define WIN 30000u
#define NOW 1700000000000ull /* ms: any real-time clock value */

static struct msga__replay_guard g;

static const uint8_t *nonce(uint32_t i)
{
	static uint8_t n[MSGA__REPLAY_NONCE_LEN];

	memset(n, 0, sizeof(n));
	memcpy(n, &i, sizeof(i));
	return n;
}

Test(replay_guard, a_request_is_taken_once)
{
	msga__replay_guard_init(&g, WIN);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW, nonce(1)),
		     MSGA__REPLAY_OK);
	cr_expect_eq(msga__replay_check(&g, NOW + 5, NOW, nonce(1)),
		     MSGA__REPLAY_SEEN);
	/* the same nonce with another clock is still a replay */
	cr_expect_eq(msga__replay_check(&g, NOW + 5, NOW + 3, nonce(1)),
		     MSGA__REPLAY_SEEN);
	cr_expect_eq(msga__replay_check(&g, NOW + 5, NOW, nonce(2)),
		     MSGA__REPLAY_OK);
}

Test(replay_guard, clocks_outside_the_window_are_stale)
{
	msga__replay_guard_init(&g, WIN);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW - WIN - 1, nonce(1)),
		     MSGA__REPLAY_STALE);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW + WIN + 1, nonce(2)),
		     MSGA__REPLAY_STALE);
	cr_expect_eq(msga__replay_check(&g, NOW, 0, nonce(3)),
		     MSGA__REPLAY_STALE);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW - WIN, nonce(4)),
		     MSGA__REPLAY_OK);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW + WIN, nonce(5)),
		     MSGA__REPLAY_OK);
}

/* A nonce is forgotten only when a replay of it would be stale anyway. */
Test(replay_guard, forgets_only_what_the_window_refuses)
{
	msga__replay_guard_init(&g, WIN);
	cr_expect_eq(msga__replay_check(&g, NOW, NOW, nonce(1)),
		     MSGA__REPLAY_OK);
	for (uint32_t i = 2; i <= MSGA__REPLAY_SLOTS; i++)
		cr_expect_eq(msga__replay_check(&g, NOW, NOW, nonce(i)),
			     MSGA__REPLAY_OK, "nonce %u", i);
	/* full of live requests: a new one is refused, the old remembered */
	cr_expect_eq(msga__replay_check(&g, NOW + 1, NOW + 1, nonce(9999)),
		     MSGA__REPLAY_FULL);
	cr_expect_eq(msga__replay_check(&g, NOW + 1, NOW, nonce(1)),
		     MSGA__REPLAY_SEEN);
	/* past the window the slots come free, and the replay is stale */
	cr_expect_eq(msga__replay_check(&g, NOW + WIN + 1, NOW, nonce(1)),
		     MSGA__REPLAY_STALE);
	cr_expect_eq(msga__replay_check(&g, NOW + WIN + 1, NOW + WIN + 1,
					nonce(9999)), MSGA__REPLAY_OK);
}
