/* SPDX-License-Identifier: MIT */
/* Host unit tests: NAK-based loss recovery, in order and exactly once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "repair.h"

#define DELAY 1000u
#define RETRY 10000u
#define GIVE_UP 1000000u

static struct msga__repair r;

static struct msga__repair_cfg cfg_default(void)
{
	return (struct msga__repair_cfg){
		.max_bytes = 1u << 20, .max_streams = 4, .max_gaps = 8,
		.give_up_ns = GIVE_UP, .nak_delay_ns = DELAY,
		.nak_retry_ns = RETRY, .seed = 1 };
}

static void setup(void)
{
	struct msga__repair_cfg cfg = cfg_default();

	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	msga__repair_start(&r, 0, 1);
	msga__repair_start(&r, 1, 1);
}

static void teardown(void)
{
	msga__repair_fini(&r);
}

TestSuite(repair, .init = setup, .fini = teardown);

/* A message's bytes say its stream and number. */
struct payload {
	uint32_t idx;
	uint64_t seq;
};

static enum msga__repair_verdict arr(uint32_t idx, uint64_t seq, uint64_t now)
{
	struct payload p = { idx, seq };

	return msga__repair_arrive(&r, idx, seq, &p, sizeof(p), now);
}

/* The next item of idx must be message seq, with its bytes. */
static void expect_msg(uint32_t idx, uint64_t seq)
{
	struct msga__repair_item it;
	struct payload p;

	cr_assert_eq(msga__repair_pop(&r, idx, &it), 1, "pop %lu", seq);
	cr_assert_eq(it.loss, 0, "LOSS [%lu +%lu) instead of %lu", it.seq,
		     it.count, seq);
	cr_assert_eq(it.seq, seq);
	cr_assert_eq(it.count, 1);
	cr_assert_eq(it.len, sizeof(p));
	memcpy(&p, it.data, sizeof(p));
	cr_assert(p.idx == idx && p.seq == seq);
}

static void expect_loss(uint32_t idx, uint64_t seq, uint64_t count)
{
	struct msga__repair_item it;

	cr_assert_eq(msga__repair_pop(&r, idx, &it), 1);
	cr_assert_eq(it.loss, 1, "message %lu instead of a LOSS", it.seq);
	cr_assert_eq(it.seq, seq, "LOSS at %lu, not %lu", it.seq, seq);
	cr_assert_eq(it.count, count, "LOSS of %lu, not %lu", it.count, count);
}

static void expect_none(uint32_t idx)
{
	struct msga__repair_item it;

	cr_assert_eq(msga__repair_pop(&r, idx, &it), 0, "popped %lu",
		     it.seq);
}

#define MAX_NAKS 256
static struct nak {
	uint32_t idx;
	uint64_t seq, count;
} naks[MAX_NAKS];
static unsigned int nnaks;

static void on_nak(void *arg, uint32_t idx, uint64_t seq, uint64_t count)
{
	cr_assert_lt(nnaks, MAX_NAKS);
	naks[nnaks++] = (struct nak){ idx, seq, count };
}

static uint64_t tick(uint64_t now)
{
	nnaks = 0;
	return msga__repair_tick(&r, now, on_nak, NULL);
}

static int naked(uint32_t idx, uint64_t seq, uint64_t count)
{
	for (unsigned int i = 0; i < nnaks; i++)
		if (naks[i].idx == idx && naks[i].seq == seq &&
		    naks[i].count == count)
			return 1;
	return 0;
}

Test(repair, in_order_fast_path_holds_nothing)
{
	size_t free0 = r.free_bytes;
	uint32_t idx;

	for (uint64_t s = 1; s <= 100000; s++)
		cr_assert_eq(arr(0, s, s), MSGA__REPAIR_DELIVER);
	cr_expect_eq(r.free_bytes, free0, "no copy was made");
	cr_expect_eq(r.c.delivered, 100000);
	cr_expect_eq(r.c.held + r.c.dropped + r.c.gaps, 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);
	cr_expect_eq(msga__repair_next_ready(&r, &idx), 0);
	cr_expect_eq(msga__repair_next_due(&r), UINT64_MAX);
	expect_none(0);
}

Test(repair, a_repaired_gap_releases_the_held_in_order)
{
	uint32_t idx;

	cr_assert_eq(arr(0, 1, 0), MSGA__REPAIR_DELIVER);
	cr_assert_eq(arr(0, 3, 0), MSGA__REPAIR_HELD);
	cr_assert_eq(arr(0, 5, 0), MSGA__REPAIR_HELD);
	cr_assert_eq(arr(0, 4, 0), MSGA__REPAIR_HELD);
	cr_expect_eq(msga__repair_ranges(&r, 0), 1, "only 2 is missing");
	cr_expect_eq(msga__repair_next_ready(&r, &idx), 0);
	expect_none(0);
	cr_assert_eq(arr(0, 2, 0), MSGA__REPAIR_DELIVER, "in place");
	cr_assert_eq(msga__repair_next_ready(&r, &idx), 1);
	cr_expect_eq(idx, 0);
	expect_msg(0, 3);
	expect_msg(0, 4);
	expect_msg(0, 5);
	expect_none(0);
	cr_expect_eq(msga__repair_next_ready(&r, &idx), 0);
	cr_assert_eq(arr(0, 6, 0), MSGA__REPAIR_DELIVER, "back on the fast path");
	cr_expect_eq(r.free_bytes, (size_t)1 << 20, "every copy freed");
}

Test(repair, several_gaps_are_all_naked_in_one_tick)
{
	uint64_t due;

	arr(0, 1, 0);
	arr(0, 3, 0);  /* 2 */
	arr(0, 7, 0);  /* 4..6 */
	arr(0, 10, 0); /* 8..9 */
	arr(1, 2, 0);  /* stream 1: 1 */
	cr_expect_eq(r.c.gaps, 4);
	cr_expect_leq(msga__repair_next_due(&r), DELAY);
	due = tick(DELAY);
	cr_assert_eq(nnaks, 4, "every range is due by nak_delay_ns");
	cr_expect(naked(0, 2, 1));
	cr_expect(naked(0, 4, 3));
	cr_expect(naked(0, 8, 2));
	cr_expect(naked(1, 1, 1));
	cr_expect_eq(due, DELAY + RETRY);
	tick(DELAY + RETRY - 1);
	cr_expect_eq(nnaks, 0, "not again before nak_retry_ns");
	tick(DELAY + RETRY);
	cr_expect_eq(nnaks, 4, "all again after it");
}

