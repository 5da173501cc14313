/* SPDX-License-Identifier: MIT */
/* The multicast stream table (lib/ud_stream.c): identity, bounds, stats. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <criterion/criterion.h>

#include "ud_stream.h"

static struct msga__ustreams t;

static void setup(void)
{
	cr_assert_eq(msga__ustreams_init(&t, 64, 0), 0);
}

static void teardown(void)
{
	msga__ustreams_fini(&t);
}

TestSuite(ud_stream, .init = setup, .fini = teardown);

Test(ud_stream, same_origin_and_topic_is_one_stream)
{
	struct msga__ustream *a = msga__ustreams_get(&t, 7, "md.A", 4, 1, 0);
	struct msga__ustream *b = msga__ustreams_get(&t, 7, "md.AB", 4, 2, 0);

	cr_assert_not_null(a);
	cr_assert_eq(a, b, "the name is bounded by its length");
	cr_assert_str_eq(a->topic, "md.A");
	cr_assert_eq(a->conn_id, 1, "the first membership keeps the stream");
	cr_assert_eq(t.n, 1);
}

Test(ud_stream, origin_or_topic_differ_is_another_stream)
{
	struct msga__ustream *a = msga__ustreams_get(&t, 7, "md.A", 4, 0, 0);
	struct msga__ustream *b = msga__ustreams_get(&t, 8, "md.A", 4, 0, 0);
	struct msga__ustream *c = msga__ustreams_get(&t, 7, "md.B", 4, 0, 0);
	struct msga__ustream *d = msga__ustreams_get(&t, 7, "md.", 3, 0, 0);

	cr_assert(a != b && a != c && b != c && d != a);
	cr_assert_eq(msga__ustreams_pos(&t, c), 2);
	cr_assert_eq(t.n, 4);
}

Test(ud_stream, table_is_bounded)
{
	char name[16];

	for (int i = 0; i < 64; i++) {
		snprintf(name, sizeof(name), "t%d", i);
		cr_assert_not_null(msga__ustreams_get(&t, 1, name,
						      (uint32_t)strlen(name),
						      0, 0));
	}
	cr_assert_null(msga__ustreams_get(&t, 2, "new", 3, 0, 0));
	/* the known ones are still found */
	cr_assert_not_null(msga__ustreams_get(&t, 1, "t63", 3, 0, 0));
	cr_assert_eq(t.n, 64);
}

Test(ud_stream, stats_copy_the_counters)
{
	struct msga__ustream *s = msga__ustreams_get(&t, 9, "x", 1, 3, 0);
	struct msga_stream_stats st = { .size = sizeof(st) };
	uint64_t missing;

	msga__seq_accept(&s->seq, 5, &missing);
	msga__seq_accept(&s->seq, 8, &missing);
	msga__seq_accept(&s->seq, 8, &missing);
	s->bytes = 100;
	s->last_seq = 8;
	s->reasm_drops = 1;
	msga__ustream_stats(s, &st);
	cr_assert_eq(st.size, sizeof(st));
	cr_assert_eq(st.conn_id, 3);
	cr_assert_str_eq(st.topic, "x");
	cr_assert_eq(st.origin, 9);
	cr_assert_eq(st.first_seq, 5);
	cr_assert_eq(st.last_seq, 8);
	cr_assert_eq(st.msgs, 2);
	cr_assert_eq(st.gaps, 1);
	cr_assert_eq(st.missing, 2);
	cr_assert_eq(st.dups, 1);
	cr_assert_eq(st.bytes, 100);
	cr_assert_eq(st.reasm_drops, 1);
}

Test(ud_stream, zero_capacity_is_refused)
{
	struct msga__ustreams z;

	cr_assert_eq(msga__ustreams_init(&z, 0, 0), -EINVAL);
}

static struct msga__ustream *get_n(uint64_t origin, int i, uint32_t conn,
				   uint64_t now)
{
	char name[16];

	snprintf(name, sizeof(name), "t%d", i);
	return msga__ustreams_get(&t, origin, name, (uint32_t)strlen(name),
				  conn, now);
}

static unsigned int evicts_seen;
static uint32_t evict_idx;

static void count_evict(void *arg, uint32_t idx)
{
	(void)arg;
	evicts_seen++;
	evict_idx = idx;
}

/*
 * A publisher restart (a new origin) on a full table: the old origin's
 * streams are forgotten once silent longer than idle_ns, least recently
 * heard first; before that, the table is full of live streams.
 */
