/* SPDX-License-Identifier: MIT */
/*
 * resolver_adv.c - the advertising side of topic resolution (resolver.h).
 *
 * Each advertised topic has its schedule (tres_sched.h) and sits in a
 * binary heap by due time, so a tick looks at the heap's top, not at
 * every topic: tens of thousands of topics cost nothing between their
 * adverts. What is due goes out batched, as many records as a datagram
 * holds, each datagram paid for from the context's byte budget first;
 * when the budget is spent the rest wait (counted in budget_waits), so
 * the budget, not the topic count, bounds the traffic.
 *
 * A query puts the adverts it matches on a list of answers, each due at
 * a jittered point within answer_max, sent before any periodic advert:
 * with the budget spent on tens of thousands of periodic adverts, an
 * answer in the heap would wait behind all of them (a late browser of
 * one topic among 100 000 waited 11 s so). Matching walks every
 * advertised topic, so the walk is
 * bounded too: at most QUERY_WORK topic comparisons a second in all
 * (about a millisecond of CPU); records beyond it are dropped and
 * counted, and the asker hears of those topics at their next periodic
 * advert instead.
 */
#include <stdlib.h>
#include <string.h>

#include "resolver.h"
#include "topic.h"

#define DGRAMS_PER_TICK 32
#define QUERY_WORK 1000000u
#define SECOND 1000000000ull

struct msga__tres_adv {
	struct msga__trw_advert rec;
	struct msga__tres_topic sched;
	uint32_t at;                   /* its index in the heap */
	uint32_t answer;               /* in answers at answer - 1; 0: not */
	uint64_t answer_ns;            /* ... due then */
};

/* ------------------------------------------------------------ the heap */

static int earlier(const struct msga__res_adv *h, uint32_t a, uint32_t b)
{
	return h->heap[a]->sched.due_ns < h->heap[b]->sched.due_ns;
}

static void swap(struct msga__res_adv *h, uint32_t a, uint32_t b)
{
	struct msga__tres_adv *t = h->heap[a];

	h->heap[a] = h->heap[b];
	h->heap[b] = t;
	h->heap[a]->at = a;
	h->heap[b]->at = b;
}

