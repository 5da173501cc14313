/* SPDX-License-Identifier: MIT */
/*
 * msga_icount - a harness built for counting instructions, not for timing
 * (bench/scripts/icount_budget.sh runs it under valgrind's callgrind in
 * the VM). Two processes, a publishing side and a receiving side, move N
 * messages of one path (RC ring, RC SEND/RECV, unicast UD, multicast,
 * reliable multicast, with or without MACs, or a bare RDMA WRITE
 * ping-pong), one way or as round trips.
 *
 * Why its own harness: a busy-poll loop spends most of its instructions
 * on polls that find nothing while the peer is busy, and that share is
 * time, which is noise. So each side marks its phases for callgrind
 * (a dump per phase, CALLGRIND_DUMP_STATS_AT):
 *
 *   "idle"    IDLE polls of the connected context with no traffic: the
 *             cost of a poll that finds nothing, time-driven work
 *             (ticks, keepalives, heartbeats) included;
 *   "traffic" the N messages, while counting the polls that returned 0.
 *
 * and prints those counts, so that the library's own cost of a message on
 * each side is (Ir(traffic) - empty polls x Ir per idle poll) / N. The
 * two sides meet at a barrier (a pipe) between phases, so that neither
 * side's idle phase overlaps the other's traffic. A one-way stream is
 * paced by a window over a counter shared between the processes, so that
 * no unreliable path overruns its receiver: every message is counted.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <msgaccel.h>

#include "write_pingpong.h"

#ifdef HAVE_VALGRIND_CALLGRIND_H
#include <valgrind/callgrind.h>
#define PHASE_START() CALLGRIND_ZERO_STATS
#define PHASE_END(name) CALLGRIND_DUMP_STATS_AT(name)
#else
#define PHASE_START() do { } while (0)
#define PHASE_END(name) do { (void)(name); } while (0)
#endif

enum path { P_RING, P_SENDRECV, P_UD, P_MCAST, P_RMCAST, P_WRITE };
static const char *const path_names[] = { "ring", "sendrecv", "ud", "mcast",
					   "rmcast", "write" };

struct opts {
	enum path path;
	int mac, pingpong, port;
	long n, idle, window;
	size_t size;
	const char *addr, *dev, *group;
};

/* Shared between the two processes (MAP_SHARED before the fork). */
struct shared {
	volatile long received; /* by the receiving side, one-way */
	volatile int failed;
};

/* One side: a context, our publisher, our subscriber to the other's. */
struct side {
	const char *role;
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint32_t topic;
	int connected, joined;
	long got, empty, work;
	struct shared *sh;
	char *buf;
	size_t size;
	int echo; /* the receiving side of a ping-pong answers each one */
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "msga_icount: %s%s%s\n", what, why ? ": " : "",
		why ? why : "");
	exit(1);
}