Test(repair, the_first_nak_waits_a_random_delay_per_gap)
{
	uint64_t seen_min = UINT64_MAX, seen_max = 0;

	msga__repair_fini(&r);
	{
		struct msga__repair_cfg cfg = cfg_default();

		cfg.max_gaps = 64;
		cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	}
	msga__repair_start(&r, 0, 1);
	for (uint64_t s = 2; s <= 128; s += 2) /* 64 ranges: 1, 3, ... */
		arr(0, s, 0);
	for (uint32_t i = 0; i < r.streams[0].ngaps; i++) {
		uint64_t at = r.streams[0].gaps[i].nak_ns;

		cr_assert_leq(at, DELAY);
		seen_min = at < seen_min ? at : seen_min;
		seen_max = at > seen_max ? at : seen_max;
	}
	cr_expect_lt(seen_min, seen_max, "not all at once");
	tick(seen_min);
	cr_expect_geq(nnaks, 1);
	cr_expect_lt(nnaks, 64);
	tick(DELAY);
	cr_expect_eq(r.c.naks, 64, "each range NAKed once by nak_delay_ns");
}

Test(repair, a_repaired_number_is_not_naked_again)
{
	arr(0, 1, 0);
	arr(0, 7, 0); /* 2..6 */
	tick(DELAY);
	cr_assert_eq(nnaks, 1);
	cr_expect(naked(0, 2, 5));
	cr_assert_eq(arr(0, 4, 10), MSGA__REPAIR_HELD); /* splits it */
	cr_expect_eq(msga__repair_ranges(&r, 0), 2);
	tick(DELAY + RETRY - 1);
	cr_expect_eq(nnaks, 0);
	tick(DELAY + RETRY);
	cr_assert_eq(nnaks, 2, "both pieces keep the range's timer");
	cr_expect(naked(0, 2, 2));
	cr_expect(naked(0, 5, 2));
	arr(0, 3, 20);
	arr(0, 6, 20);
	tick(DELAY + 2 * RETRY);
	cr_assert_eq(nnaks, 2);
	cr_expect(naked(0, 2, 1));
	cr_expect(naked(0, 5, 1));
	cr_assert_eq(arr(0, 5, 30), MSGA__REPAIR_HELD);
	tick(DELAY + 3 * RETRY);
	cr_assert_eq(nnaks, 1);
	cr_expect(naked(0, 2, 1));
	cr_assert_eq(arr(0, 2, 40), MSGA__REPAIR_DELIVER);
	for (uint64_t s = 3; s <= 7; s++)
		expect_msg(0, s);
	expect_none(0);
	cr_expect_eq(tick(DELAY + 4 * RETRY), UINT64_MAX);
	cr_expect_eq(nnaks, 0);
}

Test(repair, a_heartbeat_shows_a_lost_tail)
{
	arr(0, 1, 0);
	arr(0, 2, 0);
	msga__repair_sent(&r, 0, 2, 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0, "nothing new");
	msga__repair_sent(&r, 0, 5, 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 1);
	tick(DELAY);
	cr_assert_eq(nnaks, 1);
	cr_expect(naked(0, 3, 3));
	cr_assert_eq(arr(0, 4, 1), MSGA__REPAIR_HELD);
	cr_assert_eq(arr(0, 3, 1), MSGA__REPAIR_DELIVER);
	expect_msg(0, 4);
	expect_none(0);
	cr_assert_eq(arr(0, 5, 1), MSGA__REPAIR_DELIVER);
	cr_assert_eq(arr(0, 6, 1), MSGA__REPAIR_DELIVER);
}

Test(repair, gone_is_a_loss_then_the_held_follow)
{
	arr(0, 1, 0);
	arr(0, 5, 0); /* 2..4 */
	arr(0, 6, 0);
	msga__repair_gone(&r, 0, 3, 1); /* the middle of it */
	expect_none(0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 3);
	tick(DELAY);
	cr_expect(naked(0, 2, 1) && naked(0, 4, 1) && nnaks == 2,
		  "the given-up number is not NAKed");
	cr_assert_eq(arr(0, 3, 0), MSGA__REPAIR_DROP, "given up: too late");
	cr_assert_eq(arr(0, 2, 0), MSGA__REPAIR_DELIVER);
	expect_loss(0, 3, 1);
	expect_none(0);
	msga__repair_gone(&r, 0, 4, 100); /* beyond what we know: cut */
	expect_loss(0, 4, 1);
	expect_msg(0, 5);
	expect_msg(0, 6);
	expect_none(0);
	cr_assert_eq(arr(0, 7, 0), MSGA__REPAIR_DELIVER,
		     "later numbers were not given up: maybe in flight");
	cr_expect_eq(r.c.gone, 2);
}

Test(repair, adjacent_given_up_numbers_are_one_loss)
{
	arr(0, 1, 0);
	arr(0, 10, 0); /* 2..9 */
	msga__repair_gone(&r, 0, 6, 2);
	msga__repair_gone(&r, 0, 2, 4);
	msga__repair_gone(&r, 0, 8, 2);
	expect_loss(0, 2, 8);
	expect_msg(0, 10);
	expect_none(0);
}

