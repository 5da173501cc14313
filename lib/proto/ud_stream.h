/* SPDX-License-Identifier: MIT */
/*
 * ud_stream.h - a subscriber's table of multicast streams. A stream is one
 * publisher's (origin id) one topic; each has its sequence tracker and its
 * counters. Open addressing over a fixed array, so a lookup on the receive
 * path costs a hash and usually one compare, and memory is bounded. Pure
 * logic: no verbs.
 *
 * Streams are forgotten (evicted) so that the table does not fill with the
 * dead: when the table is full, the least recently heard stream goes if it
 * has been silent longer than idle_ns (a publisher restart leaves its old
 * origin's streams behind); and the owner evicts the streams of a
 * membership that ended, so a new membership starts with fresh sequence
 * state. An evicted stream's counters are kept in the table's totals, and
 * its index (its msga_sub_stream_stats index and topic_id) is free for the
 * next new stream. When the table is full of live streams a new stream is
 * refused: msga__ustreams_get returns NULL, and the owner counts its
 * datagrams and raises one event per such stream.
 *
 * Probation (issue 26): a stream is first heard from one datagram, whose
 * origin anyone may forge. With a probation pool (pmax > 0), a new stream
 * is unverified and lives among at most pmax unverified streams, the
 * least recently heard of which makes room for the next: a flood of
 * forged origins evicts only its own kind, never a verified stream, and
 * never fills the max places of the verified. The owner verifies a stream
 * (msga__ustreams_verify) once its datagrams agree (seqtrack.h's guard:
 * confirms); it then takes one of the max places (a free one, or the
 * oldest idle or ended verified stream's), keeping its index. A new
 * stream is refused, as before, only when the verified places are all
 * held by live streams: it could never be verified. Streams on probation
 * are watched for silence as the others are. With pmax 0 every stream is
 * verified at once (the table before issue 26).
 */
#ifndef MSGA_UD_STREAM_H
#define MSGA_UD_STREAM_H

#include <stdint.h>

#include "idx_lru.h"
#include "msgaccel.h"
#include "seqtrack.h"

struct msga__ustream {
	uint64_t origin;
	char topic[MSGA_TOPIC_MAX + 1];
	uint32_t conn_id;
	uint64_t bytes;
	uint64_t reasm_drops;
	uint64_t last_seq;
	struct msga__seqtrack seq;
	struct msga__seqguard guard;    /* the owner's: far-ahead numbers */
	int verified;                   /* off probation */
	uint64_t preasm_seq;            /* the owner's: reassembled apart */
	/*
	 * Liveness: a stream whose publisher sends heartbeats (its
	 * datagrams say how often) is reported gone after watch_ns of
	 * silence; 0: not watched (a publisher before 0.6). silent: it was
	 * reported, and is not again until it is heard from.
	 */
	uint64_t watch_ns;
	int silent;
	/* its publisher ended it: kept for its counters, first to go */
	int retired;
	/* the owner's: lost messages are recovered (repair.h) */
	int repaired;
	int nak_ok;                     /* its publisher answers NAKs */
	/* the owner's (0.12, MSGA_SUB_LAST_VALUE): the number its history
	 * of one starts at, flagged when it is the first delivered; 0 none */
	uint64_t lv_seq;
	uint64_t recovered, unrecoverable, naks, reads;
	/* table's own */
	int used;
	uint32_t hash;
	uint64_t last_ns;               /* last datagram */
	struct msga__idx_link lru;      /* on t->lru (verified) or t->plru;
					 * free: next free */
};

/* What evicted streams delivered and lost: totals never go back. */
struct msga__ustream_totals {
	uint64_t msgs, bytes, gaps, missing, dups, late, reasm_drops;
	uint64_t far_ahead;
};

struct msga__ustreams {
	struct msga__ustream *streams;  /* [0, top): used or free;
					 * max + pmax of them */
	uint32_t n;                     /* streams in use */
	uint32_t top;                   /* indexes ever used */
	uint32_t free_head;             /* 1 + index of a free one, 0 none */
	uint32_t *index;                /* hash -> 1 + index, 0 = empty */
	uint32_t index_size;            /* a power of two, >= 2 * max */
	uint32_t max;                   /* verified streams */
	uint32_t pmax;                  /* streams on probation */
	uint32_t nprob;                 /* streams on probation now */
	struct msga__idx_list lru;      /* verified: least recently heard first */
	struct msga__idx_list plru;     /* on probation: the same */
	uint64_t prob_evicted;          /* unverified, made room for another */
	uint64_t idle_ns;               /* 0: never evicted for silence */
	uint64_t evicted;
	struct msga__ustream_totals gone;
	uint64_t *refused;              /* hashes of refused streams */
	/* Told before a stream is evicted (its index is then reused). */
	void (*on_evict)(void *arg, uint32_t idx);
	void *evict_arg;
};

