/* SPDX-License-Identifier: MIT */
/*
 * Keepalive and peer-timeout decisions (lib/liveness.c): single ticks by
 * hand, then two peers ticking against each other in simulated time, one
 * of which goes silent.
 */
#include <stdint.h>

#include <criterion/criterion.h>

#include "liveness.h"

#define MS 1000000ull
#define INTERVAL (1000 * MS)
#define TIMEOUT (5000 * MS)
#define T0 (1000000 * MS) /* any clock value far from 0 */

static enum msga__live_verdict tick(struct msga__liveness *l, uint64_t now,
				    uint64_t rx, uint64_t tx, int blocked,
				    uint64_t *next)
{
	return msga__liveness_tick(l, now, rx, tx, blocked, INTERVAL, TIMEOUT,
				   next);
}

Test(liveness, first_tick_starts_both_clocks)
{
	struct msga__liveness l = { 0 };
	uint64_t next;

	cr_expect_eq(tick(&l, T0, 7, 9, 0, &next), MSGA__LIVE_OK);
	cr_expect_eq(next, T0 + INTERVAL, "the keepalive is the first due");
	cr_expect_eq(l.heard_ns, T0);
	cr_expect_eq(l.sent_ns, T0);
}

Test(liveness, keepalive_after_an_interval_without_posts)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;

	tick(&l, t, 0, 0, 0, &next);
	/* posts keep it quiet: each one restarts the interval */
	for (uint64_t tx = 1; tx <= 30; tx++) {
		t += 100 * MS;
		cr_expect_eq(tick(&l, t, tx, tx, 0, &next), MSGA__LIVE_OK);
	}
	t += INTERVAL - 1;
	cr_expect_eq(tick(&l, t, 30, 30, 0, &next), MSGA__LIVE_OK);
	t += 1;
	cr_expect_eq(tick(&l, t, 30, 30, 0, &next), MSGA__LIVE_KEEPALIVE);
	cr_expect_eq(next, t + INTERVAL);
}

/* One try per interval, sent or not (the caller may have had no room). */
Test(liveness, a_keepalive_is_tried_once_per_interval)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0, rx = 0;
	int tries = 0;

	tick(&l, t, rx, 0, 0, &next);
	for (int i = 0; i < 1000; i++) {
		t += 10 * MS;
		/* the peer keeps talking; we never manage to post */
		tries += tick(&l, t, ++rx, 0, 0, &next) ==
			 MSGA__LIVE_KEEPALIVE;
	}
	cr_expect_eq(tries, 10, "%d tries in 10 s", tries);
}

Test(liveness, a_silent_peer_is_dead_after_the_timeout)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;
	enum msga__live_verdict v = MSGA__LIVE_OK;

	tick(&l, t, 5, 0, 0, &next);
	while (v != MSGA__LIVE_DEAD) {
		cr_assert_leq(t, T0 + TIMEOUT, "still alive at %llu ms",
			      (unsigned long long)((t - T0) / MS));
		t += 50 * MS;
		v = tick(&l, t, 5, 0, 0, &next);
	}
	cr_expect_eq(t, T0 + TIMEOUT);
	cr_expect_eq(next, UINT64_MAX);
}

Test(liveness, anything_heard_restarts_the_timeout)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0, heard;

	tick(&l, t, 0, 0, 0, &next);
	for (; t < T0 + TIMEOUT - 100 * MS; t += 100 * MS)
		cr_expect_neq(tick(&l, t, 0, 0, 0, &next), MSGA__LIVE_DEAD);
	heard = t;
	cr_expect_neq(tick(&l, heard, 1, 0, 0, &next), MSGA__LIVE_DEAD);
	for (t = heard + 100 * MS; t < heard + TIMEOUT; t += 100 * MS)
		cr_expect_neq(tick(&l, t, 1, 0, 0, &next), MSGA__LIVE_DEAD,
			      "dead %llu ms after hearing",
			      (unsigned long long)((t - heard) / MS));
	cr_expect_eq(tick(&l, heard + TIMEOUT, 1, 0, 0, &next),
		     MSGA__LIVE_DEAD);
}

/* The next tick is due at the earlier of the keepalive and the deadline. */
Test(liveness, next_is_the_earlier_deadline)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;

	tick(&l, t, 0, 0, 0, &next);
	/* we post all the time, the peer says nothing */
	for (uint64_t tx = 1; tx < 45; tx++) {
		t += 100 * MS;
		tick(&l, t, 0, tx, 0, &next);
	}
	cr_expect_eq(next, T0 + TIMEOUT, "the deadline comes before %llu",
		     (unsigned long long)(t + INTERVAL));
}

