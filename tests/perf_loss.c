/* SPDX-License-Identifier: MIT */
/*
 * perf_loss - what multicast loss recovery costs under loss (issue 25's
 * benchmarks), one role per process; bench/scripts/loss_bench.sh runs a
 * publisher and several subscribers in the test VM and prints the table.
 * It lives under tests/ because it sets the publisher's test-only fault
 * hook (fault_drop_ppm, lib/api/pubsub.h), a private header no tool under
 * bench/ may include. It is built with `make check` (or `make
 * tests/perf_loss`) but never run by it: its figures are timings.
 *
 *   perf_loss pub --uri URI --addr IP [--rate N] [--duration S]
 *                 [--loss-ppm N] [--size N] [--warmup N] [--linger-ms N]
 *                 [--tick-us N] [--seed N]
 *       A MSGA_PUB_RELIABLE publisher on topic "loss": --warmup messages
 *       (500) without loss, so that subscribers know the stream before a
 *       first message can be dropped; then --rate messages a second for
 *       --duration seconds with the hook dropping --loss-ppm in a million
 *       of them; then an end marker, and --linger-ms (1500) of serving
 *       repairs for the tail. It never busy-waits: it sleeps in ppoll() on
 *       msga_ctx_fd() until the next --tick-us (1000) boundary and sends
 *       what the schedule says is due, so its CPU time (getrusage, user +
 *       system, from the first measured message to the end of the linger)
 *       is what publishing and repairing cost, not spinning. One that
 *       falls 2 s behind its schedule has failed the rate, and stops.
 *   perf_loss sub --uri URI --addr IP [--repair nak|read] [--ready FILE]
 *                 [--samples PREFIX] [--timeout S] [--busy]
 *       Subscribe and take the stream until its end marker. Each message
 *       carries its commit time (CLOCK_MONOTONIC: the same clock, since
 *       both run in one VM) and which of the 64 numbers before it the
 *       hook dropped, so the subscriber knows exactly which ones it got
 *       through repair. Writes PREFIX.all and PREFIX.rec, the delivery
 *       latencies (uint32 ns, commit -> callback) of all measured
 *       messages and of the dropped ones, for `perf_loss pct`.
 *   perf_loss pct FILE...
 *       The count, median and p99 of the latencies in the files together.
 *
 * Each role prints one JSON line on stdout. A bad option: one line on
 * stderr, exit 2. A sub asked for --repair read in a build whose
 * msga_sub_create() does not know MSGA_SUB_REPAIR_BY_NAK (before 0.7)
 * prints "READ path not available in this build" and exits 3: such a
 * build repairs by NAK only.
 *
 * Why getrusage and not callgrind for the publisher's CPU: on rxe the
 * whole send (and the loopback delivery) runs inside the poster's system
 * call, so most of what a message and a resend cost is kernel time, which
 * callgrind does not count; and callgrind slows the publisher some 50
 * times under the VM's emulation, so it could not hold the rate, and the
 * repairs' timing (NAK delays, give-up) would no longer be the real one.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "msgaccel.h"
#include "pubsub.h"

#define TOPIC "loss"
/* Longest sleep of a subscriber in event mode: a missed wake-up's cost. */
#define SUB_WAIT_CAP_MS 20
/* Polls per wake-up at most, so that the schedule is looked at often. */
#define DRAIN_MAX 64

enum rec_kind { K_WARMUP = 0, K_MEASURED = 1, K_END = 2 };

/* The head of every message's payload. */
struct rec {
	uint64_t commit_ns;  /* CLOCK_MONOTONIC just before the commit */
	uint64_t dropped;    /* bit i: number seq - 1 - i was dropped */
	uint32_t kind;       /* enum rec_kind */
	uint32_t first;      /* END: the first measured number */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* This process's CPU time so far, in user mode and in the kernel. */
struct cpu {
	double user, sys;
};

static struct cpu cpu_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct cpu){
		.user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		.sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6 };
}

static void bad_option(const char *what, const char *value)
{
	fprintf(stderr, "perf_loss: bad %s: %s\n", what, value ? value : "");
	exit(2);
}

static long num_arg(const char *what, const char *v, long lo, long hi)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		bad_option(what, v);
	return n;
}

static void die(const char *what, int err, struct msga_ctx *ctx)
{
	fprintf(stderr, "perf_loss: %s: %s%s%s\n", what, msga_strerror(err),
		ctx ? " - " : "", ctx ? msga_ctx_last_error(ctx) : "");
	exit(1);
}

