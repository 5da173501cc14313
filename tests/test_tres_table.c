/* SPDX-License-Identifier: MIT */
/*
 * What a subscriber by name has heard (lib/proto/tres_table.c): a new
 * publisher, its new topics, refreshes; withdrawal and silence take topics
 * away and say when a publisher has none left; the bounds hold against a
 * flood of forged origins and topics; an origin cannot be redirected.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tres_table.h"

static struct msga__tres_table t;

static void setup(void)
{
	cr_assert_eq(msga__tres_table_init(&t, 4, 64), 0);
}

static void teardown(void)
{
	msga__tres_table_fini(&t);
}

static struct msga__trw_advert adv(uint64_t origin, const char *topic)
{
	struct msga__trw_advert a = { .kind = MSGA__TRW_RC, .port = 7471,
				      .addr = { [10] = 0xff, [11] = 0xff,
						[12] = 198, [13] = 18,
						[15] = 1 },
				      .origin = origin };

	snprintf(a.topic, sizeof(a.topic), "%s", topic);
	return a;
}

/* A multicast publisher's advert of topic, on group 239.0.0.1. */
static struct msga__trw_advert mcast_adv(uint64_t origin, const char *topic)
{
	struct msga__trw_advert a = adv(origin, topic);

	a.kind = MSGA__TRW_MCAST;
	a.port = 0;
	memset(a.addr, 0, sizeof(a.addr));
	a.addr[10] = a.addr[11] = 0xff;
	a.addr[12] = 239;
	a.addr[15] = 1;
	return a;
}

static uint64_t ttl = 20; /* what heard() gives each advert */

static int heard(uint64_t origin, const char *topic, uint64_t now,
		 uint32_t *pub)
{
	struct msga__trw_advert a = adv(origin, topic);

	return msga__tres_heard(&t, &a, now, ttl, pub);
}

Test(tres_table, bounds_are_checked)
{
	struct msga__tres_table x;

	cr_expect_eq(msga__tres_table_init(&x, 0, 1), -EINVAL);
	cr_expect_eq(msga__tres_table_init(&x, 1, 0), -EINVAL);
	cr_expect_eq(msga__tres_table_init(&x, MSGA__TRES_PUBS_MAX + 1, 1),
		     -EINVAL);
	cr_expect_eq(msga__tres_table_init(&x, 1, MSGA__TRES_ENTS_MAX + 1),
		     -EINVAL);
	cr_assert_eq(msga__tres_table_init(&x, 1, 1), 0);
	msga__tres_table_fini(&x);
	msga__tres_table_fini(&x); /* (twice: harmless) */
}

Test(tres_table, new_publisher_new_topic_known, .init = setup,
     .fini = teardown)
{
	uint32_t p1, p2, p3;

	cr_expect_eq(heard(1, "md.a", 10, &p1), MSGA__TRES_NEW_PUB);
	cr_expect_eq(t.pub[p1].origin, 1);
	cr_expect_eq(t.pub[p1].port, 7471);
	cr_expect_eq(heard(1, "md.b", 11, &p2), MSGA__TRES_NEW_TOPIC);
	cr_expect_eq(p2, p1);
	cr_expect_eq(heard(1, "md.a", 12, &p3), MSGA__TRES_KNOWN);
	cr_expect_eq(p3, p1);
	cr_expect_eq(t.pub[p1].topics, 2);
	cr_expect_eq(heard(2, "md.a", 12, &p3), MSGA__TRES_NEW_PUB,
		     "the same topic from another origin: another publisher");
	cr_expect_neq(p3, p1);
	cr_expect_eq(t.nent, 3);
}

Test(tres_table, an_origin_cannot_be_redirected, .init = setup,
     .fini = teardown)
{
	struct msga__trw_advert a = adv(1, "md.a");
	uint32_t p, q = 99;

	cr_assert_eq(msga__tres_heard(&t, &a, 1, 20, &p), MSGA__TRES_NEW_PUB);
	a.addr[15] = 66;
	cr_expect_eq(msga__tres_heard(&t, &a, 2, 20, &q), MSGA__TRES_CONFLICT);
	cr_expect_eq(q, 99, "no slot given");
	a = adv(1, "md.new");
	a.port = 1;
	cr_expect_eq(msga__tres_heard(&t, &a, 2, 20, &q), MSGA__TRES_CONFLICT,
		     "nor a new topic at another port");
	a = adv(1, "md.a");
	a.addr[15] = 66;
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 0,
		     "a withdrawal from another address");
	a = adv(1, "md.a");
	a.kind = MSGA__TRW_UD;
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 0,
		     "a withdrawal for another endpoint");
	cr_expect_eq(t.conflicts, 4);
	cr_expect_eq(t.pub[p].addr[15], 1);
	cr_expect_eq(t.pub[p].topics, 1);
}