Test(ud_stream, a_full_table_evicts_the_least_recently_heard_idle_stream)
{
	struct msga__ustream *s;
	uint32_t idx;

	t.idle_ns = 1000;
	t.on_evict = count_evict;
	evicts_seen = 0;
	for (int i = 0; i < 64; i++)
		cr_assert_not_null(get_n(1, i, 0, (uint64_t)i));
	s = get_n(1, 0, 0, 100); /* t0 heard again: now the most recent */
	s->seq.c.delivered = 5;
	cr_assert_null(get_n(2, 0, 0, 1000), "nobody silent for 1000 ns yet");
	cr_assert_eq(t.evicted, 0);
	s = get_n(2, 0, 0, 1002);
	cr_assert_not_null(s, "t1 was silent from 1 to 1002");
	idx = msga__ustreams_pos(&t, s);
	cr_assert_eq(evicts_seen, 1);
	cr_assert_eq(evict_idx, idx, "the new stream took t1's index");
	cr_assert_eq(idx, 1);
	cr_assert_eq(t.evicted, 1);
	cr_assert_eq(t.n, 64);
	cr_assert_eq(s->seq.last, 0, "fresh sequence state");
	cr_assert_eq(s->origin, 2);
	/* t1 is gone, t0 (heard at 100) stays */
	cr_assert_not_null(get_n(2, 1, 0, 1003), "t2 silent since 2");
	cr_assert_eq(msga__ustreams_pos(&t, get_n(1, 0, 0, 1004)), 0);
	cr_assert_eq(t.gone.msgs, 0);
	cr_assert_eq(t.evicted, 2);
}

Test(ud_stream, without_an_idle_time_nothing_is_evicted_for_silence)
{
	for (int i = 0; i < 64; i++)
		cr_assert_not_null(get_n(1, i, 0, 0));
	cr_assert_null(get_n(2, 0, 0, UINT64_MAX / 2));
}

Test(ud_stream, a_membership_that_ended_takes_its_streams)
{
	struct msga__ustream *a = get_n(1, 0, 5, 0), *b = get_n(1, 1, 6, 0);
	struct msga__ustream *c = get_n(1, 2, 5, 0), *again;

	msga__seq_accept(&a->seq, 10, NULL);
	msga__seq_accept(&a->seq, 12, NULL);
	a->bytes = 64;
	cr_assert_eq(msga__ustreams_evict_conn(&t, 5), 2);
	cr_assert_null(msga__ustreams_at(&t, 0));
	cr_assert_null(msga__ustreams_at(&t, 2));
	cr_assert_eq(msga__ustreams_at(&t, 1), b);
	cr_assert_eq(t.n, 1);
	cr_assert_eq(t.top, 3, "indexes stay: an evicted one reads as gone");
	cr_assert_eq(t.gone.msgs, 2, "counters are kept in the totals");
	cr_assert_eq(t.gone.gaps, 1);
	cr_assert_eq(t.gone.missing, 1);
	cr_assert_eq(t.gone.bytes, 64);
	/* the same stream on a new membership starts afresh */
	again = get_n(1, 0, 7, 0);
	cr_assert_not_null(again);
	cr_assert_eq(again->conn_id, 7);
	cr_assert_eq(msga__seq_accept(&again->seq, 20, NULL), MSGA__SEQ_NEXT,
		     "no false gap from the old membership's 12");
	cr_assert(again == a || again == c, "a freed index is reused");
	cr_assert_eq(t.top, 3);
	(void)c;
}

Test(ud_stream, totals_are_the_evicted_streams_and_the_live_ones)
{
	struct msga__ustream *a = get_n(1, 0, 5, 0), *b = get_n(1, 1, 6, 0);
	struct msga__ustream_totals all, after;

	msga__seq_accept(&a->seq, 10, NULL);
	msga__seq_accept(&a->seq, 12, NULL);
	a->bytes = 64;
	msga__seq_accept(&b->seq, 1, NULL);
	b->bytes = 8;
	b->reasm_drops = 2;
	msga__ustreams_totals(&t, &all);
	cr_assert_eq(all.msgs, 3);
	cr_assert_eq(all.bytes, 72);
	cr_assert_eq(all.gaps, 1);
	cr_assert_eq(all.missing, 1);
	cr_assert_eq(all.reasm_drops, 2);
	cr_assert_eq(msga__ustreams_evict_conn(&t, 5), 1);
	msga__ustreams_totals(&t, &after);
	cr_assert(!memcmp(&all, &after, sizeof(all)),
		  "an eviction moves counters to the totals, loses none");
}

