/* SPDX-License-Identifier: MIT */
/* tres_sched.c - see tres_sched.h. */
#include <errno.h>

#include "backoff.h"
#include "tres_sched.h"

#define NS_PER_S 1000000000ull
/* Bounds that keep the budget's arithmetic inside 64 bits. */
#define BURST_MAX (1ull << 30)
#define RATE_MAX (1ull << 30)

const struct msga__tres_timing msga__tres_defaults = {
	.initial_min_ns = 10000000ull,
	.initial_max_ns = 500000000ull,
	.initial_ns = 5 * NS_PER_S,
	.sustain_ns = NS_PER_S,
	.answer_max_ns = 50000000ull,
	.bytes_per_s = 256u << 10,
	.burst = 64u << 10,
};

int msga__tres_timing_check(const struct msga__tres_timing *t)
{
	if (!t->initial_min_ns || t->initial_min_ns > t->initial_max_ns ||
	    !t->sustain_ns || !t->bytes_per_s || t->bytes_per_s > RATE_MAX ||
	    !t->burst || t->burst > BURST_MAX)
		return -EINVAL;
	return 0;
}

void msga__tres_topic_new(struct msga__tres_topic *s, uint64_t now)
{
	s->born_ns = now;
	s->due_ns = now;
	s->wait_ns = 0;
}

void msga__tres_topic_sent(struct msga__tres_topic *s,
			   const struct msga__tres_timing *t, uint64_t now)
{
	if (now - s->born_ns < t->initial_ns) {
		if (!s->wait_ns)
			s->wait_ns = t->initial_min_ns;
		else if (s->wait_ns > t->initial_max_ns / 2)
			s->wait_ns = t->initial_max_ns;
		else
			s->wait_ns *= 2;
	} else {
		s->wait_ns = t->sustain_ns;
	}
	s->due_ns = now + s->wait_ns;
}

void msga__tres_topic_asked(struct msga__tres_topic *s,
			    const struct msga__tres_timing *t, uint64_t now,
			    uint64_t *rand)
{
	uint64_t at = now + msga__jitter(rand, t->answer_max_ns + 1);

	if (at < s->due_ns)
		s->due_ns = at;
}

void msga__tres_budget_init(struct msga__tres_budget *b,
			    const struct msga__tres_timing *t, uint64_t now)
{
	b->tokens = t->burst;
	b->at_ns = now;
}

/*
 * Tokens earned since b->at_ns. The clock moves on only by the time the
 * whole tokens took, so that frequent calls do not round the rate away.
 */
static void refill(struct msga__tres_budget *b,
		   const struct msga__tres_timing *t, uint64_t now)
{
	uint64_t dt, add;

	if (now <= b->at_ns)
		return;
	dt = now - b->at_ns;
	if (b->tokens >= t->burst ||
	    dt >= (t->burst - b->tokens) * NS_PER_S / t->bytes_per_s + 1) {
		b->tokens = t->burst;
		b->at_ns = now;
		return;
	}
	/* dt * rate < (burst + rate) * 1e9 <= 2^31 * 1e9: no overflow */
	add = dt * t->bytes_per_s / NS_PER_S;
	if (!add)
		return;
	b->tokens += add;
	b->at_ns += add * NS_PER_S / t->bytes_per_s;
	if (b->tokens >= t->burst) {
		b->tokens = t->burst;
		b->at_ns = now;
	}
}

int msga__tres_budget_take(struct msga__tres_budget *b,
			   const struct msga__tres_timing *t, uint64_t now,
			   uint64_t bytes)
{
	refill(b, t, now);
	if (bytes > b->tokens)
		return 0;
	b->tokens -= bytes;
	return 1;
}

uint64_t msga__tres_budget_when(const struct msga__tres_budget *b,
				const struct msga__tres_timing *t,
				uint64_t now, uint64_t bytes)
{
	struct msga__tres_budget c = *b;
	uint64_t need;

	if (bytes > t->burst)
		return UINT64_MAX; /* (never) */
	refill(&c, t, now);
	if (bytes <= c.tokens)
		return now;
	need = bytes - c.tokens;
	/* at + the time of need tokens, rounded up so that it is earned */
	return c.at_ns +
	       (need * NS_PER_S + t->bytes_per_s - 1) / t->bytes_per_s;
}