struct opts {
	const char *uri, *addr, *ready, *samples;
	long rate, size, warmup, linger_ms, tick_us, loss_ppm, seed;
	double duration, timeout;
	int read, busy;
};

static struct msga_ctx *open_ctx(const struct opts *o)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = o->addr };
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(&ca, &ctx);

	if (ret) {
		fprintf(stderr, "perf_loss: msga_ctx_open %s: %s - %s\n",
			o->addr, msga_strerror(ret), msga_open_error());
		exit(1);
	}
	return ctx;
}

/* Wait on the context's fd for at most wait_ns, then drain it (bounded). */
static void wait_and_poll(struct msga_ctx *ctx, int fd, uint64_t wait_ns)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = (time_t)(wait_ns / 1000000000u),
			       .tv_nsec = (long)(wait_ns % 1000000000u) };
	int ret = 0;

	if (wait_ns)
		ppoll(&pfd, 1, &ts, NULL);
	for (int i = 0; i < DRAIN_MAX; i++) {
		ret = msga_ctx_poll(ctx, 64);
		if (ret <= 0)
			break;
	}
	if (ret < 0)
		die("msga_ctx_poll", ret, ctx);
}

/* ------------------------------------------------------------ publisher */

struct pubrun {
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	int fd, connected;
	uint32_t topic;
	uint64_t seq, dropped_bits, max_lag_ns;
	uint64_t claim_waits;  /* polls for a send buffer (-EAGAIN) */
};

/* One message of kind k, due at due_ns; waits (polling) for a buffer. */
static void publish(struct pubrun *r, const struct opts *o, uint32_t kind,
		    uint32_t first, uint64_t due_ns)
{
	uint64_t before = r->pub->ud.fault_dropped, t;
	struct msga_claim c = { .size = sizeof(c) };
	struct rec h;
	int ret;

	while ((ret = msga_pub_claim(r->pub, r->topic, (size_t)o->size,
				     &c)) == -EAGAIN) {
		r->claim_waits++;
		msga_ctx_poll(r->ctx, 64);
	}
	if (ret)
		die("msga_pub_claim", ret, r->ctx);
	memset(c.data, 0, c.len);
	t = now_ns();
	h = (struct rec){ .commit_ns = t, .dropped = r->dropped_bits,
			  .kind = kind, .first = first };
	memcpy(c.data, &h, sizeof(h));
	ret = msga_pub_commit(r->pub, &c);
	if (ret < 0)
		die("msga_pub_commit", ret, r->ctx);
	r->seq++;
	/* this number went into the hook's drop, or out: next ones say so */
	r->dropped_bits = r->dropped_bits << 1 |
			  (r->pub->ud.fault_dropped != before);
	if (due_ns && t > due_ns && t - due_ns > r->max_lag_ns)
		r->max_lag_ns = t - due_ns;
}

/* A publisher this far behind its schedule has failed the rate: it stops. */
#define GIVE_UP_LAG_NS 2000000000u

/*
 * n messages of kind k at o->rate from now, sleeping between ticks; fewer
 * if it falls GIVE_UP_LAG_NS behind (*sent says how many). The time taken.
 */
static uint64_t paced(struct pubrun *r, const struct opts *o, uint64_t n,
		      uint32_t kind, uint32_t first, uint64_t *sentp)
{
	uint64_t t0 = now_ns(), sent = 0, tick = (uint64_t)o->tick_us * 1000;

	*sentp = 0;
	while (sent < n && r->max_lag_ns < GIVE_UP_LAG_NS) {
		uint64_t now = now_ns(), el = now - t0;
		/* due: those whose time (t0 + i / rate) has come */
		uint64_t due = el * (uint64_t)o->rate / 1000000000u + 1;

		if (due > n)
			due = n;
		for (; sent < due && r->max_lag_ns < GIVE_UP_LAG_NS; sent++)
			publish(r, o, kind, first,
				t0 + sent * 1000000000u / (uint64_t)o->rate);
		if (sent < n) {
			/*
			 * Sleep until the next message is due, and at least
			 * to the next tick: at high rates one wake-up a tick
			 * sends a burst, at low ones each message has its own.
			 */
			uint64_t next = t0 + sent * 1000000000u /
					     (uint64_t)o->rate, wait;

			now = now_ns();
			el = now - t0;
			wait = tick - el % tick;
			if (next > now && next - now > wait)
				wait = next - now;
			wait_and_poll(r->ctx, r->fd, wait);
		}
	}
	*sentp = sent;
	return now_ns() - t0;
}

