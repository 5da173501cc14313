/* SPDX-License-Identifier: MIT */
/* Host unit tests: bounded reassembly of fragmented datagrams. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "reasm.h"

#define FRAG 1000u
#define MAXMSG (1u << 20)

static struct msga__reasm r;
static uint8_t src[MAXMSG];

static void setup(void)
{
	cr_assert_eq(msga__reasm_init(&r, 4, MAXMSG, FRAG, 1000000), 0);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 7 + 3);
}

static void teardown(void)
{
	msga__reasm_fini(&r);
}

TestSuite(reasm, .init = setup, .fini = teardown);

static struct msga__frag frag(uint64_t stream, uint64_t seq, uint32_t total,
			      uint32_t idx)
{
	uint32_t off = idx * FRAG;
	uint32_t len = total - off < FRAG ? total - off : FRAG;

	return (struct msga__frag){ .stream = stream, .msg_seq = seq,
				    .total_len = total, .offset = off,
				    .len = len, .data = src + off };
}

static uint32_t nfrags(uint32_t total)
{
	return (total + FRAG - 1) / FRAG;
}

Test(reasm, a_1mib_message_in_shuffled_order_is_rebuilt_exactly)
{
	uint32_t total = MAXMSG, n = nfrags(total);
	uint32_t *order = malloc(n * sizeof(*order));
	const void *msg = NULL;
	uint32_t len = 0;
	int ret = 0;

	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	srand(42);
	for (uint32_t i = n - 1; i > 0; i--) {
		uint32_t j = (uint32_t)rand() % (i + 1), t = order[i];

		order[i] = order[j];
		order[j] = t;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct msga__frag f = frag(1, 9, total, order[i]);

		ret = msga__reasm_add(&r, &f, 10, &msg, &len);
		cr_assert_eq(ret, i + 1 == n ? 1 : 0, "fragment %u", i);
	}
	cr_assert_eq(len, total);
	cr_assert_eq(memcmp(msg, src, total), 0);
	msga__reasm_release(&r, msg);
	cr_expect_eq(r.c.completed, 1);
	cr_expect_eq(msga__reasm_pending(&r), 0);
	free(order);
}

Test(reasm, duplicate_fragments_are_ignored)
{
	const void *msg;
	uint32_t len;
	struct msga__frag f0 = frag(1, 1, 2500, 0), f1 = frag(1, 1, 2500, 1),
			  f2 = frag(1, 1, 2500, 2);

	cr_expect_eq(msga__reasm_add(&r, &f0, 0, &msg, &len), 0);
	cr_expect_eq(msga__reasm_add(&r, &f0, 0, &msg, &len), 0);
	cr_expect_eq(msga__reasm_add(&r, &f1, 0, &msg, &len), 0);
	cr_expect_eq(msga__reasm_add(&r, &f2, 0, &msg, &len), 1);
	cr_expect_eq(len, 2500);
	cr_expect_eq(r.c.dup_fragments, 1);
}

Test(reasm, incomplete_messages_time_out_and_are_counted)
{
	const void *msg;
	uint32_t len;
	struct msga__frag f = frag(1, 1, 5000, 0);

	msga__reasm_add(&r, &f, 100, &msg, &len);
	/* A fragment's receive stamp may run a hair ahead of the clock a
	 * later expiry reads (rx_clock.h): that is "not yet", not "long ago". */
	cr_expect_eq(msga__reasm_expire(&r, 99), 0, "stamp ahead of now");
	/* event mode's timer is armed for the first ns it is stale */
	cr_expect_eq(msga__reasm_next_expiry(&r), 100 + 1000001);
	cr_expect_eq(msga__reasm_expire(&r, 100 + 1000000), 0, "not yet");
	cr_expect_eq(msga__reasm_expire(&r, 100 + 1000001), 1);
	cr_expect_eq(r.c.dropped_timeout, 1);
	cr_expect_eq(msga__reasm_pending(&r), 0);
	cr_expect_eq(msga__reasm_next_expiry(&r), UINT64_MAX, "none pending");
	/* The late remainder of the dropped message never completes it. */
	f = frag(1, 1, 5000, 4);
	cr_expect_eq(msga__reasm_add(&r, &f, 2000000, &msg, &len), 0);
}

