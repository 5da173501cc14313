/* SPDX-License-Identifier: MIT */
/* The multicast stream table (lib/ud_stream.c): identity, bounds, stats. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	struct msga__ustream *a = msga__ustreams_get(&t, 7, "md.A", 4, 1);
	struct msga__ustream *b = msga__ustreams_get(&t, 7, "md.AB", 4, 2);

	cr_assert_not_null(a);
	cr_assert_eq(a, b, "the name is bounded by its length");
	cr_assert_str_eq(a->topic, "md.A");
	cr_assert_eq(a->conn_id, 1, "the first membership keeps the stream");
	cr_assert_eq(t.n, 1);
}

Test(ud_stream, origin_or_topic_differ_is_another_stream)
{
	struct msga__ustream *a = msga__ustreams_get(&t, 7, "md.A", 4, 0);
	struct msga__ustream *b = msga__ustreams_get(&t, 8, "md.A", 4, 0);
	struct msga__ustream *c = msga__ustreams_get(&t, 7, "md.B", 4, 0);
	struct msga__ustream *d = msga__ustreams_get(&t, 7, "md.", 3, 0);

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
						      0));
	}
	cr_assert_null(msga__ustreams_get(&t, 2, "new", 3, 0));
	/* the known ones are still found */
	cr_assert_not_null(msga__ustreams_get(&t, 1, "t63", 3, 0));
	cr_assert_eq(t.n, 64);
}

Test(ud_stream, stats_copy_the_counters)
{
	struct msga__ustream *s = msga__ustreams_get(&t, 9, "x", 1, 3);
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