static void pub_on_event(const struct msga_event *ev, void *user)
{
	struct pubrun *r = user;

	if (ev->type == MSGA_EVENT_CONNECTED)
		r->connected = 1;
}

static int run_pub(const struct opts *o)
{
	struct pubrun r = { 0 };
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = o->uri,
				    .flags = MSGA_PUB_RELIABLE,
				    .on_event = pub_on_event, .user = &r };
	uint64_t n = (uint64_t)(o->duration * (double)o->rate), took, end, sent;
	uint32_t first;
	struct cpu cpu0, cpu1;
	double cpu;
	int ret;

	if (n < 1)
		bad_option("--rate x --duration (no message to send)", "");
	r.ctx = open_ctx(o);
	r.fd = msga_ctx_fd(r.ctx);
	if (r.fd < 0)
		die("msga_ctx_fd", r.fd, r.ctx);
	ret = msga_pub_create(r.ctx, &pa, &r.pub);
	if (ret)
		die("msga_pub_create", ret, r.ctx);
	ret = msga_pub_topic(r.pub, TOPIC, &r.topic);
	if (ret)
		die("msga_pub_topic", ret, r.ctx);
	/* the group joined (send-only) before the first message */
	end = now_ns() + 15000000000u;
	while (!r.connected && now_ns() < end)
		wait_and_poll(r.ctx, r.fd, 10000000u);
	if (!r.connected)
		die("the publisher's join", -ETIMEDOUT, r.ctx);
	paced(&r, o, (uint64_t)o->warmup, K_WARMUP, 0, &sent);
	first = (uint32_t)r.seq + 1;
	r.pub->ud.fault_rng = (uint32_t)o->seed;
	r.pub->ud.fault_drop_ppm = (uint32_t)o->loss_ppm;
	cpu0 = cpu_now();
	r.max_lag_ns = 0;
	took = paced(&r, o, n, K_MEASURED, first, &sent);
	r.pub->ud.fault_drop_ppm = 0; /* the end marker is not dropped */
	publish(&r, o, K_END, first, 0);
	end = now_ns() + (uint64_t)o->linger_ms * 1000000u;
	while (now_ns() < end) /* (NAKs wake the fd) */
		wait_and_poll(r.ctx, r.fd, 20000000u);
	cpu1 = cpu_now();
	cpu = cpu1.user - cpu0.user + cpu1.sys - cpu0.sys;
	printf("{\"role\":\"pub\",\"rate\":%ld,\"planned\":%" PRIu64
	       ",\"sent\":%" PRIu64
	       ",\"achieved_rate\":%.1f,\"max_lag_ms\":%.3f,\"loss_ppm\":%ld"
	       ",\"dropped\":%" PRIu64 ",\"naks_taken\":%" PRIu64
	       ",\"retx_msgs\":%" PRIu64 ",\"lost_sent\":%" PRIu64
	       ",\"claim_waits\":%" PRIu64 ",\"cpu_s\":%.4f,\"sys_s\":%.4f"
	       ",\"cpu_us_per_msg\":%.3f}\n",
	       o->rate, n, sent, took ? (double)sent * 1e9 / (double)took : 0.0,
	       (double)r.max_lag_ns / 1e6, o->loss_ppm,
	       r.pub->ud.fault_dropped, r.pub->ud.naks_taken, r.pub->ud.retx_msgs,
	       r.pub->ud.lost_sent, r.claim_waits, cpu, cpu1.sys - cpu0.sys,
	       cpu * 1e6 / (double)sent);
	fflush(stdout);
	msga_pub_destroy(r.pub);
	msga_ctx_close(r.ctx);
	return 0;
}

/* ----------------------------------------------------------- subscriber */

struct subrun {
	const struct opts *o;
	uint32_t *lat;       /* by number: ns, commit -> callback; 0: none */
	uint8_t *dropped;    /* by number: the hook dropped it */
	uint64_t cap;
	uint64_t last_seq, end_seq, first;
	uint64_t order_errors, bad, gaps, losses, lost;
	int connected, done, gone;
};

