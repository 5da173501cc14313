/* SPDX-License-Identifier: MIT */
/*
 * msga_resolver_load - what topic resolution costs the network and how
 * fast it finds things (issue 37's figures), in one process on one
 * device: a context that advertises N topics (rdma:// publishers of up to
 * MSGA_PUB_TOPICS_MAX topics each), and one that browses "*".
 *
 *  - all_heard_s: from the last topic made to the browser holding all N;
 *  - steady: over a window after that (and after the fast phase), the
 *    advertiser's bytes, datagrams and adverts a second, and so each
 *    topic's period (N / adverts a second);
 *  - query_ms: a third context that starts browsing one topic's name
 *    then, and the time until it holds it (a query's answer, not a
 *    periodic advert, unless the period is shorter);
 *  - byname_*_ms: a fourth context subscribes to another topic by name
 *    (msga_sub_connect(sub, "topic://")) while its publisher sends a
 *    message a millisecond: the time from that call to
 *    MSGA_EVENT_PUBLISHER_FOUND, to MSGA_EVENT_CONNECTED, and to the
 *    first message (issue 37's "time to the first message"). With
 *    -m GROUP the same for a multicast publisher (mcast://GROUP) of one
 *    more topic, "byname_mcast_*_ms".
 * Topics are PREFIX<i> (-p, default "t."). One JSON object on stdout. Only the public API. Bad options: one line,
 * exit 2.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msgaccel.h"

struct opts {
	const char *dev, *addr, *group, *prefix, *mcast;
	long topics;
	double window_s;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void __attribute__((format(printf, 1, 2), noreturn))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "msga_resolver_load: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (usage: msga_resolver_load -d DEV -a ADDR -n TOPICS "
		"[-w SEC] [-g GROUP:PORT] [-p PREFIX] [-m MCAST_GROUP])\n");
	exit(2);
}

static void parse(int argc, char **argv, struct opts *o)
{
	char *end;
	int c;

	*o = (struct opts){ .topics = 1000, .window_s = 10,
			    .group = "239.255.77.200:14990", .prefix = "t." };
	opterr = 0;
	while ((c = getopt(argc, argv, ":d:a:n:w:g:p:m:")) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'a': o->addr = optarg; break;
		case 'g': o->group = optarg; break;
		case 'p': o->prefix = optarg; break;
		case 'm': o->mcast = optarg; break;
		case 'n':
			o->topics = strtol(optarg, &end, 10);
			if (*end || o->topics < 1 ||
			    o->topics > (long)MSGA_RESOLVER_TOPICS_MAX)
				usage_error("invalid -n '%s'", optarg);
			break;
		case 'w':
			o->window_s = strtod(optarg, &end);
			if (*end || !(o->window_s >= 1 && o->window_s <= 3600))
				usage_error("invalid -w '%s'", optarg);
			break;
		case ':': usage_error("option '%s' needs a value",
				      argv[optind - 1]);
		default: usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!o->dev || !o->addr || optind < argc)
		usage_error("%s", "-d and -a are needed, and nothing else");
}

static struct msga_ctx *open_ctx(const struct opts *o, uint32_t flags)
{
	struct msga_resolver_attr ra = { .size = sizeof(ra), .flags = flags,
					 .group = o->group };
	struct msga_ctx_attr ca = { .size = sizeof(ca), .dev_name = o->dev,
				    .resolver = &ra,
				    .flags = MSGA_CTX_NO_STATS };
	struct msga_ctx *ctx;

	if (msga_ctx_open(&ca, &ctx)) {
		fprintf(stderr, "msga_resolver_load: %s\n", msga_open_error());
		exit(1);
	}
	return ctx;
}

static struct msga_resolver_stats stats(struct msga_ctx *ctx)
{
	struct msga_resolver_stats st = { .size = sizeof(st) };

	msga_resolver_stats(ctx, &st);
	return st;
}

static void poll_all(struct msga_ctx **c, int n)
{
	for (int i = 0; i < n; i++)
		msga_ctx_poll(c[i], 64);
}

/* N topics "t.<i>" over as many publishers as they need. */
static struct msga_pub **publish(const struct opts *o, struct msga_ctx *ctx,
				 long *npub, uint32_t *ids_of_first)
{
	struct msga_pub **pubs;
	char uri[96], name[32];
	uint32_t id;

	*npub = (o->topics + MSGA_PUB_TOPICS_MAX - 1) / MSGA_PUB_TOPICS_MAX;
	pubs = calloc((size_t)*npub, sizeof(*pubs));
	snprintf(uri, sizeof(uri), "rdma://%s:0", o->addr);
	for (long p = 0; pubs && p < *npub; p++) {
		struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri };

		if (msga_pub_create(ctx, &pa, &pubs[p])) {
			fprintf(stderr, "msga_resolver_load: %s\n",
				msga_ctx_last_error(ctx));
			exit(1);
		}
	}
	for (long i = 0; pubs && i < o->topics; i++) {
		snprintf(name, sizeof(name), "%s%ld", o->prefix, i);
		if (msga_pub_topic(pubs[i / MSGA_PUB_TOPICS_MAX], name, &id)) {
			fprintf(stderr, "msga_resolver_load: %s\n",
				msga_ctx_last_error(ctx));
			exit(1);
		}
		if (i == 0)
			*ids_of_first = id;
	}
	return pubs;
}