Test(tres_table, withdrawal_then_last_topic_gone, .init = setup,
     .fini = teardown)
{
	struct msga__trw_advert a = adv(1, "md.a"), b = adv(1, "md.b");
	uint32_t p, q;

	heard(1, "md.a", 1, &p);
	heard(1, "md.b", 1, &p);
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 1);
	cr_expect_eq(q, p);
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 0, "already gone");
	cr_expect_eq(msga__tres_withdrawn(&t, &b, &q), 2, "its last");
	cr_expect_eq(t.pub[q].origin, 1, "still readable");
	cr_expect_eq(t.nent, 0);
	cr_expect_eq(heard(1, "md.a", 2, &q), MSGA__TRES_NEW_PUB,
		     "heard again: a new publisher to connect to");
}

struct gone_log {
	uint32_t n, pub[8];
};

static void on_gone(void *user, uint32_t pub)
{
	struct gone_log *g = user;

	g->pub[g->n++ % 8] = pub;
}

Test(tres_table, silence_expires_topics_and_publishers, .init = setup,
     .fini = teardown)
{
	struct gone_log g = { 0 };
	uint32_t p1, p2, q;

	heard(1, "a", 100, &p1);
	heard(1, "b", 100, &p1);
	heard(2, "a", 100, &p2);
	heard(1, "b", 150, &q); /* b refreshed */
	heard(2, "a", 150, &q);
	cr_expect_eq(msga__tres_expire(&t, 160, on_gone, &g), 1);
	cr_expect_eq(g.n, 0, "publisher 1 still has b");
	cr_expect_eq(t.pub[p1].topics, 1);
	cr_expect_eq(msga__tres_expire(&t, 171, on_gone, &g), 2);
	cr_expect_eq(g.n, 2);
	cr_expect((g.pub[0] == p1 && g.pub[1] == p2) ||
		  (g.pub[0] == p2 && g.pub[1] == p1));
	cr_expect_eq(t.nent, 0);
	cr_expect_eq(msga__tres_expire(&t, 1000, NULL, NULL), 0);
}

/* 10 000 forged origins and topics: at most 4 publishers and 64 topics
 * are ever held, the rest counted, and what was heard first stays. */
Test(tres_table, a_flood_stays_within_the_bounds, .init = setup,
     .fini = teardown)
{
	uint32_t p, n_new = 0, pubs = 0;
	char name[16];

	cr_assert_eq(heard(7, "real", 1, &p), MSGA__TRES_NEW_PUB);
	for (uint32_t i = 0; i < 10000; i++) {
		int r;

		snprintf(name, sizeof(name), "f%u", i);
		r = heard(1000 + i % 50, name, 2, &p);
		cr_assert(r == MSGA__TRES_NEW_PUB || r == MSGA__TRES_NEW_TOPIC ||
			  r == MSGA__TRES_FULL, "%d", r);
		n_new += r != MSGA__TRES_FULL;
	}
	for (uint32_t i = 0; i < 4; i++)
		pubs += t.pub[i].topics != 0;
	cr_expect_eq(pubs, 4);
	cr_expect_eq(n_new, 63, "64 topics at most, one the real one");
	cr_expect_eq(t.nent, 64);
	cr_expect_eq(t.full, 10000 - 63);
	cr_expect_eq(heard(7, "real", 3, &p), MSGA__TRES_KNOWN);
	/* once the flood falls silent, room again */
	ttl = 50;
	heard(7, "real", 100, &p);
	msga__tres_expire(&t, 100, NULL, NULL);
	ttl = 20;
	cr_expect_eq(t.nent, 1);
	cr_expect_eq(heard(8, "next", 101, &p), MSGA__TRES_NEW_PUB);
}