static void grow(struct subrun *s, uint64_t seq)
{
	uint64_t cap = s->cap ? s->cap : 1u << 16;

	while (cap <= seq)
		cap *= 2;
	if (cap == s->cap)
		return;
	s->lat = realloc(s->lat, cap * sizeof(*s->lat));
	s->dropped = realloc(s->dropped, cap);
	if (!s->lat || !s->dropped)
		die("realloc", -ENOMEM, NULL);
	memset(s->lat + s->cap, 0, (cap - s->cap) * sizeof(*s->lat));
	memset(s->dropped + s->cap, 0, cap - s->cap);
	s->cap = cap;
}

static void sub_on_msg(const struct msga_msg *m, void *user)
{
	uint64_t t = now_ns(), ns;
	struct subrun *s = user;
	struct rec h;

	if (m->len < sizeof(h)) {
		s->bad++;
		return;
	}
	memcpy(&h, m->data, sizeof(h));
	if (s->last_seq && m->seq != s->last_seq + 1)
		s->order_errors++;
	s->last_seq = m->seq;
	grow(s, m->seq);
	for (uint64_t b = h.dropped; b; b &= b - 1) {
		uint64_t back = 1 + (uint64_t)__builtin_ctzll(b);

		if (back < m->seq)
			s->dropped[m->seq - back] = 1;
	}
	if (h.kind == K_END) {
		s->end_seq = m->seq;
		s->first = h.first;
		s->done = 1;
		return;
	}
	if (h.kind != K_MEASURED)
		return;
	ns = t > h.commit_ns ? t - h.commit_ns : 1;
	s->lat[m->seq] = ns > UINT32_MAX ? UINT32_MAX : ns ? (uint32_t)ns : 1;
}

static void sub_on_event(const struct msga_event *ev, void *user)
{
	struct subrun *s = user;

	switch (ev->type) {
	case MSGA_EVENT_CONNECTED:
		s->connected = 1;
		break;
	case MSGA_EVENT_GAP:
		s->gaps++;
		break;
	case MSGA_EVENT_LOSS:
		s->losses++;
		s->lost += ev->count;
		break;
	case MSGA_EVENT_DISCONNECTED:
	case MSGA_EVENT_CONNECT_FAILED:
		s->gone = 1; /* the stream ended (or failed) before its marker */
		break;
	default:
		break;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of sorted v[n], in microseconds. */
static double quantile_us(const uint32_t *v, size_t n, double q)
{
	size_t i = (size_t)(q * (double)n);

	if (!n)
		return -1;
	return v[i < n ? i : n - 1] / 1e3;
}

static void print_pct(const char *name, uint32_t *v, size_t n, int comma)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	if (n)
		printf("\"%s\":{\"n\":%zu,\"p50_us\":%.2f,\"p99_us\":%.2f}%s",
		       name, n, quantile_us(v, n, 0.5), quantile_us(v, n, 0.99),
		       comma ? "," : "");
	else
		printf("\"%s\":{\"n\":0,\"p50_us\":null,\"p99_us\":null}%s",
		       name, comma ? "," : "");
}

static void write_samples(const char *prefix, const char *ext,
			  const uint32_t *v, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s.%s", prefix, ext);
	f = fopen(path, "wb");
	if (!f || fwrite(v, sizeof(*v), n, f) != n || fclose(f)) {
		fprintf(stderr, "perf_loss: cannot write %s\n", path);
		exit(1);
	}
}

/*
 * The library's recovery latency (msga_sub_stats.recovery_hist, since
 * 0.7: first missed -> repaired) at quantile q, as the bucket's upper
 * bound in microseconds; -1 when the histogram is empty (a build that
 * does not fill it yet).
 */
static double hist_quantile_us(const struct msga_sub_stats *st, double q)
{
	uint64_t n = 0, acc = 0;

	for (int i = 0; i < MSGA_RECOVERY_HIST_BUCKETS; i++)
		n += st->recovery_hist[i];
	for (int i = 0; n && i < MSGA_RECOVERY_HIST_BUCKETS; i++) {
		acc += st->recovery_hist[i];
		if ((double)acc >= q * (double)n)
			return (double)(1ull << i);
	}
	return -1;
}

/* ,"name":v, a library quantile, or null when unknown. */
static void print_hist_q(const char *name, double v)
{
	if (v < 0)
		printf(",\"%s\":null", name);
	else
		printf(",\"%s\":%.0f", name, v);
}

/*
 * A subscriber that repairs the way --repair says. A library before 0.7
 * refuses MSGA_SUB_REPAIR_BY_NAK (-EINVAL) and repairs by NAK only: NAK
 * mode then runs without the flag, and READ mode cannot run at all.
 */
static struct msga_sub *make_sub(struct msga_ctx *ctx, struct subrun *s,
				 const char **mode)
{
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = TOPIC,
				    .on_msg = sub_on_msg,
				    .on_event = sub_on_event, .user = s,
				    .flags = MSGA_SUB_REPAIR_BY_NAK };
	struct msga_sub *sub;
	int ret = msga_sub_create(ctx, &sa, &sub);

	if (ret == -EINVAL) {
		if (s->o->read) {
			fprintf(stderr, "perf_loss: READ path not available "
					"in this build\n");
			printf("{\"role\":\"sub\",\"repair\":\"read\","
			       "\"status\":\"read-unavailable\"}\n");
			exit(3);
		}
		*mode = "nak-only-build";
		sa.flags = 0;
		ret = msga_sub_create(ctx, &sa, &sub);
	} else if (!ret && s->o->read) {
		/* the flag is known: READ is the default, without it */
		msga_sub_destroy(sub);
		sa.flags = 0;
		ret = msga_sub_create(ctx, &sa, &sub);
	}
	if (ret)
		die("msga_sub_create", ret, ctx);
	return sub;
}

