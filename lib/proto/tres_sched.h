/* SPDX-License-Identifier: MIT */
/*
 * tres_sched.h - when a publisher's context advertises each of its topics
 * on the resolver group (issue 37), and how many bytes a second all its
 * adverts may take.
 *
 * A topic is advertised at once when it is made, then again after
 * initial_min, the wait doubling up to initial_max while the topic is
 * younger than initial (the fast phase: a subscriber that missed the first
 * advert hears of it soon), then once every sustain (so that a subscriber
 * that lost every advert and its queries still finds the topic). A query
 * that the topic matches brings its next advert forward to within a
 * random part of answer_max, so that the publishers a query reaches do not
 * all answer in the same instant.
 *
 * Every advert, whenever due, passes a byte budget first: a token bucket
 * of bytes_per_s, at most burst bytes deep. The budget, not the topic
 * count, bounds the traffic: with tens of thousands of topics, adverts
 * that find no tokens wait, and the sustain period of each topic grows
 * to what the budget allows (topics x advert bytes / bytes_per_s).
 *
 * Pure logic: tested on the host (tests/test_tres_sched.c).
 */
#ifndef MSGA_TRES_SCHED_H
#define MSGA_TRES_SCHED_H

#include <stdint.h>

struct msga__tres_timing {
	uint64_t initial_min_ns; /* the first repeat's wait */
	uint64_t initial_max_ns; /* the fast phase's longest wait */
	uint64_t initial_ns;     /* the fast phase's length */
	uint64_t sustain_ns;     /* then one advert per this */
	uint64_t answer_max_ns;  /* a query's answer within this */
	uint64_t bytes_per_s;    /* the budget's rate, > 0 */
	uint64_t burst;          /* its depth in bytes, > 0 */
};

/* The defaults: 10 ms doubling to 500 ms for 5 s, then 1 s; answers
 * within 50 ms; 256 KiB/s with bursts of 64 KiB. */
extern const struct msga__tres_timing msga__tres_defaults;

/* 0 if t is usable (every wait > 0, min <= max, a budget), else -EINVAL. */
int msga__tres_timing_check(const struct msga__tres_timing *t);

/* One topic's advert schedule. */
struct msga__tres_topic {
	uint64_t born_ns, due_ns, wait_ns;
};

/* A topic made at now: due at once. */
void msga__tres_topic_new(struct msga__tres_topic *s, uint64_t now);
/* Its advert went at now: when the next is due. */
void msga__tres_topic_sent(struct msga__tres_topic *s,
			   const struct msga__tres_timing *t, uint64_t now);
/* A query it matches came at now: the next advert no later than a
 * random point (*rand: xorshift64 state, 0 a fixed seed) of answer_max. */
void msga__tres_topic_asked(struct msga__tres_topic *s,
			    const struct msga__tres_timing *t, uint64_t now,
			    uint64_t *rand);

/* The byte budget of a context's adverts. */
struct msga__tres_budget {
	uint64_t tokens, at_ns;
};

/* Full at now. */
void msga__tres_budget_init(struct msga__tres_budget *b,
			    const struct msga__tres_timing *t, uint64_t now);
/* Take bytes now: 1, or 0 (nothing taken) when the budget has not that
 * many; bytes above burst are never granted (a datagram is smaller). */
int msga__tres_budget_take(struct msga__tres_budget *b,
			   const struct msga__tres_timing *t, uint64_t now,
			   uint64_t bytes);
/* When a take of bytes would be granted: now, or later. */
uint64_t msga__tres_budget_when(const struct msga__tres_budget *b,
				const struct msga__tres_timing *t,
				uint64_t now, uint64_t bytes);

#endif