/* max verified streams and pmax on probation (0: none, see above). */
int msga__ustreams_init(struct msga__ustreams *t, uint32_t max,
			uint32_t pmax);
void msga__ustreams_fini(struct msga__ustreams *t);
/*
 * The stream of (origin, topic[0, topic_len)) heard at now_ns, added if
 * new (evicting the least recently heard if the table is full and it is
 * idle). NULL when it is new and the table is full of live streams.
 */
struct msga__ustream *msga__ustreams_get(struct msga__ustreams *t,
					 uint64_t origin, const char *topic,
					 uint32_t topic_len, uint32_t conn_id,
					 uint64_t now_ns);
/* The stream of (origin, topic[0, topic_len)) if the table has it. */
struct msga__ustream *msga__ustreams_find(struct msga__ustreams *t,
					  uint64_t origin, const char *topic,
					  uint32_t topic_len);
/*
 * A stream msga__ustreams_get refused: 1 the first time it is refused
 * (raise the event), 0 after. Remembered in a fixed table: a stream may be
 * told again after other refused streams took its place there.
 */
int msga__ustreams_refused_first(struct msga__ustreams *t, uint64_t origin,
				 const char *topic, uint32_t topic_len);
/*
 * A stream its publisher ended (an END): kept, for its counters, but never
 * reported silent, and the first to be evicted when the table needs room,
 * idle time or not. A late datagram of it (another line's copy) moves it
 * back among the heard, but it stays ended.
 */
void msga__ustreams_retire(struct msga__ustreams *t, struct msga__ustream *s);
/*
 * Take s off probation: 1 when it is (or was) verified, 0 when every
 * verified place is held by a live stream (it stays on probation).
 */
int msga__ustreams_verify(struct msga__ustreams *t, struct msga__ustream *s,
			  uint64_t now_ns);
/* Forget s; its counters go to the totals. */
void msga__ustreams_evict(struct msga__ustreams *t, struct msga__ustream *s);
/* Forget every stream of membership conn_id; returns how many. */
uint32_t msga__ustreams_evict_conn(struct msga__ustreams *t,
				   uint32_t conn_id);
/* Index of s (its msga_stream_stats index and topic_id). */
static inline uint32_t msga__ustreams_pos(const struct msga__ustreams *t,
					  const struct msga__ustream *s)
{
	return (uint32_t)(s - t->streams);
}
/* The stream at index idx, or NULL when none is there (now). */
const struct msga__ustream *msga__ustreams_at(const struct msga__ustreams *t,
					      uint32_t idx);
/*
 * What every stream ever in t delivered and lost: the evicted streams'
 * totals plus the live streams' counters (msga_sub_stats).
 */
void msga__ustreams_totals(const struct msga__ustreams *t,
			   struct msga__ustream_totals *all);

/*
 * Streams gone quiet: marks silent, and passes to on_silent, each watched
 * stream not yet reported whose last datagram is watch_ns or more before
 * now_ns. The walk goes from the least recently heard and stops at the
 * first stream heard within min_watch_ns, the shortest watch_ns any stream
 * has, so it costs only the streams silent that long. on_silent must not
 * evict. Returns how many it reported.
 */
uint32_t msga__ustreams_scan_silent(struct msga__ustreams *t, uint64_t now_ns,
				    uint64_t min_watch_ns,
				    void (*on_silent)(void *arg,
						      struct msga__ustream *s),
				    void *arg);

/*
 * The earliest time a stream not yet reported could go silent (UINT64_MAX:
 * none is watched), for the owner's timer. Walks from the least recently
 * heard until no later stream can be earlier: each one's limit is at
 * least min_watch_ns past its last datagram.
 */
uint64_t msga__ustreams_next_silence(const struct msga__ustreams *t,
				     uint64_t min_watch_ns);

void msga__ustream_stats(const struct msga__ustream *s,
			 struct msga_stream_stats *st);

#endif
