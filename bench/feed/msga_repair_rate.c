/* SPDX-License-Identifier: MIT */
/*
 * msga_repair_rate - how fast a reliable multicast subscriber that stopped
 * polling catches up (issue 35), and what its repair costs the
 * subscribers that kept polling. In one process, one thread, on one
 * device: a MSGA_PUB_RELIABLE publisher (context 1) sends a 3-topic feed
 * as fast as it is let (round-robin, 64-byte messages stamped with the
 * send time); subscriber S (context 2) is not polled for --stall-ms while
 * the feed goes on, then is polled again; OTHERS (2) subscribers in a
 * third context are polled throughout. Two runs, on two groups:
 *
 *  1. the stall run: --pre-ms of live feed (its rate is the live rate),
 *     the stall, then the feed goes on until S has delivered, or been
 *     told lost, every number sent before it resumed: the repair time;
 *  2. the control run: the same schedule without the stall (S polled
 *     throughout), over a window as long as run 1's repair, at the same
 *     point of the feed.
 *
 * The others' delivery latency (send stamp to their callback, one clock)
 * is taken in run 1's repair window and in run 2's window; their ratio
 * says what the repair cost them. Everything runs in one thread, so S's
 * repair work delays the others' polls as well as the device's and the
 * publisher's work: that is part of what is measured.
 *
 * Prints one JSON line: the live rate, the gap (numbers S missed: its
 * recovered plus unrecoverable counts over the repair), the repair time
 * and rate (numbers recovered a second), S's READs, NAKs and READ fallbacks, the others' p50/p99 in
 * both runs, and where the thread's time went in the repair window
 * (messages sent, claims refused, ms in each context's poll and in
 * commits).
 *
 *   msga_repair_rate --addr ADDR --uri URI --control-uri URI
 *                    [--stall-ms MS] [--path read|nak] [--pre-ms MS]
 *                    [--max-repair-ms MS] [--peer-timeout-ms MS]
 *                    [--retain-bytes N]
 *
 * A bad option prints one line and exits with status 2; a failed run
 * (setup, or S never caught up) prints its JSON with "ok": false and
 * exits with 1.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msgaccel.h"

#define TOPICS 3
#define OTHERS 2
#define MSG_LEN 64u
/*
 * Every polled context is polled after each send: the others' latency is
 * then the device's and the library's, not a polling cadence's.
 */
#define POLL_EVERY 1u
#define JOIN_MS 15000u

struct opts {
	const char *addr, *uri, *control_uri;
	uint32_t stall_ms, pre_ms, max_repair_ms, peer_timeout_ms;
	uint64_t retain_bytes;
	int nak;
};

/* latency samples, microseconds */
struct samples {
	double *v;
	size_t n, cap;
};

struct run {
	struct msga_ctx *ctx[3];        /* publisher, S, others */
	struct msga_pub *pub;
	struct msga_sub *s, *o[OTHERS];
	uint32_t t[TOPICS];
	uint64_t sent, sent_seq[TOPICS];
	uint64_t next[TOPICS];          /* S: the next number due */
	uint64_t s_bad, s_lost;
	int connected, failed;
	int window;                     /* others' samples are taken */
	struct samples lat;
	/*
	 * In the window, where the thread's time went: polling each
	 * context (publisher, S, others), claiming and committing, in ns;
	 * and the claims refused (-EAGAIN).
	 */
	uint64_t busy_ns[4], eagain;
	uint64_t other_lost;
};

static void usage_error(const char *why, const char *val)
{
	fprintf(stderr, "msga_repair_rate: %s%s%s\n", why, val ? ": " : "",
		val ? val : "");
	exit(2);
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "msga_repair_rate: %s: %s\n", what,
		msga_strerror(ret));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int topic_index(const char *name)
{
	if (!name || strncmp(name, "rr.t", 4) || name[4] < '0' ||
	    name[4] >= '0' + TOPICS || name[5])
		return -1;
	return name[4] - '0';
}

static void push(struct samples *s, double us)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 65536;
		double *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			die("samples", -ENOMEM);
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = us;
}

