/* SPDX-License-Identifier: MIT */
/*
 * msga_repair_rate - how fast a reliable multicast subscriber that stopped
 * polling catches up (issue 35), and what its repair costs the
 * subscribers that kept polling. On one device, in two processes, each
 * with its own contexts:
 *
 *  - the parent: a MSGA_PUB_RELIABLE publisher (its own context) sends a
 *    3-topic feed as fast as it is let (round-robin, 64-byte messages
 *    stamped with the send time), and OTHERS (2) subscribers in a second
 *    context are polled after each send, in the same thread;
 *  - a child (forked before any context is opened): subscriber S, in its
 *    own context, busy-polled, except while it is stalled.
 *
 * Two runs, on two groups, each with a child of its own:
 *
 *  1. the stall run: --pre-ms of live feed (its rate is the live rate);
 *     then S stops polling (it blocks on its pipe) while the feed goes on
 *     for --stall-ms; then it is told to resume, with the last number of
 *     each topic sent by then, and polls until it has delivered, or been
 *     told lost, every one of them: the repair time, which it reports
 *     back (with its gap, lost, READs, NAKs and READ fallbacks) on a pipe;
 *  2. the control run: the same schedule, S polled throughout, over a
 *     window as long as run 1's repair, at the same point of the feed.
 *
 * The others' delivery latency (commit's stamp to their callback, one
 * clock, one process) is taken in run 1's repair window and in run 2's
 * window; their ratio says what S's repair cost the subscribers that kept
 * polling: the publisher's work for it (resends, READs served) and the
 * device's, not a shared polling thread's, since S polls in its own
 * process (the test VM has 2 vCPUs: the two can run at once).
 *
 * Prints one JSON line: the live rate, the gap (numbers S missed: its
 * recovered plus unrecoverable counts over the repair), the repair time
 * and rate (numbers recovered a second), S's READs, NAKs and READ
 * fallbacks, the others' p50/p99 in both runs, the feed's rate in both
 * windows, and where the parent's thread went in the repair window
 * (messages sent, claims refused, ms polling each context and
 * committing).
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
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "msgaccel.h"

#define TOPICS 3
#define OTHERS 2
#define MSG_LEN 64u
#define JOIN_MS 15000u
/* how often a busy loop looks at its pipe */
#define PIPE_CHECK_NS 500000ull

struct opts {
	const char *addr, *uri, *control_uri;
	uint32_t stall_ms, pre_ms, max_repair_ms, peer_timeout_ms;
	uint64_t retain_bytes;
	int nak;
};

static const char *role = "msga_repair_rate";

static void usage_error(const char *why, const char *val)
{
	fprintf(stderr, "msga_repair_rate: %s%s%s\n", why, val ? ": " : "",
		val ? val : "");
	exit(2);
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "%s: %s: %s\n", role, what, msga_strerror(ret));
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

static struct msga_ctx *ctx_open(const struct opts *o)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = o->addr,
				    .peer_timeout_ms = o->peer_timeout_ms };
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(&ca, &ctx);

	if (ret)
		die("msga_ctx_open", ret);
	return ctx;
}

static struct msga_sub *sub_on(struct msga_ctx *ctx, uint32_t flags,
			       msga_msg_cb on_msg, msga_event_cb on_event,
			       void *user, const char *uri)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = "rr.*", .on_msg = on_msg,
				   .on_event = on_event, .user = user };
	struct msga_sub *sub;
	int ret = msga_sub_create(ctx, &a, &sub);

	if (ret)
		die("msga_sub_create", ret);
	ret = msga_sub_connect(sub, uri, NULL);
	if (ret < 0)
		die("msga_sub_connect", ret);
	return sub;
}

static struct msga_sub_stats stats_of(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };
	int ret = msga_sub_stats(sub, &st);

	if (ret)
		die("msga_sub_stats", ret);
	return st;
}

/* ------------------------------------------------------------ the pipes */

/*
 * Lines between the two processes, the parent's to the child:
 *   join URI | stall | resume U0 U1 U2 (the last number sent on each
 *   topic) | end of file: finish;
 * the child's to the parent:
 *   ready | result REPAIRED GAP LOST REPAIR_NS READS NAKS FALLBACKS BAD |
 *   final BAD RECOVERED UNRECOVERABLE READS NAKS
 */
struct lines {
	int fd;
	size_t len;
	char buf[512];
};