Test(repair, a_gap_open_give_up_ns_is_lost)
{
	uint64_t due;

	arr(0, 1, 0);
	arr(0, 3, 100);
	arr(0, 4, 200);
	due = tick(GIVE_UP + 99);
	cr_expect_eq(r.c.timed_out, 0);
	expect_none(0);
	cr_expect_leq(due, GIVE_UP + 100);
	tick(GIVE_UP + 100);
	cr_expect_eq(r.c.timed_out, 1);
	cr_expect_eq(nnaks, 0, "given up, not NAKed");
	expect_loss(0, 2, 1);
	expect_msg(0, 3);
	expect_msg(0, 4);
	expect_none(0);
	cr_expect_eq(arr(0, 2, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(arr(0, 5, 0), MSGA__REPAIR_DELIVER);
}

/* cfg.stall_ns (issue 35): the same stream, gap and clock as cfg_default. */
static void with_stall(uint64_t stall_ns, uint64_t bound_ns)
{
	struct msga__repair_cfg cfg = cfg_default();

	msga__repair_fini(&r);
	cfg.stall_ns = stall_ns;
	cfg.give_up_ns = bound_ns;
	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	msga__repair_start(&r, 0, 1);
	msga__repair_start(&r, 1, 1);
}

/* A long outage repaired at a steady pace is never given up. */
Test(repair, stall_mode_keeps_a_gap_that_progresses)
{
	uint64_t now = 0, due;

	with_stall(GIVE_UP, UINT64_MAX);
	arr(0, 1, 0);
	arr(0, 1001, 0); /* 2..1000: far longer to repair than GIVE_UP */
	for (uint64_t seq = 2; seq <= 1000; seq++) {
		now += GIVE_UP / 10;
		tick(now);
		cr_assert_eq(arr(0, seq, now), MSGA__REPAIR_DELIVER);
		while (msga__repair_pop(&r, 0, &(struct msga__repair_item){ 0 }))
			;
	}
	cr_expect_eq(r.c.timed_out, 0);
	cr_expect_eq(r.c.lost, 0);
	/* then nothing more: given up stall_ns after the last repair */
	arr(0, 1003, now); /* 1002 */
	due = tick(now + GIVE_UP - 1);
	cr_expect_eq(r.c.timed_out, 0);
	cr_expect_leq(due, now + GIVE_UP);
	tick(now + GIVE_UP);
	cr_expect_eq(r.c.timed_out, 1);
	expect_loss(0, 1002, 1);
}

/* give_up_ns stays a latency bound for those who want one. */
Test(repair, stall_mode_bound_still_gives_up)
{
	with_stall(GIVE_UP, 3 * GIVE_UP);
	arr(0, 1, 0);
	arr(0, 100, 0); /* 2..99 */
	for (uint64_t seq = 2; seq < 30; seq++) { /* to 2.8 x GIVE_UP */
		tick((seq - 1) * (GIVE_UP / 10));
		arr(0, seq, (seq - 1) * (GIVE_UP / 10));
	}
	cr_expect_eq(r.c.timed_out, 0);
	tick(3 * GIVE_UP);
	cr_expect_eq(r.c.timed_out, 1);
}

/* stall_ns 0 is 0.8's rule: give_up_ns from the opening, progress or not. */
Test(repair, no_stall_gives_up_by_age)
{
	arr(0, 1, 0);
	arr(0, 100, 0);
	arr(0, 2, GIVE_UP - 1);
	tick(GIVE_UP);
	cr_expect_eq(r.c.timed_out, 1);
}

Test(repair, split_gaps_keep_their_age)
{
	arr(0, 1, 0);
	arr(0, 6, 0);         /* 2..5 at 0 */
	arr(0, 3, GIVE_UP - 1); /* 2, 4..5 */
	tick(GIVE_UP);
	expect_loss(0, 2, 1);
	expect_msg(0, 3);
	expect_loss(0, 4, 2);
	expect_msg(0, 6);
	expect_none(0);
}

/* max_bytes of 16 copies: each copy of a payload takes one 64-byte block. */
static void small_pool(size_t bytes)
{
	struct msga__repair_cfg cfg = cfg_default();

	msga__repair_fini(&r);
	cfg.max_bytes = bytes;
	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	cr_assert_eq(msga__repair_copy_size(&r, sizeof(struct payload)), 64);
	msga__repair_start(&r, 0, 1);
	msga__repair_start(&r, 1, 1);
}

Test(repair, memory_limit_gives_up_the_oldest_gap_exactly)
{
	small_pool(16 * 64);
	arr(0, 1, 0);
	arr(1, 1, 0);
	for (uint64_t s = 4; s <= 11; s++) /* stream 0: 2..3 missing since 1 */
		cr_assert_eq(arr(0, s, 1), MSGA__REPAIR_HELD);
	for (uint64_t s = 3; s <= 10; s++) /* stream 1: 2 missing since 2 */
		cr_assert_eq(arr(1, s, 2), MSGA__REPAIR_HELD);
	cr_assert_eq(r.free_bytes, 0);
	/* stream 1's next does not fit: stream 0's gap is the oldest */
	cr_assert_eq(arr(1, 11, 3), MSGA__REPAIR_DROP);
	cr_expect_eq(r.c.refused, 1);
	cr_expect_eq(r.c.over_memory, 1, "one range was enough");
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);
	cr_expect_eq(msga__repair_ranges(&r, 1), 2, "2, and 11 now missing");
	expect_loss(0, 2, 2);
	for (uint64_t s = 4; s <= 11; s++)
		expect_msg(0, s);
	expect_none(0);
	expect_none(1);
	/* room again: 11's retransmission is held, 2's delivers it all */
	cr_assert_eq(arr(1, 11, 4), MSGA__REPAIR_HELD);
	cr_assert_eq(arr(1, 2, 4), MSGA__REPAIR_DELIVER);
	for (uint64_t s = 3; s <= 11; s++)
		expect_msg(1, s);
	expect_none(1);
	cr_expect_eq(r.c.lost, 2);
}

Test(repair, memory_limit_gives_up_until_the_copy_would_fit)
{
	small_pool(16 * 64);
	arr(0, 1, 0);
	/* ranges 2, 4, 6, 8 at times 1..4, each followed by 2 copies */
	for (uint64_t s = 3; s <= 12; s += 3) {
		arr(0, s, s);
		arr(0, s + 1, s);
	}
	for (uint64_t s = 3; s <= 10; s++) /* stream 1 fills the rest */
		arr(1, s, 100);
	cr_assert_eq(r.free_bytes, 0);
	/* a 200-byte copy needs a 256-byte block: 4 copies' worth */
	{
		uint8_t big[200] = { 0 };

		cr_assert_eq(msga__repair_arrive(&r, 1, 11, big, sizeof(big),
						 200), MSGA__REPAIR_DROP);
	}
	cr_expect_eq(r.c.over_memory, 2, "the two oldest ranges");
	expect_loss(0, 2, 1);
	expect_msg(0, 3);
	expect_msg(0, 4);
	expect_loss(0, 5, 1);
	expect_msg(0, 6);
	expect_msg(0, 7);
	expect_none(0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 2);
}

Test(repair, a_copy_that_cannot_fit_is_left_missing_not_lost)
{
	uint8_t big[2000] = { 0 };

	small_pool(16 * 64);
	arr(0, 1, 0);
	cr_assert_eq(msga__repair_copy_size(&r, sizeof(big)), 0);
	cr_assert_eq(msga__repair_arrive(&r, 0, 3, big, sizeof(big), 0),
		     MSGA__REPAIR_DROP);
	cr_expect_eq(r.c.over_memory, 0, "giving up would not help");
	tick(DELAY);
	cr_expect(naked(0, 2, 2), "2 and 3 are asked for");
	cr_assert_eq(arr(0, 2, 1), MSGA__REPAIR_DELIVER);
	cr_assert_eq(msga__repair_arrive(&r, 0, 3, big, sizeof(big), 1),
		     MSGA__REPAIR_DELIVER, "in order it needs no copy");
}

Test(repair, nothing_to_give_up_when_the_caller_has_not_popped)
{
	small_pool(4 * 64);
	arr(0, 1, 0);
	for (uint64_t s = 3; s <= 6; s++)
		arr(0, s, 0);
	cr_assert_eq(arr(0, 2, 0), MSGA__REPAIR_DELIVER);
	/* 3..6 ready but not popped: 7 finds no room */
	cr_assert_eq(arr(0, 7, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(r.c.over_memory, 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 1, "7 is missing");
	for (uint64_t s = 3; s <= 6; s++)
		expect_msg(0, s);
	expect_none(0);
	cr_assert_eq(arr(0, 7, 0), MSGA__REPAIR_DELIVER);
}

Test(repair, duplicates_and_late_arrivals_are_dropped)
{
	cr_assert_eq(arr(0, 1, 0), MSGA__REPAIR_DELIVER);
	cr_assert_eq(arr(0, 2, 0), MSGA__REPAIR_DELIVER);
	cr_expect_eq(arr(0, 2, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(arr(0, 1, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(arr(0, 0, 0), MSGA__REPAIR_DROP);
	cr_assert_eq(arr(0, 5, 0), MSGA__REPAIR_HELD);
	cr_expect_eq(arr(0, 5, 0), MSGA__REPAIR_DROP, "held already");
	cr_assert_eq(arr(0, 3, 0), MSGA__REPAIR_DELIVER);
	cr_expect_eq(arr(0, 3, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(arr(0, 5, 0), MSGA__REPAIR_DROP, "held, not popped");
	msga__repair_gone(&r, 0, 4, 1);
	cr_expect_eq(arr(0, 4, 0), MSGA__REPAIR_DROP, "given up");
	expect_loss(0, 4, 1);
	expect_msg(0, 5);
	expect_none(0);
	cr_expect_eq(arr(0, 4, 0), MSGA__REPAIR_DROP);
	cr_expect_eq(arr(2, 1, 0), MSGA__REPAIR_DROP, "not started");
	cr_expect_eq(arr(9, 1, 0), MSGA__REPAIR_DROP, "out of range");
	cr_expect_eq(r.c.dropped, 10);
}

Test(repair, max_gaps_gives_up_the_oldest)
{
	arr(0, 1, 0);
	for (uint64_t s = 3; s <= 17; s += 2) /* 8 ranges: 2, 4, .., 16 */
		arr(0, s, s);
	cr_assert_eq(msga__repair_ranges(&r, 0), 8);
	arr(0, 19, 19); /* a ninth: 18 */
	cr_expect_eq(msga__repair_ranges(&r, 0), 8);
	cr_expect_eq(r.c.over_max_gaps, 1);
	expect_loss(0, 2, 1);
	expect_msg(0, 3);
	expect_none(0);
	/* splitting a range needs a slot too */
	arr(0, 30, 30); /* 20..29: the range 4 goes */
	cr_expect_eq(r.c.over_max_gaps, 2);
	expect_loss(0, 4, 1);
	expect_msg(0, 5);
	cr_assert_eq(arr(0, 25, 31), MSGA__REPAIR_HELD); /* 6 goes */
	cr_expect_eq(r.c.over_max_gaps, 3);
	expect_loss(0, 6, 1);
	expect_msg(0, 7);
	expect_none(0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 8);
}

Test(repair, a_heartbeat_gap_counts_against_max_gaps_too)
{
	arr(0, 1, 0);
	for (uint64_t s = 2; s <= 10; s++)
		msga__repair_sent(&r, 0, s, s);
	cr_expect_eq(msga__repair_ranges(&r, 0), 8);
	expect_loss(0, 2, 1);
	expect_none(0);
	cr_assert_eq(arr(0, 3, 11), MSGA__REPAIR_DELIVER);
}

Test(repair, forget_frees_and_drops_silently)
{
	uint32_t idx;

	arr(0, 1, 0);
	arr(0, 3, 0);
	arr(0, 4, 0);
	arr(1, 2, 0);
	msga__repair_forget(&r, 0);
	cr_expect_eq(msga__repair_active(&r, 0), 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);
	expect_none(0);
	cr_expect_eq(arr(0, 2, 0), MSGA__REPAIR_DROP);
	tick(DELAY);
	cr_expect_eq(nnaks, 1, "only stream 1's");
	cr_expect(naked(1, 1, 1));
	msga__repair_forget(&r, 1);
	cr_expect_eq(r.free_bytes, (size_t)1 << 20);
	cr_expect_eq(r.ready_bytes, 0);
	cr_expect_eq(msga__repair_next_ready(&r, &idx), 0);
	cr_expect_eq(tick(2 * DELAY), UINT64_MAX);
	msga__repair_start(&r, 0, 50);
	cr_expect_eq(msga__repair_active(&r, 0), 1);
	cr_expect_eq(arr(0, 49, 0), MSGA__REPAIR_DROP, "before the start");
	cr_expect_eq(arr(0, 50, 0), MSGA__REPAIR_DELIVER);
}

Test(repair, forget_of_a_ready_stream_takes_it_off_the_ready_list)
{
	uint32_t idx;

	arr(0, 1, 0);
	arr(0, 3, 0);
	arr(1, 1, 0);
	arr(1, 3, 0);
	arr(0, 2, 0);
	arr(1, 2, 0);
	cr_assert_eq(msga__repair_next_ready(&r, &idx), 1);
	cr_expect_eq(idx, 0, "the first ready");
	msga__repair_forget(&r, 0);
	cr_assert_eq(msga__repair_next_ready(&r, &idx), 1);
	cr_expect_eq(idx, 1);
	expect_msg(1, 3);
	cr_expect_eq(msga__repair_next_ready(&r, &idx), 0);
}

Test(repair, numbers_end_at_uint64_max)
{
	msga__repair_start(&r, 0, UINT64_MAX - 2);
	cr_assert_eq(arr(0, UINT64_MAX, 0), MSGA__REPAIR_HELD);
	msga__repair_gone(&r, 0, UINT64_MAX - 2, UINT64_MAX);
	expect_loss(0, UINT64_MAX - 2, 2);
	expect_msg(0, UINT64_MAX);
	expect_none(0);
	cr_expect_eq(arr(0, UINT64_MAX, 0), MSGA__REPAIR_DROP);
	msga__repair_sent(&r, 0, UINT64_MAX, 0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);

	/* the whole number space as one range */
	msga__repair_start(&r, 1, 0);
	msga__repair_sent(&r, 1, UINT64_MAX, 0);
	tick(DELAY);
	cr_expect(naked(1, 1, UINT64_MAX));
	msga__repair_gone(&r, 1, 0, UINT64_MAX);
	cr_expect_eq(msga__repair_ranges(&r, 1), 1, "UINT64_MAX itself is left");
	cr_assert_eq(arr(1, 1, 0), MSGA__REPAIR_DROP);
	expect_loss(1, 1, UINT64_MAX - 1);
	cr_assert_eq(arr(1, UINT64_MAX, 0), MSGA__REPAIR_DELIVER);
	cr_expect_eq(msga__repair_ranges(&r, 1), 0);
}

Test(repair, bad_configurations_are_refused)
{
	struct msga__repair x;
	struct msga__repair_cfg cfg = cfg_default();

	cfg.max_gaps = 0;
	cr_expect_eq(msga__repair_init(&x, &cfg), -EINVAL);
	cfg = cfg_default();
	cfg.max_bytes = 63;
	cr_expect_eq(msga__repair_init(&x, &cfg), -EINVAL);
	cfg = cfg_default();
	cfg.nak_retry_ns = 0;
	cr_expect_eq(msga__repair_init(&x, &cfg), -EINVAL);
	cfg = cfg_default();
	cfg.max_bytes = 64 * 3 + 10; /* blocks of 128 + 64 */
	cr_assert_eq(msga__repair_init(&x, &cfg), 0);
	cr_expect_eq(x.free_bytes, 192);
	cr_expect_eq(msga__repair_copy_size(&x, 96), 128);
	cr_expect_eq(msga__repair_copy_size(&x, 97), 0);
	msga__repair_fini(&x);
}

/*
 * The model test: streams of N messages through a network that loses,
 * duplicates and reorders them (and heartbeats), a publisher that answers
 * NAKs by sending again or saying gone, and an application that pops
 * (not always at once). Whatever happens, each stream's numbers come out
 * exactly once, in order, a message with its own bytes; a number comes
 * out lost only if it was never held; all end up handed out.
 */
#define MODEL_STREAMS 3
#define MODEL_N 3000

struct ev {
	uint64_t at;
	uint32_t idx;
	uint64_t seq, count; /* count: 0 data, 1 heartbeat (seq = last), 2 gone */
	uint64_t gone_count;
};

struct model {
	uint64_t next[MODEL_STREAMS];       /* the next number expected */
	uint8_t held[MODEL_STREAMS][MODEL_N + 2];
	uint64_t sent[MODEL_STREAMS];
	struct ev *evs;
	size_t nevs, cap;
	uint64_t now;
	uint64_t held_n, popped_n, lost_n, naked_n;
	unsigned int p_loss, p_dup, p_gone; /* per 100 */
	/*
	 * Out of order: held[][] is 2 once delivered, 3 once lost; top is
	 * the highest delivered, which a LATE verdict must be below.
	 */
	int ooo;
	uint64_t top[MODEL_STREAMS], late_n;
};

static struct model M;

static uint64_t rng_state;

static uint32_t rnd32(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static void schedule(struct ev e)
{
	if (M.nevs == M.cap) {
		M.cap = M.cap ? 2 * M.cap : 1024;
		M.evs = realloc(M.evs, M.cap * sizeof(*M.evs));
		cr_assert(M.evs);
	}
	M.evs[M.nevs++] = e;
}

static void model_payload(uint32_t idx, uint64_t seq, uint8_t *buf,
			  uint32_t *len)
{
	*len = (uint32_t)(seq % 97);
	for (uint32_t i = 0; i < *len; i++)
		buf[i] = (uint8_t)(seq * 31 + i + idx);
}

static void model_nak(void *arg, uint32_t idx, uint64_t seq, uint64_t count)
{
	cr_assert_geq(seq, M.next[idx], "NAK of a number handed out");
	for (uint64_t s = seq; s < seq + count && s <= MODEL_N; s++)
		cr_assert_eq(M.held[idx][s], 0, "NAK of held %lu", s);
	M.naked_n++;
	if (rnd32() % 100 < M.p_gone) {
		schedule((struct ev){ .at = M.now + 1 + rnd32() % 5, .idx = idx,
				      .seq = seq, .count = 2,
				      .gone_count = count });
		return;
	}
	for (uint64_t s = seq; s < seq + count && s <= MODEL_N; s++)
		if (rnd32() % 100 >= M.p_loss)
			schedule((struct ev){ .at = M.now + 1 + rnd32() % 20,
					      .idx = idx, .seq = s });
}

static void model_pop_all(uint32_t idx)
{
	struct msga__repair_item it;

	while (msga__repair_pop(&r, idx, &it)) {
		if (M.ooo) {
			cr_assert_eq(it.loss, 1, "out of order holds nothing");
			for (uint64_t s = it.seq; s < it.seq + it.count; s++) {
				cr_assert_eq(M.held[idx][s], 0,
					     "%lu out twice (lost)", s);
				M.held[idx][s] = 3;
			}
			M.lost_n += it.count;
			continue;
		}
		cr_assert_eq(it.seq, M.next[idx], "stream %u: %lu, expected %lu",
			     idx, it.seq, M.next[idx]);
		if (it.loss) {
			cr_assert_geq(it.count, 1);
			for (uint64_t s = it.seq; s < it.seq + it.count; s++)
				cr_assert_eq(M.held[idx][s], 0,
					     "held %lu came out lost", s);
			M.lost_n += it.count;
			M.next[idx] += it.count;
		} else {
			uint8_t want[128];
			uint32_t len;

			cr_assert_eq(M.held[idx][it.seq], 1, "popped, not held");
			model_payload(idx, it.seq, want, &len);
			cr_assert_eq(it.len, len);
			cr_assert(!memcmp(it.data, want, len));
			M.held[idx][it.seq] = 2;
			M.popped_n++;
			M.next[idx]++;
		}
	}
}

/*
 * Whether the application pops now: most times, or, lazy, rarely (so
 * given-up ranges pile up before they are handed out).
 */
static int model_lazy;

static int model_pops(unsigned int skip_one_in)
{
	return model_lazy ? rnd32() % (4 * skip_one_in) == 0 :
			    rnd32() % skip_one_in != 0;
}

static void model_drain(void)
{
	uint32_t idx;

	while (msga__repair_next_ready(&r, &idx))
		model_pop_all(idx);
}

static void model_arrive(uint32_t idx, uint64_t seq)
{
	uint8_t buf[128];
	uint32_t len;
	enum msga__repair_verdict v;

	model_payload(idx, seq, buf, &len);
	v = msga__repair_arrive(&r, idx, seq, buf, len, M.now);
	if (M.ooo && v != MSGA__REPAIR_DROP) {
		cr_assert(v == MSGA__REPAIR_DELIVER || v == MSGA__REPAIR_LATE);
		cr_assert_eq(M.held[idx][seq], 0, "%lu out twice", seq);
		cr_assert_eq(v == MSGA__REPAIR_LATE, seq < M.top[idx],
			     "%lu: LATE exactly when after a higher one", seq);
		M.held[idx][seq] = 2;
		M.late_n += v == MSGA__REPAIR_LATE;
		if (seq > M.top[idx])
			M.top[idx] = seq;
		return;
	}
	switch (v) {
	case MSGA__REPAIR_DELIVER:
		cr_assert_eq(seq, M.next[idx], "delivered out of order");
		M.next[idx]++;
		break;
	case MSGA__REPAIR_HELD:
		cr_assert_gt(seq, M.next[idx]);
		cr_assert_eq(M.held[idx][seq], 0, "held twice");
		M.held[idx][seq] = 1;
		M.held_n++;
		break;
	case MSGA__REPAIR_DROP:
		break;
	case MSGA__REPAIR_LATE:
		cr_assert_fail("LATE, not out of order");
	}
}

/* Every number of every stream came out once, in order or not. */
static void model_check_all_out(void)
{
	for (uint32_t i = 0; i < MODEL_STREAMS; i++) {
		if (!M.ooo) {
			cr_assert_eq(M.next[i], MODEL_N + 1,
				     "stream %u ends at %lu", i, M.next[i]);
		}
		for (uint64_t s = 1; s <= MODEL_N; s++) {
			if (M.ooo)
				cr_assert_geq(M.held[i][s], 2, "%lu never out",
					      s);
			else
				cr_assert_neq(M.held[i][s], 1,
					      "%lu held, never out", s);
		}
	}
}

static void model_run(uint64_t seed, size_t max_bytes, uint32_t max_gaps,
		      int ooo)
{
	struct msga__repair_cfg cfg = {
		.max_bytes = max_bytes, .max_streams = MODEL_STREAMS,
		.max_gaps = max_gaps, .give_up_ns = 400, .nak_delay_ns = 5,
		.nak_retry_ns = 30, .seed = (uint32_t)seed,
		.out_of_order = ooo };

	msga__repair_fini(&r);
	memset(&M, 0, sizeof(M));
	M.ooo = ooo;
	rng_state = seed;
	M.p_loss = 5 + rnd32() % 20;
	M.p_dup = rnd32() % 10;
	M.p_gone = rnd32() % 15;
	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	for (uint32_t i = 0; i < MODEL_STREAMS; i++) {
		msga__repair_start(&r, i, 1);
		M.next[i] = 1;
	}
	for (M.now = 1; M.now < 20000; M.now++) {
		/* each publisher sends one, most steps */
		for (uint32_t i = 0; i < MODEL_STREAMS; i++) {
			if (M.sent[i] >= MODEL_N || rnd32() % 4 == 0)
				continue;
			M.sent[i]++;
			if (rnd32() % 100 >= M.p_loss)
				schedule((struct ev){ .at = M.now + rnd32() % 8,
						      .idx = i,
						      .seq = M.sent[i] });
			if (rnd32() % 100 < M.p_dup)
				schedule((struct ev){ .at = M.now + rnd32() % 50,
						      .idx = i,
						      .seq = M.sent[i] });
			if (M.now % 16 == 0 && rnd32() % 100 >= M.p_loss)
				schedule((struct ev){ .at = M.now + 1, .idx = i,
						      .seq = M.sent[i],
						      .count = 1 });
		}
		/* the network hands over what is due, in any order */
		for (size_t e = 0; e < M.nevs;) {
			struct ev ev = M.evs[e];

			if (ev.at > M.now) {
				e++;
				continue;
			}
			M.evs[e] = M.evs[--M.nevs];
			if (ev.count == 0)
				model_arrive(ev.idx, ev.seq);
			else if (ev.count == 1)
				msga__repair_sent(&r, ev.idx, ev.seq, M.now);
			else
				msga__repair_gone(&r, ev.idx, ev.seq,
						  ev.gone_count);
			if (model_pops(4))
				model_drain();
		}
		msga__repair_tick(&r, M.now, model_nak, NULL);
		if (model_pops(8))
			model_drain();
	}
	/* the end: everything was sent; what is still missing times out */
	for (uint32_t i = 0; i < MODEL_STREAMS; i++)
		msga__repair_sent(&r, i, MODEL_N, M.now);
	msga__repair_tick(&r, M.now + 1000, model_nak, NULL);
	model_drain();
	model_check_all_out();
	cr_assert_eq(M.popped_n, M.held_n);
	msga__repair_tick(&r, M.now + 2000, model_nak, NULL); /* (flushes) */
	cr_assert_eq(r.free_bytes, (max_bytes / 64) * 64, "every copy freed");
	cr_assert_eq(r.ready_bytes, 0);
	cr_assert_gt(r.c.delivered + r.c.late + M.popped_n,
		     MODEL_STREAMS * MODEL_N / 2);
	free(M.evs);
}

Test(repair, model_exactly_once_in_order_roomy)
{
	for (uint64_t seed = 1; seed <= 6; seed++)
		model_run(seed, 1u << 20, 64, 0);
	cr_expect_eq(r.c.over_memory, 0);
}

Test(repair, model_exactly_once_in_order_tight)
{
	uint64_t mem = 0, gaps = 0;

	for (uint64_t seed = 100; seed <= 106; seed++) {
		model_run(seed, 2048 + 64 * seed, 1 + seed % 5, 0);
		mem += r.c.over_memory;
		gaps += r.c.over_max_gaps;
	}
	cr_expect_gt(mem, 0, "the memory limit was hit");
	cr_expect_gt(gaps, 0, "max_gaps was hit");
}

Test(repair, model_no_loss_when_every_repair_comes)
{
	struct msga__repair_cfg cfg;

	/* a publisher that always answers, well within give_up_ns */
	msga__repair_fini(&r);
	memset(&M, 0, sizeof(M));
	rng_state = 7;
	M.p_loss = 0;
	cfg = (struct msga__repair_cfg){
		.max_bytes = 1u << 20, .max_streams = 1, .max_gaps = 64,
		.give_up_ns = 100000, .nak_delay_ns = 5, .nak_retry_ns = 30,
		.seed = 7 };
	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	msga__repair_start(&r, 0, 1);
	M.next[0] = 1;
	for (M.now = 1; M.now < 10000; M.now++) {
		if (M.sent[0] < MODEL_N) {
			M.sent[0]++;
			if (rnd32() % 100 >= 10) /* 10% lost once */
				schedule((struct ev){ .at = M.now + rnd32() % 8,
						      .seq = M.sent[0] });
		}
		for (size_t e = 0; e < M.nevs;) {
			struct ev ev = M.evs[e];

			if (ev.at > M.now) {
				e++;
				continue;
			}
			M.evs[e] = M.evs[--M.nevs];
			model_arrive(0, ev.seq);
		}
		if (M.now % 16 == 0)
			msga__repair_sent(&r, 0, M.sent[0], M.now);
		msga__repair_tick(&r, M.now, model_nak, NULL);
		model_drain();
	}
	cr_expect_eq(M.next[0], MODEL_N + 1);
	cr_expect_eq(M.lost_n, 0, "nothing given up");
	cr_expect_gt(M.held_n, 0);
	free(M.evs);
}

Test(repair, model_out_of_order_exactly_once)
{
	uint64_t late = 0, lost = 0;

	for (uint64_t seed = 200; seed <= 205; seed++) {
		model_run(seed, 64, 64, 1);
		cr_assert_eq(r.c.held, 0, "out of order holds nothing");
		late += M.late_n;
		lost += M.lost_n;
	}
	cr_expect_gt(late, 0, "some repairs came after a higher number");
	cr_expect_gt(lost, 0, "some numbers were given up");
}

Test(repair, model_out_of_order_tight)
{
	uint64_t gaps = 0, refused = 0;

	/* few ranges, and a caller that seldom pops */
	model_lazy = 1;
	for (uint64_t seed = 300; seed <= 306; seed++) {
		model_run(seed, 64, 1 + seed % 3, 1);
		gaps += r.c.over_max_gaps;
		refused += r.c.refused;
	}
	model_lazy = 0;
	cr_expect_gt(gaps, 0, "max_gaps was hit");
	cr_expect_gt(refused, 0, "a full stream refused a number");
}

/*
 * Recovery latency: the bucket rule of msga_sub_stats.recovery_hist, and
 * what is counted: a missing number's wait, not a held copy's.
 */
Test(repair, hist_bucket_rule)
{
	cr_expect_eq(msga__repair_hist_bucket(0), 0);
	cr_expect_eq(msga__repair_hist_bucket(999), 0, "under 1 us");
	for (unsigned int i = 1; i < MSGA__REPAIR_HIST_BUCKETS - 1; i++) {
		uint64_t lo = 1000ull << (i - 1), hi = 1000ull << i;

		cr_expect_eq(msga__repair_hist_bucket(lo), i, "2^%u us", i - 1);
		cr_expect_eq(msga__repair_hist_bucket(hi - 1), i,
			     "just under 2^%u us", i);
		cr_expect_eq(msga__repair_hist_bucket(hi), i + 1, "2^%u us", i);
	}
	cr_expect_eq(msga__repair_hist_bucket(1000ull << 30),
		     MSGA__REPAIR_HIST_BUCKETS - 1, "the last takes the rest");
	cr_expect_eq(msga__repair_hist_bucket(UINT64_MAX),
		     MSGA__REPAIR_HIST_BUCKETS - 1);
}

static uint64_t hist_sum(void)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < MSGA__REPAIR_HIST_BUCKETS; i++)
		n += r.c.hist[i];
	return n;
}

Test(repair, latency_is_counted_for_repaired_numbers_only)
{
	for (uint64_t s = 1; s <= 10; s++) /* the fast path */
		arr(0, s, s);
	cr_assert_eq(arr(0, 13, 100000), MSGA__REPAIR_HELD); /* 11, 12 missed */
	cr_assert_eq(arr(0, 14, 100500), MSGA__REPAIR_HELD);
	cr_expect_eq(hist_sum(), 0, "held copies and in-order are no repair");
	/* 12 is inside the range: its wait counts from the range's start */
	cr_assert_eq(arr(0, 12, 103000), MSGA__REPAIR_HELD);
	cr_expect_eq(r.c.hist[2], 1, "3 us: [2, 4) us");
	cr_assert_eq(arr(0, 11, 150000), MSGA__REPAIR_DELIVER);
	cr_expect_eq(r.c.hist[6], 1, "50 us: [32, 64) us");
	cr_expect_eq(hist_sum(), 2);
	cr_assert_eq(arr(0, 12, 200000), MSGA__REPAIR_DROP);
	cr_expect_eq(hist_sum(), 2, "a duplicate is not a repair");
	/* a given-up number that comes after all is no repair either */
	arr(0, 20, 300000);
	msga__repair_gone(&r, 0, 15, 5);
	cr_assert_eq(arr(0, 16, 301000), MSGA__REPAIR_DROP);
	cr_expect_eq(hist_sum(), 2);
	/* a lost tail, shown by a heartbeat, times from the heartbeat */
	msga__repair_sent(&r, 1, 3, 1000000);
	cr_assert_eq(arr(1, 1, 1000000 + 5000000), MSGA__REPAIR_DELIVER);
	cr_expect_eq(r.c.hist[13], 1, "5 ms: [4096, 8192) us");
}

/* Out of order: the same engine, nothing held (repair.h). */
static void setup_ooo(void)
{
	struct msga__repair_cfg cfg = cfg_default();

	cfg.max_bytes = 64; /* unused: nothing is held */
	cfg.out_of_order = 1;
	cr_assert_eq(msga__repair_init(&r, &cfg), 0);
	msga__repair_start(&r, 0, 1);
	msga__repair_start(&r, 1, 1);
}

TestSuite(repair_ooo, .init = setup_ooo, .fini = teardown);

Test(repair_ooo, delivers_past_gaps_and_flags_the_repairs)
{
	size_t free0 = r.free_bytes;

	cr_assert_eq(arr(0, 1, 0), MSGA__REPAIR_DELIVER);
	cr_assert_eq(arr(0, 3, 0), MSGA__REPAIR_DELIVER, "past 2");
	cr_assert_eq(arr(0, 6, 0), MSGA__REPAIR_DELIVER, "past 4, 5");
	cr_assert_eq(arr(0, 7, 0), MSGA__REPAIR_DELIVER);
	cr_expect_eq(msga__repair_ranges(&r, 0), 2);
	cr_assert_eq(arr(0, 5, 2000), MSGA__REPAIR_LATE);
	cr_assert_eq(arr(0, 2, 3000), MSGA__REPAIR_LATE);
	cr_assert_eq(arr(0, 4, 4000), MSGA__REPAIR_LATE);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);
	for (uint64_t s = 1; s <= 7; s++)
		cr_expect_eq(arr(0, s, 5000), MSGA__REPAIR_DROP, "%lu again", s);
	expect_none(0);
	cr_expect_eq(r.free_bytes, free0, "no copy");
	cr_expect_eq(r.c.held, 0);
	cr_expect_eq(r.c.late, 3);
	cr_expect_eq(hist_sum(), 3);
	cr_assert_eq(arr(0, 8, 6000), MSGA__REPAIR_DELIVER, "the fast path");
}

Test(repair_ooo, a_repair_with_nothing_higher_delivered_is_in_order)
{
	arr(0, 1, 0);
	msga__repair_sent(&r, 0, 4, 0); /* 2..4 lost at the tail */
	cr_expect_eq(arr(0, 3, 10), MSGA__REPAIR_DELIVER, "nothing above it");
	cr_expect_eq(arr(0, 2, 20), MSGA__REPAIR_LATE, "3 came first");
	cr_expect_eq(arr(0, 4, 30), MSGA__REPAIR_DELIVER);
	cr_expect_eq(arr(0, 5, 40), MSGA__REPAIR_DELIVER);
	cr_expect_eq(msga__repair_ranges(&r, 0), 0);
}

Test(repair_ooo, ranges_are_naked_and_given_up_on_time)
{
	uint64_t due;

	arr(0, 1, 0);
	arr(0, 6, 0); /* 2..5 missing */
	due = tick(0);
	cr_expect_eq(nnaks, 0, "not before the random delay");
	cr_assert_leq(due, DELAY);
	tick(DELAY);
	cr_expect(naked(0, 2, 4));
	cr_assert_eq(arr(0, 4, DELAY + 1), MSGA__REPAIR_LATE);
	tick(DELAY + RETRY);
	cr_expect_eq(nnaks, 2);
	cr_expect(naked(0, 2, 2) && naked(0, 5, 1), "only what is missing");
	tick(GIVE_UP);
	cr_expect_eq(nnaks, 0);
	expect_loss(0, 2, 2);
	expect_loss(0, 5, 1);
	expect_none(0);
	cr_expect_eq(arr(0, 2, GIVE_UP + 1), MSGA__REPAIR_DROP, "given up");
	cr_expect_eq(arr(0, 5, GIVE_UP + 1), MSGA__REPAIR_DROP);
	cr_expect_eq(msga__repair_next_due(&r), UINT64_MAX);
	cr_expect_eq(r.c.timed_out, 2);
}

Test(repair_ooo, a_loss_is_handed_out_before_older_ranges_are_repaired)
{
	arr(0, 1, 0);
	arr(0, 10, 0); /* 2..9 */
	cr_assert_eq(arr(0, 5, 1), MSGA__REPAIR_LATE);
	msga__repair_gone(&r, 0, 6, 100); /* only the missing 6..9 */
	expect_loss(0, 6, 4);
	expect_none(0);
	cr_expect_eq(msga__repair_ranges(&r, 0), 1, "2..4 still asked for");
	for (uint64_t s = 2; s <= 4; s++)
		cr_expect_eq(arr(0, s, 2), MSGA__REPAIR_LATE);
	cr_expect_eq(arr(0, 11, 3), MSGA__REPAIR_DELIVER);
	expect_none(0);
}

Test(repair_ooo, over_max_gaps_the_oldest_missing_is_lost)
{
	uint64_t s = 1;

	arr(0, s, 0);
	for (unsigned int i = 0; i < 8; i++) { /* max_gaps ranges of one */
		s += 2;
		arr(0, s, i);
	}
	cr_expect_eq(msga__repair_ranges(&r, 0), 8);
	s += 2;
	cr_assert_eq(arr(0, s, 100), MSGA__REPAIR_DELIVER);
	expect_loss(0, 2, 1);
	expect_none(0);
	cr_expect_eq(r.c.over_max_gaps, 1);
	cr_expect_eq(arr(0, 4, 101), MSGA__REPAIR_LATE, "the others wait");
}

Test(repair_ooo, without_pops_a_full_stream_refuses_then_recovers)
{
	uint64_t s = 1, refused;
	struct msga__repair_item it;
	uint64_t lost = 0;

	arr(0, s, 0);
	/* a caller that never pops: given-up ranges pile up to the room */
	while (!r.c.refused) {
		s += 2;
		arr(0, s, s);
		cr_assert_lt(s, 1000, "never full");
	}
	refused = s; /* neither delivered nor in a range */
	cr_expect_eq(msga__repair_ranges(&r, 0), 2 * 8 + 2);
	while (msga__repair_pop(&r, 0, &it))
		lost += it.count;
	cr_expect_eq(lost, 2 * 8 + 2 - 8, "beside the 8 missing, each once");
	/* the refused number is in the next range: asked for, repaired */
	cr_assert_eq(arr(0, s + 1, s + 1), MSGA__REPAIR_DELIVER);
	tick(s + 1 + DELAY);
	cr_expect(naked(0, refused - 1, 2), "the missing and the refused");
	cr_expect_eq(arr(0, refused, s + 2), MSGA__REPAIR_LATE);
}