/* Our own pause (no ticks for over two intervals) is not the peer's. */
Test(liveness, our_own_pause_gives_the_peer_a_fresh_timeout)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;

	tick(&l, t, 3, 0, 0, &next);
	t += 10 * TIMEOUT;
	cr_expect_eq(tick(&l, t, 3, 0, 0, &next), MSGA__LIVE_KEEPALIVE,
		     "after a pause: not dead, and time to speak");
	cr_expect_eq(l.heard_ns, t);
	/* ticks at the normal pace again: the timeout runs from the pause */
	for (uint64_t s = t + 100 * MS; s < t + TIMEOUT; s += 100 * MS)
		cr_expect_neq(tick(&l, s, 3, 0, 0, &next), MSGA__LIVE_DEAD);
	cr_expect_eq(tick(&l, t + TIMEOUT, 3, 0, 0, &next), MSGA__LIVE_DEAD);
}

/* Ticks up to two intervals apart are still polling, not a pause. */
Test(liveness, slow_ticks_are_not_a_pause)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;
	enum msga__live_verdict v = MSGA__LIVE_OK;

	tick(&l, t, 0, 0, 0, &next);
	while (v != MSGA__LIVE_DEAD && t < T0 + 2 * TIMEOUT) {
		t += 2 * INTERVAL;
		v = tick(&l, t, 0, 0, 0, &next);
	}
	cr_expect_eq(v, MSGA__LIVE_DEAD);
	cr_expect_leq(t, T0 + TIMEOUT + 2 * INTERVAL);
}

/* A peer we left no room to speak is not timed out for its silence. */
Test(liveness, a_peer_we_block_is_not_timed_out)
{
	struct msga__liveness l = { 0 };
	uint64_t next, t = T0;

	tick(&l, t, 0, 0, 0, &next);
	for (int i = 0; i < 200; i++) {
		t += 100 * MS;
		cr_expect_neq(tick(&l, t, 0, 0, 1, &next), MSGA__LIVE_DEAD);
	}
	/* room given back: the timeout runs from there */
	for (uint64_t s = t + 100 * MS; s < t + TIMEOUT; s += 100 * MS)
		cr_expect_neq(tick(&l, s, 0, 0, 0, &next), MSGA__LIVE_DEAD);
	cr_expect_eq(tick(&l, t + TIMEOUT, 0, 0, 0, &next), MSGA__LIVE_DEAD);
}

/* One side of the simulation: its liveness, counters, and its outbox. */
struct peer {
	struct msga__liveness l;
	uint64_t rx, tx;
	uint64_t arrive_at[4096]; /* when each keepalive reaches the other */
	unsigned head, tail;
};

/* Keepalives of from's that have reached to by ms. */
static void arrive(struct peer *from, struct peer *to, uint64_t ms)
{
	while (from->head != from->tail &&
	       from->arrive_at[from->head % 4096] <= ms) {
		from->head++;
		to->rx++;
	}
}

/* One tick of p at ms; a keepalive leaves, to arrive lat_ms later. */
static enum msga__live_verdict peer_tick(struct peer *p, uint64_t ms,
					 uint64_t lat_ms)
{
	uint64_t next;
	enum msga__live_verdict v = tick(&p->l, T0 + ms * MS, p->rx, p->tx, 0,
					 &next);

	if (v == MSGA__LIVE_KEEPALIVE) {
		p->tx++;
		p->arrive_at[p->tail++ % 4096] = ms + lat_ms;
	}
	return v;
}

/*
 * Two peers, each ticking every tick_ms (B half a tick after A), each
 * keepalive reaching the other lat_ms later. Returns the time (ms since
 * start) at which a side first declared the other dead, with *who, or 0
 * if none did in run_ms. B falls silent at silent_ms (0: never).
 */
static uint64_t two_peers(uint64_t tick_ms, uint64_t lat_ms,
			  uint64_t silent_ms, uint64_t run_ms, int *who)
{
	static struct peer a, b;

	a = (struct peer){ 0 };
	b = (struct peer){ 0 };
	for (uint64_t ms = 0; ms <= run_ms; ms++) {
		int b_alive = !silent_ms || ms < silent_ms;

		arrive(&a, &b, ms);
		arrive(&b, &a, ms);
		if (ms % tick_ms == 0 && peer_tick(&a, ms, lat_ms) ==
					 MSGA__LIVE_DEAD) {
			*who = 'A';
			return ms;
		}
		if (b_alive && ms % tick_ms == tick_ms / 2 &&
		    peer_tick(&b, ms, lat_ms) == MSGA__LIVE_DEAD) {
			*who = 'B';
			return ms;
		}
	}
	return 0;
}

