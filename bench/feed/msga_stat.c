/* SPDX-License-Identifier: MIT */
/*
 * msga_stat - join multicast groups with a msgaccel subscriber and print its
 * counters: one row per stream (one publisher's one topic) and the totals,
 * every -i seconds, as a table or as JSON lines (see msga_stat(1), which
 * documents the field names; scripts depend on them, so they only grow).
 *
 * It uses only the public API, so what it shows is what any application
 * would see: msga_sub_stats(3) and msga_sub_stream_stats(3).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "msgaccel.h"
#include "stat_attach.h"
#include "stat_topics.h"

#define SCHEME "mcast://"
/* Longest sleep in event mode: bounds the cost of a missed wake-up. */
#define WAIT_CAP_MS 20
/* Polls per wake-up at most, so that a flood cannot delay the reports. */
#define DRAIN_MAX 64

enum member_state { JOINING, UP, FAILED, LEFT };

struct member {
	const char *uri;
	uint32_t conn_id;
	int joined;             /* conn_id is set */
	enum member_state state;
};

struct opts {
	const char *dev, *bind, *pattern;
	double duration, interval;
	int json, no_local, stop_on_gap, verbose, busy;
	struct member *members;
	int nmembers;
	long attach_pid;       /* -p; -a: -1; 0: join mode */
	int topics;            /* --topics */
	const char *group, *key_file; /* -g, -k */
	int count;             /* -n */
};

struct run {
	const struct opts *o;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	double t0;
	uint64_t last_msgs;   /* for the rate of the last interval */
	double last_t;
	int failed;           /* a membership failed or ended with an error */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- options */

static void usage(void)
{
	printf("usage: msga_stat [options] mcast://GROUP[/BITS]...\n"
	       "       msga_stat -p PID | -a [-i SEC] [-n COUNT] [--json]\n"
	       "       msga_stat --topics [-g GROUP] [-t PATTERN] [-D SEC] [-k FILE]\n"
	       "                 [-d DEV | -b ADDR] [--json]\n"
	       "  -p PID          print the live counters of msgaccel process\n"
	       "                  PID (read-only: it joins nothing)\n"
	       "  -a              the same for every msgaccel process here\n"
	       "  -n COUNT        with -p/-a: print COUNT times, then exit\n"
	       "  --topics        list the topics advertised on a resolver group\n"
	       "                  (listen -D SEC, default 2, then print)\n"
	       "  -g GROUP        with --topics: IPv4-group:PORT (default\n"
	       "                  " MSGA_RESOLVER_GROUP_DEFAULT ")\n"
	       "  -k FILE         with --topics: key file of a keyed group\n"
	       "  -d DEV          RDMA device (default: by -b, else any)\n"
	       "  -b ADDR         local IP: picks the device, joins groups\n"
	       "  -t PATTERN      topic name or prefix* (default *)\n"
	       "  -i SEC          print every SEC seconds (1)\n"
	       "  -D SEC          stop after SEC seconds (0 = at SIGINT)\n"
	       "  --json          JSON lines instead of a table\n"
	       "  --no-local      drop messages of publishers on this host\n"
	       "  --stop-on-gap   a lost message ends its membership\n"
	       "  --busy-poll     poll without sleeping (uses a whole core)\n"
	       "  -v              print events on stderr\n"
	       "  --version       print the version and exit\n"
	       "exit status: 0 ok, 1 a membership failed or a runtime error,\n"
	       "             2 bad usage\n");
}

/* One line on stderr, exit status 2: what every usage error does. */
static void __attribute__((format(printf, 1, 2), noreturn))
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "msga_stat: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see msga_stat -h)\n");
	exit(2);
}

static double parse_secs(const char *s, double lo, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* A day at most: longer is a typo, and keeps the arithmetic sane. */
	if (errno || end == s || *end || !(v >= lo && v <= 86400))
		usage_error("invalid %s '%s'", what, s);
	return v;
}

static long parse_count(const char *s, long lo, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > 2147483647L)
		usage_error("invalid %s '%s'", what, s);
	return v;
}

static void check_addr(const char *s)
{
	unsigned char buf[sizeof(struct in6_addr)];

	if (inet_pton(AF_INET, s, buf) != 1 && inet_pton(AF_INET6, s, buf) != 1)
		usage_error("-b wants a numeric IP address, not '%s'", s);
}