Test(ud_stream, a_refused_stream_is_told_once)
{
	cr_assert_eq(msga__ustreams_refused_first(&t, 3, "md.X", 4), 1);
	cr_assert_eq(msga__ustreams_refused_first(&t, 3, "md.X", 4), 0);
	cr_assert_eq(msga__ustreams_refused_first(&t, 4, "md.X", 4), 1);
	cr_assert_eq(msga__ustreams_refused_first(&t, 3, "md.Y", 4), 1);
	cr_assert_eq(msga__ustreams_refused_first(&t, 3, "md.X", 4), 0);
}

/*
 * Random gets and evictions against a plain model: every live stream is
 * found at its index, evicted ones are not, and the index (linear probing
 * with backward-shift deletion) never loses an entry. Few topics and
 * origins, so hashes collide and probe runs are long.
 */
Test(ud_stream, index_stays_coherent_under_churn)
{
	static int model[8][32]; /* 1 + index of (origin, topic), 0 = none */
	uint64_t rnd = 88172645463325252ull;

	memset(model, 0, sizeof(model));
	for (int step = 0; step < 200000; step++) {
		int o, i;
		struct msga__ustream *s;

		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		o = (int)(rnd % 8);
		i = (int)((rnd >> 8) % 32);
		if ((rnd >> 20) % 3 == 0 && model[o][i]) {
			s = &t.streams[model[o][i] - 1];
			msga__ustreams_evict(&t, s);
			model[o][i] = 0;
			continue;
		}
		s = get_n((uint64_t)o, i, 0, 0);
		if (model[o][i]) {
			cr_assert_eq(msga__ustreams_pos(&t, s) + 1,
				     (uint32_t)model[o][i], "step %d", step);
			continue;
		}
		if (t.n == 64 && !s)
			continue; /* full (idle_ns 0): refused, as modelled */
		cr_assert_not_null(s, "step %d: n %u", step, t.n);
		model[o][i] = (int)msga__ustreams_pos(&t, s) + 1;
		for (int oo = 0; oo < 8; oo++)
			for (int ii = 0; ii < 32; ii++)
				cr_assert((oo == o && ii == i) ||
					  model[oo][ii] != model[o][i],
					  "index %d given twice", model[o][i]);
	}
	for (int o = 0; o < 8; o++)
		for (int i = 0; i < 32; i++)
			if (model[o][i])
				cr_assert_eq(msga__ustreams_pos(&t,
						get_n((uint64_t)o, i, 0, 0)) + 1,
					     (uint32_t)model[o][i]);
}

Test(ud_stream, find_does_not_create)
{
	struct msga__ustream *a;
	char longer[MSGA_TOPIC_MAX + 2];

	cr_assert_null(msga__ustreams_find(&t, 7, "md.A", 4));
	cr_assert_eq(t.n, 0);
	cr_assert_eq(t.top, 0, "no index taken");
	a = msga__ustreams_get(&t, 7, "md.A", 4, 1, 0);
	cr_assert_eq(msga__ustreams_find(&t, 7, "md.A", 4), a);
	cr_assert_eq(msga__ustreams_find(&t, 7, "md.AB", 4), a,
		     "the name is bounded by its length");
	cr_assert_null(msga__ustreams_find(&t, 8, "md.A", 4));
	cr_assert_null(msga__ustreams_find(&t, 7, "md.", 3), "a prefix");
	cr_assert_null(msga__ustreams_find(&t, 7, "md.B", 4));
	memset(longer, 'a', sizeof(longer));
	cr_assert_null(msga__ustreams_find(&t, 7, longer, MSGA_TOPIC_MAX + 1));
	cr_assert_eq(t.n, 1);
}

/* The LRU order, least recently heard first, as 1 + indexes. */
static uint32_t lru_order(uint32_t *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t pos = t.lru.head; pos && n < max;
	     pos = t.streams[pos - 1].lru.next)
		out[n++] = pos;
	return n;
}

