/* SPDX-License-Identifier: MIT */
/*
 * fuzz_seqtrack.c - the sequence tracker (lib/seqtrack.c) against a
 * reference model written here. A peer chooses every sequence number a
 * subscriber feeds in, so the input is a list of numbers: near the
 * highest seen (in order, small gaps, reordering, duplicates), anywhere,
 * or near UINT64_MAX. After each one the verdict, the gap size and every
 * counter must equal the model's.
 *
 * The model keeps every number delivered and the highest one, as a
 * 65-bit "next expected", and applies seqtrack.h's rules literally: 0 is
 * invalid; the first number is where we joined; below it is before the
 * join; the next expected is NEXT; above it is a GAP of the numbers in
 * between; below it, a number delivered before or more than the window
 * back is a DUP, any other fills a gap (LATE). UINT64_MAX is a stream's
 * last number: once delivered, the next expected is 2^64, which no number
 * reaches, so nothing is new again and nothing is delivered twice. The
 * tracker's own state must say the same: its "last" is the highest number
 * delivered (0 before the join) and its "first" where it joined.
 *
 * The peer also sends heartbeats and ENDs (msga__seq_advance): a kind
 * byte with its top bit set makes the number a last_sent instead. The
 * model: 0 says nothing; unjoined, last_sent is the live position (the
 * join is at last_sent + 1, or at UINT64_MAX itself, which has no next
 * and then reads as seen); else every number from the next expected up
 * to last_sent is one gap, and the next expected is last_sent + 1. So
 * "last" is then the highest number accounted for, delivered or lost.
 * Beyond the model: every number a gap skipped is still missing or came
 * late (missing never underflows), a heartbeat delivers nothing, and
 * delivered is exactly the NEXT, GAP and LATE verdicts.
 *
 * The far-ahead guard (msga__seq_guard, 0.8) sees the same numbers, with
 * an allowed gap the input picks (0, as under MSGA_SUB_STOP_ON_GAP, or
 * the window's): it holds a number only when it would open a gap larger
 * than allowed; what passes past that was corroborated by the candidate
 * held before it (the next number, or a heartbeat covering it); its top
 * is the highest number passed, and far_ahead counts the holds.
 */
#include <string.h>

#include "seqtrack.h"
#include "fuzz.h"

#define MAX_OPS 4096

struct model {
	int joined;
	uint64_t first;
	unsigned __int128 next;
	struct msga__seq_counters c;
	uint64_t seen[2 * MAX_OPS]; /* open addressing, 0 = empty */
};

static uint64_t *slot_of(struct model *m, uint64_t seq)
{
	size_t i = (size_t)((seq * 0x9e3779b97f4a7c15ull) >> 51) %
		   (2 * MAX_OPS);

	while (m->seen[i] && m->seen[i] != seq)
		i = (i + 1) % (2 * MAX_OPS);
	return &m->seen[i];
}

static enum msga__seq_verdict model_accept(struct model *m, uint64_t seq,
					   uint64_t *missing)
{
	if (!seq)
		return MSGA__SEQ_INVALID;
	if (!m->joined) {
		m->joined = 1;
		m->first = seq;
		m->next = seq;
	}
	if (seq < m->first) {
		m->c.before_join++;
		return MSGA__SEQ_BEFORE_JOIN;
	}
	if (seq >= m->next) {
		enum msga__seq_verdict v = seq == m->next ? MSGA__SEQ_NEXT :
							    MSGA__SEQ_GAP;

		*missing = (uint64_t)(seq - m->next);
		m->next = (unsigned __int128)seq + 1;
		*slot_of(m, seq) = seq;
		m->c.delivered++;
		if (v == MSGA__SEQ_GAP) {
			m->c.gaps++;
			m->c.missing += *missing;
		}
		return v;
	}
	if (m->next - seq > MSGA__SEQ_WINDOW || *slot_of(m, seq)) {
		m->c.dups++;
		return MSGA__SEQ_DUP;
	}
	*slot_of(m, seq) = seq;
	m->c.delivered++;
	m->c.late++;
	m->c.missing--;
	return MSGA__SEQ_LATE;
}

static uint64_t model_advance(struct model *m, uint64_t last_sent,
			      uint64_t *first_missing)
{
	uint64_t skipped;

	if (!last_sent)
		return 0;
	if (!m->joined) {
		m->joined = 1;
		m->first = last_sent == UINT64_MAX ? last_sent : last_sent + 1;
		m->next = (unsigned __int128)last_sent + 1;
		*slot_of(m, last_sent) = last_sent;
		return 0;
	}
	if (last_sent < m->next)
		return 0;
	skipped = (uint64_t)(last_sent + 1 - m->next);
	*first_missing = (uint64_t)m->next;
	m->next = (unsigned __int128)last_sent + 1;
	m->c.gaps++;
	m->c.missing += skipped;
	return skipped;
}