/* 1: a line in out, without its newline; 0: none yet; -1: end of file */
static int line_get(struct lines *l, char *out, size_t n, int block)
{
	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		ssize_t got;

		if (nl) {
			size_t k = (size_t)(nl - l->buf);

			snprintf(out, n, "%.*s", (int)k, l->buf);
			memmove(l->buf, nl + 1, l->len - k - 1);
			l->len -= k + 1;
			return 1;
		}
		if (l->len == sizeof(l->buf))
			return -1;
		if (block) {
			struct pollfd p = { .fd = l->fd, .events = POLLIN };

			if (poll(&p, 1, -1) < 0 && errno != EINTR)
				return -1;
		}
		got = read(l->fd, l->buf + l->len, sizeof(l->buf) - l->len);
		if (got > 0) {
			l->len += (size_t)got;
			continue;
		}
		if (got == 0)
			return -1;
		if (errno == EINTR || (block && errno == EAGAIN))
			continue;
		return errno == EAGAIN ? 0 : -1;
	}
}

static void line_put(int fd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line_put(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf) ||
	    write(fd, buf, (size_t)n) != n)
		die("pipe", -errno);
}

/* ------------------------------------------------------ the child: S */

struct stalled {
	struct msga_ctx *ctx;
	struct msga_sub *s;
	uint64_t next[TOPICS];  /* the next number due */
	uint64_t bad, lost;
	int connected, failed;
};

/* each number of each topic once, in order, or inside a LOSS */
static void s_on_msg(const struct msga_msg *m, void *user)
{
	struct stalled *c = user;
	int t = topic_index(m->topic);

	if (t < 0 || m->seq != c->next[t]) {
		c->bad++;
		return;
	}
	c->next[t]++;
}

static void s_on_event(const struct msga_event *ev, void *user)
{
	struct stalled *c = user;
	int t = topic_index(ev->topic);

	if (ev->type == MSGA_EVENT_CONNECTED && ev->sub)
		c->connected++;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED)
		c->failed++;
	if (ev->type != MSGA_EVENT_LOSS)
		return;
	if (t < 0 || ev->seq != c->next[t]) {
		c->bad++;
		return;
	}
	c->next[t] += ev->count;
	c->lost += ev->count;
}

static void s_poll(struct stalled *c)
{
	int ret = msga_ctx_poll(c->ctx, 64);

	if (ret < 0)
		die("msga_ctx_poll", ret);
}

static int caught_up(const uint64_t *next, const uint64_t *upto)
{
	for (int i = 0; i < TOPICS; i++)
		if (next[i] <= upto[i])
			return 0;
	return 1;
}

/* Stalled until told to resume; then polled until it has every number. */
static void s_stall(struct stalled *c, struct lines *in, int out,
		    const struct opts *o)
{
	struct msga_sub_stats st0 = stats_of(c->s), st1;
	uint64_t upto[TOPICS], t0, end;
	char line[256];

	if (line_get(in, line, sizeof(line), 1) != 1 ||
	    sscanf(line, "resume %" SCNu64 " %" SCNu64 " %" SCNu64,
		   &upto[0], &upto[1], &upto[2]) != 3)
		die("pipe: no resume", -EPROTO);
	t0 = now_ns();
	end = t0 + (uint64_t)o->max_repair_ms * 1000000ull;
	while (!caught_up(c->next, upto) && now_ns() < end)
		s_poll(c);
	t0 = now_ns() - t0;
	st1 = stats_of(c->s);
	line_put(out, "result %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		 caught_up(c->next, upto),
		 st1.recovered + st1.unrecoverable - st0.recovered -
		 st0.unrecoverable, st1.unrecoverable - st0.unrecoverable,
		 t0, st1.reads - st0.reads, st1.naks - st0.naks,
		 st1.read_fallbacks - st0.read_fallbacks, c->bad);
}

static void child_main(int in_fd, int out, const struct opts *o)
{
	struct lines in = { .fd = in_fd };
	struct stalled c = { 0 };
	struct msga_sub_stats st;
	char line[256], uri[200];
	uint64_t end, check = 0;
	int ret;

	role = "msga_repair_rate (stalled subscriber)";
	ret = line_get(&in, line, sizeof(line), 1);
	if (ret < 0)
		_exit(0);       /* not needed */
	if (sscanf(line, "join %199s", uri) != 1)
		die("pipe: no join", -EPROTO);
	for (int i = 0; i < TOPICS; i++)
		c.next[i] = 1;
	c.ctx = ctx_open(o);
	c.s = sub_on(c.ctx, o->nak ? MSGA_SUB_REPAIR_BY_NAK : 0, s_on_msg,
		     s_on_event, &c, uri);
	for (end = now_ns() + JOIN_MS * 1000000ull; !c.connected && !c.failed;) {
		if (now_ns() > end)
			die("joining", -ETIMEDOUT);
		s_poll(&c);
	}
	if (c.failed)
		die("joining", -ECONNREFUSED);
	line_put(out, "ready\n");
	for (;;) {
		s_poll(&c);
		if (now_ns() < check)
			continue;
		check = now_ns() + PIPE_CHECK_NS;
		ret = line_get(&in, line, sizeof(line), 0);
		if (ret < 0)
			break;
		if (ret == 0)
			continue;
		if (strcmp(line, "stall"))
			die("pipe: not a stall", -EPROTO);
		s_stall(&c, &in, out, o);
	}
	st = stats_of(c.s);
	line_put(out, "final %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		 " %" PRIu64 "\n", c.bad, st.recovered, st.unrecoverable,
		 st.reads, st.naks);
	msga_ctx_close(c.ctx);
	_exit(0);
}

