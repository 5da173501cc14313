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

#endif
