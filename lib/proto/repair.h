/* SPDX-License-Identifier: MIT */
/*
 * repair.h - NAK-based loss recovery for a multicast subscriber. Each
 * stream (one publisher's one topic, indexed 0..max_streams-1 by the
 * caller) numbers its messages 1, 2, 3, ...; when a number is missing the
 * subscriber asks the publisher to send it again (a NAK) and holds the
 * later messages back meanwhile, so that the application still gets every
 * message once and in order. Pure logic: no verbs, no I/O, no clock (the
 * caller passes the time).
 *
 * What the application gets, per stream, from the start number on: every
 * number exactly once, in increasing order, either as a message (arrive()
 * said DELIVER, or pop() handed out a held copy) or inside exactly one
 * LOSS item [seq, seq + count) from pop(). The delivery point only moves
 * forward: a number at or below it is DROPped whenever it arrives again,
 * and so is a number already held or given up. Numbers are 64-bit and
 * never wrap: UINT64_MAX is a stream's last, after it everything is DROP.
 *
 * Each number above the delivery point, up to the highest one accounted
 * for (arrived, or said sent by the publisher), is exactly one of:
 *  - held: a copy waits for the numbers before it;
 *  - missing: in a gap range, NAKed. A range opens when a number beyond
 *    the highest arrives (the numbers between) or when the publisher says
 *    it sent more than arrived (msga__repair_sent: a lost tail). Its first
 *    NAK goes after a random delay in [0, nak_delay_ns], drawn per range,
 *    so that the many subscribers that missed the same datagram do not
 *    all NAK at once; then every nak_retry_ns. A tick NAKs every range
 *    due, each as one call. A NAK names only missing numbers: a number
 *    that arrives leaves its range (splitting it if inside) and is never
 *    NAKed again;
 *  - given up: it will come out inside a LOSS item, once the numbers
 *    before it have been handed out. A range is given up when the
 *    publisher says it can no longer send it (msga__repair_gone: only
 *    the numbers still missing, nothing beyond the highest accounted for,
 *    which may still be in flight), when it has been open give_up_ns
 *    (counted from when its numbers were first missed: a range split by
 *    a repair keeps its age; with cfg.stall_ns, also when its stream
 *    repaired nothing for stall_ns, give_up_ns then being only the
 *    latency bound), when the stream would need more than
 *    max_gaps ranges (the oldest is given up first), and for memory
 *    (below). Given-up ranges still count against max_gaps until the
 *    numbers before them are handed out (they need a place to be kept);
 *    adjacent given-up numbers make one LOSS item.
 *
 * Memory: held copies live in one pool of max_bytes allocated at init (a
 * binary buddy allocator: a copy takes the smallest power-of-two block,
 * at least 64 bytes, that holds a 32-byte header and the message), plus
 * max_bytes / 64 bytes of block map and fixed state per stream (its
 * max_gaps ranges included). Nothing is allocated after init. A copy that
 * does not fit is not held: the message counts as not arrived, so its
 * number stays (or becomes) missing and is NAKed again (verdict DROP),
 * and the subscriber's oldest ranges, whichever stream they are on, are
 * given up one after the other until the copies made ready by it (freed
 * when popped) and the free bytes together are at least the copy's
 * block, or no range is left. So nothing is dropped without a LOSS item
 * (a refused number is repaired later or given up as any missing one),
 * and once the caller has popped, the next copy fits, fragmentation
 * aside; if it does not, the next refusal gives up more. The message
 * that is next in order never needs a copy (DELIVER in place), so the
 * front always moves; a message bigger than the largest block is never
 * held (it comes through only in order, or is given up).
 *
 * Hot path: arrive() of the next number with nothing held or missing on
 * its stream is a few compares, and touches no allocator and no list.
 * The caller pops the streams with something to hand out
 * (msga__repair_next_ready) after arrive, sent, gone and tick.
 *
 * Out of order (cfg.out_of_order, every stream of the instance): nothing
 * is held. Every number is DELIVERed when it arrives, past ranges still
 * missing; a missing number that arrives later is LATE when a higher one
 * was delivered before it (DELIVER otherwise). Ranges are opened, NAKed
 * and given up as above, and a given-up range is a LOSS item to pop at
 * once, not after the numbers before it: each number still comes out
 * exactly once, as a message or inside one LOSS item, but not in order.
 * The pool is unused (max_bytes may be 64). A given-up range waits in its
 * stream's ranges until popped, beside at most max_gaps missing ones (a
 * stream has room for 2 * max_gaps + 2, so a caller that pops after each
 * call never runs out); when the caller has not popped and the room is
 * full, a number that would need a new range is refused (DROP, left
 * unaccounted for, so the next range opened takes it in and NAKs it).
 *
 * Recovery latency: each missing number that arrives and is accepted
 * (DELIVER, HELD or LATE) counts, in c.hist, the time from when it was
 * first missed (its range's opened_ns) to now, in buckets of powers of
 * two microseconds (msga__repair_hist_bucket).
 */
