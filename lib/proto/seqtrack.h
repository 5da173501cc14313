/* SPDX-License-Identifier: MIT */
/*
 * seqtrack.h - per-stream sequence tracking for loss-visible transports
 * (UD unicast and multicast). Every publisher stream numbers its messages
 * 1, 2, 3, ...; a subscriber feeds each arriving number in and learns
 * whether it is the next one, opens a gap, repeats one already seen, or
 * fills an earlier gap late (reordering). Pure logic: no verbs, no I/O.
 *
 * A late joiner starts at the live position: the first number it sees
 * sets the expectation, and nothing before it counts as lost.
 *
 * A window of the last MSGA__SEQ_WINDOW numbers remembers which arrived,
 * so a number below the expectation is told apart as a duplicate (seen
 * before) or a late arrival (inside a gap already reported). Older than
 * the window, it is counted as a duplicate: it cannot be told apart, and
 * it is not delivered again either way.
 *
 * Numbers never wrap: 1 .. UINT64_MAX, and UINT64_MAX is a stream's last
 * number (at a billion messages a second, 584 years away). After it
 * nothing is new: every number is a duplicate, a late fill of a gap, or
 * from before the join, so no number is delivered twice, and the tracker
 * never returns to "not joined". A publisher that got there would start
 * a new stream (a new origin id).
 */
#ifndef MSGA_SEQTRACK_H
#define MSGA_SEQTRACK_H

#include <stdint.h>

#define MSGA__SEQ_WINDOW 1024u /* a power of two */

enum msga__seq_verdict {
	MSGA__SEQ_NEXT = 0,  /* the expected number: deliver */
	MSGA__SEQ_GAP = 1,   /* ahead: *missing numbers were skipped; deliver */
	MSGA__SEQ_DUP = 2,   /* seen before (or too old to tell): drop */
	MSGA__SEQ_LATE = 3,  /* fills part of an earlier gap: deliver (reorder) */
	MSGA__SEQ_INVALID = 4, /* 0 is never a valid sequence number: drop */
	MSGA__SEQ_BEFORE_JOIN = 5, /* older than our first message: drop */
};

struct msga__seq_counters {
	uint64_t delivered;  /* NEXT + GAP + LATE */
	uint64_t gaps;       /* gap events */
	uint64_t missing;    /* numbers skipped by gaps, less late fills */
	uint64_t dups;
	uint64_t late;       /* reordered arrivals that filled a gap */
	uint64_t before_join; /* arrived late from before we joined */
};

struct msga__seqtrack {
	/*
	 * The highest number delivered; 0 before the first message. The
	 * next expected is last + 1, which is not kept: it would wrap.
	 */
	uint64_t last;
	uint64_t first;      /* the first number seen: where we joined */
	uint64_t seen[MSGA__SEQ_WINDOW / 64]; /* arrival bits of (last-W, last] */
	struct msga__seq_counters c;
};

void msga__seq_init(struct msga__seqtrack *t);

/*
 * Account for arriving sequence number seq. For MSGA__SEQ_GAP, *missing
 * (if not NULL) gets how many numbers were skipped.
 */
enum msga__seq_verdict msga__seq_accept(struct msga__seqtrack *t, uint64_t seq,
					uint64_t *missing);

/*
 * The publisher says (a heartbeat, an end of stream) that it has sent
 * every number up to last_sent. Returns how many of them had not arrived
 * (a tail gap: counted, and *first_missing set to the first of them) or
 * 0. A tracker that has not joined joins here: last_sent is its live
 * position, nothing before it is lost, and last_sent + 1 is the next. A
 * number inside the gap that arrives later is LATE, as for any gap.
 */
uint64_t msga__seq_advance(struct msga__seqtrack *t, uint64_t last_sent,
			   uint64_t *first_missing);

/*
 * The far-ahead guard (issue 26): a datagram's sequence number is only
 * its sender's word, and on UD anyone who knows the Q_Key may send one.
 * A number far ahead of what the stream has confirmed would move the
 * tracker there, and every real number behind it, older than the window,
 * would then be a "duplicate" and dropped: one forged datagram would
 * blackhole the stream. So a datagram that would open a gap larger than
 * allowed is not acted on: it is held (as a number, not its payload) as
 * a candidate and dropped, and the stream moves there only when another
 * datagram corroborates it: the next number (candidate + 1), or a
 * heartbeat that covers it (candidate <= hb <= candidate + allowed + 1).
 *
 * allowed is the largest gap one datagram may open on its own word. Up to
 * MSGA__SEQ_WINDOW - 1 the damage of a forged number is bounded: the real
 * numbers behind it are still inside the window, told apart as late fills
 * and delivered, so a forgery costs a spurious GAP and REORDERs, no
 * message. Beyond the window they could not be told apart, hence the
 * bound. Where any gap has a cost of its own (MSGA_SUB_STOP_ON_GAP ends
 * the membership) allowed is 0: every gap is corroborated first. A real
 * burst loss larger than allowed costs one more number (the first after
 * it, held and dropped, then reported inside the gap); in-order traffic
 * is never held.
 *
 * A heartbeat's number says "sent up to here": the gap it opens is
 * hb - top; a data number's, seq - top - 1.
 */
struct msga__seqguard {
	uint64_t top;        /* highest number taken; 0 before the first */
	uint64_t cand;       /* a far-ahead number held; 0 none */
	uint32_t confirms;   /* datagrams that agreed with the stream (<= 255) */
	uint64_t far_ahead;  /* datagrams held back (dropped) */
};

enum msga__guard_verdict {
	MSGA__GUARD_PASS = 0,  /* act on it (the tracker decides the rest) */
	MSGA__GUARD_HOLD = 1,  /* far ahead, not corroborated: drop it */
};

/* hb: seq is a heartbeat's (or an END's) "sent up to", not a message. */
enum msga__guard_verdict msga__seq_guard(struct msga__seqguard *g,
					 uint64_t seq, int hb,
					 uint64_t allowed);

#endif