static int run_sub(const struct opts *o)
{
	struct msga_sub_stats st = { .size = sizeof(st) };
	const char *mode = o->read ? "read" : "nak";
	struct subrun s = { .o = o };
	struct msga_ctx *ctx = open_ctx(o);
	uint64_t deadline = now_ns() + (uint64_t)(o->timeout * 1e9);
	uint64_t missing = 0, nall = 0, nrec = 0, ndropped = 0;
	uint32_t *all, *rec;
	struct msga_sub *sub;
	int fd = -1, ret, ready = 0;

	if (!o->busy) {
		fd = msga_ctx_fd(ctx); /* before connecting (msga_ctx_fd(3)) */
		if (fd < 0)
			die("msga_ctx_fd", fd, ctx);
	}
	sub = make_sub(ctx, &s, &mode);
	ret = msga_sub_connect(sub, o->uri, NULL);
	if (ret < 0)
		die("msga_sub_connect", ret, ctx);
	while (!s.done && !s.gone && now_ns() < deadline) {
		if (o->busy)
			msga_ctx_poll(ctx, 64);
		else
			wait_and_poll(ctx, fd, SUB_WAIT_CAP_MS * 1000000u);
		if (s.connected && !ready && o->ready) {
			int rfd = open(o->ready, O_WRONLY | O_CREAT, 0644);

			if (rfd < 0)
				die("open --ready", -errno, NULL);
			close(rfd);
			ready = 1;
		}
	}
	msga_sub_stats(sub, &st);
	/* the measured numbers: [first, end) */
	all = malloc((s.end_seq + 1) * sizeof(*all));
	rec = malloc((s.end_seq + 1) * sizeof(*rec));
	if (!all || !rec)
		die("malloc", -ENOMEM, ctx);
	for (uint64_t q = s.first; s.done && q < s.end_seq; q++) {
		ndropped += s.dropped[q];
		if (!s.lat[q]) {
			missing++;
			continue;
		}
		all[nall++] = s.lat[q];
		if (s.dropped[q])
			rec[nrec++] = s.lat[q];
	}
	if (o->samples) {
		write_samples(o->samples, "all", all, nall);
		write_samples(o->samples, "rec", rec, nrec);
	}
	printf("{\"role\":\"sub\",\"repair\":\"%s\",\"status\":\"%s\","
	       "\"measured\":%" PRIu64 ",\"delivered\":%" PRIu64
	       ",\"missing\":%" PRIu64 ",\"dropped_seen\":%" PRIu64
	       ",\"gaps\":%" PRIu64 ",\"loss_events\":%" PRIu64
	       ",\"lost\":%" PRIu64 ",\"order_errors\":%" PRIu64
	       ",\"bad\":%" PRIu64 ",\"lib\":{\"recovered\":%" PRIu64
	       ",\"unrecoverable\":%" PRIu64 ",\"naks\":%" PRIu64
	       ",\"reads\":%" PRIu64 ",\"read_fallbacks\":%" PRIu64
	       ",\"dups\":%" PRIu64,
	       mode, s.done ? "ok" : s.gone ? "ended-early" : "timeout",
	       s.done ? s.end_seq - s.first : 0, nall, missing, ndropped,
	       s.gaps, s.losses, s.lost, s.order_errors, s.bad, st.recovered,
	       st.unrecoverable, st.naks, st.reads, st.read_fallbacks,
	       st.dups);
	print_hist_q("recovery_p50_us_le", hist_quantile_us(&st, 0.5));
	print_hist_q("recovery_p99_us_le", hist_quantile_us(&st, 0.99));
	printf("},");
	print_pct("latency", all, nall, 1);
	print_pct("recovered_latency", rec, nrec, 0);
	printf("}\n");
	fflush(stdout);
	free(all);
	free(rec);
	free(s.lat);
	free(s.dropped);
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
	return s.done ? 0 : 1;
}