#ifndef MSGA_REPAIR_H
#define MSGA_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "idx_lru.h"

struct msga__repair_cfg {
	size_t max_bytes;          /* the pool of held copies, all streams */
	uint32_t max_streams;
	uint32_t max_gaps;         /* ranges per stream, e.g. 64 */
	uint64_t give_up_ns;       /* a range open this long is lost */
	/*
	 * 0: as 0.8, give_up_ns from a range's opening. Else (issue 35) a
	 * range is given up when its stream has repaired nothing for
	 * stall_ns (counted from the later of its opening and the stream's
	 * last repair), and give_up_ns is the latency bound on top (set it
	 * to UINT64_MAX for none): a long outage repaired at a steady pace
	 * is not given up (repair_sched.h, msga__rsched_give_up).
	 */
	uint64_t stall_ns;
	uint64_t nak_delay_ns;     /* first NAK: random in [0, nak_delay_ns] */
	uint64_t nak_retry_ns;     /* then again every nak_retry_ns */
	uint32_t seed;             /* for the random delays */
	int out_of_order;          /* deliver past gaps, hold nothing (above) */
};

/* A stream's range of numbers missing or given up, first..last. */
struct msga__repair_gap {
	uint64_t first, last;      /* inclusive: last + 1 may not exist */
	uint64_t opened_ns;        /* its numbers were first missed then */
	uint64_t nak_ns;           /* next NAK */
	uint32_t succ;             /* first held copy after it: pool pos, 0 none */
	uint32_t gone;             /* given up, behind a range still missing */
};

/* A held copy's header, at the start of its pool block; the message follows. */
struct msga__repair_held {
	uint64_t seq;
	uint64_t lost_before;      /* a LOSS of the numbers just before it first */
	uint32_t len;
	uint32_t prev, next;       /* its stream's copies in seq order: pos, 0 none */
	uint32_t unused;
};

struct msga__repair_stream {
	uint64_t out;              /* highest number handed out (start - 1) */
	uint64_t last;             /* highest accounted for: out <= last */
	/*
	 * Given-up numbers after every ready copy, just before the first
	 * range still missing (or up to last): the last LOSS item to pop.
	 */
	uint64_t lost_first, lost_last;
	uint64_t ready_bytes;      /* blocks of the copies ready to pop */
	uint32_t head, tail;       /* held copies, in seq order: pool pos */
	uint32_t unready;          /* first copy behind a missing range, 0 none */
	uint32_t ngaps;            /* gaps[0, ngaps), in seq order */
	/* max_gaps; gaps[0] is never gone, but out of order: gap_cap */
	struct msga__repair_gap *gaps;
	uint32_t ngone;            /* out of order: gone ranges, to pop */
	uint64_t top;              /* out of order: highest DELIVERed past a range */
	struct msga__idx_link gapped_link; /* on r->gapped while ngaps */
	struct msga__idx_link ready_link;  /* on r->ready while poppable */
	uint64_t progress_ns;      /* a missing number last taken (stall_ns) */
	uint8_t active, on_gapped, on_ready, has_lost;
};

/* Recovery latency buckets: msga__repair_hist_bucket. */
#define MSGA__REPAIR_HIST_BUCKETS 24

struct msga__repair_counters {
	uint64_t delivered;        /* DELIVER verdicts */
	uint64_t late;             /* LATE verdicts (out of order) */
	uint64_t held;             /* HELD verdicts */
	uint64_t dropped;          /* DROP verdicts (refused included) */
	uint64_t refused;          /* copies that found no room: left missing */
	uint64_t popped;           /* held messages handed out */
	uint64_t loss_items;       /* LOSS items handed out */
	uint64_t lost;             /* numbers in them */
	uint64_t gaps;             /* ranges opened */
	uint64_t naks;             /* NAK calls */
	/* ranges given up, by cause */
	uint64_t gone, timed_out, over_max_gaps, over_memory;
	/* missing numbers accepted, by how long they were missing */
	uint64_t hist[MSGA__REPAIR_HIST_BUCKETS];
};

#define MSGA__REPAIR_ORDERS 32 /* pool blocks of 64 << 0..31 bytes */

struct msga__repair {
	struct msga__repair_cfg cfg;
	struct msga__repair_stream *streams;
	struct msga__repair_gap *gap_mem;
	/* The pool: blocks are named by pos, 1 + index of 64-byte unit. */
	uint8_t *arena;
	uint8_t *map;              /* per 64-byte unit: a block's order, state */
	uint32_t nunits;
	uint32_t max_order;
	uint32_t gap_cap;          /* ranges a stream has room for */
	uint32_t free_head[MSGA__REPAIR_ORDERS];
	size_t free_bytes;
	uint64_t ready_bytes;      /* all streams' */
	uint32_t defer;            /* popped copy, freed at the next call */
	uint64_t rng;
	struct msga__idx_list gapped; /* streams with ranges */
	struct msga__idx_list ready;  /* streams with something to pop */
	struct msga__repair_counters c;
};

