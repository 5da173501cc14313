/* SPDX-License-Identifier: MIT */
/*
 * msga_conntime - what an authenticated RC handshake costs at connect:
 * in one process, on one device, a publisher and a subscriber in plain
 * contexts and another pair in contexts with keys from a key file. It
 * connects and disconnects each pair in turn, COUNT times, and times each
 * connect from msga_sub_connect() to the subscriber's
 * MSGA_EVENT_CONNECTED (with keys: the publisher's answer to the proven,
 * allowed subscription). Turns alternate, so that the host's drift falls
 * on both alike; prints the medians and their ratio (keyed / plain), and
 * with --json writes them. Without --key-file only the plain pair runs.
 *
 * -c CONNS: each turn makes CONNS connections from the subscriber to the
 * publisher at once (as dev_hostile's SRQ test does), and times two
 * phases: until the subscriber saw every one CONNECTED (its side of the
 * handshake: address, route, queue pair, rdma_connect, ESTABLISHED, its
 * SUBSCRIBE sent) and until the publisher counted them all (every
 * SUBSCRIBE read). --no-ring: the subscriber's SEND/RECV path (its
 * shared receive queue) instead of the ring.
 *
 *   msga_conntime [-n COUNT] [-c CONNS] [-p PORT] [-d DEV] [--no-ring]
 *                 [--json FILE] [--key-file FILE] ADDR
 *
 * A bad option prints one line and exits with status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msgaccel.h"

#define CONNS_MAX 64

struct pair {
	struct msga_ctx *pc, *sc;
	struct msga_pub *pub;
	struct msga_sub *sub;
	char uri[96];
	int connected, failed, status;
	double *us, *counted_us; /* all CONNECTED; all counted */
};

static int conns = 1;

static void usage_error(const char *why, const char *val)
{
	fprintf(stderr, "msga_conntime: %s%s%s\n", why, val ? ": " : "",
		val ? val : "");
	exit(2);
}

static void die(const char *what, const char *why)
{
	fprintf(stderr, "msga_conntime: %s: %s\n", what, why);
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void on_msg(const struct msga_msg *m, void *user)
{
	(void)m;
	(void)user;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct pair *p = user;

	if (!ev->sub)
		return;
	if (ev->type == MSGA_EVENT_CONNECTED)
		p->connected++;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED ||
		 ev->type == MSGA_EVENT_DISCONNECTED) {
		p->failed = 1;
		p->status = ev->status;
	}
}

static void open_pair(struct pair *p, const char *addr, const char *dev,
		      int port, const char *key_file, uint32_t sub_flags)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = addr,
				    .dev_name = dev, .key_file = key_file };
	struct msga_pub_attr pa = { .size = sizeof(pa), .on_event = on_event,
				    .user = p };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "ct.*",
				    .flags = sub_flags, .on_msg = on_msg,
				    .on_event = on_event, .user = p };
	uint32_t topic;

	snprintf(p->uri, sizeof(p->uri), "rdma://%s:%d", addr, port);
	pa.uri = p->uri;
	if (msga_ctx_open(&ca, &p->pc) || msga_ctx_open(&ca, &p->sc))
		die("msga_ctx_open", msga_open_error());
	if (msga_pub_create(p->pc, &pa, &p->pub) ||
	    msga_pub_topic(p->pub, "ct.x", &topic) ||
	    msga_sub_create(p->sc, &sa, &p->sub))
		die("publisher or subscriber", msga_ctx_last_error(p->pc));
}

static void poll_both(struct pair *p)
{
	msga_ctx_poll(p->pc, 64);
	msga_ctx_poll(p->sc, 64);
}

/*
 * conns connects at once, timed (into *counted, the publisher's count of
 * them all); then the disconnects, waited out.
 */
static double connect_once(struct pair *p, double *counted)
{
	double t0 = now_us(), t = 0, give_up = t0 + 10e6 + conns * 5e6;
	uint32_t id[CONNS_MAX];
	int ret;

	p->connected = p->failed = 0;
	for (int i = 0; i < conns; i++) {
		ret = msga_sub_connect(p->sub, p->uri, &id[i]);
		if (ret < 0)
			die("msga_sub_connect", msga_strerror(ret));
	}
	while ((p->connected < conns ||
		msga_pub_subscribers(p->pub) < conns) && !p->failed &&
	       now_us() < give_up) {
		poll_both(p);
		if (!t && p->connected == conns)
			t = now_us() - t0;
	}
	if (counted)
		*counted = now_us() - t0;
	if (p->connected < conns || msga_pub_subscribers(p->pub) < conns) {
		fprintf(stderr, "msga_conntime: %d of %d connected, %d "
			"counted; subscriber: %s; publisher: %s\n",
			p->connected, conns, msga_pub_subscribers(p->pub),
			msga_ctx_last_error(p->sc), msga_ctx_last_error(p->pc));
		die("connect", p->failed ? msga_strerror(p->status) :
					   "timed out");
	}
	for (int i = 0; i < conns; i++)
		msga_sub_disconnect(p->sub, id[i]);
	while (msga_pub_subscribers(p->pub) && now_us() < give_up)
		poll_both(p);
	/* (let the CM finish with the old connection before the next) */
	for (double end = now_us() + 2000; now_us() < end;)
		poll_both(p);
	return t;
}