/* ------------------------------------------------------------------ pct */

static int run_pct(int argc, char **argv)
{
	uint32_t *v = NULL;
	size_t n = 0, cap = 0;

	if (argc < 1)
		bad_option("pct (no file)", "");
	for (int i = 0; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		uint32_t x;

		if (!f)
			bad_option("pct file", argv[i]);
		while (fread(&x, sizeof(x), 1, f) == 1) {
			if (n == cap) {
				cap = cap ? cap * 2 : 1u << 16;
				v = realloc(v, cap * sizeof(*v));
				if (!v)
					die("realloc", -ENOMEM, NULL);
			}
			v[n++] = x;
		}
		fclose(f);
	}
	printf("{");
	print_pct("latency", v, n, 0);
	printf("}\n");
	free(v);
	return 0;
}

/* -------------------------------------------------------------- options */

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "uri", required_argument, NULL, 'u' },
		{ "addr", required_argument, NULL, 'a' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "loss-ppm", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 's' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "linger-ms", required_argument, NULL, 'L' },
		{ "tick-us", required_argument, NULL, 'T' },
		{ "seed", required_argument, NULL, 'S' },
		{ "repair", required_argument, NULL, 'R' },
		{ "ready", required_argument, NULL, 'y' },
		{ "samples", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' },
		{ "busy", no_argument, NULL, 'b' },
		{ 0 }
	};
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'u': o->uri = optarg; break;
		case 'a': o->addr = optarg; break;
		case 'r': o->rate = num_arg("--rate", optarg, 1, 10000000); break;
		case 'd':
			o->duration = num_arg("--duration", optarg, 1, 3600);
			break;
		case 'l':
			o->loss_ppm = num_arg("--loss-ppm", optarg, 0, 500000);
			break;
		case 's':
			/*
			 * One datagram a message at any MTU of 1024 or more
			 * (rxe's): the sender's bookkeeping of drops is by
			 * message, the hook's by datagram.
			 */
			o->size = num_arg("--size", optarg, sizeof(struct rec),
					  512);
			break;
		case 'w': o->warmup = num_arg("--warmup", optarg, 1, 1000000); break;
		case 'L':
			o->linger_ms = num_arg("--linger-ms", optarg, 0, 60000);
			break;
		case 'T':
			o->tick_us = num_arg("--tick-us", optarg, 10, 1000000);
			break;
		case 'S': o->seed = num_arg("--seed", optarg, 1, UINT32_MAX); break;
		case 'R':
			if (strcmp(optarg, "nak") && strcmp(optarg, "read"))
				bad_option("--repair (nak or read)", optarg);
			o->read = !strcmp(optarg, "read");
			break;
		case 'y': o->ready = optarg; break;
		case 'o': o->samples = optarg; break;
		case 't':
			o->timeout = num_arg("--timeout", optarg, 1, 3600);
			break;
		case 'b': o->busy = 1; break;
		default:
			bad_option("option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bad_option("argument", argv[optind]);
	if (!o->uri || !o->addr)
		bad_option("options (--uri and --addr are required)", "");
}

int main(int argc, char **argv)
{
	struct opts o = { .rate = 10000, .size = 64, .warmup = 500,
			  .linger_ms = 1500, .tick_us = 1000,
			  .loss_ppm = 10000, .seed = 1, .duration = 5,
			  .timeout = 60 };

	if (argc < 2) {
		fprintf(stderr, "perf_loss: no role: perf_loss pub|sub|pct "
				"[options] (see its head comment)\n");
		return 2;
	}
	if (!strcmp(argv[1], "pct"))
		return run_pct(argc - 2, argv + 2);
	if (strcmp(argv[1], "pub") && strcmp(argv[1], "sub"))
		bad_option("role (pub, sub or pct)", argv[1]);
	parse(argc - 1, argv + 1, &o);
	return !strcmp(argv[1], "pub") ? run_pub(&o) : run_sub(&o);
}