struct kid {
	pid_t pid;
	int to;                 /* the parent's end of each pipe */
	struct lines from;
};

static void set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		die("fcntl", -errno);
}

/*
 * Forked before the parent opens any context: the child has nothing of
 * the parent's verbs state. others[] are fds the child closes (the other
 * child's pipe ends).
 */
static void kid_fork(struct kid *k, const struct opts *o, const int *others,
		     int n_others)
{
	int down[2], up[2];

	if (pipe(down) || pipe(up))
		die("pipe", -errno);
	fflush(NULL);
	k->pid = fork();
	if (k->pid < 0)
		die("fork", -errno);
	if (k->pid == 0) {
		for (int i = 0; i < n_others; i++)
			close(others[i]);
		close(down[1]);
		close(up[0]);
		set_nonblock(down[0]);
		child_main(down[0], up[1], o);
	}
	close(down[0]);
	close(up[1]);
	k->to = down[1];
	k->from = (struct lines){ .fd = up[0] };
	set_nonblock(up[0]);
}

/* ------------------------------------------------------------ the parent */

/* latency samples, microseconds */
struct samples {
	double *v;
	size_t n, cap;
};

struct run {
	struct msga_ctx *ctx[2];        /* publisher, others */
	struct msga_pub *pub;
	struct msga_sub *o[OTHERS];
	struct kid *kid;
	uint32_t t[TOPICS];
	uint64_t sent, sent_seq[TOPICS];
	int connected, failed;
	int window;                     /* others' samples are taken */
	struct samples lat;
	/*
	 * In the window, where the thread's time went: polling each
	 * context (publisher, others), claiming and committing, in ns;
	 * and the claims refused (-EAGAIN).
	 */
	uint64_t busy_ns[3], eagain;
	uint64_t other_lost;
};

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

static void o_on_event(const struct msga_event *ev, void *user)
{
	struct run *r = user;

	if (ev->type == MSGA_EVENT_CONNECTED && ev->sub)
		r->connected++;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED)
		r->failed++;
	else if (ev->type == MSGA_EVENT_LOSS)
		r->other_lost += ev->count;
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

static void poll_all(struct run *r)
{
	for (int i = 0; i < 2; i++) {
		uint64_t t0 = r->window ? now_ns() : 0;
		int ret = msga_ctx_poll(r->ctx[i], 64);

		if (ret < 0)
			die("msga_ctx_poll", ret);
		if (r->window)
			r->busy_ns[i] += now_ns() - t0;
	}
}

static void run_up(struct run *r, const struct opts *o, const char *uri,
		   struct kid *kid)
{
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri,
				    .flags = MSGA_PUB_RELIABLE,
				    .retransmit_bytes = o->retain_bytes };
	char name[16], line[256];
	int ready = 0, ret;
	uint64_t end;

	memset(r, 0, sizeof(*r));
	r->kid = kid;
	for (int i = 0; i < 2; i++)
		r->ctx[i] = ctx_open(o);
	ret = msga_pub_create(r->ctx[0], &pa, &r->pub);
	if (ret)
		die("msga_pub_create", ret);
	for (int i = 0; i < TOPICS; i++) {
		snprintf(name, sizeof(name), "rr.t%d", i);
		ret = msga_pub_topic(r->pub, name, &r->t[i]);
		if (ret)
			die("msga_pub_topic", ret);
	}
	line_put(kid->to, "join %s\n", uri);
	for (int i = 0; i < OTHERS; i++)
		r->o[i] = sub_on(r->ctx[1], 0, o_on_msg, o_on_event, r, uri);
	for (end = now_ns() + JOIN_MS * 1000000ull;
	     (r->connected < OTHERS || !ready) && !r->failed;) {
		if (now_ns() > end)
			die("joining", -ETIMEDOUT);
		poll_all(r);
		if (!ready) {
			ret = line_get(&kid->from, line, sizeof(line), 0);
			if (ret < 0)
				die("the stalled subscriber's join", -EPIPE);
			ready = ret == 1 && !strcmp(line, "ready");
		}
	}
	if (r->failed)
		die("joining", -ECONNREFUSED);
}