/* ------------------------------------------- time to the first message */

struct byname {
	double t0, found, connected, first; /* -1: not yet */
};

static void byname_msg(const struct msga_msg *msg, void *user)
{
	struct byname *b = user;

	(void)msg;
	if (b->first < 0)
		b->first = now_s();
}

static void byname_event(const struct msga_event *ev, void *user)
{
	struct byname *b = user;

	if (ev->type == MSGA_EVENT_PUBLISHER_FOUND && !ev->status &&
	    b->found < 0)
		b->found = now_s();
	else if (ev->type == MSGA_EVENT_CONNECTED && b->connected < 0)
		b->connected = now_s();
}

/*
 * A new context subscribes to TOPIC by name while PUB (in c[0]) sends on
 * it every millisecond; c[0..n-1] are polled meanwhile. Gives up after
 * 30 s (then the times it did not reach stay -1).
 */
static struct byname first_message(const char *topic, struct msga_ctx **c,
				   int n, struct msga_pub *pub, uint32_t id,
				   const struct opts *o)
{
	struct byname b = { .found = -1, .connected = -1, .first = -1 };
	struct msga_ctx *sc = open_ctx(o, 0);
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = topic,
				    .on_msg = byname_msg,
				    .on_event = byname_event, .user = &b };
	struct msga_sub *sub;
	double next = 0;
	uint64_t v = 0;

	if (msga_sub_create(sc, &sa, &sub)) {
		fprintf(stderr, "msga_resolver_load: %s\n",
			msga_ctx_last_error(sc));
		exit(1);
	}
	b.t0 = now_s();
	if (msga_sub_connect(sub, "topic://", NULL) < 0) {
		fprintf(stderr, "msga_resolver_load: %s\n",
			msga_ctx_last_error(sc));
		exit(1);
	}
	while (b.first < 0 && now_s() < b.t0 + 30) {
		if (now_s() >= next) {
			next = now_s() + 0.001;
			v++;
			msga_pub_send(pub, id, &v, sizeof(v));
		}
		poll_all(c, n);
		msga_ctx_poll(sc, 64);
	}
	msga_sub_destroy(sub);
	msga_ctx_close(sc);
	return b;
}

static double ms_after(double t0, double t)
{
	return t < 0 ? -1 : (t - t0) * 1000;
}