static void usage_error(const char *what)
{
	fprintf(stderr, "msga_icount: %s (msga_icount --help)\n", what);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The one place the harness polls: counts what found nothing. */
static void poll_once(struct side *s)
{
	int r = msga_ctx_poll(s->ctx, 64);

	if (r < 0)
		die("msga_ctx_poll", msga_ctx_last_error(s->ctx));
	if (r == 0)
		s->empty++;
	else
		s->work++;
}

static void on_msg(const struct msga_msg *m, void *user)
{
	struct side *s = user;

	(void)m;
	s->got++;
	if (s->sh && !s->echo)
		s->sh->received = s->got;
	/* (a callback may publish; the ring makes room when polled) */
	if (s->echo && msga_pub_send(s->pub, s->topic, s->buf, s->size) < 0)
		s->sh->failed = 1;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct side *s = user;

	if (ev->sub && ev->type == MSGA_EVENT_CONNECTED)
		s->connected = 1;
	else if (ev->pub && ev->type == MSGA_EVENT_CONNECTED)
		s->joined = 1;
	else if (ev->type == MSGA_EVENT_GAP || ev->type == MSGA_EVENT_LOSS ||
		 (ev->type == MSGA_EVENT_DISCONNECTED && !ev->topic))
		s->sh->failed = 1;
}

static int is_mcast(const struct opts *o)
{
	return o->path == P_MCAST || o->path == P_RMCAST;
}

/* Our publisher's URI (k = 0: the publishing side's, 1: the other's). */
static void side_uri(char *buf, size_t n, const struct opts *o, int k)
{
	unsigned int a, b, c, d;

	if (is_mcast(o)) {
		/* (checked by parse_opts) */
		(void)sscanf(o->group, "%u.%u.%u.%u", &a, &b, &c, &d);
		snprintf(buf, n, "mcast://%u.%u.%u.%u", a, b, c, d + k);
	} else {
		snprintf(buf, n, "%s://%s:%d", o->path == P_UD ? "ud" : "rdma",
			 o->addr, o->port + k);
	}
}

static void side_open(struct side *s, const struct opts *o, int k)
{
	static const uint8_t key[MSGA_KEY_LEN] = "msga_icount benchmark key......";
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = o->addr,
				    .dev_name = o->dev,
				    .key = o->mac ? key : NULL };
	struct msga_pub_attr pa = { .size = sizeof(pa), .on_event = on_event,
				    .user = s,
				    .flags = (o->path == P_RMCAST ?
					      MSGA_PUB_RELIABLE : 0) |
					     (o->mac ? MSGA_PUB_MAC : 0) };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "*",
				    .on_msg = on_msg, .on_event = on_event,
				    .user = s,
				    .flags = (o->path == P_SENDRECV ?
					      MSGA_SUB_NO_RING : 0) |
					     (o->mac ? MSGA_SUB_REQUIRE_MAC : 0) };
	char uri[96];

	if (msga_ctx_open(&ca, &s->ctx))
		die("msga_ctx_open", msga_open_error());
	side_uri(uri, sizeof(uri), o, k);
	pa.uri = uri;
	/* a stream is one way: the publishing side publishes, the other
	 * subscribes, as a feed handler's contexts do */
	if ((!k || o->pingpong) &&
	    (msga_pub_create(s->ctx, &pa, &s->pub) ||
	     msga_pub_topic(s->pub, k ? "pong" : "ping", &s->topic)))
		die("open", msga_ctx_last_error(s->ctx));
	if ((k || o->pingpong) && msga_sub_create(s->ctx, &sa, &s->sub))
		die("open", msga_ctx_last_error(s->ctx));
	s->size = o->size;
	s->buf = calloc(1, o->size);
	if (!s->buf)
		die("out of memory", NULL);
}

/* Our publisher can send: joined (multicast) or subscribed to (else). */
static int pub_ready(const struct side *s, const struct opts *o)
{
	if (!s->pub)
		return 1;
	return is_mcast(o) ? s->joined : msga_pub_subscribers(s->pub) >= 1;
}

/* Subscribe to the other side's publisher; wait until both can carry. */
static void side_connect(struct side *s, const struct opts *o, int k)
{
	uint64_t give_up = now_ns() + 60000000000ull;
	char uri[96];

	side_uri(uri, sizeof(uri), o, !k);
	if (!s->sub)
		s->connected = 1;
	while (s->connected != 1 || !pub_ready(s, o)) {
		if (!s->connected) {
			int r = msga_sub_connect(s->sub, uri, NULL);

			if (r < 0 && r != -EALREADY && r != -EISCONN)
				die("msga_sub_connect",
				    msga_ctx_last_error(s->ctx));
			s->connected = 2;
		}
		poll_once(s);
		if (now_ns() > give_up)
			die("the other side did not connect in 60 s", NULL);
	}
}

/* Both processes meet here: each writes a byte and reads the other's. */
static void barrier(int wfd, int rfd)
{
	char c = 0;

	if (write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1)
		die("the other side is gone", NULL);
}

static void send_one(struct side *s)
{
	int r;

	while ((r = msga_pub_send(s->pub, s->topic, s->buf, s->size)) ==
	       -EAGAIN)
		poll_once(s);
	if (r < 0)
		die("msga_pub_send", msga_ctx_last_error(s->ctx));
}