Test(reasm, a_newer_message_evicts_only_its_own_streams_older_one)
{
	const void *msg;
	uint32_t len;
	struct msga__frag other = frag(2, 1, 3000, 0);

	cr_assert_eq(msga__reasm_add(&r, &other, 0, &msg, &len), 0);
	for (uint64_t seq = 1; seq <= 10; seq++) {
		struct msga__frag f = frag(1, seq, 3000, 0);

		msga__reasm_add(&r, &f, seq, &msg, &len);
		cr_assert_eq(msga__reasm_pending(&r), 2, "one per stream");
	}
	cr_expect_eq(r.c.dropped_evicted, 9);
	/* stream 2's message is untouched and completes */
	for (uint32_t i = 1; i < 3; i++) {
		other = frag(2, 1, 3000, i);
		cr_expect_eq(msga__reasm_add(&r, &other, 20, &msg, &len),
			     i == 2);
	}
	msga__reasm_release(&r, msg);
	/* a fragment of an older message is ignored: no thrash */
	struct msga__frag old = frag(1, 9, 3000, 1);

	cr_expect_eq(msga__reasm_add(&r, &old, 21, &msg, &len), 0);
	cr_expect_eq(r.c.stale_fragments, 1);
	cr_expect_eq(r.c.dropped_evicted, 9);
	for (uint32_t i = 1; i < 3; i++) {
		struct msga__frag f = frag(1, 10, 3000, i);

		cr_expect_eq(msga__reasm_add(&r, &f, 22, &msg, &len), i == 2);
	}
	msga__reasm_release(&r, msg);
	cr_expect_eq(msga__reasm_pending(&r), 0);
	cr_expect_eq(r.used, 0, "every buffer freed");
}

Test(reasm, streams_do_not_mix)
{
	const void *msg;
	uint32_t len;
	struct msga__frag a0 = frag(1, 5, 2000, 0), b0 = frag(2, 5, 2000, 0),
			  a1 = frag(1, 5, 2000, 1);

	cr_expect_eq(msga__reasm_add(&r, &a0, 0, &msg, &len), 0);
	cr_expect_eq(msga__reasm_add(&r, &b0, 0, &msg, &len), 0);
	cr_expect_eq(msga__reasm_add(&r, &a1, 0, &msg, &len), 1);
	cr_expect_eq(msga__reasm_pending(&r), 1, "stream 2 still pending");
}

Test(reasm, inconsistent_fragments_are_einval)
{
	const void *msg;
	uint32_t len;
	struct msga__frag f = frag(1, 1, 2500, 0);

	f.total_len = MAXMSG + 1;
	cr_expect_eq(msga__reasm_add(&r, &f, 0, &msg, &len), -EINVAL);
	f = frag(1, 1, 2500, 0);
	f.offset = 10; /* not on a fragment boundary */
	cr_expect_eq(msga__reasm_add(&r, &f, 0, &msg, &len), -EINVAL);
	f = frag(1, 1, 2500, 2);
	f.len = 400; /* last fragment must be 500 */
	cr_expect_eq(msga__reasm_add(&r, &f, 0, &msg, &len), -EINVAL);
	/* Same message, different total: the message is dropped. */
	f = frag(1, 2, 2500, 0);
	msga__reasm_add(&r, &f, 0, &msg, &len);
	f = frag(1, 2, 3500, 1);
	cr_expect_eq(msga__reasm_add(&r, &f, 0, &msg, &len), -EINVAL);
	/* a stream index beyond the table */
	f = frag(4, 1, 2500, 0);
	cr_expect_eq(msga__reasm_add(&r, &f, 0, &msg, &len), -EINVAL);
	cr_expect_eq(r.c.dropped_invalid, 5);
	cr_expect_eq(r.used, 0);
}

Test(reasm, init_rejects_bad_geometry)
{
	struct msga__reasm x;

	cr_expect_eq(msga__reasm_init(&x, 0, 100, 10, 1), -EINVAL);
	cr_expect_eq(msga__reasm_init(&x, 1, 100, 200, 1), -EINVAL);
	cr_expect_eq(msga__reasm_init(&x, 1, 100, 10, 0), -EINVAL);
}

