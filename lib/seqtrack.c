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
 * Advance the expectation from t->next to new_next, clearing the bits of
 * the numbers that enter the window as "not arrived". A jump of a whole
 * window or more clears everything.
 */
static void advance(struct msga__seqtrack *t, uint64_t new_next)
{
	if (new_next - t->next >= MSGA__SEQ_WINDOW) {
		memset(t->seen, 0, sizeof(t->seen));
	} else {
		for (uint64_t s = t->next; s < new_next; s++)
			*word_of(t, s) &= ~bit_of(s);
	}
	t->next = new_next;
}

enum msga__seq_verdict msga__seq_accept(struct msga__seqtrack *t, uint64_t seq,
					uint64_t *missing)
{
	if (seq == 0)
		return MSGA__SEQ_INVALID;
	if (t->next == 0) /* first message: join at the live position */
		t->next = t->first = seq;
	if (seq < t->first) {
		t->c.before_join++;
		return MSGA__SEQ_BEFORE_JOIN;
	}
	if (seq == t->next) {
		advance(t, seq + 1);
		mark_seen(t, seq);
		t->c.delivered++;
		return MSGA__SEQ_NEXT;
	}
	if (seq > t->next) {
		uint64_t skipped = seq - t->next;

		advance(t, seq + 1);
		mark_seen(t, seq);
		t->c.delivered++;
		t->c.gaps++;
		t->c.missing += skipped;
		if (missing)
			*missing = skipped;
		return MSGA__SEQ_GAP;
	}
	/* seq < next: inside the window it is a duplicate or a late fill. */
	if (t->next - seq > MSGA__SEQ_WINDOW || was_seen(t, seq)) {
		t->c.dups++;
		return MSGA__SEQ_DUP;
	}
	mark_seen(t, seq);
	t->c.delivered++;
	t->c.late++;
	t->c.missing--;
	return MSGA__SEQ_LATE;
}