/* The next number the peer sends, chosen by the input. */
static uint64_t next_seq(struct fuzz_in *in, const struct model *m,
			 uint8_t kind)
{
	uint64_t base = m->next > UINT64_MAX ? UINT64_MAX : (uint64_t)m->next;
	int8_t delta = (int8_t)fuzz_u8(in);

	switch (kind % 8) {
	case 0:
		return fuzz_u64(in);               /* anywhere */
	case 1:
		return UINT64_MAX - (uint8_t)delta; /* the top of the range */
	case 2:
		return base - fuzz_u16(in);         /* older, maybe past W */
	case 3:
		return (uint8_t)delta;              /* from the bottom */
	default:
		return base + (uint64_t)(int64_t)delta; /* around next */
	}
}

/* An arriving number: the verdict, the gap, the counters. */
static void accept(struct msga__seqtrack *t, struct model *m, uint64_t seq,
		   uint64_t *opened, uint64_t *delivered)
{
	uint64_t got = 0, want = 0;
	enum msga__seq_verdict v = msga__seq_accept(t, seq, &got);

	FUZZ_CHECK(v == model_accept(m, seq, &want));
	if (v == MSGA__SEQ_GAP) {
		FUZZ_CHECK(got == want);
		*opened += got;
	}
	if (v == MSGA__SEQ_NEXT || v == MSGA__SEQ_GAP || v == MSGA__SEQ_LATE)
		++*delivered;
}

/* A heartbeat or an END: the tail gap it shows, and nothing else. */
static void advance(struct msga__seqtrack *t, struct model *m,
		    uint64_t last_sent, uint64_t *opened)
{
	const uint64_t untouched = 0x5eedull;
	uint64_t got_first = untouched, want_first = untouched, n;
	struct msga__seq_counters before = t->c;

	n = msga__seq_advance(t, last_sent, &got_first);
	FUZZ_CHECK(n == model_advance(m, last_sent, &want_first));
	FUZZ_CHECK(got_first == want_first);
	if (n)
		FUZZ_CHECK(got_first && got_first + (n - 1) == last_sent);
	*opened += n;
	FUZZ_CHECK(t->c.delivered == before.delivered &&
		   t->c.dups == before.dups && t->c.late == before.late &&
		   t->c.before_join == before.before_join);
	FUZZ_CHECK(t->c.gaps == before.gaps + (n != 0));
}

/* One number through the guard, checked against seqtrack.h's rules. */
static void guard_step(struct msga__seqguard *g, uint64_t seq, int hb,
		       uint64_t allowed, uint64_t *holds)
{
	struct msga__seqguard was = *g;
	enum msga__guard_verdict v = msga__seq_guard(g, seq, hb, allowed);
	uint64_t gap = 0;

	if (was.top && seq > was.top)
		gap = hb ? seq - was.top : seq - was.top - 1;
	if (v == MSGA__GUARD_HOLD) {
		FUZZ_CHECK(was.top && seq > was.top && gap > allowed);
		FUZZ_CHECK(g->top == was.top && g->cand == seq);
		++*holds;
	} else if (!seq) {
		FUZZ_CHECK(g->top == was.top);
	} else {
		FUZZ_CHECK(g->top == (seq > was.top ? seq : was.top));
		if (gap > allowed) /* corroborated by the candidate */
			FUZZ_CHECK(was.cand &&
				   (hb ? seq >= was.cand &&
					 seq - was.cand <= allowed + 1 :
					 seq - 1 == was.cand));
	}
	FUZZ_CHECK(g->far_ahead == *holds);
	FUZZ_CHECK(!g->cand || g->cand > g->top);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct model m;
	struct fuzz_in in = { data, size };
	struct msga__seqtrack t;
	struct msga__seqguard g = { 0 };
	uint64_t holds = 0, allowed = size & 1 ? 0 : MSGA__SEQ_WINDOW - 1;
	/* numbers skipped by gaps (< 2^64: each is skipped once) */
	uint64_t opened = 0, delivered = 0;

	memset(&m, 0, sizeof(m));
	msga__seq_init(&t);
	for (unsigned int op = 0; op < MAX_OPS && fuzz_left(&in); op++) {
		uint8_t kind = fuzz_u8(&in);
		uint64_t seq = next_seq(&in, &m, kind);

		guard_step(&g, seq, (kind & 0x80) != 0, allowed, &holds);
		if (kind & 0x80)
			advance(&t, &m, seq, &opened);
		else
			accept(&t, &m, seq, &opened, &delivered);
		FUZZ_CHECK(!memcmp(&t.c, &m.c, sizeof(m.c)));
		FUZZ_CHECK(t.last == (m.joined ? (uint64_t)(m.next - 1) : 0));
		FUZZ_CHECK(t.first == (m.joined ? m.first : 0));
		/* each skipped number is still missing or came late */
		FUZZ_CHECK(t.c.missing <= opened && t.c.late <= opened &&
			   t.c.missing + t.c.late == opened);
		FUZZ_CHECK(t.c.delivered == delivered);
	}
	return 0;
}