static unsigned int drops_seen;
static uint64_t drop_stream;

static void count_drop(void *arg, uint64_t stream)
{
	(void)arg;
	drops_seen++;
	drop_stream = stream;
}

Test(reasm, each_message_may_use_its_own_fragment_size)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len;
	struct msga__frag f = { .stream = 1, .msg_seq = 1, .total_len = 3 * FRAG,
				.offset = 0, .len = 2 * FRAG,
				.frag_size = 2 * FRAG, .data = src };

	cr_assert_eq(msga__reasm_init(&q, 2, 1 << 20, FRAG, 1000), 0);
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 0);
	f.offset = 2 * FRAG;
	f.len = FRAG;
	f.data = src + 2 * FRAG;
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 1);
	cr_assert_eq(len, 3 * FRAG);
	cr_assert_eq(memcmp(msg, src, len), 0);
	msga__reasm_release(&q, msg);
	/* smaller than the configured minimum: refused */
	f.frag_size = FRAG / 2;
	f.offset = 0;
	f.len = FRAG / 2;
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), -EINVAL);
	msga__reasm_fini(&q);
}

Test(reasm, a_fragment_size_change_mid_message_drops_it)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len;
	struct msga__frag f = frag(4, 1, 3 * FRAG, 0);

	cr_assert_eq(msga__reasm_init(&q, 8, 1 << 20, FRAG, 1000), 0);
	q.on_drop = count_drop;
	drops_seen = 0;
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 0);
	f = frag(4, 1, 3 * FRAG, 1);
	f.frag_size = 2 * FRAG;
	f.offset = 2 * FRAG;
	f.len = FRAG;
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), -EINVAL);
	cr_assert_eq(drops_seen, 1);
	cr_assert_eq(drop_stream, 4);
	msga__reasm_fini(&q);
}

Test(reasm, timeouts_and_evictions_are_reported_per_stream)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len;
	struct msga__frag a = frag(10, 1, 3 * FRAG, 0);
	struct msga__frag b = frag(11, 1, 3 * FRAG, 0);
	struct msga__frag c = frag(12, 1, 3 * FRAG, 0);
	struct msga__frag a2 = frag(10, 2, 3 * FRAG, 0);

	cr_assert_eq(msga__reasm_init(&q, 16, 1 << 20, FRAG, 1000), 0);
	q.on_drop = count_drop;
	drops_seen = 0;
	cr_assert_eq(msga__reasm_add(&q, &a, 0, &msg, &len), 0);
	cr_assert_eq(msga__reasm_add(&q, &b, 10, &msg, &len), 0);
	cr_assert_eq(msga__reasm_add(&q, &c, 20, &msg, &len), 0);
	cr_assert_eq(drops_seen, 0, "streams do not evict each other");
	cr_assert_eq(msga__reasm_add(&q, &a2, 30, &msg, &len), 0);
	cr_assert_eq(drops_seen, 1, "stream 10's newer message evicts its own");
	cr_assert_eq(drop_stream, 10);
	cr_assert_eq(msga__reasm_next_expiry(&q), 10 + 1000 + 1,
		     "stream 11 is the oldest now");
	cr_assert_eq(msga__reasm_expire(&q, 1021), 2);
	cr_assert_eq(drops_seen, 3);
	cr_assert_eq(drop_stream, 12);
	cr_assert_eq(msga__reasm_pending(&q), 1);
	cr_assert_eq(msga__reasm_expire(&q, 1031), 1);
	cr_assert_eq(drop_stream, 10);
	msga__reasm_fini(&q);
}

Test(reasm, a_message_still_flowing_does_not_time_out)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len;
	struct msga__frag f;

	cr_assert_eq(msga__reasm_init(&q, 2, 1 << 20, FRAG, 1000), 0);
	for (uint32_t i = 0; i < 9; i++) {
		f = frag(1, 1, 10 * FRAG, i);
		cr_assert_eq(msga__reasm_add(&q, &f, i * 900, &msg, &len), 0);
		cr_assert_eq(msga__reasm_expire(&q, i * 900 + 950), 0,
			     "fragment %u arrived 50 ns before", i);
	}
	f = frag(1, 1, 10 * FRAG, 9);
	cr_assert_eq(msga__reasm_add(&q, &f, 9 * 900, &msg, &len), 1,
		     "8.1 us from first to last, every gap under 1 us");
	msga__reasm_fini(&q);
}
#define REASM_STREAMS 16u