/* -g: "a.b.c.d:PORT", an IPv4 multicast group (the library says so too,
 * but only after opening a device). */
static void check_group(const char *s)
{
	const char *colon = strrchr(s, ':');
	char host[INET_ADDRSTRLEN];
	struct in_addr a;
	char *end;
	unsigned long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		usage_error("-g wants IPv4-group:PORT, not '%s'", s);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	port = strtoul(colon + 1, &end, 10);
	if (inet_pton(AF_INET, host, &a) != 1 ||
	    !IN_MULTICAST(ntohl(a.s_addr)) || !colon[1] || *end || !port ||
	    port > 65535)
		usage_error("-g wants IPv4-group:PORT, not '%s'", s);
}

/* The library checks the group itself; here only what needs no device. */
static void check_uri(const char *s)
{
	if (strncmp(s, SCHEME, strlen(SCHEME)) || !s[strlen(SCHEME)])
		usage_error("'%s' is not mcast://GROUP or mcast://BASE/BITS",
			    s);
}

static void parse_members(struct opts *o, int argc, char **argv)
{
	int i;

	if (optind >= argc)
		usage_error("%s", "expected at least one mcast:// uri");
	o->nmembers = argc - optind;
	o->members = calloc(o->nmembers, sizeof(*o->members));
	if (!o->members) {
		fprintf(stderr, "msga_stat: out of memory\n");
		exit(1);
	}
	for (i = 0; i < o->nmembers; i++) {
		check_uri(argv[optind + i]);
		o->members[i].uri = argv[optind + i];
		o->members[i].joined = 0;
	}
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "no-local", no_argument, NULL, 'L' },
		{ "stop-on-gap", no_argument, NULL, 'G' },
		{ "busy-poll", no_argument, NULL, 'P' },
		{ "topics", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	*o = (struct opts){ .pattern = "*", .interval = 1 };
	opterr = 0; /* one line of our own, not getopt's */
	while ((c = getopt_long(argc, argv, ":d:b:t:i:D:p:an:g:k:vh", longs,
				NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'b': check_addr(optarg); o->bind = optarg; break;
		case 't': o->pattern = optarg; break;
		case 'i': o->interval = parse_secs(optarg, 0.01, "-i"); break;
		case 'D': o->duration = parse_secs(optarg, 0, "-D"); break;
		case 'J': o->json = 1; break;
		case 'L': o->no_local = 1; break;
		case 'G': o->stop_on_gap = 1; break;
		case 'P': o->busy = 1; break;
		case 'T': o->topics = 1; break;
		case 'g': check_group(optarg); o->group = optarg; break;
		case 'k': o->key_file = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'p': o->attach_pid = parse_count(optarg, 1, "-p"); break;
		case 'a': o->attach_pid = -1; break;
		case 'n': o->count = (int)parse_count(optarg, 1, "-n"); break;
		case 'h': usage(); exit(0);
		case 'V':
			/* The tool's own and the library it loaded. */
			printf("msga_stat (msgaccel) %s, libmsgaccel %s\n",
			       PACKAGE_VERSION, msga_version());
			exit(0);
		case ':':
			usage_error("option '%s' needs a value",
				    argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	/* Same rule as msga_sub_create(), checked before touching a device. */
	if (msga_pattern_check(o->pattern))
		usage_error("invalid -t '%s': a topic name or prefix*, from "
			    "[A-Za-z0-9._/-]", o->pattern);
	if ((o->group || o->key_file) && !o->topics)
		usage_error("%s", "-g and -k go with --topics");
	if (o->topics) {
		if (o->attach_pid || o->count)
			usage_error("%s", "--topics does not go with -p, -a or -n");
		if (optind < argc)
			usage_error("%s", "--topics takes no uri");
		return;
	}
	if (o->attach_pid) {
		if (optind < argc)
			usage_error("%s", "-p and -a take no uri");
		return;
	}
	if (o->count)
		usage_error("%s", "-n goes with -p or -a");
	parse_members(o, argc, argv);
}

/* ---------------------------------------------------------------- events */

static struct member *member_of(const struct opts *o, uint32_t conn_id)
{
	for (int i = 0; i < o->nmembers; i++)
		if (o->members[i].joined && o->members[i].conn_id == conn_id)
			return &o->members[i];
	return NULL;
}

static const char *event_name(enum msga_event_type t)
{
	switch (t) {
	case MSGA_EVENT_CONNECTED: return "connected";
	case MSGA_EVENT_DISCONNECTED: return "left";
	case MSGA_EVENT_CONNECT_FAILED: return "failed";
	case MSGA_EVENT_GAP: return "gap";
	case MSGA_EVENT_DUPLICATE: return "duplicate";
	case MSGA_EVENT_REORDER: return "reorder";
	case MSGA_EVENT_STREAM_OVERFLOW: return "stream-overflow";
	case MSGA_EVENT_LOSS: return "loss";
	case MSGA_EVENT_REJECTED: return "rejected";
	case MSGA_EVENT_PUBLISHER_FOUND: return "publisher-found";
	case MSGA_EVENT_PUBLISHER_GONE: return "publisher-gone";
	}
	return "event";
}

static void print_event(const struct msga_event *ev, const struct member *m)
{
	const char *uri = m ? m->uri : "?";

	if (ev->type == MSGA_EVENT_DISCONNECTED && ev->topic) {
		/* one stream over (since 0.6): its end, or its silence */
		fprintf(stderr, "msga_stat: stream-%s %s origin %016" PRIx64
			" seq %" PRIu64 " (%s)\n",
			ev->status ? "silent" : "end", ev->topic, ev->origin,
			ev->seq, uri);
		return;
	}
	if (ev->type == MSGA_EVENT_GAP || ev->type == MSGA_EVENT_DUPLICATE ||
	    ev->type == MSGA_EVENT_REORDER || ev->type == MSGA_EVENT_LOSS ||
	    ev->type == MSGA_EVENT_STREAM_OVERFLOW) {
		fprintf(stderr, "msga_stat: %s %s origin %016" PRIx64
			" seq %" PRIu64 " count %" PRIu64 " (%s)\n",
			event_name(ev->type), ev->topic ? ev->topic : "?",
			ev->origin, ev->seq, ev->count, uri);
		return;
	}
	fprintf(stderr, "msga_stat: %s %s%s%s\n", event_name(ev->type), uri,
		ev->status ? ": " : "",
		ev->status ? msga_strerror(ev->status) : "");
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct run *r = user;
	struct member *m = member_of(r->o, ev->conn_id);
	int failure = 0;

	if (m && ev->type == MSGA_EVENT_CONNECTED)
		m->state = UP;
	if (m && (ev->type == MSGA_EVENT_CONNECT_FAILED ||
		  (ev->type == MSGA_EVENT_DISCONNECTED && !ev->topic))) {
		/* A stop-on-gap end (-EPIPE) is a failure: data was lost. */
		m->state = ev->status ? FAILED : LEFT;
		failure = ev->status != 0;
		r->failed |= failure;
	}
	if (r->o->verbose || failure)
		print_event(ev, m);
}

/* Counting is the library's job; the tool only looks at its counters. */
static void on_msg(const struct msga_msg *msg, void *user)
{
	(void)msg;
	(void)user;
}

/* ---------------------------------------------------------------- output */

static void print_header(void)
{
	printf("%8s %4s %-20s %-16s %10s %10s %10s %12s %6s %8s %6s %6s %6s"
	       " %8s %8s %8s %8s %10s\n", "time_s", "conn", "topic", "origin",
	       "first_seq", "last_seq", "msgs", "bytes", "gaps", "missing",
	       "dups", "late", "reasm", "foreign", "filtered", "local",
	       "overflow", "msgs/s");
}

static void text_stream(double t, const struct msga_stream_stats *s)
{
	printf("%8.2f %4" PRIu32 " %-20s %016" PRIx64 " %10" PRIu64 " %10"
	       PRIu64 " %10" PRIu64 " %12" PRIu64 " %6" PRIu64 " %8" PRIu64
	       " %6" PRIu64 " %6" PRIu64 " %6" PRIu64 " %8s %8s %8s %8s %10s\n",
	       t, s->conn_id, s->topic, s->origin, s->first_seq, s->last_seq,
	       s->msgs, s->bytes, s->gaps, s->missing, s->dups, s->late,
	       s->reasm_drops, "-", "-", "-", "-", "-");
}

/*
 * The bucket of recovery_hist (msga_sub_stats(3)) that holds the pct-th
 * percentile of the repairs' latencies, or -1 when there were none.
 */
static int hist_quantile(const struct msga_sub_stats *s, unsigned int pct)
{
	uint64_t n = 0, seen = 0, rank;

	for (int i = 0; i < MSGA_RECOVERY_HIST_BUCKETS; i++)
		n += s->recovery_hist[i];
	if (!n)
		return -1;
	rank = (n * pct + 99) / 100; /* the rank-th smallest, from 1 */
	for (int i = 0; i < MSGA_RECOVERY_HIST_BUCKETS - 1; i++) {
		seen += s->recovery_hist[i];
		if (seen >= rank)
			return i;
	}
	return MSGA_RECOVERY_HIST_BUCKETS - 1;
}

/*
 * A bucket's upper bound in microseconds: its repairs took less (and at
 * least half of it). The last bucket has none; it reads as the bound it
 * would have (msga_stat(1)).
 */
static uint64_t bucket_bound_us(int i)
{
	return 1ull << i;
}

/* "< 64 us", or for the last bucket ">= 4194304 us" (its lower bound). */
static const char *text_bound(char *buf, size_t cap, int i)
{
	int last = MSGA_RECOVERY_HIST_BUCKETS - 1;

	snprintf(buf, cap, "%s %" PRIu64 " us", i == last ? ">=" : "<",
		 bucket_bound_us(i == last ? last - 1 : i));
	return buf;
}

/* "recovery: ..." under the totals, when something was repaired. */
static void text_recovery(double t, const struct msga_sub_stats *s)
{
	int p50 = hist_quantile(s, 50), p99 = hist_quantile(s, 99);
	char b50[32], b99[32];

	if (p50 < 0)
		return;
	printf("%8.2f recovery: %" PRIu64 " repaired (%" PRIu64 " READs, %"
	       PRIu64 " NAKs, %" PRIu64 " READ fallbacks), latency p50 %s, "
	       "p99 %s\n", t, s->recovered, s->reads, s->naks,
	       s->read_fallbacks, text_bound(b50, sizeof(b50), p50),
	       text_bound(b99, sizeof(b99), p99));
}

static void text_total(double t, const struct msga_sub_stats *s, double rate)
{
	printf("%8.2f %4s %-20s %-16s %10s %10s %10" PRIu64 " %12" PRIu64
	       " %6" PRIu64 " %8" PRIu64 " %6" PRIu64 " %6" PRIu64 " %6"
	       PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64
	       " %10.0f\n", t, "-", "total", "-", "-", "-", s->msgs, s->bytes,
	       s->gaps, s->missing, s->dups, s->late, s->reasm_drops,
	       s->foreign, s->filtered, s->local, s->overflow, rate);
	text_recovery(t, s);
}

/* A quantile's bucket bound for JSON: null when nothing was repaired. */
static const char *json_bound(char *buf, size_t cap, int bucket)
{
	if (bucket < 0)
		return "null";
	snprintf(buf, cap, "%" PRIu64, bucket_bound_us(bucket));
	return buf;
}

/*
 * Topic names are [A-Za-z0-9._/-] (msga_pub_topic(3)) and a uri the library
 * accepted is a numeric address, so neither needs JSON escaping. origin is
 * a hex string: JSON readers keep numbers in doubles, which would round a
 * 64-bit id.
 */
static void json_stream(double t, const struct msga_stream_stats *s,
			const struct member *m)
{
	printf("{\"type\":\"stream\",\"time_s\":%.3f,\"conn_id\":%" PRIu32
	       ",\"uri\":\"%s\",\"topic\":\"%s\",\"origin\":\"%016" PRIx64
	       "\",\"first_seq\":%" PRIu64 ",\"last_seq\":%" PRIu64
	       ",\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"gaps\":%" PRIu64
	       ",\"missing\":%" PRIu64 ",\"dups\":%" PRIu64 ",\"late\":%"
	       PRIu64 ",\"reasm_drops\":%" PRIu64 ",\"recovered\":%" PRIu64
	       ",\"unrecoverable\":%" PRIu64 ",\"naks\":%" PRIu64
	       ",\"reads\":%" PRIu64 "}\n", t,
	       s->conn_id, m ? m->uri : "", s->topic, s->origin, s->first_seq,
	       s->last_seq, s->msgs, s->bytes, s->gaps, s->missing, s->dups,
	       s->late, s->reasm_drops, s->recovered, s->unrecoverable,
	       s->naks, s->reads);
}

static void json_total(double t, const struct msga_sub_stats *s, double rate,
		       int up, int final)
{
	char b50[24], b99[24];

	printf("{\"type\":\"total\",\"time_s\":%.3f,\"streams\":%" PRIu32
	       ",\"msgs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"gaps\":%" PRIu64
	       ",\"missing\":%" PRIu64 ",\"dups\":%" PRIu64 ",\"late\":%" PRIu64
	       ",\"reasm_drops\":%" PRIu64 ",\"foreign\":%" PRIu64
	       ",\"filtered\":%" PRIu64 ",\"local\":%" PRIu64
	       ",\"overflow\":%" PRIu64 ",\"heartbeats\":%" PRIu64
	       ",\"streams_ended\":%" PRIu64 ",\"streams_silent\":%" PRIu64
	       ",\"recovered\":%" PRIu64 ",\"unrecoverable\":%" PRIu64
	       ",\"naks\":%" PRIu64 ",\"reads\":%" PRIu64
	       ",\"read_fallbacks\":%" PRIu64
	       ",\"recovery_p50_us\":%s,\"recovery_p99_us\":%s"
	       ",\"msgs_per_s\":%.1f,\"memberships_up\":%d,\"final\":%s}\n",
	       t, s->streams, s->msgs, s->bytes, s->gaps, s->missing, s->dups,
	       s->late, s->reasm_drops, s->foreign, s->filtered, s->local,
	       s->overflow, s->heartbeats, s->ended, s->silent, s->recovered,
	       s->unrecoverable, s->naks, s->reads, s->read_fallbacks,
	       json_bound(b50, sizeof(b50), hist_quantile(s, 50)),
	       json_bound(b99, sizeof(b99), hist_quantile(s, 99)), rate, up,
	       final ? "true" : "false");
}

static int members_in(const struct opts *o, enum member_state st)
{
	int n = 0;

	for (int i = 0; i < o->nmembers; i++)
		n += o->members[i].state == st;
	return n;
}

static int report(struct run *r, int final)
{
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	double now = now_s(), t = now - r->t0, rate;
	int ret = msga_sub_stats(r->sub, &st);

	if (ret < 0) {
		fprintf(stderr, "msga_stat: msga_sub_stats: %s\n",
			msga_strerror(ret));
		return ret;
	}
	rate = now > r->last_t ?
		(st.msgs - r->last_msgs) / (now - r->last_t) : 0;
	r->last_msgs = st.msgs;
	r->last_t = now;
	if (!r->o->json)
		print_header();
	for (uint32_t i = 0; i < st.streams; i++) {
		ret = msga_sub_stream_stats(r->sub, i, &ss);
		/*
		 * An evicted stream's index reads -ENOENT until a new stream
		 * takes it (msga_sub_stream_stats(3)); its counters are in
		 * the totals. Any other error is real.
		 */
		if (ret == -ENOENT)
			continue;
		if (ret < 0) {
			fprintf(stderr, "msga_stat: stream %" PRIu32 ": %s\n",
				i, msga_strerror(ret));
			return ret;
		}
		if (r->o->json)
			json_stream(t, &ss, member_of(r->o, ss.conn_id));
		else
			text_stream(t, &ss);
	}
	if (r->o->json)
		json_total(t, &st, rate, members_in(r->o, UP), final);
	else
		text_total(t, &st, rate);
	fflush(stdout);
	return 0;
}

/* ---------------------------------------------------------------- setup */

static int open_ctx(struct run *r)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca) };
	int ret;

	ca.dev_name = r->o->dev;
	ca.local_addr = r->o->bind;
	if (r->o->busy)
		ca.flags = MSGA_CTX_NO_EVENTS;
	ret = msga_ctx_open(&ca, &r->ctx);
	if (ret < 0)
		fprintf(stderr, "msga_stat: %s\n", msga_open_error());
	return ret < 0 ? 1 : 0;
}

static int make_sub(struct run *r)
{
	struct msga_sub_attr sa = { .size = sizeof(sa) };
	int ret;

	sa.pattern = r->o->pattern;
	sa.on_msg = on_msg;
	sa.on_event = on_event;
	sa.user = r;
	if (r->o->no_local)
		sa.flags |= MSGA_SUB_NO_LOCAL;
	if (r->o->stop_on_gap)
		sa.flags |= MSGA_SUB_STOP_ON_GAP;
	ret = msga_sub_create(r->ctx, &sa, &r->sub);
	if (ret < 0)
		fprintf(stderr, "msga_stat: %s\n", msga_ctx_last_error(r->ctx));
	return ret;
}

/*
 * Returns 0, 1 (the device refused: exit status 1) or 2 (the library found
 * the uri invalid: a usage error, exit status 2).
 */
static int join_all(struct run *r)
{
	for (int i = 0; i < r->o->nmembers; i++) {
		struct member *m = &r->o->members[i];
		int ret = msga_sub_connect(r->sub, m->uri, &m->conn_id);

		if (!ret) {
			m->joined = 1;
			continue;
		}
		fprintf(stderr, "msga_stat: %s: %s\n", m->uri,
			msga_ctx_last_error(r->ctx));
		return ret == -EINVAL ? 2 : 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- loop */

/* Drain the context; in event mode sleep until it has work or until due. */
static int progress(struct run *r, double until)
{
	struct pollfd pfd = { .events = POLLIN };
	int ret, ms;

	if (!r->o->busy) {
		ms = (int)((until - now_s()) * 1000) + 1;
		pfd.fd = msga_ctx_fd(r->ctx);
		if (pfd.fd < 0)
			return pfd.fd;
		if (ms > WAIT_CAP_MS)
			ms = WAIT_CAP_MS;
		poll(&pfd, 1, ms > 0 ? ms : 0);
	}
	/*
	 * Event mode wants the context drained before the next wait; the
	 * bound keeps reports on time under a flood (the wait is capped).
	 */
	for (int i = 0; i < DRAIN_MAX; i++) {
		ret = msga_ctx_poll(r->ctx, 64);
		if (ret <= 0 || r->o->busy)
			break;
	}
	if (ret < 0)
		fprintf(stderr, "msga_stat: msga_ctx_poll: %s\n",
			msga_strerror(ret));
	return ret < 0 ? ret : 0;
}

/* All memberships failed or were left: nothing more can arrive. */
static int all_gone(const struct opts *o)
{
	return members_in(o, FAILED) + members_in(o, LEFT) == o->nmembers;
}

static int run_loop(struct run *r)
{
	const struct opts *o = r->o;
	double next = r->t0 + o->interval;
	double end = o->duration > 0 ? r->t0 + o->duration : 0;

	while (!stop && !all_gone(o)) {
		double now = now_s();

		if (end && now >= end)
			break;
		if (now >= next) {
			if (report(r, 0))
				return 1;
			while (next <= now)
				next += o->interval;
		}
		if (progress(r, end && end < next ? end : next))
			return 1;
	}
	return report(r, 1) ? 1 : 0;
}

static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct run r = { .o = &o };
	int ret;

	parse_opts(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_signals();
	if (o.topics) {
		struct topics_opts t = {
			.dev = o.dev, .bind = o.bind, .group = o.group,
			.key_file = o.key_file, .pattern = o.pattern,
			.duration = o.duration > 0 ? o.duration : 2,
			.json = o.json, .stop = &stop,
		};

		return msga_stat_topics(&t);
	}
	if (o.attach_pid) {
		struct attach_opts a = {
			.pid = o.attach_pid > 0 ? o.attach_pid : 0,
			.interval = o.interval, .count = o.count,
			.json = o.json, .clear = !o.json && isatty(1),
			.stop = &stop,
		};

		return msga_stat_attach(&a);
	}
	ret = open_ctx(&r);
	if (ret)
		goto out;
	ret = 1;
	if (make_sub(&r))
		goto out_ctx;
	ret = join_all(&r);
	if (ret)
		goto out_sub;
	r.t0 = r.last_t = now_s();
	ret = run_loop(&r);
	if (!ret && r.failed)
		ret = 1;
out_sub:
	msga_sub_destroy(r.sub);
out_ctx:
	msga_ctx_close(r.ctx);
out:
	free(o.members);
	return ret;
}
