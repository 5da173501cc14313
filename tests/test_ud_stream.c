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
	cr_assert_eq(msga__ustreams_init(&t, 64), 0);
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

	cr_assert_eq(msga__ustreams_init(&z, 0), -EINVAL);
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