/*
 * 0, -EINVAL (max_streams, max_gaps, give_up_ns or nak_retry_ns 0,
 * max_bytes below 64 or above 128 GiB) or -ENOMEM.
 */
int msga__repair_init(struct msga__repair *r, const struct msga__repair_cfg *cfg);
void msga__repair_fini(struct msga__repair *r);
/*
 * Stream idx starts; next_seq is the first number it will deliver (0 is
 * no number: 1). A started stream starts again from scratch.
 */
void msga__repair_start(struct msga__repair *r, uint32_t idx, uint64_t next_seq);
/* Stream idx is forgotten: its held copies freed, its ranges dropped silently. */
void msga__repair_forget(struct msga__repair *r, uint32_t idx);
/* 1 if stream idx is started. */
int msga__repair_active(const struct msga__repair *r, uint32_t idx);

enum msga__repair_verdict {
	MSGA__REPAIR_DELIVER,   /* the next in order: deliver it now, in place; then drain with msga__repair_pop */
	MSGA__REPAIR_HELD,      /* copied and held; it will come out of pop */
	MSGA__REPAIR_DROP,      /* delivered already, held already, given up on,
				 * no room (its number is NAKed again), 0, or a
				 * stream not started: drop */
	MSGA__REPAIR_LATE,      /* out of order only: a missing number, after a
				 * higher one: deliver it now, in place, flagged;
				 * then drain */
};

/*
 * Message seq of stream idx arrived (live or a retransmission), len bytes,
 * at now_ns. A seq beyond the highest accounted for opens a range for the
 * numbers between. DELIVER and HELD may make copies ready to pop.
 */
enum msga__repair_verdict msga__repair_arrive(struct msga__repair *r, uint32_t idx,
		uint64_t seq, const void *data, uint32_t len, uint64_t now_ns);
/*
 * The publisher says it has sent every number up to last (a heartbeat):
 * those not yet accounted for become a range (a lost tail).
 */
void msga__repair_sent(struct msga__repair *r, uint32_t idx, uint64_t last, uint64_t now_ns);
/*
 * The publisher says [seq, seq + count) can no longer be sent: the numbers
 * of it still missing are given up now (count 0: none; the range is cut
 * at UINT64_MAX).
 */
void msga__repair_gone(struct msga__repair *r, uint32_t idx, uint64_t seq, uint64_t count);

struct msga__repair_item {
	int loss;                  /* 1: a LOSS of [seq, seq+count); 0: a held message */
	uint64_t seq, count;       /* count 1 for a message; seq + count may be 2^64 */
	const void *data;          /* held message: valid until the next call on r */
	uint32_t len;
};

/* The next thing stream idx hands to the application in order: 1 and *it, or 0. */
int msga__repair_pop(struct msga__repair *r, uint32_t idx, struct msga__repair_item *it);
/*
 * A stream with something to pop (1 and *idx; the one waiting longest), or
 * 0. Pop it until pop returns 0, then ask again.
 */
int msga__repair_next_ready(const struct msga__repair *r, uint32_t *idx);

/*
 * Timers at now_ns: for each range due a NAK, nak(arg, idx, seq, count) (it
 * must not call into r); ranges open give_up_ns or longer are given up
 * (then pop). Returns when the next is due (UINT64_MAX: nothing).
 */
uint64_t msga__repair_tick(struct msga__repair *r, uint64_t now_ns,
		void (*nak)(void *arg, uint32_t idx, uint64_t seq, uint64_t count),
		void *arg);
/* When msga__repair_tick next has something to do (UINT64_MAX: nothing). */
uint64_t msga__repair_next_due(const struct msga__repair *r);

/* The pool block a copy of len bytes takes (0: bigger than any block). */
size_t msga__repair_copy_size(const struct msga__repair *r, uint32_t len);
/*
 * The recovery latency bucket of a repair that took ns: i such that it
 * took less than 2^i microseconds and at least 2^(i-1) (0: under 1 us),
 * the last bucket taking everything longer.
 */
unsigned int msga__repair_hist_bucket(uint64_t ns);
/*
 * 1 if number seq of stream idx is missing (in a range not given up):
 * one a repair would be taken for. 0 otherwise, or for a stream not
 * started. For a reader of the publisher's ring (mcast_read.c), which
 * sees many numbers and hands on only those.
 */
int msga__repair_missing(const struct msga__repair *r, uint32_t idx, uint64_t seq);
/* Ranges of stream idx now, missing or given up but not yet handed out. */
uint32_t msga__repair_ranges(const struct msga__repair *r, uint32_t idx);

#endif