/* The publishing side's traffic: a stream (windowed) or round trips. */
static void publish(struct side *s, const struct opts *o)
{
	for (long i = 0; i < o->n; i++) {
		uint64_t give_up = now_ns() + 60000000000ull;

		while (!o->pingpong && i - s->sh->received >= o->window) {
			poll_once(s);
			if (s->sh->failed || now_ns() > give_up)
				die("the stream stalled", NULL);
		}
		send_one(s);
		if (!o->pingpong) {
			poll_once(s);
			continue;
		}
		while (s->got <= i) {
			poll_once(s);
			if (s->sh->failed || now_ns() > give_up)
				die("no answer in 60 s", NULL);
		}
	}
	/* the stream: until the receiver has it all, completions reaped */
	for (uint64_t give_up = now_ns() + 60000000000ull;
	     s->sh->received < o->n && !o->pingpong;) {
		poll_once(s);
		if (s->sh->failed || now_ns() > give_up)
			die("the stream stalled", NULL);
	}
}

static void receive(struct side *s, const struct opts *o)
{
	uint64_t give_up = now_ns() + 120000000000ull;

	while (s->got < o->n) {
		poll_once(s);
		if (s->sh->failed || now_ns() > give_up)
			die("the stream stalled", NULL);
	}
}

/* A bare RDMA WRITE ping-pong, what the ring rides on (write_pingpong.h). */
static void run_write(const struct opts *o, int k, int wfd, int rfd)
{
	struct write_pp *wp;
	char err[256] = "";

	if (write_pp_open(&wp, o->addr, o->port, !k, o->size, 60, NULL, NULL,
			  err, sizeof(err)))
		die("write ping-pong", err);
	barrier(wfd, rfd);
	PHASE_START();
	PHASE_END("idle");
	barrier(wfd, rfd);
	PHASE_START();
	for (long i = 0; i < o->n; i++)
		if (k ? write_pp_pong(wp, 60000) : write_pp_ping(wp, 60000))
			die("write ping-pong", "no answer in 60 s");
	PHASE_END("traffic");
	barrier(wfd, rfd);
	printf("%s path=write msgs=%ld idle_polls=0 idle_ns=0 empty_polls=0 "
	       "work_polls=%ld\n", k ? "receiver" : "publisher", o->n, o->n);
	fflush(stdout);
	barrier(wfd, rfd);
	write_pp_close(wp);
}

static int run_side(const struct opts *o, struct shared *sh, int k, int wfd,
		    int rfd)
{
	struct side s = { .role = k ? "receiver" : "publisher", .sh = sh,
			  .echo = k && o->pingpong };
	uint64_t t0;

	if (o->path == P_WRITE) {
		run_write(o, k, wfd, rfd);
		return 0;
	}
	side_open(&s, o, k);
	barrier(wfd, rfd); /* both publishers are up */
	side_connect(&s, o, k);
	barrier(wfd, rfd); /* both directions carry */

	s.empty = s.work = 0;
	t0 = now_ns();
	PHASE_START();
	for (long i = 0; i < o->idle; i++)
		poll_once(&s);
	PHASE_END("idle");
	t0 = now_ns() - t0;
	barrier(wfd, rfd);

	s.empty = s.work = 0;
	s.got = 0;
	PHASE_START();
	if (k)
		receive(&s, o);
	else
		publish(&s, o);
	PHASE_END("traffic");
	barrier(wfd, rfd);
	printf("%s path=%s msgs=%ld idle_polls=%ld idle_ns=%llu "
	       "empty_polls=%ld work_polls=%ld\n", s.role,
	       path_names[o->path], o->n, o->idle, (unsigned long long)t0,
	       s.empty, s.work);
	fflush(stdout);
	barrier(wfd, rfd);
	msga_ctx_close(s.ctx);
	free(s.buf);
	return 0;
}