/* An END looks its stream up: that is no sign of life. */
Test(ud_stream, find_does_not_touch_the_stream)
{
	struct msga__ustream *a = get_n(1, 0, 0, 10), *b = get_n(1, 1, 0, 20);
	uint32_t order[4];

	cr_assert_eq(msga__ustreams_find(&t, 1, "t0", 2), a);
	cr_assert_eq(a->last_ns, 10, "not heard at find");
	cr_assert_eq(lru_order(order, 4), 2);
	cr_assert_eq(order[0], msga__ustreams_pos(&t, a) + 1,
		     "still the least recently heard");
	cr_assert_eq(order[1], msga__ustreams_pos(&t, b) + 1);
	/* get, by contrast, moves it to the end */
	msga__ustreams_get(&t, 1, "t0", 2, 0, 30);
	cr_assert_eq(lru_order(order, 4), 2);
	cr_assert_eq(order[0], msga__ustreams_pos(&t, b) + 1);
}

/* scan_silent's reports, in order. */
static struct msga__ustream *told[64];
static uint32_t ntold;

static void on_silent(void *arg, struct msga__ustream *s)
{
	cr_assert_eq(arg, &t, "its argument is passed through");
	cr_assert_eq(s->silent, 1, "marked before it is told");
	cr_assert_lt(ntold, 64);
	told[ntold++] = s;
}

static uint32_t scan(uint64_t now, uint64_t min_watch)
{
	uint32_t n;

	ntold = 0;
	n = msga__ustreams_scan_silent(&t, now, min_watch, on_silent, &t);
	cr_assert_eq(n, ntold, "the count is the number of reports");
	return n;
}

static struct msga__ustream *watched(int i, uint64_t now, uint64_t watch)
{
	struct msga__ustream *s = get_n(1, i, 0, now);

	cr_assert_not_null(s);
	s->watch_ns = watch;
	return s;
}

Test(ud_stream, scan_reports_a_watched_stream_after_its_watch_time)
{
	struct msga__ustream *a = watched(0, 0, 100);

	cr_assert_eq(scan(99, 100), 0, "silent 99 ns of 100");
	cr_assert_eq(a->silent, 0);
	cr_assert_eq(scan(100, 100), 1, "silent exactly watch_ns: gone");
	cr_assert_eq(told[0], a);
	cr_assert_eq(a->silent, 1);
}

Test(ud_stream, scan_never_reports_an_unwatched_stream)
{
	struct msga__ustream *old = watched(0, 0, 0);

	watched(1, 0, 0);
	cr_assert_eq(scan(UINT64_MAX / 4, 1), 0, "a publisher before 0.6");
	cr_assert_eq(scan(UINT64_MAX / 4, 0), 0);
	cr_assert_eq(old->silent, 0);
}

Test(ud_stream, scan_reports_only_streams_past_their_own_watch_time)
{
	struct msga__ustream *a = watched(0, 0, 100), *b = watched(1, 0, 0);
	struct msga__ustream *c = watched(2, 0, 1000), *d = watched(3, 0, 150);

	cr_assert_eq(scan(200, 100), 2);
	cr_assert_eq(told[0], a);
	cr_assert_eq(told[1], d);
	cr_assert(!b->silent && !c->silent);
	cr_assert_eq(scan(1000, 100), 1);
	cr_assert_eq(told[0], c);
}

Test(ud_stream, a_silent_stream_is_reported_once)
{
	struct msga__ustream *a = watched(0, 0, 100);

	cr_assert_eq(scan(100, 100), 1);
	cr_assert_eq(scan(101, 100), 0);
	cr_assert_eq(scan(1000000, 100), 0, "still silent, still told once");
	cr_assert_eq(a->silent, 1);
}

/*
 * Heard again, the owner clears silent (stream_heard): gone quiet once
 * more, it is reported again. get alone does not clear it: silent is the
 * owner's, set by the scan and cleared by a datagram.
 */
Test(ud_stream, a_stream_heard_again_can_be_reported_again)
{
	struct msga__ustream *a = watched(0, 0, 100);

	cr_assert_eq(scan(100, 100), 1);
	cr_assert_eq(msga__ustreams_get(&t, 1, "t0", 2, 0, 300), a);
	cr_assert_eq(scan(400, 100), 0, "get alone: still told");
	a->silent = 0;
	cr_assert_eq(msga__ustreams_get(&t, 1, "t0", 2, 0, 500), a);
	cr_assert_eq(scan(599, 100), 0, "heard at 500");
	cr_assert_eq(scan(600, 100), 1);
	cr_assert_eq(told[0], a);
}

/*
 * The walk goes from the least recently heard and stops at the first
 * stream heard within min_watch_ns. A stream before that point with a
 * longer watch time is passed over, not a stop: the ones after it are
 * still reported. After the stop nothing is looked at: c, heard within
 * min_watch_ns but watched for less (which the owner never does: that
 * is what min_watch_ns is), is not reported.
 */
