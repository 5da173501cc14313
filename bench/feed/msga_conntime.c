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
 * with --json writes them.
 *
 *   msga_conntime [-n COUNT] [-p PORT] [--json FILE] --key-file FILE ADDR
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

struct pair {
	struct msga_ctx *pc, *sc;
	struct msga_pub *pub;
	struct msga_sub *sub;
	char uri[96];
	int connected, failed, status;
	double *us;
};

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
		p->connected = 1;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED ||
		 ev->type == MSGA_EVENT_DISCONNECTED) {
		p->failed = 1;
		p->status = ev->status;
	}
}

static void open_pair(struct pair *p, const char *addr, const char *dev,
		      int port, const char *key_file)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = addr,
				    .dev_name = dev, .key_file = key_file };
	struct msga_pub_attr pa = { .size = sizeof(pa), .on_event = on_event,
				    .user = p };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "ct.*",
				    .on_msg = on_msg, .on_event = on_event,
				    .user = p };
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

/* One connect, timed; then the disconnect, waited out. */
static double connect_once(struct pair *p)
{
	double t0 = now_us(), t, give_up = t0 + 10e6;
	uint32_t id;
	int ret;

	p->connected = p->failed = 0;
	ret = msga_sub_connect(p->sub, p->uri, &id);
	if (ret < 0)
		die("msga_sub_connect", msga_strerror(ret));
	while (!p->connected && !p->failed && now_us() < give_up)
		poll_both(p);
	t = now_us() - t0;
	if (!p->connected)
		die("connect", p->failed ? msga_strerror(p->status) :
					   "timed out");
	msga_sub_disconnect(p->sub, id);
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
}

int main(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "key-file", required_argument, NULL, 'k' },
		{ "json", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *key_file = NULL, *json = NULL, *dev = NULL;
	struct pair plain = { 0 }, keyed = { 0 };
	long n = 200;
	int port = 18700, c;
	double mp, mk;
	char *end;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:p:d:h", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 100000)
				usage_error("-n must be 1..100000", optarg);
			break;
		case 'p':
			port = (int)strtol(optarg, &end, 10);
			if (*end || port < 1 || port > 65533)
				usage_error("-p must be 1..65533", optarg);
			break;
		case 'd': dev = optarg; break;
		case 'k': key_file = optarg; break;
		case 'J': json = optarg; break;
		case 'h':
			printf("usage: msga_conntime [-n COUNT] [-p PORT] [-d DEV]"
			       " [--json FILE] --key-file FILE ADDRESS\n");
			return 0;
		case ':': usage_error("missing value for", argv[optind - 1]);
			break;
		default: usage_error("unknown option", argv[optind - 1]);
		}
	}
	if (!key_file)
		usage_error("--key-file is required", NULL);
	if (optind != argc - 1)
		usage_error("one ADDRESS is required", NULL);
	plain.us = calloc((size_t)n, sizeof(double));
	keyed.us = calloc((size_t)n, sizeof(double));
	if (!plain.us || !keyed.us)
		die("calloc", "out of memory");
	open_pair(&plain, argv[optind], dev, port, NULL);
	open_pair(&keyed, argv[optind], dev, port + 1, key_file);
	connect_once(&plain); /* (warm: first connects resolve routes) */
	connect_once(&keyed);
	for (long i = 0; i < n; i++) {
		/* alternate which goes first, so neither always follows */
		if (i % 2) {
			keyed.us[i] = connect_once(&keyed);
			plain.us[i] = connect_once(&plain);
		} else {
			plain.us[i] = connect_once(&plain);
			keyed.us[i] = connect_once(&keyed);
		}
	}
	mp = median(plain.us, n);
	mk = median(keyed.us, n);
	printf("connect (median of %ld): plain %.1f us, keyed %.1f us, "
	       "keyed/plain %.3f\n", n, mp, mk, mk / mp);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f)
			die(json, strerror(errno));
		fprintf(f, "{\"count\": %ld, \"plain_median_us\": %.3f, "
			"\"keyed_median_us\": %.3f, \"ratio\": %.4f}\n", n, mp,
			mk, mk / mp);
		fclose(f);
	}
	close_pair(&keyed);
	close_pair(&plain);
	free(keyed.us);
	free(plain.us);
	return 0;
}
