/* SPDX-License-Identifier: MIT */
/*
 * repair_sched.h - which repairs a multicast subscriber asks for, and in
 * what order, when a loss is larger than one READ or than one NAK round
 * (issue 35). Pure logic: no verbs, no clock (the caller passes the time),
 * fixed tables sized at init.
 *
 * How repair works before this file (0.8, b08df12), and why a 2 s stall
 * at full rate is lost:
 *  - repair.c opens one range per gap and, every MSGA__UD_NAK_RETRY_NS
 *    (20 ms), hands each range due to mcast_repair.c as one call, walking
 *    the streams in the fixed order of its `gapped` list.
 *  - mcast_repair.c tries READ first (mcast_read.c). A READ needs the
 *    range's span of the publisher's ring, remembered when the gap was
 *    seen: MSGA__UD_READ_SPANS (8) per stream, overwritten in turn, so a
 *    long patchy outage evicts the spans of its oldest gaps. One READ
 *    covers at most MSGA__UD_READ_MAX (64 KiB) of the ring, which holds
 *    every topic's records interleaved (about 1 000 messages of the
 *    issue's feed); MSGA__UD_READ_BATCHES (4) READs per publisher
 *    connection. A 2 s stall at 4 500-7 000 msg/s leaves one span of
 *    about 10 MiB per stream: over READ_MAX, so 0 READs and every range
 *    a READ fallback to NAK.
 *  - A NAK names up to 4 096 numbers. The publisher resends within
 *    MSGA__UD_RETX_BUDGET (256 datagrams per 10 ms, about 25 600/s, all
 *    subscribers together) and half its send buffers; the rest of a NAK,
 *    and any NAK arriving when the window is spent, is dropped and asked
 *    again 20 ms later. The first stream in the fixed order spends each
 *    window, the next gets the leftover, the third none: 4 761, 1 201
 *    and 0 of about 4 760 each in the issue.
 *  - A range is given up recovery_ms (1 s by default) after it opened,
 *    whatever progress is being made, and although the data is still in
 *    the publisher's retention: 8 323 of 20 000 reported lost. With
 *    10 s, NAK alone had time to finish.
 *
 * What this file decides instead:
 *  - READ by ring region, not by range. The caller adds the span of
 *    each gap (ring bytes [lo, hi)); spans of one publisher's ring are
 *    kept as a sorted, merged set of regions, so a READ serves every
 *    stream whose records lie there at once (the 3 topics of one stall
 *    share one region), and a long outage cannot run out of spans: when
 *    the table is full the two nearest idle regions are merged (reading
 *    the hole between costs bytes, never a loss).
 *  - Chunks, oldest first, pipelined. A region wider than chunk_max is
 *    read in chunks of at most chunk_max, lowest ring position first
 *    (oldest records, which delivery waits on), as many in flight as
 *    max_inflight allows. Records are not at known offsets inside a
 *    region, so successive chunks overlap by `overlap` (the largest
 *    record): a record that does not end inside one chunk starts inside
 *    the overlap and so lies whole in the next. Chunks complete in order
 *    on one RC queue pair; the walk of each resumes where the previous
 *    one stopped (msga__rsched_walk_from), so no record is taken twice
 *    or skipped.
 *  - A torn chunk (the writer passed it), a failed connection, or a
 *    region the publisher no longer retains is dropped from the schedule:
 *    its numbers are still missing in repair.c and go to NAK.
 *  - NAKs shared fairly: msga__rsched_share splits a round's NAK budget
 *    across the streams with gaps by max-min fair share (each stream
 *    gets what it wants or an equal share, leftovers one by one from a
 *    rotating start), and each stream asks for its oldest numbers first.
 *  - Give up on progress, not on age: msga__rsched_give_up keeps a range
 *    while the publisher still retains it and its stream repaired
 *    something within stall_ns; a latency bound (bound_ns, 0 none) still
 *    gives up at a fixed age for users who prefer it.
 *
 * lib/ud's wiring (0.9): one schedule per READ connection (mcast_read.c's
 * rconn: chunk_max READ_MAX or the ring's size, overlap
 * msga__retain_rec_size(MSGA_FRAG_MAX), max_inflight READ_BATCHES,
 * max_regions READ_REGIONS). msga__mread_note adds [end, rpos) of each
 * gap and pumps msga__rsched_next; a completed chunk is walked from
 * msga__rsched_walk_from with msga__retain_walk, each record handed to
 * whichever stream of that publisher its topic is, if repair.c says its
 * number is missing (msga__repair_missing); a head past the walk's start
 * is msga__rsched_retained (the region starts again at the head). A
 * range due a NAK waits while msga__rsched_low is below the end of its
 * stream's last scheduled span; the rest are NAKed with
 * msga__rsched_share over the streams due in the round, within a window
 * paced by what comes back (mcast_repair.c). repair.c runs with stall_ns
 * = recovery_ms and give_up_ns the bound (MSGA_SUB_RECOVERY_BOUND).
 */
#ifndef MSGA_REPAIR_SCHED_H
#define MSGA_REPAIR_SCHED_H

#include <stdint.h>

struct msga__rsched_cfg {
	uint64_t chunk_max;     /* bytes one READ may cover (64 KiB) */
	uint64_t overlap;       /* largest record: chunks overlap by it */
	uint32_t max_inflight;  /* READs in flight on the connection (4) */
	uint32_t max_regions;   /* regions kept; above max_inflight */
};