Test(ud_stream, the_walk_passes_long_watches_and_stops_at_a_recent_stream)
{
	struct msga__ustream *huge = watched(0, 0, 1ull << 62);
	struct msga__ustream *b = watched(1, 10, 100);
	struct msga__ustream *c = watched(2, 1000, 1);

	cr_assert_eq(scan(1050, 100), 1);
	cr_assert_eq(told[0], b, "reported past the long-watched stream");
	cr_assert_eq(huge->silent, 0);
	cr_assert_eq(c->silent, 0, "heard 50 ns ago: the walk stopped");
	cr_assert_eq(scan(1100, 100), 1, "c now silent min_watch_ns");
	cr_assert_eq(told[0], c);
	cr_assert_eq(huge->silent, 0);
}

Test(ud_stream, scan_measures_silence_across_the_clock_wrap)
{
	struct msga__ustream *a = watched(0, UINT64_MAX - 9, 100);

	cr_assert_eq(scan(89, 100), 0, "silent 99 ns");
	cr_assert_eq(scan(90, 100), 1);
	cr_assert_eq(told[0], a);
}

/* A reported stream that goes (its END, its membership) leaves nothing. */
Test(ud_stream, an_evicted_silent_stream_leaves_a_fresh_index)
{
	struct msga__ustream *a = watched(0, 0, 100), *again;

	cr_assert_eq(scan(100, 100), 1);
	msga__ustreams_evict(&t, a);
	cr_assert_eq(scan(1000, 100), 0);
	again = get_n(2, 0, 0, 1000);
	cr_assert_eq(again, a, "the index is reused");
	cr_assert_eq(again->silent, 0);
	cr_assert_eq(again->watch_ns, 0, "not watched until its owner says");
}

/*
 * The subscriber's timer: the earliest silence limit of the streams not
 * yet reported, whatever their order in the table; none watched, none.
 */
Test(ud_stream, next_silence_is_the_earliest_limit_not_yet_reported)
{
	struct msga__ustream *a, *b, *c;

	cr_assert_eq(msga__ustreams_next_silence(&t, 100), UINT64_MAX);
	a = watched(0, 10, 1000);      /* limit 1010 */
	watched(1, 20, 0);             /* unwatched: no limit */
	b = watched(2, 30, 100);       /* limit 130, heard later than a */
	c = watched(3, 40, 500);       /* limit 540 */
	cr_assert_eq(msga__ustreams_next_silence(&t, 100), 130);
	b->silent = 1;                 /* reported: no longer counts */
	cr_assert_eq(msga__ustreams_next_silence(&t, 100), 540);
	c->silent = 1;
	cr_assert_eq(msga__ustreams_next_silence(&t, 100), 1010);
	a->silent = 1;
	cr_assert_eq(msga__ustreams_next_silence(&t, 100), UINT64_MAX);
}

/*
 * An ended stream (retired) stays, counters and all, but goes first when
 * a full table needs room, idle time or not, and is never reported silent.
 */
Test(ud_stream, a_retired_stream_goes_first_and_is_never_silent)
{
	struct msga__ustream *s[4], *fresh;

	msga__ustreams_fini(&t);
	cr_assert_eq(msga__ustreams_init(&t, 4, 0), 0);
	for (int i = 0; i < 4; i++)
		s[i] = watched(i, 100 + (uint64_t)i, 50);
	msga__ustreams_retire(&t, s[2]);
	cr_assert(s[2]->used && s[2]->retired);
	cr_assert_eq(scan(10000, 50), 3, "the other three, not the retired");
	fresh = msga__ustreams_get(&t, 99, "new", 3, 0, 10001);
	cr_assert_not_null(fresh, "the retired stream made room");
	cr_assert_eq(t.evicted, 1);
	cr_assert_eq(msga__ustreams_find(&t, 1, "t2", 2), NULL);
}

/* ---- probation (issue 26) ---- */

static struct msga__ustream *get_at(struct msga__ustreams *p, uint64_t origin,
				    uint64_t now)
{
	return msga__ustreams_get(p, origin, "md.p", 4, 1, now);
}