struct final {
	uint64_t bad, recovered, unrecoverable, reads, naks;
};

/* S's process told to finish: its last line, and its end */
static struct final kid_finish(struct kid *k)
{
	struct final f = { 0 };
	char line[256];
	int ret, status;

	close(k->to);
	while ((ret = line_get(&k->from, line, sizeof(line), 1)) == 1)
		if (sscanf(line, "final %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64, &f.bad, &f.recovered,
			   &f.unrecoverable, &f.reads, &f.naks) == 5)
			break;
	if (ret != 1)
		die("the stalled subscriber's end", -EPIPE);
	close(k->from.fd);
	if (waitpid(k->pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("the stalled subscriber's process", -ECHILD);
	return f;
}

static void run_down(struct run *r)
{
	for (int i = 0; i < 2; i++)
		msga_ctx_close(r->ctx[i]);
	free(r->lat.v);
}

/* The feed's next message, as soon as the publisher takes it. */
static void send_next(struct run *r)
{
	uint32_t i = (uint32_t)(r->sent % TOPICS);
	struct msga_claim c = { .size = sizeof(c) };
	uint64_t stamp, t0;
	int ret;

	while ((ret = msga_pub_claim(r->pub, r->t[i], MSG_LEN, &c)) == -EAGAIN) {
		r->eagain += r->window;
		poll_all(r);
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
		r->busy_ns[2] += now_ns() - t0;
	r->sent_seq[i]++;
	r->sent++;
	/*
	 * Every polled context is polled after each send: the others'
	 * latency is then the device's and the library's, not a polling
	 * cadence's.
	 */
	poll_all(r);
}

/* Feed for ms; returns the messages sent. */
static uint64_t feed_for(struct run *r, uint64_t ms)
{
	uint64_t end = now_ns() + ms * 1000000ull, from = r->sent;

	while (now_ns() < end)
		send_next(r);
	return r->sent - from;
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
	double live_rate, repair_ms, window_ms, c_ms;
	uint64_t gap, lost, reads, naks, fallbacks, stall_sent, s_bad;
	uint64_t other_lost;
	int repaired;
	uint64_t window_sent, busy_ms[3], eagain, c_sent;
	double p50, p99, c_p50, c_p99;
	size_t n, c_n;
	struct final s_final, c_final;
};

static void stall_run(const struct opts *o, struct kid *kid,
		      struct result *res)
{
	uint64_t t0, t1, end, sent, check = 0, repair_ns = 0;
	char line[256];
	struct run r;
	int ret, got = 0;

	run_up(&r, o, o->uri, kid);
	t0 = now_ns();
	sent = feed_for(&r, o->pre_ms);
	res->live_rate = (double)sent * 1e9 / (double)(now_ns() - t0);
	line_put(kid->to, "stall\n");
	res->stall_sent = feed_for(&r, o->stall_ms);
	line_put(kid->to, "resume %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
		 r.sent_seq[0], r.sent_seq[1], r.sent_seq[2]);
	r.window = 1;
	sent = r.sent;
	t0 = now_ns();
	/* S gives up at --max-repair-ms and says so; this is for a hang */
	end = t0 + ((uint64_t)o->max_repair_ms + 10000) * 1000000ull;
	while (!got) {
		if (now_ns() > end)
			die("the stalled subscriber's result", -ETIMEDOUT);
		send_next(&r);
		if (now_ns() < check)
			continue;
		check = now_ns() + PIPE_CHECK_NS;
		ret = line_get(&kid->from, line, sizeof(line), 0);
		if (ret < 0)
			die("the stalled subscriber's result", -EPIPE);
		if (ret == 0)
			continue;
		if (sscanf(line, "result %d %" SCNu64 " %" SCNu64 " %" SCNu64
			   " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
			   &res->repaired, &res->gap, &res->lost, &repair_ns,
			   &res->reads, &res->naks, &res->fallbacks,
			   &res->s_bad) != 8)
			die("the stalled subscriber's result", -EPROTO);
		got = 1;
	}
	t1 = now_ns();
	r.window = 0;
	res->repair_ms = (double)repair_ns / 1e6;
	res->window_ms = (double)(t1 - t0) / 1e6;
	res->window_sent = r.sent - sent;
	res->eagain = r.eagain;
	for (int i = 0; i < 3; i++)
		res->busy_ms[i] = r.busy_ns[i] / 1000000;
	res->other_lost = r.other_lost;
	res->n = r.lat.n;
	res->p50 = pct(&r.lat, 50);
	res->p99 = pct(&r.lat, 99);
	res->s_final = kid_finish(kid);
	run_down(&r);
}

/* The same schedule, S polled throughout; the others' latency over the window. */
static void control_run(const struct opts *o, struct kid *kid,
			struct result *res)
{
	/* at least 200 ms of window, for samples enough for a p99 */
	uint64_t win = res->window_ms < 200 ? 200 : (uint64_t)res->window_ms;
	uint64_t t0;
	struct run r;

	run_up(&r, o, o->control_uri, kid);
	feed_for(&r, (uint64_t)o->pre_ms + o->stall_ms);
	r.window = 1;
	t0 = now_ns();
	res->c_sent = feed_for(&r, win);
	res->c_ms = (double)(now_ns() - t0) / 1e6;
	r.window = 0;
	res->c_n = r.lat.n;
	res->c_p50 = pct(&r.lat, 50);
	res->c_p99 = pct(&r.lat, 99);
	res->other_lost += r.other_lost;
	res->c_final = kid_finish(kid);
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
	if (strlen(o->uri) > 199 || strlen(o->control_uri) > 199)
		usage_error("a URI is too long", NULL);
	if (!o->pre_ms || !o->stall_ms)
		usage_error("--pre-ms and --stall-ms must be above 0", NULL);
}

int main(int argc, char **argv)
{
	struct result res = { 0 };
	struct kid kids[2];
	struct opts o;
	int ok;

	parse(argc, argv, &o);
	/* a child that died: its pipe says so (EPIPE), not a signal */
	signal(SIGPIPE, SIG_IGN);
	kid_fork(&kids[0], &o, NULL, 0);
	kid_fork(&kids[1], &o, (int[]){ kids[0].to, kids[0].from.fd }, 2);
	stall_run(&o, &kids[0], &res);
	control_run(&o, &kids[1], &res);
	ok = res.repaired && !res.s_final.bad && !res.c_final.bad;
	printf("{\"ok\":%s,\"path\":\"%s\",\"stall_ms\":%u,\"processes\":2,"
	       "\"live_rate\":%.0f,\"stall_sent\":%llu,\"gap\":%llu,"
	       "\"lost\":%llu,\"repaired\":%s,\"repair_ms\":%.1f,"
	       "\"repair_rate\":%.0f,\"reads\":%llu,\"naks\":%llu,"
	       "\"read_fallbacks\":%llu,\"order_errors\":%llu,"
	       "\"others_lost\":%llu,\"repair_window\":{\"ms\":%.1f,"
	       "\"sent\":%llu,\"claims_refused\":%llu,\"ms_polling_pub\":%llu,"
	       "\"ms_polling_others\":%llu,\"ms_committing\":%llu},"
	       "\"others\":{\"n\":%zu,\"p50_us\":%.1f,\"p99_us\":%.1f},"
	       "\"control\":{\"ms\":%.1f,\"sent\":%llu,\"n\":%zu,\"p50_us\":%.1f,"
	       "\"p99_us\":%.1f,\"stalled_sub_recovered\":%llu,"
	       "\"stalled_sub_lost\":%llu,\"order_errors\":%llu}}\n",
	       ok ? "true" : "false", o.nak ? "nak" : "read", o.stall_ms,
	       res.live_rate, (unsigned long long)res.stall_sent,
	       (unsigned long long)res.gap, (unsigned long long)res.lost,
	       res.repaired ? "true" : "false", res.repair_ms,
	       res.repair_ms > 0 ?
	       (double)(res.gap - res.lost) * 1e3 / res.repair_ms : 0,
	       (unsigned long long)res.reads, (unsigned long long)res.naks,
	       (unsigned long long)res.fallbacks,
	       (unsigned long long)res.s_final.bad,
	       (unsigned long long)res.other_lost, res.window_ms,
	       (unsigned long long)res.window_sent,
	       (unsigned long long)res.eagain,
	       (unsigned long long)res.busy_ms[0],
	       (unsigned long long)res.busy_ms[1],
	       (unsigned long long)res.busy_ms[2], res.n, res.p50, res.p99,
	       res.c_ms, (unsigned long long)res.c_sent, res.c_n, res.c_p50, res.c_p99,
	       (unsigned long long)res.c_final.recovered,
	       (unsigned long long)res.c_final.unrecoverable,
	       (unsigned long long)res.c_final.bad);
	return ok ? 0 : 1;
}