/*
 * Eight publishers (streams) send fragmented messages at once, their
 * fragments interleaved one by one: every message completes, exactly.
 */
#define SENDERS 8u

Test(reasm, eight_senders_interleaving_fragmented_messages_all_complete)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len, total = 5 * FRAG + 123, completed = 0;

	cr_assert_eq(msga__reasm_init(&q, REASM_STREAMS, MAXMSG, FRAG,
				      1000000), 0);
	for (uint64_t seq = 1; seq <= 20; seq++)
		for (uint32_t i = 0; i < nfrags(total); i++)
			for (uint64_t s = 0; s < SENDERS; s++) {
				struct msga__frag f = frag(s, seq, total, i);
				int ret = msga__reasm_add(&q, &f, seq, &msg,
							  &len);

				cr_assert_geq(ret, 0);
				if (!ret)
					continue;
				cr_assert_eq(len, total);
				cr_assert_eq(memcmp(msg, src, len), 0);
				msga__reasm_release(&q, msg);
				completed++;
			}
	cr_assert_eq(completed, 20 * SENDERS, "only %u of %u completed",
		     completed, 20 * SENDERS);
	cr_assert_eq(q.c.dropped_evicted, 0);
	msga__reasm_fini(&q);
}

/*
 * The byte budget bounds all streams together: a message that does not fit
 * is dropped once (its later fragments ignored), and fits again when
 * another completes.
 */
Test(reasm, the_byte_budget_refuses_a_message_once)
{
	struct msga__reasm q;
	const void *msg;
	uint32_t len, total = 4 * FRAG;
	struct msga__frag f;

	cr_assert_eq(msga__reasm_init(&q, 8, MAXMSG, FRAG, 1000), 0);
	q.budget = 2 * total + 64; /* two messages and their bitmaps */
	q.on_drop = count_drop;
	drops_seen = 0;
	for (uint64_t s = 0; s < 2; s++) {
		f = frag(s, 1, total, 0);
		cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 0);
	}
	for (uint32_t i = 0; i < 4; i++) {
		f = frag(2, 1, total, i);
		cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 0);
	}
	cr_assert_eq(q.c.dropped_budget, 1, "counted once, not per fragment");
	cr_assert_eq(drops_seen, 1);
	cr_assert_eq(drop_stream, 2);
	cr_assert_leq(q.used, q.budget);
	for (uint32_t i = 1; i < 4; i++) {
		f = frag(0, 1, total, i);
		cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), i == 3);
	}
	msga__reasm_release(&q, msg);
	f = frag(2, 2, total, 0);
	cr_assert_eq(msga__reasm_add(&q, &f, 0, &msg, &len), 0);
	cr_assert_eq(msga__reasm_pending(&q), 2, "stream 2's next one fits");
	msga__reasm_fini(&q);
}

Test(reasm, a_forgotten_stream_loses_its_incomplete_message)
{
	const void *msg;
	uint32_t len;
	struct msga__frag f = frag(3, 7, 3000, 0);

	cr_assert_eq(msga__reasm_add(&r, &f, 0, &msg, &len), 0);
	msga__reasm_forget(&r, 3);
	cr_assert_eq(msga__reasm_pending(&r), 0);
	cr_assert_eq(r.c.dropped_evicted, 1);
	/* the index's next stream starts afresh, whatever its numbers */
	f = frag(3, 1, 2000, 0);
	cr_assert_eq(msga__reasm_add(&r, &f, 0, &msg, &len), 0);
	f = frag(3, 1, 2000, 1);
	cr_assert_eq(msga__reasm_add(&r, &f, 0, &msg, &len), 1);
	msga__reasm_release(&r, msg);
	msga__reasm_forget(&r, 99); /* out of range: nothing */
}