static void close_pair(struct pair *p)
{
	msga_sub_destroy(p->sub);
	msga_pub_destroy(p->pub);
	msga_ctx_close(p->sc);
	msga_ctx_close(p->pc);
	free(p->us);
	free(p->counted_us);
}

static void turns_alloc(struct pair *p, long n)
{
	p->us = calloc((size_t)n, sizeof(double));
	p->counted_us = calloc((size_t)n, sizeof(double));
	if (!p->us || !p->counted_us)
		die("calloc", "out of memory");
}

/* n turns of each pair (keyed: NULL for plain only), alternating. */
static void run_turns(struct pair *plain, struct pair *keyed, long n)
{
	connect_once(plain, NULL); /* (warm: first connects resolve routes) */
	if (keyed)
		connect_once(keyed, NULL);
	for (long i = 0; i < n; i++) {
		/* alternate which goes first, so neither always follows */
		if (keyed && i % 2)
			keyed->us[i] = connect_once(keyed,
						    &keyed->counted_us[i]);
		plain->us[i] = connect_once(plain, &plain->counted_us[i]);
		if (keyed && !(i % 2))
			keyed->us[i] = connect_once(keyed,
						    &keyed->counted_us[i]);
	}
}

/* (keyed figures 0: plain only) */
static void write_json(const char *path, long n, double mp, double mk,
		       double cp, double ck)
{
	FILE *f = fopen(path, "w");

	if (!f)
		die(path, strerror(errno));
	fprintf(f, "{\"count\": %ld, \"conns\": %d, \"plain_median_us\": "
		"%.3f, \"keyed_median_us\": %.3f, \"ratio\": %.4f, "
		"\"plain_counted_median_us\": %.3f, "
		"\"keyed_counted_median_us\": %.3f}\n", n, conns, mp, mk,
		mk / mp, cp, ck);
	fclose(f);
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "key-file", required_argument, NULL, 'k' },
		{ "json", required_argument, NULL, 'J' },
		{ "no-ring", no_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *key_file = NULL, *json = NULL, *dev = NULL;
	struct pair plain = { 0 }, keyed = { 0 };
	long n = 200;
	int port = 18700, c;
	uint32_t sub_flags = 0;
	double mp, mk = 0, cp, ck = 0;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:c:p:d:h", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 100000)
				usage_error("-n must be 1..100000", optarg);
			break;
		case 'c':
			conns = (int)strtol(optarg, &end, 10);
			if (*end || conns < 1 || conns > CONNS_MAX)
				usage_error("-c must be 1..64", optarg);
			break;
		case 'R': sub_flags |= MSGA_SUB_NO_RING; break;
		case 'p':
			port = (int)strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65533)
				usage_error("-p must be 1..65533", optarg);
			break;
		case 'd': dev = optarg; break;
		case 'k': key_file = optarg; break;
		case 'J': json = optarg; break;
		case 'h':
			printf("usage: msga_conntime [-n COUNT] [-c CONNS] "
			       "[-p PORT] [-d DEV] [--no-ring] [--json FILE] "
			       "[--key-file FILE] ADDRESS\n");
			return 0;
		case ':': usage_error("missing value for", argv[optind - 1]);
			break;
		default: usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		usage_error("one ADDRESS is required", NULL);
	turns_alloc(&plain, n);
	open_pair(&plain, argv[optind], dev, port, NULL, sub_flags);
	if (key_file) {
		turns_alloc(&keyed, n);
		open_pair(&keyed, argv[optind], dev, port + 1, key_file,
			  sub_flags);
	}
	run_turns(&plain, key_file ? &keyed : NULL, n);
	mp = median(plain.us, n);
	cp = median(plain.counted_us, n);
	if (key_file) {
		mk = median(keyed.us, n);
		ck = median(keyed.counted_us, n);
	}
	printf("connect %d at once (median of %ld turns): plain: all "
	       "connected %.1f us, all counted %.1f us (max %.1f us)", conns,
	       n, mp, cp, plain.counted_us[n - 1]);
	if (key_file)
		printf("; keyed: %.1f us, %.1f us; keyed/plain %.3f", mk, ck,
		       mk / mp);
	printf("\n");
	if (json)
		write_json(json, n, mp, mk, cp, ck);
	if (key_file)
		close_pair(&keyed);
	close_pair(&plain);
	return 0;
}