/* S: each number of each topic once, in order, or inside a LOSS */
static void s_on_msg(const struct msga_msg *m, void *user)
{
	struct run *r = user;
	int t = topic_index(m->topic);

	if (t < 0 || m->seq != r->next[t]) {
		r->s_bad++;
		return;
	}
	r->next[t]++;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct run *r = user;
	int t = topic_index(ev->topic);

	if (ev->type == MSGA_EVENT_CONNECTED && ev->sub)
		r->connected++;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED)
		r->failed++;
	if (ev->type != MSGA_EVENT_LOSS)
		return;
	if (ev->sub != r->s) {
		r->other_lost += ev->count;
		return;
	}
	if (t < 0 || ev->seq != r->next[t]) {
		r->s_bad++;
		return;
	}
	r->next[t] += ev->count;
	r->s_lost += ev->count;
}

/* the others: the message's age, in the window */
static void o_on_msg(const struct msga_msg *m, void *user)
{
	struct run *r = user;
	uint64_t stamp;

	if (!r->window || m->len < sizeof(stamp))
		return;
	memcpy(&stamp, m->data, sizeof(stamp));
	push(&r->lat, (double)(now_ns() - stamp) / 1e3);
}

static struct msga_sub *sub_on(struct run *r, struct msga_ctx *ctx,
			       uint32_t flags, msga_msg_cb cb, const char *uri)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = "rr.*", .on_msg = cb,
				   .on_event = on_event, .user = r };
	struct msga_sub *sub;
	int ret = msga_sub_create(ctx, &a, &sub);

	if (ret)
		die("msga_sub_create", ret);
	ret = msga_sub_connect(sub, uri);
	if (ret < 0)
		die("msga_sub_connect", ret);
	return sub;
}

static void poll_all(struct run *r, int stalled)
{
	for (int i = 0; i < 3; i++) {
		uint64_t t0 = r->window ? now_ns() : 0;
		int ret;

		if (i == 1 && stalled)
			continue;
		ret = msga_ctx_poll(r->ctx[i], 64);
		if (ret < 0)
			die("msga_ctx_poll", ret);
		if (r->window)
			r->busy_ns[i] += now_ns() - t0;
	}
}

static void run_up(struct run *r, const struct opts *o, const char *uri)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = o->addr,
				    .peer_timeout_ms = o->peer_timeout_ms };
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri,
				    .flags = MSGA_PUB_RELIABLE,
				    .retransmit_bytes = o->retain_bytes };
	char name[16];
	uint64_t end;
	int ret;

	memset(r, 0, sizeof(*r));
	for (int i = 0; i < 3; i++) {
		ret = msga_ctx_open(&ca, &r->ctx[i]);
		if (ret)
			die("msga_ctx_open", ret);
	}
	ret = msga_pub_create(r->ctx[0], &pa, &r->pub);
	if (ret)
		die("msga_pub_create", ret);
	for (int i = 0; i < TOPICS; i++) {
		snprintf(name, sizeof(name), "rr.t%d", i);
		ret = msga_pub_topic(r->pub, name, &r->t[i]);
		if (ret)
			die("msga_pub_topic", ret);
		r->next[i] = 1;
	}
	r->s = sub_on(r, r->ctx[1], o->nak ? MSGA_SUB_REPAIR_BY_NAK : 0,
		      s_on_msg, uri);
	for (int i = 0; i < OTHERS; i++)
		r->o[i] = sub_on(r, r->ctx[2], 0, o_on_msg, uri);
	for (end = now_ns() + JOIN_MS * 1000000ull;
	     r->connected < 1 + OTHERS && !r->failed;) {
		if (now_ns() > end)
			die("joining", -ETIMEDOUT);
		poll_all(r, 0);
	}
	if (r->failed)
		die("joining", -ECONNREFUSED);
}

static void run_down(struct run *r)
{
	for (int i = 0; i < 3; i++)
		msga_ctx_close(r->ctx[i]);
	free(r->lat.v);
}

