/* SPDX-License-Identifier: MIT */
/*
 * resolver_heard.c - the listening side of topic resolution (resolver.h):
 * the patterns a context browses, the queries that ask for them, and
 * the bounded table (tres_table.h) of the publishers and topics heard.
 *
 * A query for every pattern goes out when a pattern is added, and again
 * on the advert schedule's fast phase (10 ms doubling to 500 ms, for
 * 5 s by default), so a browser that lost its first query still hears
 * soon; then it stops: the publishers' own periodic adverts keep a
 * browser up to date, and tell one that started before them. (A query
 * every second from each of many browsers would have every publisher
 * answer each of them, on top of its adverts.) Adverts of topics no pattern matches are not kept.
 * What was not heard for MSGA_RESOLVER_TTL_MS is forgotten, a walk of
 * the table once a second.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolver.h"
#include "topic.h"

#define SECOND 1000000000ull
#define MS 1000000ull
/* A topic is forgotten after three of its publisher's advert periods
 * (at least MSGA_RESOLVER_TTL_MS; at most three hours, whatever a
 * sender claims). */
#define TTL_MIN_MS ((uint64_t)MSGA_RESOLVER_TTL_MS)
#define TTL_MAX_MS (3ull * 3600 * 1000)

static uint64_t ttl_ns(uint32_t period_ms)
{
	uint64_t ms = 3ull * period_ms;

	ms = ms < TTL_MIN_MS ? TTL_MIN_MS : ms > TTL_MAX_MS ? TTL_MAX_MS : ms;
	return ms * MS;
}

static int watched(const struct msga__res_heard *h, const char *topic)
{
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX; i++)
		if (h->watch[i].ops &&
		    msga__topic_match(h->watch[i].pattern, topic))
			return 1;
	return 0;
}

static int wanted(const struct msga__res_heard *h, const char *topic)
{
	for (uint32_t i = 0; i < h->npattern; i++)
		if (msga__topic_match(h->pattern[i], topic))
			return 1;
	return watched(h, topic);
}

/* (by index, slot by slot: a callback may watch or unwatch) */
static void tell_found(struct msga__res_heard *h,
		       const struct msga__trw_advert *a)
{
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX; i++) {
		struct msga__res_watch *w = &h->watch[i];

		if (w->ops && msga__topic_match(w->pattern, a->topic))
			w->ops->found(w->user, a);
	}
}

static void tell_gone(struct msga__res_heard *h, uint64_t origin)
{
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX; i++) {
		struct msga__res_watch *w = &h->watch[i];

		if (w->ops)
			w->ops->gone(w->user, origin);
	}
}

static int table_make(struct msga__resolver *r)
{
	struct msga__res_heard *h = &r->heard;
	int ret;

	if (h->table.ent)
		return 0;
	ret = msga__tres_table_init(&h->table, MSGA_RESOLVER_PUBS_MAX,
				    MSGA_RESOLVER_TOPICS_MAX);
	if (!ret) {
		h->sender = calloc(MSGA_RESOLVER_PUBS_MAX, sizeof(*h->sender));
		if (!h->sender) {
			msga__tres_table_fini(&h->table);
			ret = -ENOMEM;
		}
	}
	return ret ? msga__ctx_fail(r->ctx, ret, "msga_resolver_browse: "
				    "table") : 0;
}

/* The record of entry e as its publisher advertised it. */
static void record_of(const struct msga__tres_table *t,
		      const struct msga__tres_ent *e, struct msga__trw_advert *a)
{
	const struct msga__tres_pub *p = &t->pub[e->pub];

	*a = (struct msga__trw_advert){ .kind = p->kind, .flags = p->flags |
					(e->line ? MSGA__TRW_F_LINE_B : 0),
					.port = p->port, .origin = e->origin };
	memcpy(a->addr, e->addr, sizeof(a->addr));
	strcpy(a->topic, e->topic);
}

int msga__resolver_watch(struct msga_ctx *ctx, const char *pattern,
			 const struct msga__res_watch_ops *ops, void *user,
			 uint32_t *slot)
{
	struct msga__resolver *r;
	struct msga__res_heard *h;
	struct msga__res_watch *w = NULL;
	int ret = msga__res_get(ctx, &r);

	if (!ret)
		ret = table_make(r);
	if (ret)
		return ret;
	h = &r->heard;
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX && !w; i++)
		if (!h->watch[i].ops) {
			w = &h->watch[i];
			*slot = i;
		}
	if (!w)
		return msga__ctx_fail(ctx, -ENOSPC, "topic://: %u subscriptions "
				      "by name already", MSGA__RES_WATCH_MAX);
	snprintf(w->pattern, sizeof(w->pattern), "%s", pattern);
	w->ops = ops;
	w->user = user;
	msga__tres_topic_new(&h->query, msga__now_ns());
	/* what is known already, at once */
	for (uint32_t i = 0; i < h->table.ent_max && w->ops; i++) {
		struct msga__trw_advert a;

		if (!h->table.ent[i].topic[0] ||
		    !msga__topic_match(pattern, h->table.ent[i].topic))
			continue;
		record_of(&h->table, &h->table.ent[i], &a);
		ops->found(user, &a);
	}
	return 0;
}

void msga__resolver_unwatch(struct msga_ctx *ctx, uint32_t slot)
{
	if (ctx->resolver && slot < MSGA__RES_WATCH_MAX) /* (else: none) */
		ctx->resolver->heard.watch[slot].ops = NULL;
}

static int any_watch(const struct msga__res_heard *h)
{
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX; i++)
		if (h->watch[i].ops)
			return 1;
	return 0;
}