/* Each topic keeps the silence its own advert allowed. */
Test(tres_table, each_topic_expires_after_its_own_ttl, .init = setup,
     .fini = teardown)
{
	uint32_t p;

	ttl = 10;
	heard(1, "short", 100, &p);
	ttl = 1000;
	heard(2, "long", 100, &p);
	ttl = 20;
	cr_expect_eq(msga__tres_expire(&t, 111, NULL, NULL), 1);
	cr_expect_eq(t.nent, 1);
	cr_expect_eq(msga__tres_expire(&t, 1100, NULL, NULL), 0);
	cr_expect_eq(msga__tres_expire(&t, 1101, NULL, NULL), 1);
	cr_expect_eq(t.nent, 0);
}

/* A multicast publisher over a range: each topic its own group, one
 * origin, no conflict; but a topic's group never moves. */
Test(tres_table, a_multicast_range_publisher_has_a_group_per_topic,
     .init = setup, .fini = teardown)
{
	struct msga__trw_advert a = mcast_adv(5, "md.a");
	uint32_t p, q;

	cr_assert_eq(msga__tres_heard(&t, &a, 1, 20, &p), MSGA__TRES_NEW_PUB);
	snprintf(a.topic, sizeof(a.topic), "md.b");
	a.addr[15] = 2;
	cr_expect_eq(msga__tres_heard(&t, &a, 1, 20, &q),
		     MSGA__TRES_NEW_TOPIC, "another group, same publisher");
	cr_expect_eq(q, p);
	cr_expect_eq(t.pub[p].topics, 2);
	a.addr[15] = 3;
	cr_expect_eq(msga__tres_heard(&t, &a, 2, 20, &q), MSGA__TRES_CONFLICT,
		     "md.b moved to another group");
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 0,
		     "a withdrawal naming another group");
	a.addr[15] = 2;
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 1);
	cr_expect_eq(t.conflicts, 2);
	for (uint32_t i = 0; i < t.ent_max; i++)
		if (t.ent[i].topic[0])
			cr_expect_eq(t.ent[i].addr[15], 1, "md.a keeps its group");
}

/*
 * A/B lines: a topic's line B record (MSGA__TRW_F_LINE_B, line B's group)
 * is an entry of its own beside line A's, of the same publisher (whose
 * flags stay without the bit: not a contradiction); each line keeps its
 * group; the publisher is gone only when both lines' entries are.
 */
Test(tres_table, a_b_lines_are_two_entries_of_one_publisher,
     .init = setup, .fini = teardown)
{
	struct msga__trw_advert a = mcast_adv(6, "md.ab"), b;
	uint32_t p, q;

	a.flags = MSGA__TRW_F_RELIABLE;
	b = a;
	b.flags |= MSGA__TRW_F_LINE_B;
	b.addr[14] = 2;
	cr_assert_eq(msga__tres_heard(&t, &b, 1, 20, &p), MSGA__TRES_NEW_PUB,
		     "line B heard first");
	cr_expect_eq(t.pub[p].flags, MSGA__TRW_F_RELIABLE);
	cr_assert_eq(msga__tres_heard(&t, &a, 1, 20, &q), MSGA__TRES_NEW_TOPIC);
	cr_expect_eq(q, p);
	cr_expect_eq(t.pub[p].topics, 2, "one entry a line");
	cr_expect_eq(msga__tres_heard(&t, &a, 2, 20, &q), MSGA__TRES_KNOWN);
	cr_expect_eq(msga__tres_heard(&t, &b, 2, 20, &q), MSGA__TRES_KNOWN);
	/* line B's group never moves either */
	b.addr[14] = 3;
	cr_expect_eq(msga__tres_heard(&t, &b, 3, 20, &q), MSGA__TRES_CONFLICT);
	b.addr[14] = 2;
	/* a flag other than LINE_B still contradicts the origin */
	b.flags = MSGA__TRW_F_LINE_B;
	cr_expect_eq(msga__tres_heard(&t, &b, 3, 20, &q), MSGA__TRES_CONFLICT);
	b.flags = MSGA__TRW_F_RELIABLE | MSGA__TRW_F_LINE_B;
	cr_expect_eq(t.conflicts, 2);
	/* each line's entry keeps its own group */
	for (uint32_t i = 0; i < t.ent_max; i++)
		if (t.ent[i].topic[0])
			cr_expect_eq(t.ent[i].addr[14], t.ent[i].line ? 2 : 0);
	/* withdrawn line by line: the publisher goes with the last */
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 1);
	cr_expect_eq(msga__tres_withdrawn(&t, &a, &q), 0, "line A is gone");
	cr_expect_eq(msga__tres_withdrawn(&t, &b, &q), 2);
	cr_expect_eq(q, p);
}