Test(ud_stream_probation, a_flood_of_origins_never_reaches_the_verified)
{
	struct msga__ustreams p;
	struct msga__ustream *s;
	uint32_t vidx[4];

	cr_assert_eq(msga__ustreams_init(&p, 4, 5), -EINVAL, "pmax <= max");
	cr_assert_eq(msga__ustreams_init(&p, 4, 2), 0);
	for (uint64_t o = 1; o <= 4; o++) {
		s = get_at(&p, o, 10);
		cr_assert_not_null(s);
		cr_assert_eq(s->verified, 0, "new: on probation");
		cr_assert_eq(msga__ustreams_verify(&p, s, 10), 1);
		vidx[o - 1] = msga__ustreams_pos(&p, s);
	}
	cr_assert_eq(p.nprob, 0);
	/* 2000 forged origins: admitted only while a verified place
	 * could come free; none is idle (idle_ns 0): refused */
	for (uint64_t o = 100; o < 2100; o++)
		cr_assert_null(get_at(&p, o, 20));
	p.idle_ns = 1000;
	for (uint64_t o = 100; o < 2100; o++)
		cr_assert_not_null(get_at(&p, o, 2000));
	cr_assert_eq(p.nprob, 2, "at most pmax on probation");
	cr_assert_eq(p.prob_evicted, 1998);
	cr_assert_eq(p.evicted, 0, "no verified stream went");
	for (uint64_t o = 1; o <= 4; o++) {
		s = msga__ustreams_find(&p, o, "md.p", 4);
		cr_assert_not_null(s);
		cr_assert_eq(msga__ustreams_pos(&p, s), vidx[o - 1]);
		cr_assert_eq(s->verified, 1);
	}
	cr_assert_leq(p.top, 6, "indexes: max + pmax at most");
	msga__ustreams_fini(&p);
}

Test(ud_stream_probation, verified_takes_a_place_and_keeps_its_index)
{
	struct msga__ustreams p;
	struct msga__ustream *s, *a, *b;
	uint32_t idx;

	cr_assert_eq(msga__ustreams_init(&p, 2, 2), 0);
	p.idle_ns = 100;
	a = get_at(&p, 1, 0);
	b = get_at(&p, 2, 0);
	cr_assert_eq(msga__ustreams_verify(&p, a, 0), 1);
	cr_assert_eq(msga__ustreams_verify(&p, b, 50), 1);
	s = get_at(&p, 3, 50);
	cr_assert_null(s, "both places live: refused, as before");
	s = get_at(&p, 3, 150);
	cr_assert_not_null(s, "the oldest is idle: it may be replaced");
	idx = msga__ustreams_pos(&p, s);
	cr_assert_eq(p.evicted, 0, "... once the new one is verified");
	cr_assert_eq(msga__ustreams_verify(&p, s, 150), 1);
	cr_assert_eq(p.evicted, 1);
	cr_assert_null(msga__ustreams_find(&p, 1, "md.p", 4));
	cr_assert_eq(msga__ustreams_pos(&p, s), idx);
	cr_assert_eq(msga__ustreams_verify(&p, s, 150), 1, "twice: no-op");
	/* a probation stream with no verified place stays on probation */
	s = get_at(&p, 4, 150);
	cr_assert_not_null(s, "2 (at 50) is idle at 151");
	msga__ustreams_get(&p, 2, "md.p", 4, 1, 151); /* 2 heard again */
	cr_assert_eq(msga__ustreams_verify(&p, s, 152), 0);
	cr_assert_eq(s->verified, 0);
	cr_assert_eq(p.nprob, 1);
	msga__ustreams_fini(&p);
}

static uint32_t silent_told;

static void count_silent(void *arg, struct msga__ustream *s)
{
	(void)arg;
	(void)s;
	silent_told++;
}

Test(ud_stream_probation, streams_on_probation_are_watched_too)
{
	struct msga__ustreams p;
	struct msga__ustream *a, *b;

	cr_assert_eq(msga__ustreams_init(&p, 2, 2), 0);
	a = get_at(&p, 1, 0);
	b = get_at(&p, 2, 0);
	a->watch_ns = b->watch_ns = 10;
	cr_assert_eq(msga__ustreams_verify(&p, a, 0), 1);
	cr_assert_eq(msga__ustreams_next_silence(&p, 10), 10);
	silent_told = 0;
	cr_assert_eq(msga__ustreams_scan_silent(&p, 20, 10, count_silent,
						NULL), 2);
	cr_assert_eq(silent_told, 2);
	msga__ustreams_retire(&p, b);
	cr_assert_eq(msga__ustreams_evict_conn(&p, 1), 2);
	cr_assert_eq(p.nprob, 0);
	cr_assert_eq(p.n, 0);
	msga__ustreams_fini(&p);
}