static void usage(void)
{
	printf("usage: msga_icount [options] ADDR\n"
	       "  --path P      ring (default), sendrecv, ud, mcast, rmcast "
	       "(reliable multicast), write (bare RDMA WRITE ping-pong)\n"
	       "  --mac         keyed contexts and MACs (ud, mcast, rmcast)\n"
	       "  --pingpong    round trips (default: a one-way stream)\n"
	       "  -n N          messages or round trips (default 2000)\n"
	       "  --idle N      polls in the idle phase (default 20000)\n"
	       "  -w N          the stream's window (default 32)\n"
	       "  -s SIZE       message bytes (default 64)\n"
	       "  -p PORT       RC/UD port, and PORT+1 (default 18640)\n"
	       "  -g GROUP      multicast group, and GROUP+1 (default "
	       "239.1.18.64)\n"
	       "  -d DEV        RDMA device\n"
	       "Run it under valgrind --tool=callgrind --trace-children=yes:\n"
	       "each side dumps the phases \"idle\" and \"traffic\" and prints\n"
	       "its poll counts (bench/scripts/icount_budget.sh).\n");
}

static long num_arg(const char *v, long lo, long hi, const char *what)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi) {
		char msg[128];

		snprintf(msg, sizeof(msg), "%s: '%s' is not a number in "
			 "%ld..%ld", what, v, lo, hi);
		usage_error(msg);
	}
	return x;
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "path", required_argument, NULL, 'P' },
		{ "mac", no_argument, NULL, 'M' },
		{ "pingpong", no_argument, NULL, 'R' },
		{ "idle", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (struct opts){ .n = 2000, .idle = 20000, .window = 32,
			    .size = 64, .port = 18640,
			    .group = "239.1.18.64" };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:w:s:p:g:d:h", lo, NULL)) != -1) {
		switch (c) {
		case 'P': {
			size_t i;

			for (i = 0; i < sizeof(path_names) / sizeof(*path_names);
			     i++)
				if (!strcmp(optarg, path_names[i]))
					break;
			if (i == sizeof(path_names) / sizeof(*path_names))
				usage_error("--path: not ring, sendrecv, ud, "
					    "mcast, rmcast or write");
			o->path = (enum path)i;
			break;
		}
		case 'M': o->mac = 1; break;
		case 'R': o->pingpong = 1; break;
		case 'I': o->idle = num_arg(optarg, 0, 100000000, "--idle"); break;
		case 'n': o->n = num_arg(optarg, 1, 100000000, "-n"); break;
		case 'w': o->window = num_arg(optarg, 1, 4096, "-w"); break;
		case 's': o->size = (size_t)num_arg(optarg, 1, 4072, "-s"); break;
		case 'p': o->port = (int)num_arg(optarg, 1, 65534, "-p"); break;
		case 'g': o->group = optarg; break;
		case 'd': o->dev = optarg; break;
		case 'h': usage(); exit(0);
		default: {
			char msg[160];

			snprintf(msg, sizeof(msg), "%s: unknown option or "
				 "missing value", argv[optind - 1]);
			usage_error(msg);
		}
		}
	}
	if (optind != argc - 1)
		usage_error("one ADDR, the local address, is needed");
	o->addr = argv[optind];
	if (o->mac && (o->path == P_RING || o->path == P_SENDRECV ||
		       o->path == P_WRITE))
		usage_error("--mac: UD paths only (ud, mcast, rmcast)");
	if (is_mcast(o)) {
		unsigned int g[4];

		if (sscanf(o->group, "%u.%u.%u.%u", &g[0], &g[1], &g[2],
			   &g[3]) != 4 || g[0] < 224 || g[0] > 239 ||
		    g[1] > 255 || g[2] > 255 || g[3] > 254)
			usage_error("-g: not an IPv4 multicast group with "
				    "room for GROUP+1");
	}
	if (o->path == P_WRITE && !o->pingpong)
		usage_error("--path write: round trips only (--pingpong)");
}

int main(int argc, char **argv)
{
	struct opts o;
	struct shared *sh;
	int to_child[2], to_parent[2], status, ret;
	pid_t pid;

	parse_opts(argc, argv, &o);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || pipe(to_child) || pipe(to_parent))
		die("set-up", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork", strerror(errno));
	if (!pid)
		return run_side(&o, sh, 1, to_parent[1], to_child[0]);
	ret = run_side(&o, sh, 0, to_child[1], to_parent[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		die("the receiving side failed", NULL);
	return ret;
}