int main(int argc, char **argv)
{
	struct msga_resolver_stats a0, a1, b;
	struct msga_ctx *c[3];
	struct msga_pub **pubs, *mpub = NULL;
	struct byname rc, mc = { .t0 = 0, .found = -1, .connected = -1,
				  .first = -1 };
	uint32_t first_id = 0, mid = 0;
	double t0, t_heard, t_made, w0, w1, q0, q1 = -1, end;
	char name[32];
	long npub;
	struct opts o;

	parse(argc, argv, &o);
	c[0] = open_ctx(&o, MSGA_RESOLVER_ADVERTISE);
	c[1] = open_ctx(&o, 0);
	if (msga_resolver_browse(c[1], "*"))
		return 1;
	t0 = now_s();
	pubs = publish(&o, c[0], &npub, &first_id);
	if (!pubs)
		return 1;
	t_made = now_s();
	/* everything heard (a bound: the budget's own time, ten times) */
	end = t_made + 120 + 10.0 * o.topics * 40 / 262144;
	while (stats(c[1]).topics < (uint64_t)o.topics && now_s() < end)
		poll_all(c, 2);
	t_heard = now_s();
	/* past the fast phase (5 s after the last topic), then the window */
	while (now_s() < t_made + 6)
		poll_all(c, 2);
	a0 = stats(c[0]);
	w0 = now_s();
	while (now_s() < w0 + o.window_s)
		poll_all(c, 2);
	a1 = stats(c[0]);
	w1 = now_s();
	b = stats(c[1]);
	/* a late browser of one topic: a query's answer */
	c[2] = open_ctx(&o, 0);
	snprintf(name, sizeof(name), "%s%ld", o.prefix, o.topics / 2);
	q0 = now_s();
	msga_resolver_browse(c[2], name);
	while (now_s() < q0 + 30) {
		poll_all(c, 3);
		if (stats(c[2]).topics == 1) {
			q1 = now_s();
			break;
		}
	}
	/* by name: the first topic of the first (RC) publisher */
	snprintf(name, sizeof(name), "%s0", o.prefix);
	rc = first_message(name, c, 3, pubs[0], first_id, &o);
	if (o.mcast) {
		char uri[96];
		struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri };

		snprintf(uri, sizeof(uri), "mcast://%s", o.mcast);
		if (msga_pub_create(c[0], &pa, &mpub) ||
		    msga_pub_topic(mpub, "m.first", &mid)) {
			fprintf(stderr, "msga_resolver_load: %s\n",
				msga_ctx_last_error(c[0]));
			return 1;
		}
		mc = first_message("m.first", c, 3, mpub, mid, &o);
	}
	{
		double w = w1 - w0;
		double adv = (a1.tx_adverts - a0.tx_adverts) / w;

		printf("{\"topics\":%ld,\"publishers\":%ld,\"make_s\":%.3f,"
		       "\"all_heard\":%s,\"all_heard_s\":%.3f,\"window_s\":%.3f,"
		       "\"tx_bytes_per_s\":%.0f,\"tx_dgrams_per_s\":%.1f,"
		       "\"adverts_per_s\":%.1f,\"period_s\":%.2f,"
		       "\"budget_waits_per_s\":%.1f,\"heard\":%" PRIu64
		       ",\"rx_forged\":%" PRIu64 ",\"rx_full\":%" PRIu64
		       ",\"rx_expired\":%" PRIu64 ",\"query_ms\":%.1f,"
		       "\"byname_found_ms\":%.1f,\"byname_connected_ms\":%.1f,"
		       "\"byname_first_msg_ms\":%.1f,"
		       "\"byname_mcast_found_ms\":%.1f,"
		       "\"byname_mcast_connected_ms\":%.1f,"
		       "\"byname_mcast_first_msg_ms\":%.1f}\n",
		       o.topics, npub, t_made - t0,
		       b.topics >= (uint64_t)o.topics ? "true" : "false",
		       t_heard - t_made, w,
		       (a1.tx_bytes - a0.tx_bytes) / w,
		       (a1.tx_dgrams - a0.tx_dgrams) / w, adv,
		       adv > 0 ? o.topics / adv : -1,
		       (a1.budget_waits - a0.budget_waits) / w, b.topics,
		       b.rx_forged, b.rx_full, b.rx_expired,
		       q1 < 0 ? -1 : (q1 - q0) * 1000,
		       ms_after(rc.t0, rc.found), ms_after(rc.t0, rc.connected),
		       ms_after(rc.t0, rc.first), ms_after(mc.t0, mc.found),
		       ms_after(mc.t0, mc.connected),
		       ms_after(mc.t0, mc.first));
	}
	if (mpub)
		msga_pub_destroy(mpub);
	for (long p = 0; p < npub; p++)
		msga_pub_destroy(pubs[p]);
	free(pubs);
	for (int i = 0; i < 3; i++)
		msga_ctx_close(c[i]);
	return 0;
}
