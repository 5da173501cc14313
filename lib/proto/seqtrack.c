/* SPDX-License-Identifier: MIT */
/* seqtrack.c - see seqtrack.h. */
#include <string.h>

#include "seqtrack.h"

void msga__seq_init(struct msga__seqtrack *t)
{
	memset(t, 0, sizeof(*t));
}

static uint64_t *word_of(struct msga__seqtrack *t, uint64_t seq)
{
	return &t->seen[(seq % MSGA__SEQ_WINDOW) / 64];
}

static uint64_t bit_of(uint64_t seq)
{
	return 1ull << (seq % 64);
}

static void mark_seen(struct msga__seqtrack *t, uint64_t seq)
{
	*word_of(t, seq) |= bit_of(seq);
}

static int was_seen(struct msga__seqtrack *t, uint64_t seq)
{
	return (*word_of(t, seq) & bit_of(seq)) != 0;
}

/*
 * Move the highest delivered number from t->last up to new_last, clearing
 * the bits of the numbers that enter the window as "not arrived". Counted,
 * not compared against new_last + 1, which wraps at UINT64_MAX. A jump of
 * a whole window or more clears everything.
 */
static void advance(struct msga__seqtrack *t, uint64_t new_last)
{
	uint64_t n = new_last - t->last;

	if (n >= MSGA__SEQ_WINDOW)
		memset(t->seen, 0, sizeof(t->seen));
	else
		for (uint64_t s = t->last + 1; n--; s++)
			*word_of(t, s) &= ~bit_of(s);
	t->last = new_last;
	mark_seen(t, new_last);
}

enum msga__seq_verdict msga__seq_accept(struct msga__seqtrack *t, uint64_t seq,
					uint64_t *missing)
{
	uint64_t skipped;

	if (seq == 0)
		return MSGA__SEQ_INVALID;
	if (t->last == 0) { /* first message: join at the live position */
		t->first = t->last = seq;
		mark_seen(t, seq);
		t->c.delivered++;
		return MSGA__SEQ_NEXT;
	}
	if (seq < t->first) {
		t->c.before_join++;
		return MSGA__SEQ_BEFORE_JOIN;
	}
	if (seq > t->last) { /* ahead: seq - last - 1 cannot wrap */
		skipped = seq - t->last - 1;
		advance(t, seq);
		t->c.delivered++;
		if (!skipped)
			return MSGA__SEQ_NEXT;
		t->c.gaps++;
		t->c.missing += skipped;
		if (missing)
			*missing = skipped;
		return MSGA__SEQ_GAP;
	}
	/* seq <= last: inside the window it is a duplicate or a late fill. */
	if (t->last - seq >= MSGA__SEQ_WINDOW || was_seen(t, seq)) {
		t->c.dups++;
		return MSGA__SEQ_DUP;
	}
	mark_seen(t, seq);
	t->c.delivered++;
	t->c.late++;
	t->c.missing--;
	return MSGA__SEQ_LATE;
}

uint64_t msga__seq_advance(struct msga__seqtrack *t, uint64_t last_sent,
			   uint64_t *first_missing)
{
	uint64_t skipped;

	if (last_sent == 0)
		return 0;
	if (t->last == 0) { /* join at the position: the next is ours */
		t->last = last_sent;
		t->first = last_sent == UINT64_MAX ? last_sent : last_sent + 1;
		memset(t->seen, 0, sizeof(t->seen));
		mark_seen(t, last_sent); /* (before the join: never delivered) */
		return 0;
	}
	if (last_sent <= t->last)
		return 0;
	skipped = last_sent - t->last;
	if (first_missing)
		*first_missing = t->last + 1;
	advance(t, last_sent);
	/* advance() marks last_sent as arrived: it is not, it is missing */
	*word_of(t, last_sent) &= ~bit_of(last_sent);
	t->c.gaps++;
	t->c.missing += skipped;
	return skipped;
}

/* The gap a number opens past top: seq > top. */
static uint64_t gap_of(uint64_t top, uint64_t seq, int hb)
{
	return hb ? seq - top : seq - top - 1;
}

static int corroborates(const struct msga__seqguard *g, uint64_t seq, int hb,
			uint64_t allowed)
{
	if (!g->cand)
		return 0;
	if (!hb)
		return g->cand != UINT64_MAX && seq == g->cand + 1;
	return seq >= g->cand && seq - g->cand <= allowed + 1;
}

enum msga__guard_verdict msga__seq_guard(struct msga__seqguard *g,
					 uint64_t seq, int hb,
					 uint64_t allowed)
{
	if (!seq)
		return MSGA__GUARD_PASS; /* (the tracker refuses it) */
	if (!g->top) { /* the first: where the stream starts for us */
		g->top = seq;
		return MSGA__GUARD_PASS;
	}
	if (seq <= g->top) {
		if (hb && seq == g->top && g->confirms < 255)
			g->confirms++; /* a heartbeat of what we have */
		return MSGA__GUARD_PASS;
	}
	if (gap_of(g->top, seq, hb) <= allowed) {
		if (gap_of(g->top, seq, hb) == 0 && g->confirms < 255)
			g->confirms++; /* the next, or a heartbeat of it */
		g->top = seq;
		if (g->cand && g->cand <= seq)
			g->cand = 0; /* reached: it says nothing any more */
		return MSGA__GUARD_PASS;
	}
	if (corroborates(g, seq, hb, allowed)) {
		g->top = seq;
		g->cand = 0;
		return MSGA__GUARD_PASS;
	}
	g->cand = seq;
	g->far_ahead++;
	return MSGA__GUARD_HOLD;
}