/* Ring bytes [lo, hi) to read; next: start of its next chunk. */
struct msga__rsched_region {
	uint64_t lo, hi, next;
	uint64_t walk;          /* where the next chunk's walk begins */
	uint32_t out;           /* chunks in flight */
	uint32_t gen;           /* names it for its chunks */
};

struct msga__rsched_chunk {
	uint64_t lo, hi;        /* ring bytes to READ */
	uint32_t gen;           /* its region's, 0: slot free */
	uint32_t first;         /* the region's first chunk: walk from lo */
};

struct msga__rsched {
	struct msga__rsched_cfg cfg;
	struct msga__rsched_region *reg; /* max_regions + 1, sorted by lo */
	uint32_t nreg;
	struct msga__rsched_chunk *ch;   /* max_inflight slots */
	uint32_t inflight;
	uint32_t next_gen;
	uint64_t merged;        /* regions merged for room (counter) */
	uint64_t dropped;       /* bytes dropped: torn, failed, not retained */
};

/*
 * 0; -EINVAL (chunk_max not above overlap, max_inflight 0, max_regions
 * not above max_inflight, or tables above 2^20 entries); -ENOMEM.
 */
int msga__rsched_init(struct msga__rsched *s, const struct msga__rsched_cfg *cfg);
void msga__rsched_fini(struct msga__rsched *s);

/*
 * Ring bytes [lo, hi) hold records to repair: 0 (the part not already
 * scheduled is added, merged with its neighbours, and when the table is
 * full the two nearest are merged); -EINVAL when lo >= hi; -ENOSPC, which
 * cannot happen while max_regions > max_inflight (init checks it), when
 * no two could be merged (the caller NAKs).
 */
int msga__rsched_add(struct msga__rsched *s, uint64_t lo, uint64_t hi);

/*
 * The next chunk to READ, oldest first: 1 and *id, *lo, *hi; 0 when
 * nothing is left or max_inflight chunks are out.
 */
int msga__rsched_next(struct msga__rsched *s, uint32_t *id, uint64_t *lo,
		      uint64_t *hi);

/*
 * Where the walk of chunk id, just completed, begins: 0 and *from in
 * [lo, hi]; -EINVAL for a chunk not out; -ESPIPE when the walk of the
 * chunk before it stopped short of this one's start (a bad record): this
 * chunk cannot be walked, call msga__rsched_fail and let NAK repair it.
 * -ENOENT when its region was dropped or started again meanwhile
 * (msga__rsched_fail, msga__rsched_retained): call msga__rsched_fail,
 * which only frees the chunk.
 * -EAGAIN when chunks of the same region before it are still out (they
 * complete in order on one queue pair: a caller bug, or another pair).
 */
int msga__rsched_walk_from(const struct msga__rsched *s, uint32_t id,
			   uint64_t *from);

/*
 * Chunk id was walked up to `stopped` (the end of its last whole record,
 * in [from, hi]): 0, or 1 when its region is done; -EINVAL for a chunk
 * not out or a stop outside it. A chunk of a dropped region: 0.
 */
int msga__rsched_done(struct msga__rsched *s, uint32_t id, uint64_t stopped);

/*
 * Chunk id is torn or its READ failed: its region is dropped (what it
 * still held goes to NAK); 0, -EINVAL for a chunk not out.
 */
int msga__rsched_fail(struct msga__rsched *s, uint32_t id);

/*
 * The publisher retains ring bytes from `oldest` on (a record's start):
 * what lies below is not read (its numbers are NAKed, and answered
 * LOST). A region that reaches above it starts again there, its chunks
 * out dropped when they complete (msga__rsched_walk_from: -ENOENT): what
 * they copied below oldest may be torn.
 */
void msga__rsched_retained(struct msga__rsched *s, uint64_t oldest);

/*
 * The lowest ring position not yet walked (UINT64_MAX: nothing is
 * scheduled): a number whose record lies below it and that is still
 * missing was not found by READ, and is for NAK.
 */
uint64_t msga__rsched_low(const struct msga__rsched *s);

/* Everything is dropped, chunks out included (the connection failed). */
void msga__rsched_clear(struct msga__rsched *s);

/* Bytes scheduled but not yet handed out in a chunk. */
uint64_t msga__rsched_pending(const struct msga__rsched *s);

/*
 * Max-min fair share of `budget` among n streams wanting want[i]:
 * grant[i] <= want[i], the sum at most budget, every stream not fully
 * served getting at least as much as any other (the leftover units one
 * each, from stream `start` on, so that rounds rotate who gets them).
 * Returns the sum granted; -EINVAL for n 0 or start >= n.
 */
int64_t msga__rsched_share(uint32_t n, const uint64_t *want, uint64_t budget,
			   uint32_t start, uint64_t *grant);

struct msga__rsched_giveup {
	uint64_t stall_ns;      /* no progress this long: give up (> 0) */
	uint64_t bound_ns;      /* open this long: give up; 0: no bound */
};

enum msga__rsched_verdict {
	MSGA__RSCHED_KEEP,
	MSGA__RSCHED_GONE,      /* the publisher's retention passed it */
	MSGA__RSCHED_STALLED,   /* no progress for stall_ns */
	MSGA__RSCHED_BOUND,     /* open bound_ns */
};

/*
 * Give up a range that opened at opened_ns, its stream last repaired a
 * number at progress_ns (0: never), its first number seq, the publisher's
 * oldest retained number of the stream retained_first (0: not known)?
 */
enum msga__rsched_verdict msga__rsched_give_up(
		const struct msga__rsched_giveup *g, uint64_t seq,
		uint64_t opened_ns, uint64_t progress_ns,
		uint64_t retained_first, uint64_t now_ns);

#endif
