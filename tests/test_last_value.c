/* SPDX-License-Identifier: MIT */
/*
 * A publisher's last-value store (lib/proto/last_value.c, issue 37 item
 * 4): one value per topic, the latest, with its sequence number; bounded
 * by MSGA__LV_MAX per topic, and a larger message forgets the value
 * rather than leaving a stale one.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "last_value.h"

static struct msga__lv_store s;

static void setup(void) { msga__lv_init(&s); }
static void teardown(void) { msga__lv_free(&s); }

TestSuite(last_value, .init = setup, .fini = teardown);

Test(last_value, keeps_the_latest_message_of_each_topic)
{
	const struct msga__lv_ent *e;

	cr_assert_null(msga__lv_get(&s, 0));
	cr_assert_eq(msga__lv_put(&s, 0, 1, "a1", 2), 0);
	cr_assert_eq(msga__lv_put(&s, 1, 1, "b1", 2), 0);
	cr_assert_eq(msga__lv_put(&s, 0, 2, "a22", 3), 0);
	e = msga__lv_get(&s, 0);
	cr_assert_not_null(e);
	cr_assert_eq(e->seq, 2);
	cr_assert_eq(e->len, 3);
	cr_assert_eq(memcmp(e->data, "a22", 3), 0);
	e = msga__lv_get(&s, 1);
	cr_assert_eq(e->seq, 1);
	cr_assert_eq(memcmp(e->data, "b1", 2), 0);
	cr_assert_null(msga__lv_get(&s, 2));
	/* a shorter one after a longer one: its own length */
	cr_assert_eq(msga__lv_put(&s, 0, 3, "x", 1), 0);
	cr_assert_eq(msga__lv_get(&s, 0)->len, 1);
	/* an empty message is a value too */
	cr_assert_eq(msga__lv_put(&s, 0, 4, NULL, 0), 0);
	cr_assert_eq(msga__lv_get(&s, 0)->seq, 4);
	cr_assert_eq(msga__lv_get(&s, 0)->len, 0);
}

Test(last_value, a_message_over_the_bound_forgets_the_value)
{
	static char big[MSGA__LV_MAX + 1];

	cr_assert_eq(msga__lv_put(&s, 5, 1, big, MSGA__LV_MAX), 0);
	cr_assert_eq(msga__lv_get(&s, 5)->len, MSGA__LV_MAX);
	cr_assert_eq(msga__lv_put(&s, 5, 2, big, MSGA__LV_MAX + 1), 0);
	cr_assert_null(msga__lv_get(&s, 5), "no stale value is served");
	cr_assert_eq(msga__lv_put(&s, 5, 3, "ok", 2), 0);
	cr_assert_eq(msga__lv_get(&s, 5)->seq, 3);
	/* a first message over the bound keeps nothing and allocates nothing */
	cr_assert_eq(msga__lv_put(&s, 6, 1, big, MSGA__LV_MAX + 1), 0);
	cr_assert_null(s.ent[6]);
}

Test(last_value, refuses_bad_arguments)
{
	cr_assert_eq(msga__lv_put(&s, MSGA_PUB_TOPICS_MAX, 1, "a", 1), -EINVAL);
	cr_assert_eq(msga__lv_put(&s, 0, 0, "a", 1), -EINVAL);
	cr_assert_eq(msga__lv_put(&s, 0, 1, NULL, 1), -EINVAL);
	cr_assert_null(msga__lv_get(&s, MSGA_PUB_TOPICS_MAX));
	cr_assert_null(msga__lv_get(&s, 0));
}

Test(last_value, the_first_topics_and_the_last_are_kept_apart)
{
	cr_assert_eq(msga__lv_put(&s, 0, 7, "first", 5), 0);
	cr_assert_eq(msga__lv_put(&s, MSGA_PUB_TOPICS_MAX - 1, 9, "last", 4),
		     0);
	cr_assert_eq(msga__lv_get(&s, 0)->seq, 7);
	cr_assert_eq(msga__lv_get(&s, MSGA_PUB_TOPICS_MAX - 1)->seq, 9);
	msga__lv_free(&s);
	cr_assert_null(msga__lv_get(&s, 0));
}

/*
 * The subscriber's gate (0.12 hardening): a topic's last value passes
 * only before anything else of it on the connection; after its live data,
 * or a second time, it is refused (and refusing records nothing); other
 * topics are their own; live data always passes.
 */
Test(last_value, the_gate_refuses_a_late_or_second_last_value)
{
	struct msga__lv_gate g = { { 0 } };

	cr_expect_eq(msga__lv_gate_pass(&g, 3, 1), 1, "before its data");
	cr_expect_eq(msga__lv_gate_pass(&g, 3, 1), 0, "a second one");
	cr_expect_eq(msga__lv_gate_pass(&g, 3, 0), 1, "live after it");
	cr_expect_eq(msga__lv_gate_pass(&g, 3, 0), 1);
	cr_expect_eq(msga__lv_gate_pass(&g, 4, 0), 1, "live first");
	cr_expect_eq(msga__lv_gate_pass(&g, 4, 1), 0, "a replay after live");
	cr_expect_eq(msga__lv_gate_pass(&g, 5, 1), 1, "another topic's own");
	/* the bits at the ends of the words: each its own */
	for (uint32_t t = 63; t < MSGA_PUB_TOPICS_MAX; t += 64) {
		cr_expect_eq(msga__lv_gate_pass(&g, t, 0), 1);
		cr_expect_eq(msga__lv_gate_pass(&g, t, 1), 0, "topic %u", t);
		if (t + 1 < MSGA_PUB_TOPICS_MAX)
			cr_expect_eq(msga__lv_gate_pass(&g, t + 1, 1), 1,
				     "topic %u", t + 1);
	}
	cr_expect_eq(msga__lv_gate_pass(&g, MSGA_PUB_TOPICS_MAX - 1, 1), 0);
}