/* The feed's next message, as soon as the publisher takes it. */
static void send_next(struct run *r, int stalled)
{
	uint32_t i = (uint32_t)(r->sent % TOPICS);
	struct msga_claim c;
	uint64_t stamp, t0;
	int ret;

	while ((ret = msga_pub_claim(r->pub, r->t[i], MSG_LEN, &c)) == -EAGAIN) {
		r->eagain += r->window;
		poll_all(r, stalled);
	}
	if (ret)
		die("msga_pub_claim", ret);
	memset(c.data, 0, MSG_LEN);
	stamp = now_ns();
	memcpy(c.data, &stamp, sizeof(stamp));
	t0 = stamp;
	ret = msga_pub_commit(r->pub, &c);
	if (ret < 0)
		die("msga_pub_commit", ret);
	if (r->window)
		r->busy_ns[3] += now_ns() - t0;
	r->sent_seq[i]++;
	if (++r->sent % POLL_EVERY == 0)
		poll_all(r, stalled);
}

/* Feed for ms, S stalled or not; returns the messages sent. */
static uint64_t feed_for(struct run *r, uint64_t ms, int stalled)
{
	uint64_t end = now_ns() + ms * 1000000ull, from = r->sent;

	while (now_ns() < end)
		send_next(r, stalled);
	return r->sent - from;
}

/* S has every number sent up to upto[]: delivered or lost */
static int caught_up(const struct run *r, const uint64_t *upto)
{
	for (int i = 0; i < TOPICS; i++)
		if (r->next[i] <= upto[i])
			return 0;
	return 1;
}

static struct msga_sub_stats stats_of(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };
	int ret = msga_sub_stats(sub, &st);

	if (ret)
		die("msga_sub_stats", ret);
	return st;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* nearest-rank percentile; -1 when there are no samples */
static double pct(struct samples *s, double p)
{
	size_t k;

	if (!s->n)
		return -1;
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	k = (size_t)((p / 100.0) * (double)s->n + 0.999999);
	return s->v[k ? k - 1 : 0];
}

struct result {
	double live_rate, repair_ms;
	uint64_t gap, lost, reads, naks, fallbacks, stall_sent, s_bad;
	uint64_t other_lost;
	int repaired;
	uint64_t window_sent, busy_ms[4], eagain;
	double p50, p99, c_p50, c_p99;
	size_t n, c_n;
};

static void stall_run(const struct opts *o, struct result *res)
{
	struct msga_sub_stats st0, st1;
	uint64_t upto[TOPICS], t0, t1, end, sent;
	struct run r;

	run_up(&r, o, o->uri);
	t0 = now_ns();
	sent = feed_for(&r, o->pre_ms, 0);
	res->live_rate = (double)sent * 1e9 / (double)(now_ns() - t0);
	st0 = stats_of(r.s);
	res->stall_sent = feed_for(&r, o->stall_ms, 1);
	memcpy(upto, r.sent_seq, sizeof(upto));
	r.window = 1;
	sent = r.sent;
	t0 = now_ns();
	end = t0 + (uint64_t)o->max_repair_ms * 1000000ull;
	while (!caught_up(&r, upto) && now_ns() < end)
		send_next(&r, 0);
	t1 = now_ns();
	r.window = 0;
	res->window_sent = r.sent - sent;
	res->eagain = r.eagain;
	for (int i = 0; i < 4; i++)
		res->busy_ms[i] = r.busy_ns[i] / 1000000;
	res->repaired = caught_up(&r, upto);
	res->repair_ms = (double)(t1 - t0) / 1e6;
	st1 = stats_of(r.s);
	res->gap = st1.recovered + st1.unrecoverable - st0.recovered -
		   st0.unrecoverable;
	res->lost = st1.unrecoverable - st0.unrecoverable;
	res->reads = st1.reads - st0.reads;
	res->naks = st1.naks - st0.naks;
	res->fallbacks = st1.read_fallbacks - st0.read_fallbacks;
	res->s_bad = r.s_bad;
	res->other_lost = r.other_lost;
	res->n = r.lat.n;
	res->p50 = pct(&r.lat, 50);
	res->p99 = pct(&r.lat, 99);
	run_down(&r);
}

/* The same schedule, no stall; the others' latency over the window. */
static void control_run(const struct opts *o, struct result *res)
{
	/* at least 200 ms of window, for samples enough for a p99 */
	uint64_t win = res->repair_ms < 200 ? 200 : (uint64_t)res->repair_ms;
	struct run r;

	run_up(&r, o, o->control_uri);
	feed_for(&r, (uint64_t)o->pre_ms + o->stall_ms, 0);
	r.window = 1;
	feed_for(&r, win, 0);
	r.window = 0;
	res->c_n = r.lat.n;
	res->c_p50 = pct(&r.lat, 50);
	res->c_p99 = pct(&r.lat, 99);
	res->other_lost += r.other_lost;
	run_down(&r);
}