static void sift_up(struct msga__res_adv *h, uint32_t i)
{
	while (i && earlier(h, i, (i - 1) / 2)) {
		swap(h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct msga__res_adv *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;

		if (l < h->n && earlier(h, l, m))
			m = l;
		if (l + 1 < h->n && earlier(h, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		swap(h, i, m);
		i = m;
	}
}

static int heap_push(struct msga__res_adv *h, struct msga__tres_adv *a)
{
	if (h->n == h->cap) {
		uint32_t cap = h->cap ? 2 * h->cap : 64;
		void *p = realloc(h->heap, (size_t)cap * sizeof(*h->heap));

		if (!p)
			return -ENOMEM;
		h->heap = p;
		h->cap = cap;
	}
	a->at = h->n;
	h->heap[h->n++] = a;
	sift_up(h, a->at);
	return 0;
}

static void heap_remove(struct msga__res_adv *h, struct msga__tres_adv *a)
{
	uint32_t i = a->at;

	if (i != --h->n) {
		struct msga__tres_adv *moved = h->heap[h->n];

		swap(h, i, h->n);
		sift_up(h, i);
		sift_down(h, moved->at);
	}
}

/* ---------------------------------------------------------- answers */

static void answer_drop(struct msga__res_adv *h, struct msga__tres_adv *a)
{
	uint32_t i = a->answer - 1;

	h->answers[i] = h->answers[--h->nanswers];
	h->answers[i]->answer = i + 1;
	a->answer = 0;
}

/* a is asked for at now: an answer, unless it is one already (or the
 * list is full: 0, and the asker waits for its periodic advert). */
static int answer_add(struct msga__resolver *r, struct msga__tres_adv *a,
		      uint64_t now)
{
	struct msga__res_adv *h = &r->adv;
	struct msga__tres_topic when = { .due_ns = UINT64_MAX };

	if (a->answer)
		return 1;
	if (!h->answers)
		h->answers = malloc(MSGA__RES_ANSWERS_MAX * sizeof(*h->answers));
	if (!h->answers || h->nanswers == MSGA__RES_ANSWERS_MAX)
		return 0;
	msga__tres_topic_asked(&when, &r->tm, now, &r->rand);
	a->answer_ns = when.due_ns;
	h->answers[h->nanswers++] = a;
	a->answer = h->nanswers;
	return 1;
}

/* ------------------------------------------------------ adding topics */

static int unspecified(const uint8_t a[16])
{
	static const uint8_t zero[16];
	static const uint8_t v4any[16] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, zero, 16) || !memcmp(a, v4any, 16);
}

/* A wildcard-bound publisher is reached at the context's own address. */
static int fill_address(struct msga__resolver *r, struct msga__trw_advert *a)
{
	const struct sockaddr_in *self = (const void *)&r->self;

	if (a->kind == MSGA__TRW_MCAST || !unspecified(a->addr))
		return 0;
	if (!r->has_self || r->self.ss_family != AF_INET)
		return msga__ctx_fail(r->ctx, -EADDRNOTAVAIL,
				      "resolver: %s has no IPv4 address to "
				      "advertise; bind the publisher to one, "
				      "or open the context with local_addr",
				      r->ctx->dev_name);
	memset(a->addr, 0, 10);
	a->addr[10] = a->addr[11] = 0xff;
	memcpy(a->addr + 12, &self->sin_addr, 4);
	return 0;
}

/* Whether a makes a valid record (the codec's own checks). */
static int record_ok(const struct msga__trw_advert *a)
{
	uint8_t buf[MSGA__TRW_HDR + MSGA__TRW_ADV_FIXED + MSGA_TOPIC_MAX];
	struct msga__trw_enc e;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_ADVERT, 0, 0);
	return msga__trw_add_advert(&e, a);
}

static uint64_t record_bytes(const struct msga__trw_advert *a)
{
	return MSGA__TRW_ADV_FIXED + strlen(a->topic);
}

/*
 * The longest this context's adverts now take to come round: the
 * sustain period, or longer when the budget cannot send every topic
 * within it. Browsers forget a topic after a few of these (the period
 * field of every advert and withdraw datagram).
 */
static uint32_t period_ms(const struct msga__resolver *r)
{
	uint64_t sustain = r->tm.sustain_ns / 1000000u;
	uint64_t need = r->adv.rec_bytes * 1000u / r->tm.bytes_per_s + 1;
	uint64_t p = need > sustain ? need : sustain;

	return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

int msga__resolver_add(struct msga_ctx *ctx, const struct msga__trw_advert *a,
		       struct msga__tres_adv **adv)
{
	struct msga__resolver *r = ctx->resolver;
	struct msga__tres_adv *n;
	int ret;

	*adv = NULL;
	if (!r || !r->advertise)
		return 0;
	ret = msga__res_socket(r);
	if (ret)
		return ret;
	n = calloc(1, sizeof(*n));
	if (!n)
		return msga__ctx_fail(ctx, -ENOMEM, "resolver: advert");
	n->rec = *a;
	ret = fill_address(r, &n->rec);
	if (!ret && record_ok(&n->rec))
		ret = msga__ctx_fail(ctx, -EINVAL, "resolver: the advert of "
				     "'%s' is not valid", a->topic);
	if (!ret) {
		msga__tres_topic_new(&n->sched, msga__now_ns());
		ret = heap_push(&r->adv, n);
	}
	if (!ret)
		r->adv.rec_bytes += record_bytes(&n->rec);
	if (ret) {
		free(n);
		return ret;
	}
	*adv = n;
	return 0;
}

void msga__resolver_del(struct msga_ctx *ctx, struct msga__tres_adv *adv)
{
	struct msga__resolver *r = ctx->resolver;
	struct msga__res_adv *h;

	if (!adv)
		return;
	h = &r->adv;
	if (adv->answer)
		answer_drop(h, adv);
	heap_remove(h, adv);
	h->rec_bytes -= record_bytes(&adv->rec);
	if (!h->gone)
		h->gone = malloc(MSGA__RES_GONE_MAX * sizeof(*h->gone));
	if (h->gone && h->ngone < MSGA__RES_GONE_MAX)
		h->gone[h->ngone++] = adv->rec;
	else
		r->st.withdraw_lost++; /* (subscribers expire it instead) */
	free(adv);
}

/* ----------------------------------------------------------- sending */

/* Enough budget for a whole datagram now; else when (counted). */
static uint64_t budget_wait(struct msga__resolver *r, uint64_t now)
{
	uint64_t when = msga__tres_budget_when(&r->adv.budget, &r->tm, now,
					       MSGA__TRW_DGRAM_MAX +
					       MSGA__RES_MAC_LEN);

	if (when > now)
		r->st.budget_waits++;
	return when > now ? when : 0;
}

static void pay_and_send(struct msga__resolver *r, struct msga__trw_enc *e,
			 uint8_t *buf, uint64_t now)
{
	uint32_t len = msga__trw_end(e);

	msga__tres_budget_take(&r->adv.budget, &r->tm, now,
			       len + (r->keyed ? MSGA__RES_MAC_LEN : 0));
	msga__res_send(r, buf, len);
}

/*
 * A datagram carries line B's records (MSGA__TRW_F_LINE_B, 0.12) or the
 * others, never both: a reader before 0.12 refuses a whole datagram with
 * a flag it does not know, and would lose the line A records beside it.
 * So adverts and answers are written into two datagrams at once, one per
 * line, and each that got a record is sent.
 */
struct two_dgrams {
	struct msga__trw_enc e[2];
	uint8_t buf[2][MSGA__TRW_DGRAM_MAX + MSGA__RES_MAC_LEN];
};

static int line_b(const struct msga__trw_advert *a)
{
	return !!(a->flags & MSGA__TRW_F_LINE_B);
}

static void two_begin(struct msga__resolver *r, struct two_dgrams *d)
{
	for (int i = 0; i < 2; i++) {
		msga__res_begin(r, &d->e[i], d->buf[i], MSGA__TRW_ADVERT);
		msga__trw_period(&d->e[i], period_ms(r));
	}
}

/* Record a into its line's datagram: 0, or -ENOSPC when that is full. */
static int two_add(struct two_dgrams *d, const struct msga__trw_advert *a)
{
	return msga__trw_add_advert(&d->e[line_b(a)], a);
}

static void pay_and_send(struct msga__resolver *r, struct msga__trw_enc *e,
			 uint8_t *buf, uint64_t now);

static void two_send(struct msga__resolver *r, struct two_dgrams *d,
		     uint64_t now)
{
	for (int i = 0; i < 2; i++)
		if (d->e[i].count)
			pay_and_send(r, &d->e[i], d->buf[i], now);
}

/* Withdrawals first, oldest first; when more must wait (0: none). */
static uint64_t send_withdrawals(struct msga__resolver *r, uint64_t now)
{
	uint8_t buf[MSGA__TRW_DGRAM_MAX + MSGA__RES_MAC_LEN];
	struct msga__res_adv *h = &r->adv;

	while (h->ngone) {
		struct msga__trw_enc e;
		uint64_t wait = budget_wait(r, now);
		uint32_t k = 0;

		if (wait)
			return wait;
		msga__res_begin(r, &e, buf, MSGA__TRW_WITHDRAW);
		msga__trw_period(&e, period_ms(r));
		while (k < h->ngone &&
		       line_b(&h->gone[k]) == line_b(&h->gone[0]) &&
		       !msga__trw_add_advert(&e, &h->gone[k]))
			k++;
		pay_and_send(r, &e, buf, now);
		r->st.tx_withdraws += k;
		h->ngone -= k;
		memmove(h->gone, h->gone + k, h->ngone * sizeof(*h->gone));
	}
	return 0;
}

/* One datagram of the adverts due at now: how many went. */
static uint32_t send_due(struct msga__resolver *r, uint64_t now)
{
	struct msga__res_adv *h = &r->adv;
	struct two_dgrams d;
	uint32_t k = 0;

	two_begin(r, &d);
	while (h->n && h->heap[0]->sched.due_ns <= now) {
		struct msga__tres_adv *a = h->heap[0];

		if (two_add(&d, &a->rec))
			break; /* (full: the next datagram) */
		if (a->answer)
			answer_drop(h, a); /* (this advert answers too) */
		msga__tres_topic_sent(&a->sched, &r->tm, now);
		sift_down(h, 0);
		k++;
	}
	if (k) {
		two_send(r, &d, now);
		r->st.tx_adverts += k;
	}
	return k;
}

/*
 * One datagram of the answers due at now, each then counted as its
 * topic's advert (its periodic one moves on); how many went. *next: the
 * earliest answer still waiting.
 */
static uint32_t send_answers(struct msga__resolver *r, uint64_t now,
			     uint64_t *next)
{
	struct msga__res_adv *h = &r->adv;
	struct two_dgrams d;
	uint32_t k = 0, i = 0;

	*next = UINT64_MAX;
	two_begin(r, &d);
	while (i < h->nanswers) {
		struct msga__tres_adv *a = h->answers[i];

		if (a->answer_ns > now) {
			*next = a->answer_ns < *next ? a->answer_ns : *next;
			i++;
			continue;
		}
		if (two_add(&d, &a->rec)) {
			*next = now; /* (full: the next datagram) */
			break;
		}
		answer_drop(h, a); /* (the last moves to i) */
		msga__tres_topic_sent(&a->sched, &r->tm, now);
		sift_down(h, a->at);
		k++;
	}
	if (k) {
		two_send(r, &d, now);
		r->st.tx_adverts += k;
	}
	return k;
}

uint64_t msga__res_adv_run(struct msga__resolver *r, uint64_t now)
{
	uint64_t answers_next = UINT64_MAX;

	struct msga__res_adv *h = &r->adv;
	uint64_t wait;

	if (!h->budget.at_ns)
		msga__tres_budget_init(&h->budget, &r->tm, now);
	wait = send_withdrawals(r, now);
	if (wait)
		return wait;
	for (int i = 0; i < DGRAMS_PER_TICK && h->nanswers; i++) {
		wait = budget_wait(r, now);
		if (wait)
			return wait;
		if (!send_answers(r, now, &answers_next))
			break;
	}
	for (int i = 0; i < DGRAMS_PER_TICK; i++) {
		if (!h->n || h->heap[0]->sched.due_ns > now)
			break;
		wait = budget_wait(r, now);
		if (wait)
			return wait;
		if (!send_due(r, now))
			break;
	}
	if (h->n && h->heap[0]->sched.due_ns < answers_next)
		return h->heap[0]->sched.due_ns;
	return answers_next;
}

/* ---------------------------------------------------------- queries */

void msga__res_adv_query(struct msga__resolver *r, struct msga__trw_dec *d,
			 uint64_t now)
{
	struct msga__res_adv *h = &r->adv;
	char pat[MSGA_TOPIC_MAX + 2];

	if (now - h->query_second >= SECOND) {
		h->query_second = now;
		h->query_budget = QUERY_WORK;
	}
	while (msga__trw_next_query(d, pat)) {
		if (!h->n)
			continue;
		if (h->query_budget < h->n) {
			r->st.queries_dropped++;
			continue;
		}
		h->query_budget -= h->n;
		for (uint32_t i = 0; i < h->n; i++) {
			struct msga__tres_adv *a = h->heap[i];

			if (!msga__topic_match(pat, a->rec.topic))
				continue;
			if (a->answer)
				continue; /* (asked already) */
			if (answer_add(r, a, now))
				r->st.queries_answered++;
			else
				r->st.queries_dropped++;
		}
	}
}

void msga__res_adv_fini(struct msga__resolver *r)
{
	struct msga__res_adv *h = &r->adv;

	for (uint32_t i = 0; i < h->n; i++)
		free(h->heap[i]);
	free(h->heap);
	free(h->gone);
	free(h->answers);
	memset(h, 0, sizeof(*h));
}