Test(liveness, idle_peers_keep_each_other_alive)
{
	int who = 0;

	cr_expect_eq(two_peers(1, 0, 0, 60000, &who), 0, "%c gave up", who);
	cr_expect_eq(two_peers(100, 50, 0, 60000, &who), 0, "%c gave up", who);
	/* a keepalive takes most of an interval to arrive */
	cr_expect_eq(two_peers(10, 900, 0, 60000, &who), 0, "%c gave up", who);
}

Test(liveness, a_peer_that_falls_silent_is_found_within_the_timeout)
{
	int who = 0;
	uint64_t at = two_peers(10, 1, 20000, 60000, &who);

	cr_expect_eq(who, 'A');
	/* B's last keepalive left up to an interval before it fell silent */
	cr_expect_geq(at, 20000 + 5000 - 1000, "found at %llu ms",
		      (unsigned long long)at);
	cr_expect_leq(at, 20000 + 5000 + 10, "found at %llu ms",
		      (unsigned long long)at);
}

/* Issue 23 item 7: a connection not ready by its deadline is dropped. */
Test(liveness, setup_deadline_is_two_timeouts_from_the_first_tick)
{
	struct msga__setup_clock s = { 0 };
	uint64_t next;

	cr_assert_eq(msga__setup_expired(&s, 1000, INTERVAL, TIMEOUT, &next), 0);
	cr_assert_eq(next, 1000 + MSGA__SETUP_PEER_TIMEOUTS * TIMEOUT);
	for (uint64_t t = 1000; t < next; t += INTERVAL)
		cr_assert_eq(msga__setup_expired(&s, t, INTERVAL, TIMEOUT, &next), 0);
	cr_assert_eq(msga__setup_expired(&s, 1000 + 2 * TIMEOUT, INTERVAL, TIMEOUT, &next), 1);
}

Test(liveness, setup_deadline_moves_by_our_own_pause)
{
	struct msga__setup_clock s = { 0 };
	uint64_t next, pause = 10 * TIMEOUT;

	msga__setup_expired(&s, 1000, INTERVAL, TIMEOUT, &next);
	/* we did not poll for ten timeouts: the peer is not to blame */
	cr_assert_eq(msga__setup_expired(&s, 1000 + pause, INTERVAL, TIMEOUT, &next), 0);
	cr_assert_eq(next, 1000 + 2 * TIMEOUT + pause);
	for (uint64_t t = 1000 + pause; t < 1000 + 2 * TIMEOUT + pause;
	     t += INTERVAL)
		cr_assert_eq(msga__setup_expired(&s, t, INTERVAL, TIMEOUT,
						 &next), 0);
	cr_assert_eq(msga__setup_expired(&s, next, INTERVAL, TIMEOUT, &next),
		     1);
}

/* A publisher's handshake: handshake_ms from the request, pauses aside. */
Test(liveness, setup_start_gives_its_own_span)
{
	struct msga__setup_clock s = { 0 };
	uint64_t next, span = 400 * MS, pause = 10 * TIMEOUT;

	msga__setup_start(&s, 1000, span);
	cr_assert_eq(msga__setup_expired(&s, 1000 + span - 1, INTERVAL,
					 TIMEOUT, &next), 0);
	cr_assert_eq(next, 1000 + span);
	cr_assert_eq(msga__setup_expired(&s, 1000 + span, INTERVAL, TIMEOUT,
					 &next), 1);

	msga__setup_start(&s, 1000, span);
	cr_assert_eq(msga__setup_expired(&s, 1000 + pause, INTERVAL, TIMEOUT,
					 &next), 0);
	cr_assert_eq(next, 1000 + span + pause);
}

Test(liveness, setup_deadline_is_never_shorter_than_rdma_cm_budgets)
{
	struct msga__setup_clock s = { 0 };
	uint64_t next;

	cr_assert_eq(msga__setup_expired(&s, 1000, 20 * MS, 100 * MS, &next),
		     0);
	cr_assert_eq(next, 1000 + MSGA__SETUP_MIN_NS);
}
