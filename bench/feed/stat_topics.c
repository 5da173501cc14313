/* SPDX-License-Identifier: MIT */
/*
 * stat_topics.c - msga_stat --topics: browse a resolver group for a
 * while, then print every (publisher, topic) heard: the topic, the
 * publisher's origin, where to subscribe, its flags, the age of the
 * last advert and who sent it; then the resolver's counters, so that a
 * keyed group heard without the key (forged) or a sender left out of an
 * allow list shows as such instead of as silence. Only the public API:
 * msga_resolver_browse(3), msga_resolver_topic(3), msga_resolver_stats(3).
 */
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msgaccel.h"
#include "stat_topics.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int open_ctx(const struct topics_opts *o, struct msga_ctx **ctx)
{
	struct msga_resolver_attr ra = { .size = sizeof(ra), .group = o->group };
	struct msga_ctx_attr ca = { .size = sizeof(ca) };

	ca.dev_name = o->dev;
	ca.local_addr = o->bind;
	ca.key_file = o->key_file;
	ca.resolver = &ra;
	ca.flags = MSGA_CTX_NO_STATS;
	if (msga_ctx_open(&ca, ctx)) {
		fprintf(stderr, "msga_stat: %s\n", msga_open_error());
		return 1;
	}
	if (msga_resolver_browse(*ctx, o->pattern)) {
		fprintf(stderr, "msga_stat: %s\n", msga_ctx_last_error(*ctx));
		msga_ctx_close(*ctx);
		return 1;
	}
	return 0;
}

static int listen_for(const struct topics_opts *o, struct msga_ctx *ctx)
{
	double end = now_s() + o->duration;
	struct pollfd p = { .fd = msga_ctx_fd(ctx), .events = POLLIN };

	if (p.fd < 0) {
		fprintf(stderr, "msga_stat: %s\n", msga_ctx_last_error(ctx));
		return 1;
	}
	while (!*o->stop && now_s() < end) {
		int ms = (int)((end - now_s()) * 1000) + 1;

		poll(&p, 1, ms > 20 ? 20 : ms);
		while (msga_ctx_poll(ctx, 64) > 0)
			;
	}
	return 0;
}

static const char *transport_of(const char *uri)
{
	return !strncmp(uri, "rdma://", 7) ? "rdma" :
	       !strncmp(uri, "ud://", 5) ? "ud" : "mcast";
}

static void print_topic(const struct msga_topic_info *t, int json)
{
	if (json) {
		printf("{\"topic\":\"%s\",\"publisher\":\"%016" PRIx64 "\","
		       "\"transport\":\"%s\",\"uri\":\"%s\",\"reliable\":%s,"
		       "\"keys\":%s,\"age_ms\":%" PRIu64 ",\"sender\":\"%s\","
		       "\"line_b\":%s}\n",
		       t->topic, t->origin, transport_of(t->uri), t->uri,
		       t->flags & MSGA_TOPIC_RELIABLE ? "true" : "false",
		       t->flags & MSGA_TOPIC_KEYS ? "true" : "false",
		       t->age_ms, t->sender,
		       t->flags & MSGA_TOPIC_LINE_B ? "true" : "false");
		return;
	}
	printf("%-24s %016" PRIx64 " %-5s %-28s %-3s %-4s %8" PRIu64 " %s\n",
	       t->topic, t->origin, transport_of(t->uri), t->uri,
	       t->flags & MSGA_TOPIC_RELIABLE ? "rel" : "-",
	       t->flags & MSGA_TOPIC_KEYS ? "keys" : "-", t->age_ms, t->sender);
}

static void print_totals(const struct msga_resolver_stats *st, int json)
{
	if (json) {
		printf("{\"topics\":%" PRIu64 ",\"publishers\":%" PRIu64
		       ",\"rx_dgrams\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
		       ",\"forged\":%" PRIu64 ",\"malformed\":%" PRIu64
		       ",\"not_allowed\":%" PRIu64 ",\"full\":%" PRIu64
		       ",\"conflicts\":%" PRIu64 "}\n", st->topics,
		       st->publishers, st->rx_dgrams, st->rx_bytes,
		       st->rx_forged, st->rx_malformed, st->rx_not_allowed,
		       st->rx_full, st->rx_conflicts);
		return;
	}
	printf("# %" PRIu64 " topics of %" PRIu64 " publishers; heard %" PRIu64
	       " datagrams (%" PRIu64 " bytes); dropped: %" PRIu64
	       " forged, %" PRIu64 " malformed, %" PRIu64 " not allowed, %"
	       PRIu64 " over the table, %" PRIu64 " conflicting\n",
	       st->topics, st->publishers, st->rx_dgrams, st->rx_bytes,
	       st->rx_forged, st->rx_malformed, st->rx_not_allowed, st->rx_full,
	       st->rx_conflicts);
}

static int by_topic(const void *a, const void *b)
{
	const struct msga_topic_info *x = a, *y = b;
	int c = strcmp(x->topic, y->topic);

	return c ? c : strcmp(x->uri, y->uri);
}

/* Every topic heard, by name (the table's own order is a hash's). */
static int print_sorted(struct msga_ctx *ctx,
			const struct msga_resolver_stats *st, int json)
{
	struct msga_topic_info *all = calloc(st->topics ? st->topics : 1,
					     sizeof(*all));
	uint64_t n = 0;

	if (!all) {
		fprintf(stderr, "msga_stat: out of memory\n");
		return 1;
	}
	for (uint32_t i = 0; i < st->topic_slots && n < st->topics; i++) {
		all[n].size = sizeof(all[n]);
		if (!msga_resolver_topic(ctx, i, &all[n]))
			n++;
	}
	qsort(all, n, sizeof(*all), by_topic);
	for (uint64_t i = 0; i < n; i++)
		print_topic(&all[i], json);
	free(all);
	return 0;
}

int msga_stat_topics(const struct topics_opts *o)
{
	struct msga_resolver_stats st = { .size = sizeof(st) };
	struct msga_ctx *ctx;

	if (open_ctx(o, &ctx))
		return 1;
	if (listen_for(o, ctx)) {
		msga_ctx_close(ctx);
		return 1;
	}
	msga_resolver_stats(ctx, &st);
	if (!o->json)
		printf("%-24s %-16s %-5s %-28s %-3s %-4s %8s %s\n", "topic",
		       "publisher", "tport", "uri", "rel", "keys", "age_ms",
		       "sender");
	if (print_sorted(ctx, &st, o->json)) {
		msga_ctx_close(ctx);
		return 1;
	}
	print_totals(&st, o->json);
	msga_ctx_close(ctx);
	return 0;
}