static uint32_t num(const char *s, const char *opt)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > 3600000ul)
		usage_error(opt, s);
	return (uint32_t)v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "addr", 1, 0, 'a' }, { "uri", 1, 0, 'u' },
		{ "control-uri", 1, 0, 'c' }, { "stall-ms", 1, 0, 's' },
		{ "path", 1, 0, 'p' }, { "pre-ms", 1, 0, 'P' },
		{ "max-repair-ms", 1, 0, 'm' },
		{ "peer-timeout-ms", 1, 0, 't' },
		{ "retain-bytes", 1, 0, 'r' }, { 0, 0, 0, 0 }
	};
	int c;

	*o = (struct opts){ .stall_ms = 2000, .pre_ms = 1000,
			    .max_repair_ms = 30000 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'a': o->addr = optarg; break;
		case 'u': o->uri = optarg; break;
		case 'c': o->control_uri = optarg; break;
		case 's': o->stall_ms = num(optarg, "--stall-ms"); break;
		case 'P': o->pre_ms = num(optarg, "--pre-ms"); break;
		case 'm': o->max_repair_ms = num(optarg, "--max-repair-ms"); break;
		case 't': o->peer_timeout_ms = num(optarg, "--peer-timeout-ms"); break;
		case 'r': o->retain_bytes = strtoull(optarg, NULL, 10); break;
		case 'p':
			if (strcmp(optarg, "read") && strcmp(optarg, "nak"))
				usage_error("--path is read or nak", optarg);
			o->nak = !strcmp(optarg, "nak");
			break;
		default:
			usage_error("bad option", NULL);
		}
	}
	if (optind != argc || !o->addr || !o->uri || !o->control_uri)
		usage_error("--addr, --uri and --control-uri are needed", NULL);
	if (!o->pre_ms || !o->stall_ms)
		usage_error("--pre-ms and --stall-ms must be above 0", NULL);
}

int main(int argc, char **argv)
{
	struct result res = { 0 };
	struct opts o;
	int ok;

	parse(argc, argv, &o);
	stall_run(&o, &res);
	control_run(&o, &res);
	ok = res.repaired && !res.s_bad;
	printf("{\"ok\":%s,\"path\":\"%s\",\"stall_ms\":%u,"
	       "\"live_rate\":%.0f,\"stall_sent\":%llu,\"gap\":%llu,"
	       "\"lost\":%llu,\"repaired\":%s,\"repair_ms\":%.1f,"
	       "\"repair_rate\":%.0f,\"reads\":%llu,\"naks\":%llu,"
	       "\"read_fallbacks\":%llu,\"order_errors\":%llu,"
	       "\"others_lost\":%llu,\"repair_window\":{\"sent\":%llu,"
	       "\"claims_refused\":%llu,\"ms_polling_pub\":%llu,"
	       "\"ms_polling_stalled\":%llu,\"ms_polling_others\":%llu,"
	       "\"ms_committing\":%llu},"
	       "\"others\":{\"n\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f},"
	       "\"control\":{\"n\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f}}\n",
	       ok ? "true" : "false", o.nak ? "nak" : "read", o.stall_ms,
	       res.live_rate, (unsigned long long)res.stall_sent,
	       (unsigned long long)res.gap, (unsigned long long)res.lost,
	       res.repaired ? "true" : "false", res.repair_ms,
	       res.repair_ms > 0 ?
	       (double)(res.gap - res.lost) * 1e3 / res.repair_ms : 0,
	       (unsigned long long)res.reads, (unsigned long long)res.naks,
	       (unsigned long long)res.fallbacks,
	       (unsigned long long)res.s_bad,
	       (unsigned long long)res.other_lost,
	       (unsigned long long)res.window_sent,
	       (unsigned long long)res.eagain,
	       (unsigned long long)res.busy_ms[0],
	       (unsigned long long)res.busy_ms[1],
	       (unsigned long long)res.busy_ms[2],
	       (unsigned long long)res.busy_ms[3], res.n, res.p50, res.p99,
	       res.c_n, res.c_p50, res.c_p99);
	return ok ? 0 : 1;
}