MSGA_API int msga_resolver_browse(struct msga_ctx *ctx, const char *pattern)
{
	struct msga__resolver *r;
	struct msga__res_heard *h;
	int ret;

	if (!ctx || !pattern || msga__pattern_check(pattern))
		return -EINVAL;
	ret = msga__res_get(ctx, &r);
	if (!ret)
		ret = table_make(r);
	if (ret)
		return ret;
	h = &r->heard;
	for (uint32_t i = 0; i < h->npattern; i++)
		if (!strcmp(h->pattern[i], pattern))
			return 0;
	if (h->npattern == MSGA_RESOLVER_BROWSE_MAX)
		return msga__ctx_fail(ctx, -ENOSPC, "msga_resolver_browse: "
				      "%u patterns already",
				      MSGA_RESOLVER_BROWSE_MAX);
	strcpy(h->pattern[h->npattern++], pattern); /* (checked: fits) */
	/* ask at once, then back off again from the start */
	msga__tres_topic_new(&h->query, msga__now_ns());
	return 0;
}

static void send_queries(struct msga__resolver *r, uint64_t now)
{
	uint8_t buf[MSGA__TRW_DGRAM_MAX + MSGA__RES_MAC_LEN];
	struct msga__res_heard *h = &r->heard;
	struct msga__trw_enc e;
	uint32_t len;

	uint32_t n = 0;

	msga__res_begin(r, &e, buf, MSGA__TRW_QUERY);
	for (uint32_t i = 0; i < h->npattern; i++)
		n += !msga__trw_add_query(&e, h->pattern[i]);
	for (uint32_t i = 0; i < MSGA__RES_WATCH_MAX; i++) /* (all fit) */
		if (h->watch[i].ops)
			n += !msga__trw_add_query(&e, h->watch[i].pattern);
	len = msga__trw_end(&e);
	if (len && !msga__res_send(r, buf, len))
		r->st.tx_queries += n;
}

static void expired(void *user, uint32_t pub)
{
	struct msga__resolver *r = user;

	r->heard.sender[pub][0] = '\0';
	tell_gone(&r->heard, r->heard.table.pub[pub].origin);
}

uint64_t msga__res_heard_run(struct msga__resolver *r, uint64_t now)
{
	struct msga__res_heard *h = &r->heard;

	if (!h->npattern && !any_watch(h))
		return UINT64_MAX;
	if (h->query.due_ns <= now) {
		send_queries(r, now);
		msga__tres_topic_sent(&h->query, &r->tm, now);
		if (now - h->query.born_ns >= r->tm.initial_ns)
			h->query.due_ns = UINT64_MAX; /* (fast phase over) */
	}
	if (now >= h->next_expire_ns) {
		h->next_expire_ns = now + SECOND;
		r->st.rx_expired += msga__tres_expire(&h->table, now, expired,
						      r);
	}
	return h->query.due_ns < h->next_expire_ns ? h->query.due_ns :
						      h->next_expire_ns;
}

void msga__res_heard_dgram(struct msga__resolver *r, struct msga__trw_dec *d,
			   const struct sockaddr_in *from, uint64_t now)
{
	struct msga__res_heard *h = &r->heard;
	struct msga__trw_advert a;
	uint32_t pub;

	if (!h->table.ent)
		return;
	while (msga__trw_next_advert(d, &a)) {
		int res;

		if (!wanted(h, a.topic))
			continue;
		if (d->type == MSGA__TRW_WITHDRAW) {
			int gone = msga__tres_withdrawn(&h->table, &a, &pub);

			r->st.rx_withdrawn += gone != 0;
			if (gone == 2) {
				h->sender[pub][0] = '\0';
				tell_gone(h, a.origin);
			}
			continue;
		}
		res = msga__tres_heard(&h->table, &a, now, ttl_ns(d->period_ms),
				       &pub);
		if (res == MSGA__TRES_NEW_PUB)
			inet_ntop(AF_INET, &from->sin_addr, h->sender[pub],
				  sizeof(h->sender[pub]));
		if (res == MSGA__TRES_NEW_PUB || res == MSGA__TRES_NEW_TOPIC)
			tell_found(h, &a);
	}
}

void msga__res_heard_fini(struct msga__resolver *r)
{
	msga__tres_table_fini(&r->heard.table);
	free(r->heard.sender);
	r->heard.sender = NULL;
}

MSGA_API int msga_resolver_topic(const struct msga_ctx *ctx, uint32_t idx,
				 struct msga_topic_info *ti)
{
	const struct msga__resolver *r;
	const struct msga__tres_ent *e;
	const struct msga__tres_pub *p;
	struct msga__trw_advert a;

	if (!ctx || !ti || ti->size < sizeof(*ti))
		return -EINVAL;
	r = ctx->resolver;
	if (!r || idx >= r->heard.table.ent_max ||
	    !r->heard.table.ent[idx].topic[0])
		return -ENOENT;
	e = &r->heard.table.ent[idx];
	p = &r->heard.table.pub[e->pub];
	memset((char *)ti + sizeof(ti->size), 0, ti->size - sizeof(ti->size));
	ti->flags = (p->flags & MSGA__TRW_F_RELIABLE ? MSGA_TOPIC_RELIABLE : 0) |
		    (p->flags & MSGA__TRW_F_KEYS ? MSGA_TOPIC_KEYS : 0) |
		    (e->line ? MSGA_TOPIC_LINE_B : 0);
	snprintf(ti->topic, sizeof(ti->topic), "%s", e->topic);
	record_of(&r->heard.table, e, &a);
	msga__trw_uri(&a, ti->uri, sizeof(ti->uri));
	ti->origin = e->origin;
	ti->age_ms = (msga__now_ns() - e->heard_ns) / 1000000u;
	snprintf(ti->sender, sizeof(ti->sender), "%s", r->heard.sender[e->pub]);
	return 0;
}
