/* SPDX-License-Identifier: MIT */
/*
 * msga_feed - a STAC-N1-style feed benchmark on the msgaccel pub/sub API.
 *
 * A producer publishes fixed-size messages (232 B by default) on topic
 * "feed.data" at a steady rate; a consumer (a forked process, with its own
 * context) subscribes and reflects every message on "feed.echo"; the
 * producer subscribes to the echoes and times them:
 *   SendToReceive   = (echo received - message sent) / 2
 *   SupplyToReceive = (echo received - message due)  / 2
 * where "due" is the message's slot in the supply schedule, so time spent
 * queued behind back-pressure counts. Both are RTT/2, as in STAC-N1.
 *
 * The rate steps up (--base, --step, --duration) until a failure event: a
 * message not reflected within --deadline, or a producer that falls more
 * than --deadline behind its schedule. Before the first step, --warmup
 * seconds at the first step's rate run the same way but are not counted:
 * the first messages of a run pay for cold caches, page faults and the
 * connection's first credits, and on 2026-11-27 the lowest step carried
 * the run's worst tail. The report card gives, per rate,
 * mean/median/p99/max/stdev of both latencies, the highest rate without a
 * failure, the latency-stable rate (feed_stable.h: the highest step whose
 * SupplyToReceive median and p99 stay within 1.5x and 3x of the first
 * steps'), and each side's CPU use and peak RSS (VmHWM).
 *
 * --pingpong is the latency mode: one message in flight, -n round trips,
 * perftest-style columns (RTT/2): the pub/sub counterpart of ib_send_lat.
 * With --vs-write BLOCK, the same two processes also run a bare RDMA WRITE
 * ping-pong (write_pingpong.h, what ib_write_lat does), alternating blocks
 * of BLOCK round trips of each, and report the library's latency as a
 * ratio to the bare WRITE's: on a host whose speed drifts by tens of
 * percent from one minute to the next, blocks a few milliseconds apart
 * see the same host, where separate runs of two tools do not.
 *
 * --by-name: each side's subscriber connects with "topic://" (the topic
 * resolver finds the other side's publisher: msgaccel(7), TOPIC
 * RESOLUTION) instead of the other side's address, and the producer
 * reports how long its subscription took from msga_sub_connect() to
 * connected.
 *
 * Every message starts with a header (feed_wire.h): 32 bytes carrying
 * the due and sent stamps that rate steps time their echoes by, or, for
 * --pingpong messages of 12 to 31 bytes, 12 bytes of sequence number and
 * flags (one message in flight: the producer keeps its send time).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "feed_stable.h"
#include "feed_wire.h"
#include "lat_stats.h"
#include "msgaccel.h"
#include "perf_clock.h"
#include "pin_auto.h"
#include "write_pingpong.h"

#define FEED_TOPIC "feed.data"
#define ECHO_TOPIC "feed.echo"

struct opts {
	const char *addr;
	const char *dev;
	int port;
	size_t size;
	long base, step, max_rate;
	double duration, deadline;
	double warmup;      /* --warmup SEC at --base, not counted */
	long iters;
	int pingpong;
	const char *mcast;  /* --mcast GROUP: feed on GROUP, echoes on GROUP+1 */
	int reliable;       /* --reliable: MSGA_PUB_RELIABLE publishers */
	int mac;            /* --mac: keyed contexts, MSGA_PUB_MAC publishers */
	int ud;             /* --ud: unicast UD (ud://) instead of RC */
	int no_ring;        /* --no-ring: RC data by SEND/RECV */
	long vs_write;      /* --vs-write BLOCK: interleave a bare WRITE */
	const char *key_file; /* --key-file: authenticated contexts */
	int no_stats;       /* --no-stats: MSGA_CTX_NO_STATS contexts */
	double linger;      /* --linger SEC: the producer's counts, then its
			     * context open SEC more (msga_stat -p reads it) */
	int by_name;        /* --by-name: subscribe by topic name */
	const char *resolver_group; /* --resolver-group GROUP:PORT */
	const char *json, *series;
	enum perf_clock_kind clock;
	/* --publish MODE: -n messages as fast as MODE lets them go */
	enum { PUB_NONE, PUB_EVERY, PUB_EAGAIN, PUB_MORE, PUB_ADAPTIVE,
	       PUB_ADAPTIVE_EVERY } publish;
	long more_n;        /* --publish more:N */
	int pin;            /* --pin auto: each side on a quiet CPU */
};

/*
 * --pin auto: the producer's and the consumer's CPUs, chosen before the
 * fork, the consumer's with the producer's avoided (two pollers of one
 * run never on the two threads of one core while a whole core is free).
 */
static struct msga_cpu_choice pin_prod, pin_cons;

struct side_usage {
	double cpu_pct;  /* user+sys CPU over wall time, percent of one core */
	long peak_rss_kb;
};

/* ---------------------------------------------------------------- utils */


/*
 * Timestamps in ns from the benchmark clock of rdma_lat (perf_clock.h): the
 * calibrated TSC when it can be trusted, else CLOCK_MONOTONIC. Producer and
 * consumer are separate processes but only the producer compares times.
 */
static uint64_t now_ns(void)
{
	if (perf_clock.kind == PERF_CLOCK_TSC)
		return (uint64_t)(perf_ticks_us(perf_rdtsc()) * 1000.0);
	return perf_mono_ns();
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "msga_feed: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	exit(1);
}

static void usage_error(const char *what, const char *val)
{
	fprintf(stderr, "msga_feed: invalid %s '%s' (see msga_feed -h)\n", what,
		val);
	exit(2);
}

static double parse_num(const char *s, double lo, double hi, const char *what)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi)
		usage_error(what, s);
	return v;
}

static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The start of a window whose CPU use usage_since() reports. */
struct usage_mark {
	uint64_t ns;
	double cpu_s;
};

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static struct usage_mark usage_mark_now(void)
{
	return (struct usage_mark){ .ns = now_ns(), .cpu_s = cpu_seconds() };
}

/*
 * CPU time over wall time since the mark, both counted from it (the CPU
 * the setup took before it, connecting and registering, is not the
 * run's), and the peak RSS so far.
 */
static struct side_usage usage_since(struct usage_mark t0)
{
	struct side_usage u = { 0 };
	double wall = (now_ns() - t0.ns) / 1e9;

	u.cpu_pct = wall > 0 ? 100.0 * (cpu_seconds() - t0.cpu_s) / wall : 0;
	u.peak_rss_kb = peak_rss_kb();
	return u;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Sorts v. rdma_lat's statistics (lat_stats.h), so the two tools agree on
 * what a median, a p99 and a standard deviation are; all zero for no
 * samples (samples are differences of unsigned clock reads: never
 * negative, always finite, so lat_stats_compute refuses none).
 */
static struct lat_summary summarize(double *v, long n)
{
	struct lat_summary s = { 0 };

	if (n > 0)
		lat_stats_compute(v, (size_t)n, &s);
	return s;
}

/* ---------------------------------------------------------------- setup */

struct endpoint {
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint32_t topic;
	int connected;      /* our subscriber reached the other side */
	int pub_joined;     /* multicast: our publisher's group is joined */
	int peer_gone;
	uint64_t gaps;      /* multicast: messages the library saw lost */
	char uri[96];       /* where our subscriber connects */
	/* msga_sub_connect() called, our subscriber connected (ns) */
	uint64_t connect_ns, connected_ns;
};

static void on_event(const struct msga_event *ev, void *user)
{
	struct endpoint *ep = user;

	if (ev->sub && ev->type == MSGA_EVENT_CONNECTED) {
		ep->connected = 1;
		if (!ep->connected_ns)
			ep->connected_ns = now_ns();
	}
	else if (ev->pub && ev->type == MSGA_EVENT_CONNECTED)
		ep->pub_joined = 1;
	else if (ev->type == MSGA_EVENT_GAP)
		ep->gaps += ev->count;
	else if (ev->sub && ev->type == MSGA_EVENT_CONNECT_FAILED)
		ep->connected = -1; /* rdma:// retries by itself (0.10); the
				     * others by connect_sub() */
	else if (ev->type == MSGA_EVENT_DISCONNECTED && !ev->topic)
		ep->peer_gone = 1; /* (a topic: one stream ended, not the peer) */
}

/* "mcast://GROUP+k" for the IPv4 group of --mcast. */
static void mcast_uri(char *buf, size_t n, const char *group, int k)
{
	unsigned int a, b, c, d;

	if (sscanf(group, "%u.%u.%u.%u", &a, &b, &c, &d) != 4)
		die("--mcast %s: not an IPv4 group", group);
	snprintf(buf, n, "mcast://%u.%u.%u.%u", a, b, c, d + k);
}

static void open_endpoint(struct endpoint *ep, const struct opts *o,
			  int pub_port, int sub_port, const char *pub_topic,
			  const char *sub_pattern, msga_msg_cb on_msg)
{
	/* --mac: both sides share one key, a benchmark's, not a secret */
	static const uint8_t bench_key[MSGA_KEY_LEN] =
		"msga_feed --mac benchmark key..";
	/* --by-name: both sides advertise what they publish */
	struct msga_resolver_attr ra = { .size = sizeof(ra),
					 .flags = MSGA_RESOLVER_ADVERTISE,
					 .group = o->resolver_group };
	struct msga_ctx_attr ca = { .size = sizeof(ca), .local_addr = o->addr,
				    .dev_name = o->dev,
				    .key_file = o->key_file,
				    .key = o->mac && !o->key_file ? bench_key :
								   NULL,
				    .flags = o->no_stats ? MSGA_CTX_NO_STATS :
							   0,
				    .resolver = o->by_name ? &ra : NULL };
	struct msga_pub_attr pa = { .size = sizeof(pa), .on_event = on_event,
				    .user = ep,
				    .flags = (o->reliable ? MSGA_PUB_RELIABLE : 0) |
					     (o->mac ? MSGA_PUB_MAC : 0) |
					     (o->publish == PUB_EVERY ||
					      o->publish == PUB_EAGAIN ||
					      o->publish == PUB_MORE ?
					      MSGA_PUB_NO_COALESCE : 0) };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = sub_pattern,
				    .on_msg = on_msg, .on_event = on_event,
				    .user = ep,
				    .flags = (o->no_ring ? MSGA_SUB_NO_RING : 0) |
					     (o->mac ? MSGA_SUB_REQUIRE_MAC : 0) };
	char uri[96];

	if (msga_ctx_open(&ca, &ep->ctx))
		die("%s", msga_open_error());
	if (o->mcast) /* the producer publishes on GROUP, the consumer +1 */
		mcast_uri(uri, sizeof(uri), o->mcast, pub_port - o->port);
	else
		snprintf(uri, sizeof(uri), "%s://%s:%d", o->ud ? "ud" : "rdma",
			 o->addr, pub_port);
	pa.uri = uri;
	if (msga_pub_create(ep->ctx, &pa, &ep->pub) ||
	    msga_pub_topic(ep->pub, pub_topic, &ep->topic) ||
	    msga_sub_create(ep->ctx, &sa, &ep->sub))
		die("%s", msga_ctx_last_error(ep->ctx));
	if (o->by_name)
		snprintf(ep->uri, sizeof(ep->uri), "topic://");
	else if (o->mcast)
		mcast_uri(ep->uri, sizeof(ep->uri), o->mcast, sub_port - o->port);
	else
		snprintf(ep->uri, sizeof(ep->uri), "%s://%s:%d",
			 o->ud ? "ud" : "rdma", o->addr, sub_port);
}

/* Both our joins are done (multicast), or the RC peer subscribed to us. */
static int peer_ready(const struct endpoint *ep, const struct opts *o)
{
	if (o->mcast)
		return ep->pub_joined;
	return msga_pub_subscribers(ep->pub) >= 1;
}

/* Connect our subscriber, retrying while the other side starts up. */
static void connect_sub(struct endpoint *ep, const struct opts *o,
			double timeout_s)
{
	uint64_t give_up = now_ns() + (uint64_t)(timeout_s * 1e9);

	while (ep->connected != 1 || !peer_ready(ep, o)) {
		if (ep->connected == 0 && !ep->connect_ns)
			ep->connect_ns = now_ns();
		if (ep->connected == 0 &&
		    msga_sub_connect(ep->sub, ep->uri, NULL) < 0)
			die("%s", msga_ctx_last_error(ep->ctx));
		if (ep->connected == 0)
			ep->connected = 2; /* connecting */
		msga_ctx_poll(ep->ctx, 64);
		if (ep->connected == -1 && (!strncmp(ep->uri, "rdma://", 7) ||
					    o->by_name)) {
			/* the library tries again (by name: the child
			 * connection, or the next publisher found) */
			ep->connected = 2;
		} else if (ep->connected == -1) {
			usleep(20000);
			ep->connected = 0;
		}
		if (now_ns() > give_up)
			die("%s", "the other side did not connect in time");
	}
}

static void close_endpoint(struct endpoint *ep)
{
	msga_sub_destroy(ep->sub);
	msga_pub_destroy(ep->pub);
	msga_ctx_close(ep->ctx);
}

/* ------------------------------------------------------------- consumer */

/*
 * Reflect every message, from inside the callback as a latency-bound
 * reflector would (the message is read in place and the echo leaves
 * before the poll returns). A send refused for back-pressure, or one that
 * reached nobody yet, is kept in a ring and retried from the main loop,
 * and while that ring is not empty new messages queue behind it: the
 * consumer never drops or reorders one.
 */
struct reflector {
	struct endpoint ep;
	size_t size;
	char *ring;
	unsigned long head, tail, cap;
	unsigned long seen, last_seen;  /* messages received, for quiet */
	unsigned long malformed; /* too short to hold a header: not read */
	uint64_t last_msg_ns;
	int stop;
	/* --publish: one-way latency of each message (us), no echo */
	double *lat;
	long nlat, lat_cap;
	uint64_t first_sent_ns, last_rx_ns;
};

static struct reflector refl;

/*
 * Send one echo: 1 if it went out, 0 to keep it for later. msga_pub_send
 * returns the number of subscribers reached; 0 means the producer's
 * subscription has not reached our publisher yet (a ping can arrive
 * first: each side starts when its own half is up).
 */
static int echo(const void *m, size_t len)
{
	int ret = msga_pub_send(refl.ep.pub, refl.ep.topic, m, len);

	if (ret < 0 && ret != -EAGAIN)
		die("%s", msga_strerror(ret));
	return ret > 0;
}

/*
 * --publish: time one message one way (one host, one clock: the sender's
 * stamp is comparable). Only the full layout carries it; --publish sends
 * no other (msga_feed refuses -s below 32 without --pingpong).
 */
static void time_one_way(const struct feed_msg *h)
{
	if (!h->stamped)
		return;
	refl.last_rx_ns = now_ns();
	if (h->seq == 1)
		refl.first_sent_ns = h->sent_ns;
	if (refl.nlat < refl.lat_cap)
		refl.lat[refl.nlat++] = (refl.last_rx_ns - h->sent_ns) / 1e3;
}

/*
 * The echo is the message's own bytes, so it keeps the layout the
 * producer chose; only the flags are read here.
 */
static void reflect_msg(const struct msga_msg *msg, void *user)
{
	struct feed_msg h;
	size_t len = msg->len < refl.size ? msg->len : refl.size;

	if (feed_wire_decode(msg->data, msg->len, &h)) {
		refl.malformed++;
		return;
	}
	refl.seen++;
	if (h.flags & FEED_FLAG_STOP)
		refl.stop = 1;
	if (refl.lat && !h.flags) {
		time_one_way(&h);
		return;
	}
	if (refl.tail == refl.head && len == refl.size &&
	    echo(msg->data, len))
		return;
	if (refl.head - refl.tail == refl.cap)
		die("%s", "reflector backlog full");
	memcpy(refl.ring + (refl.head % refl.cap) * refl.size, msg->data, len);
	refl.head++;
}

static void reflector_drain(void)
{
	while (refl.tail != refl.head &&
	       echo(refl.ring + (refl.tail % refl.cap) * refl.size, refl.size))
		refl.tail++;
}

static void consumer_idle(void *unused)
{
	(void)unused;
	msga_ctx_poll(refl.ep.ctx, 64);
	reflector_drain();
}

/*
 * One end of --vs-write's bare WRITE ping-pong, on PORT+2: the producer's
 * is active (it sends first), the consumer's passive.
 */
static struct write_pp *open_write_pp(const struct opts *o, int active,
				      void (*idle)(void *))
{
	struct write_pp *wp;
	char err[256] = "";

	if (write_pp_open(&wp, o->addr, o->port + 2, active, o->size, 30, idle,
			  NULL, err, sizeof(err)))
		die("--vs-write: %s", err);
	return wp;
}

/*
 * --vs-write: after every BLOCK messages (the last one echoed, nothing
 * queued), answer BLOCK bare WRITEs; the producer alternates the same way.
 */
static void consumer_write_block(struct write_pp *wp, long block)
{
	for (long i = 0; i < block; i++)
		if (write_pp_pong(wp, 5000))
			die("%s", "--vs-write: the producer's WRITE did not come");
}

static int run_consumer(const struct opts *o, int report_fd)
{
	struct write_pp *wp = NULL;
	unsigned long write_blocks = 0;
	struct usage_mark t0;
	struct side_usage u;

	refl.size = o->size;
	refl.cap = 1u << 16;
	refl.ring = malloc(refl.cap * refl.size);
	if (!refl.ring)
		die("%s", "out of memory");
	if (o->publish) {
		refl.lat_cap = o->iters;
		refl.lat = calloc(o->iters, sizeof(double));
		if (!refl.lat)
			die("%s", "out of memory");
	}
	open_endpoint(&refl.ep, o, o->port + 1, o->port, ECHO_TOPIC, FEED_TOPIC,
		      reflect_msg);
	connect_sub(&refl.ep, o, 30);
	if (o->vs_write)
		wp = open_write_pp(o, 0, consumer_idle);
	t0 = usage_mark_now();
	while (!(refl.stop && refl.tail == refl.head) && !refl.ep.peer_gone) {
		msga_ctx_poll(refl.ep.ctx, 64);
		reflector_drain();
		if (wp && !refl.stop && refl.tail == refl.head &&
		    refl.seen >= (write_blocks + 1) * o->vs_write) {
			consumer_write_block(wp, o->vs_write);
			write_blocks++;
		}
		/* Multicast has no disconnect: a producer gone quiet is gone. */
		if (o->mcast && refl.seen != refl.last_seen) {
			refl.last_seen = refl.seen;
			refl.last_msg_ns = now_ns();
		} else if (o->mcast && refl.last_msg_ns &&
			   now_ns() - refl.last_msg_ns > 30000000000ull) {
			break;
		}
	}
	/* Let the last echo leave before the connection is torn down. */
	for (uint64_t end = now_ns() + 200000000u; now_ns() < end;)
		msga_ctx_poll(refl.ep.ctx, 64);
	u = usage_since(t0);
	dprintf(report_fd, "%.1f %ld", u.cpu_pct, u.peak_rss_kb);
	if (o->publish) { /* messages per second, then the latency */
		struct lat_summary s = summarize(refl.lat, refl.nlat);

		dprintf(report_fd, " %ld %.0f %.3f %.3f %.3f %.3f %.3f",
			refl.nlat, refl.nlat / ((refl.last_rx_ns -
						 refl.first_sent_ns) / 1e9),
			s.avg, s.median, s.p99, s.max, s.stdev);
	}
	dprintf(report_fd, "\n");
	if (refl.malformed)
		printf("# consumer: %lu messages shorter than %d B refused "
		       "unread\n", refl.malformed, FEED_WIRE_COMPACT_LEN);
	write_pp_close(wp);
	close_endpoint(&refl.ep);
	free(refl.ring);
	return 0;
}

/* ------------------------------------------------------------- producer */

struct producer {
	struct endpoint ep;
	const struct opts *o;
	char *msg;
	double *send2recv, *supply2recv; /* us, per step */
	long nsamples, cap;
	uint64_t received, step_first_seq;
	uint64_t last_echo_seq;  /* echoes arrive in order: all below are in */
	uint64_t sent, dup_or_reordered;
	uint64_t lost;           /* echoes that skipped a number (multicast) */
	uint64_t malformed;      /* echoes too short for a header: not read */
	/* The last message sent, its stamps kept: a compact echo carries
	 * none (feed_wire.h), and in ping-pong it can only be this one. */
	struct feed_msg last_sent;
	int probe_back;
	uint64_t run_start;
	FILE *series;
	uint64_t bucket_start;
	double bucket_sum, bucket_max;
	long bucket_n, cur_rate;
};

static struct producer prod;

static void flush_bucket(uint64_t t)
{
	if (prod.series && prod.bucket_n)
		fprintf(prod.series, "%.1f %ld %.3f %.3f\n",
			(prod.bucket_start - prod.run_start) / 1e9,
			prod.cur_rate, prod.bucket_sum / prod.bucket_n,
			prod.bucket_max);
	prod.bucket_start = t;
	prod.bucket_sum = prod.bucket_max = 0;
	prod.bucket_n = 0;
}

/*
 * The stamps an echo is timed by: its own (full layout), else those the
 * producer kept for the one message in flight; 0 if it is not that one.
 */
static int echo_stamps(struct feed_msg *h)
{
	if (h->stamped)
		return 1;
	if (h->seq != prod.last_sent.seq)
		return 0;
	h->due_ns = prod.last_sent.due_ns;
	h->sent_ns = prod.last_sent.sent_ns;
	return 1;
}

static void on_echo(const struct msga_msg *msg, void *user)
{
	uint64_t t = now_ns();
	struct feed_msg h;

	if (feed_wire_decode(msg->data, msg->len, &h)) {
		prod.malformed++;
		return;
	}
	if (h.flags & FEED_FLAG_PROBE) {
		prod.probe_back = 1;
		return;
	}
	if (h.seq > prod.last_echo_seq + 1) /* lost: only over multicast */
		prod.lost += h.seq - prod.last_echo_seq - 1;
	/* A reliable ordered stream: anything but seq+1 is a bug to report. */
	if (h.seq != prod.last_echo_seq + 1) {
		prod.dup_or_reordered++;
		if (h.seq <= prod.last_echo_seq)
			return;
	}
	prod.received++;
	prod.last_echo_seq = h.seq;
	if (h.flags & FEED_FLAG_STOP || h.seq < prod.step_first_seq ||
	    !echo_stamps(&h))
		return;
	if (prod.nsamples < prod.cap) {
		double s2r = (t - h.sent_ns) / 2e3;

		prod.send2recv[prod.nsamples] = s2r;
		prod.supply2recv[prod.nsamples++] = (t - h.due_ns) / 2e3;
		prod.bucket_sum += s2r;
		prod.bucket_n++;
		if (s2r > prod.bucket_max)
			prod.bucket_max = s2r;
	}
	if (t - prod.bucket_start >= 100000000u)
		flush_bucket(t);
}

/*
 * Send one message stamped with its due time, with msga_pub_send_flags()'s
 * commit flags (MSGA_COMMIT_MORE); -EAGAIN: not sent yet.
 */
static int send_one_flags(uint64_t seq, uint64_t due, uint32_t flags,
			  unsigned int commit_flags)
{
	struct feed_msg h = { .seq = seq, .flags = flags, .due_ns = due,
			      .sent_ns = now_ns() };
	int ret;

	/* (-s is at least FEED_WIRE_COMPACT_LEN: parse_opts) */
	feed_wire_encode(prod.msg, prod.o->size, &h);
	ret = msga_pub_send_flags(prod.ep.pub, prod.ep.topic, prod.msg,
				  prod.o->size, commit_flags);
	if (ret < 0)
		return ret;
	prod.last_sent = h;
	prod.sent++; /* ret = subscribers reached; the consumer is one */
	return 0;
}

static int send_one(uint64_t seq, uint64_t due, uint32_t flags)
{
	return send_one_flags(seq, due, flags, 0);
}

struct step_result {
	long rate;
	struct lat_summary s2r, sup;
	const char *failure; /* NULL if the step passed */
	uint64_t sent;       /* messages the step sent */
};

/*
 * Run one rate step for SECONDS; sequence numbers continue across steps.
 * Unless SAMPLE, no echo of it is a sample (the warm-up): it is paced,
 * reflected and held to the deadline like a measured step all the same.
 */
static struct step_result run_step(long rate, double seconds, int sample,
				   uint64_t *seq)
{
	const struct opts *o = prod.o;
	struct step_result r = { .rate = rate };
	uint64_t count = (uint64_t)(rate * seconds);
	uint64_t period = 1000000000u / rate;
	uint64_t start = now_ns(), deadline_ns = (uint64_t)(o->deadline * 1e9);
	uint64_t first = *seq, i = 0;

	prod.nsamples = 0;
	prod.step_first_seq = sample ? first : UINT64_MAX;
	prod.cur_rate = rate;
	while (i < count) {
		uint64_t due = start + i * period, t = now_ns();

		msga_ctx_poll(prod.ep.ctx, 64);
		if (prod.ep.peer_gone) {
			r.failure = "consumer disconnected";
			break;
		}
		if (prod.lost) {
			r.failure = "a message was lost (multicast gap)";
			break;
		}
		if (t < due)
			continue;
		if (t - due > deadline_ns) {
			r.failure = "producer fell behind its schedule";
			break;
		}
		/* The oldest message not yet reflected was due at ...: */
		if (prod.last_echo_seq + 1 < first + i &&
		    t > start + (prod.last_echo_seq + 1 - first) * period +
				deadline_ns && prod.last_echo_seq + 1 >= first) {
			r.failure = "a message was not reflected within the deadline";
			break;
		}
		if (send_one(first + i, due, 0) == 0)
			i++;
	}
	*seq = first + i;
	r.sent = i;
	/* Every message of the step must be reflected within the deadline. */
	for (uint64_t end = now_ns() + deadline_ns;
	     !r.failure && prod.last_echo_seq + 1 < *seq;) {
		msga_ctx_poll(prod.ep.ctx, 64);
		if (now_ns() > end)
			r.failure = "a message was not reflected within the deadline";
	}
	if (!r.failure && prod.lost)
		r.failure = "a message was lost (multicast gap)";
	r.s2r = summarize(prod.send2recv, prod.nsamples);
	r.sup = summarize(prod.supply2recv, prod.nsamples);
	return r;
}

static void print_stats_row(const char *label, long rate, const struct lat_summary *s)
{
	printf("%8ld  %-15s %9.2f %9.2f %9.2f %9.2f %9.2f %8ld\n", rate, label,
	       s->avg, s->median, s->p99, s->max, s->stdev, (long)s->n);
}

static void json_stats(FILE *f, const char *name, const struct lat_summary *s)
{
	fprintf(f, "\"%s\": {\"mean_us\": %.3f, \"median_us\": %.3f, "
		"\"p99_us\": %.3f, \"max_us\": %.3f, \"stdev_us\": %.3f, "
		"\"count\": %ld}", name, s->avg, s->median, s->p99, s->max,
		s->stdev, (long)s->n);
}

/* Over multicast a STOP can be lost too: repeat it until it comes back. */
static void stop_consumer(uint64_t seq)
{
	uint64_t end = now_ns() + 2000000000u, again = 0;

	while (prod.last_echo_seq < seq && now_ns() < end) {
		if (now_ns() >= again &&
		    send_one(seq, now_ns(), FEED_FLAG_STOP) == 0)
			again = now_ns() + 100000000u;
		msga_ctx_poll(prod.ep.ctx, 64);
	}
}

/* Multicast: joined is not heard; probe until the consumer echoes one. */
static void await_consumer(const struct opts *o)
{
	uint64_t end = now_ns() + 30000000000ull, again = 0;

	if (!o->mcast)
		return;
	while (!prod.probe_back) {
		if (now_ns() > end)
			die("%s", "the consumer never echoed a probe");
		if (now_ns() >= again &&
		    send_one(0, now_ns(), FEED_FLAG_PROBE) == 0) {
			prod.sent--; /* probes are not part of the run */
			again = now_ns() + 20000000u;
		}
		msga_ctx_poll(prod.ep.ctx, 64);
	}
	/* let late probes drain before sequence 1 */
	for (uint64_t t = now_ns() + 100000000u; now_ns() < t;)
		msga_ctx_poll(prod.ep.ctx, 64);
}

/* The stable rate over the steps run, from SupplyToReceive. */
static void stable_of(const struct step_result *res, long nres,
		      struct feed_stable *st)
{
	struct feed_step_stat ss[256];

	for (long k = 0; k < nres; k++)
		ss[k] = (struct feed_step_stat){
			.rate = res[k].rate, .median_us = res[k].sup.median,
			.p99_us = res[k].sup.p99, .failed = !!res[k].failure };
	feed_stable_rate(ss, (size_t)nres, st);
}

static void print_stable(const struct step_result *res,
			 const struct feed_stable *st)
{
	printf("# latency-stable rate: %ld msg/s (SupplyToReceive median <= "
	       "%.1f x %.2f us and p99 <= %.1f x %.2f us, the lower of the "
	       "first %d steps')", st->rate, FEED_STABLE_MEDIAN_X,
	       st->ref_median_us, FEED_STABLE_P99_X, st->ref_p99_us,
	       st->ref_steps);
	if (st->broken_at >= 0 && strcmp(st->broken_by, "failure"))
		printf("; %ld msg/s broke it: %s %.2f us", res[st->broken_at].rate,
		       st->broken_by, !strcmp(st->broken_by, "median") ?
		       res[st->broken_at].sup.median :
		       res[st->broken_at].sup.p99);
	putchar('\n');
}

static void json_stable(FILE *f, const struct step_result *res,
			const struct feed_stable *st)
{
	fprintf(f, "\"stable_rate\": %ld, \"stable\": {\"latency\": "
		"\"supply_to_receive\", \"ref_steps\": %d, "
		"\"ref_median_us\": %.3f, \"ref_p99_us\": %.3f, "
		"\"median_factor\": %.1f, \"p99_factor\": %.1f, ",
		st->rate, st->ref_steps, st->ref_median_us, st->ref_p99_us,
		FEED_STABLE_MEDIAN_X, FEED_STABLE_P99_X);
	if (st->broken_at >= 0)
		fprintf(f, "\"broken_at\": %ld, \"broken_by\": \"%s\"}, ",
			res[st->broken_at].rate, st->broken_by);
	else
		fprintf(f, "\"broken_at\": null, \"broken_by\": null}, ");
}

/*
 * --warmup: the first step's rate for o->warmup seconds, not counted.
 * NULL, or why it failed (then no step is run: a run that cannot hold its
 * lowest rate has no rate to report).
 */
static const char *warm_up(const struct opts *o, uint64_t *seq,
			   uint64_t *sent)
{
	struct step_result r;

	*sent = 0;
	if (o->warmup <= 0)
		return NULL;
	r = run_step(o->base, o->warmup, 0, seq);
	*sent = r.sent;
	return r.failure;
}

static int run_feed(const struct opts *o, struct side_usage *self)
{
	struct step_result res[256];
	struct feed_stable st;
	FILE *json = NULL;
	struct usage_mark t0 = usage_mark_now();
	uint64_t seq = 1, warm_sent;
	long max_ok = 0, nres = 0;
	const char *warm_fail;

	printf("# msga_feed: %zu B messages, %.1f s per step, deadline %.1f s\n",
	       o->size, o->duration, o->deadline);
	warm_fail = warm_up(o, &seq, &warm_sent);
	if (o->warmup > 0)
		printf("# warm-up: %llu messages at %ld msg/s over %.1f s, "
		       "paced and reflected like a step, not counted%s%s\n",
		       (unsigned long long)warm_sent, o->base, o->warmup,
		       warm_fail ? "; it failed: " : "",
		       warm_fail ? warm_fail : "");
	else
		printf("# warm-up: none (--warmup 0): the first step's first "
		       "messages are counted\n");
	printf("%8s  %-15s %9s %9s %9s %9s %9s %8s\n", "rate", "latency",
	       "mean[us]", "median", "p99", "max", "stdev", "count");
	for (long rate = o->base; !warm_fail && rate <= o->max_rate &&
	     nres < 256; rate += o->step) {
		struct step_result r = run_step(rate, o->duration, 1, &seq);

		res[nres++] = r;
		print_stats_row("SendToReceive", rate, &r.s2r);
		print_stats_row("SupplyToReceive", rate, &r.sup);
		if (r.failure) {
			printf("# failure at %ld msg/s: %s\n", rate, r.failure);
			break;
		}
		max_ok = rate;
	}
	stop_consumer(seq);
	flush_bucket(now_ns());
	*self = usage_since(t0);
	stable_of(res, nres, &st);
	printf("# max rate without failure: %ld msg/s\n", max_ok);
	print_stable(res, &st);
	if (o->json && (json = fopen(o->json, "w"))) {
		fprintf(json, "{\"mode\": \"feed\", \"size\": %zu, "
			"\"max_rate\": %ld, ", o->size, max_ok);
		json_stable(json, res, &st);
		fprintf(json, "\"warmup\": {\"seconds\": %.3f, \"rate\": %ld, "
			"\"messages\": %llu, \"failure\": %s%s%s}, "
			"\"steps\": [", o->warmup > 0 ? o->warmup : 0.0,
			o->base, (unsigned long long)warm_sent,
			warm_fail ? "\"" : "", warm_fail ? warm_fail : "null",
			warm_fail ? "\"" : "");
		for (long k = 0; k < nres; k++) {
			fprintf(json, "%s{\"rate\": %ld, \"failure\": %s%s%s, ",
				k ? ", " : "", res[k].rate,
				res[k].failure ? "\"" : "",
				res[k].failure ? res[k].failure : "null",
				res[k].failure ? "\"" : "");
			json_stats(json, "send_to_receive", &res[k].s2r);
			fputs(", ", json);
			json_stats(json, "supply_to_receive", &res[k].sup);
			fputc('}', json);
		}
		fprintf(json, "], ");
		fclose(json);
	}
	return 0;
}

/* One pub/sub round trip: send seq, poll until its echo is in. */
static void pubsub_round_trip(uint64_t seq, int sample)
{
	uint64_t want = prod.received + 1, end;

	prod.step_first_seq = sample ? 1 : seq + 1; /* warm-up: no sample */
	while (send_one(seq, now_ns(), 0) == -EAGAIN)
		msga_ctx_poll(prod.ep.ctx, 16);
	/* Spin as perftest does: the clock only now and then. */
	end = now_ns() + 5000000000u;
	for (unsigned spins = 0; prod.received < want; spins++) {
		msga_ctx_poll(prod.ep.ctx, 16);
		if (prod.ep.peer_gone)
			die("%s", "the consumer is gone");
		if (spins % 256 == 255 && now_ns() > end) {
			char n[24];

			snprintf(n, sizeof(n), "%llu", (unsigned long long)seq);
			die("no echo of message %s in 5 s", n);
		}
	}
}

static double median_of(const double *v, long n)
{
	double *c = malloc(n * sizeof(*c)), m;

	if (!c)
		die("%s", "out of memory");
	memcpy(c, v, n * sizeof(*c));
	m = summarize(c, n).median;
	free(c);
	return m;
}

/* --vs-write's measured pairs of blocks: -n rounded up to whole blocks. */
static long vs_write_pairs(const struct opts *o)
{
	return (o->iters + o->vs_write - 1) / o->vs_write;
}

/* --vs-write's result: pub/sub against the bare WRITE, block by block. */
struct vs_write {
	long block, pairs, at_or_below;
	int inl;
	struct lat_summary raw;
	double ratio_of_medians, ratio_median, ratio_p25, ratio_p75;
};

/*
 * Blocks alternate: pub/sub, WRITE, pub/sub, WRITE... the first pair warms
 * up. Pub/sub block k is compared with the mean of the WRITE blocks on
 * either side of it, so a host that speeds up or slows down steadily
 * favours neither.
 */
static struct vs_write run_vs_write(const struct opts *o, struct write_pp *wp,
				    uint64_t *seq)
{
	long block = o->vs_write, pairs = vs_write_pairs(o);
	double *raw = calloc(pairs * block, sizeof(*raw));
	double *ratio = calloc(pairs, sizeof(*ratio));
	double prev_raw_med = 0; /* the WRITE block before, 0 before the first */
	struct vs_write r = { .block = block, .pairs = pairs,
			      .inl = write_pp_inline(wp) };

	if (!raw || !ratio)
		die("%s", "out of memory");
	for (long k = -1; k < pairs; k++) {
		long from = prod.nsamples;
		double lib_med = 0;

		for (long i = 0; i < block; i++)
			pubsub_round_trip((*seq)++, k >= 0);
		if (k >= 0)
			lib_med = median_of(prod.send2recv + from, block);
		for (long i = 0; i < block; i++) {
			uint64_t t0 = now_ns();

			if (write_pp_ping(wp, 5000))
				die("%s", "--vs-write: no WRITE back in 5 s");
			if (k >= 0)
				raw[k * block + i] = (now_ns() - t0) / 2e3;
		}
		if (k >= 0) {
			double raw_med = median_of(raw + k * block, block);
			double around = prev_raw_med ?
				(prev_raw_med + raw_med) / 2 : raw_med;

			ratio[k] = lib_med / around;
			r.at_or_below += ratio[k] <= 1.0;
			prev_raw_med = raw_med;
		}
	}
	r.raw = summarize(raw, pairs * block);
	qsort(ratio, pairs, sizeof(*ratio), cmp_double);
	r.ratio_median = lat_stats_quantile(ratio, pairs, 0.5);
	r.ratio_p25 = lat_stats_quantile(ratio, pairs, 0.25);
	r.ratio_p75 = lat_stats_quantile(ratio, pairs, 0.75);
	free(raw);
	free(ratio);
	return r;
}

static int run_pingpong(const struct opts *o, struct write_pp *wp,
			struct side_usage *self)
{
	struct usage_mark t0 = usage_mark_now();
	uint64_t seq = 1;
	struct vs_write vw = { 0 };
	struct lat_summary s;
	FILE *json;

	if (wp) {
		vw = run_vs_write(o, wp, &seq);
	} else {
		for (long i = -(o->iters / 10); i < o->iters; i++)
			pubsub_round_trip(seq++, i >= 0);
	}
	stop_consumer(seq);
	*self = usage_since(t0);
	s = summarize(prod.send2recv, prod.nsamples);
	printf("%-8s %-11s %-9s %-9s %-11s %-9s %-9s %-9s %-9s\n", "#bytes",
	       "#iterations", "t_min", "t_max", "t_typical", "t_avg", "t_stdev",
	       "99%", "99.9%");
	printf("%-8zu %-11ld %-9.2f %-9.2f %-11.2f %-9.2f %-9.2f %-9.2f %-9.2f\n",
	       o->size, (long)s.n, s.min, s.max, s.median, s.avg, s.stdev, s.p99,
	       s.p999);
	if (wp) {
		vw.ratio_of_medians = s.median / vw.raw.median;
		printf("# bare WRITE (%s), interleaved: t_typical %.2f us over "
		       "%ld round trips\n", vw.inl ? "inline" : "not inline",
		       vw.raw.median, (long)vw.raw.n);
		printf("# pub/sub / bare WRITE: ratio of medians %.3f; per block "
		       "of %ld: median %.3f, quartiles %.3f-%.3f, at or below 1 "
		       "in %ld of %ld\n", vw.ratio_of_medians, vw.block,
		       vw.ratio_median, vw.ratio_p25, vw.ratio_p75,
		       vw.at_or_below, vw.pairs);
	}
	if (o->json && (json = fopen(o->json, "w"))) {
		fprintf(json, "{\"mode\": \"pingpong\", \"size\": %zu, "
			"\"iterations\": %ld, \"t_min_us\": %.3f, "
			"\"t_max_us\": %.3f, \"t_median_us\": %.3f, "
			"\"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, "
			"\"p99_us\": %.3f, \"p999_us\": %.3f, ", o->size,
			(long)s.n, s.min, s.max, s.median, s.avg, s.stdev, s.p99,
			s.p999);
		if (wp)
			fprintf(json, "\"vs_write\": {\"block\": %ld, "
				"\"blocks\": %ld, \"inline\": %s, "
				"\"write_median_us\": %.3f, "
				"\"ratio_of_medians\": %.4f, "
				"\"block_ratio_median\": %.4f, "
				"\"block_ratio_p25\": %.4f, "
				"\"block_ratio_p75\": %.4f, "
				"\"blocks_at_or_below\": %ld}, ", vw.block,
				vw.pairs, vw.inl ? "true" : "false",
				vw.raw.median, vw.ratio_of_medians,
				vw.ratio_median, vw.ratio_p25, vw.ratio_p75,
				vw.at_or_below);
		fclose(json);
	}
	return 0;
}

/* --publish: the mode's name, as the table prints it. */
static const char *publish_label(const struct opts *o, char *buf, size_t n)
{
	static const char *const names[] = {
		[PUB_EVERY] = "poll-every", [PUB_EAGAIN] = "poll-on-EAGAIN",
		[PUB_ADAPTIVE] = "adaptive", [PUB_ADAPTIVE_EVERY] =
		"adaptive+poll-every",
	};

	if (o->publish == PUB_MORE)
		snprintf(buf, n, "more:%ld", o->more_n);
	else
		snprintf(buf, n, "%s", names[o->publish]);
	return buf;
}

/*
 * --publish: -n messages as fast as the mode lets them go. poll-every: a
 * poll after each send (the documented pattern); poll-on-EAGAIN: only
 * when back-pressured; more:N: N-1 sends with MSGA_COMMIT_MORE, a plain
 * one (the doorbell), then a poll; the first three with
 * MSGA_PUB_NO_COALESCE. adaptive: the default publisher (coalescing
 * while busy), polled on -EAGAIN only; adaptive+poll-every: the same,
 * polled after each send. The consumer measures (publish_report): it
 * echoes nothing but the STOP.
 */
static int run_publish(const struct opts *o, struct side_usage *self)
{
	struct usage_mark t0 = usage_mark_now();
	uint64_t n = (uint64_t)o->iters;
	int ret;

	for (uint64_t seq = 1; seq <= n; seq++) {
		int last = o->publish != PUB_MORE || seq % o->more_n == 0 ||
			   seq == n;

		while ((ret = send_one_flags(seq, now_ns(), 0, last ? 0 :
					     MSGA_COMMIT_MORE)) == -EAGAIN)
			msga_ctx_poll(prod.ep.ctx, 64);
		if (ret < 0)
			die("%s", msga_strerror(ret));
		if (o->publish == PUB_EVERY || o->publish == PUB_ADAPTIVE_EVERY ||
		    (o->publish == PUB_MORE && last))
			msga_ctx_poll(prod.ep.ctx, 64);
	}
	ret = msga_pub_flush(prod.ep.pub, 60000);
	if (ret)
		die("msga_pub_flush: %s", msga_strerror(ret));
	*self = usage_since(t0);
	prod.last_echo_seq = n; /* (the STOP is the one echo) */
	stop_consumer(n + 1);
	return 0;
}

/*
 * --publish's line and JSON, from the consumer's report: messages it
 * took, their rate from the first one's send to the last one's
 * callback, and the one-way latency (the sender's stamp to the
 * receiver's callback: one host, one clock) in us.
 */
static void publish_report(const struct opts *o, FILE *rf)
{
	struct lat_summary s = { 0 };
	long got = 0;
	double rate = 0;
	char label[32];
	FILE *json;

	if (!rf || fscanf(rf, "%ld %lf %lf %lf %lf %lf %lf", &got, &rate,
			  &s.avg, &s.median, &s.p99, &s.max, &s.stdev) != 7)
		die("%s", "no figures from the consumer");
	s.n = (size_t)got;
	publish_label(o, label, sizeof(label));
	printf("%-20s %10.0f msg/s  one-way median %9.2f us  p99 %9.2f us  "
	       "(%zu B, %ld of %ld messages)\n", label, rate, s.median, s.p99,
	       o->size, got, o->iters);
	if (o->json && (json = fopen(o->json, "w"))) {
		fprintf(json, "{\"mode\": \"publish\", \"publish\": \"%s\", "
			"\"size\": %zu, \"messages\": %ld, \"msg_per_s\": "
			"%.0f, ", label, o->size, got, rate);
		json_stats(json, "latency", &s);
		fprintf(json, ", ");
		fclose(json);
	}
	if (got != o->iters)
		die("%s", "the consumer did not get every message");
}

static void producer_idle(void *unused)
{
	(void)unused;
	msga_ctx_poll(prod.ep.ctx, 64);
}

/*
 * --linger: what the producer's publisher sent and its subscriber took,
 * as its own counts say, then its context stays open and polled for SEC
 * seconds, so that msga_stat -p can be checked against them.
 */
static void linger(const struct opts *o)
{
	/* wall time, not the measuring clock: a TSC calibrated under load
	 * (TCG) can run the linger short, and msga_stat -p then finds no
	 * file */
	uint64_t until = perf_mono_ns() + (uint64_t)(o->linger * 1e9);

	if (o->linger <= 0)
		return;
	printf("# counts: sent %llu reflected %llu (pid %d, lingering %.1f s)\n",
	       (unsigned long long)prod.sent,
	       (unsigned long long)prod.received, (int)getpid(), o->linger);
	fflush(stdout);
	while (perf_mono_ns() < until) {
		msga_ctx_poll(prod.ep.ctx, 64);
		usleep(1000);
	}
}

/* ---------------------------------------------------------------- pin */

/* Choose both sides' CPUs (before the fork: one measurement each). */
static void pin_choose(const struct opts *o)
{
	int ret;

	if (!o->pin)
		return;
	ret = pin_auto_pick(&pin_prod, NULL, 0, 0);
	if (!ret) {
		ret = pin_auto_pick(&pin_cons, &pin_prod.cpu, 1, 0);
		/* One CPU allowed: both sides share it, and say so. */
		if (ret == -ENODEV) {
			pin_cons = pin_prod;
			pin_cons.flags |= MSGA_CPU_CHOICE_SHARED_CORE;
			ret = 0;
		}
	}
	if (ret) {
		fprintf(stderr, "msga_feed: --pin auto: %s\n",
			msga_strerror(ret));
		exit(2);
	}
}

/* Pin the calling process to c's CPU. */
static void pin_to(const struct opts *o, const struct msga_cpu_choice *c)
{
	cpu_set_t set;

	if (!o->pin)
		return;
	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("--pin auto: sched_setaffinity: %s", strerror(errno));
}

static void pin_json(FILE *f, const struct opts *o,
		     const struct msga_cpu_choice *c)
{
	fprintf(f, "\"pin\": \"%s\", ", o->pin ? "auto" : "none");
	pin_auto_json(f, o->pin ? (int)c->cpu : -1, o->pin ? c : NULL);
	fputc(' ', f);
}

static void pin_report(const struct opts *o)
{
	if (!o->pin)
		return;
	printf("# producer: ");
	pin_auto_text(stdout, (int)pin_prod.cpu, &pin_prod, NULL);
	printf("\n# consumer: ");
	pin_auto_text(stdout, (int)pin_cons.cpu, &pin_cons, NULL);
	printf("\n");
}

static int run_producer(const struct opts *o, pid_t consumer, int report_fd)
{
	struct side_usage self, peer = { -1, -1 };
	long cap = o->vs_write ? vs_write_pairs(o) * o->vs_write :
		   o->pingpong || o->publish ? o->iters :
		   (long)((o->max_rate + 1) * o->duration) + 16;
	struct write_pp *wp = NULL;
	FILE *rf, *json;
	int status = 0, ret;

	prod.o = o;
	prod.cap = cap;
	prod.msg = calloc(1, o->size);
	prod.send2recv = calloc(cap, sizeof(double));
	prod.supply2recv = calloc(cap, sizeof(double));
	if (!prod.msg || !prod.send2recv || !prod.supply2recv)
		die("%s", "out of memory");
	if (o->series && !(prod.series = fopen(o->series, "w")))
		die("cannot write %s", o->series);
	open_endpoint(&prod.ep, o, o->port, o->port + 1, FEED_TOPIC, ECHO_TOPIC,
		      on_echo);
	connect_sub(&prod.ep, o, 30);
	await_consumer(o);
	if (o->vs_write)
		wp = open_write_pp(o, 1, producer_idle);
	prod.run_start = prod.bucket_start = now_ns();
	ret = o->pingpong ? run_pingpong(o, wp, &self) :
	      o->publish ? run_publish(o, &self) : run_feed(o, &self);
	write_pp_close(wp);
	linger(o);
	close_endpoint(&prod.ep);
	if (prod.series)
		fclose(prod.series);
	rf = fdopen(report_fd, "r");
	if (rf && fscanf(rf, "%lf %ld", &peer.cpu_pct, &peer.peak_rss_kb) != 2)
		peer.cpu_pct = -1;
	if (o->publish)
		publish_report(o, rf);
	waitpid(consumer, &status, 0);
	printf("# sent %llu, reflected %llu, out of sequence %llu, lost %llu\n",
	       (unsigned long long)prod.sent, (unsigned long long)prod.received,
	       (unsigned long long)prod.dup_or_reordered,
	       (unsigned long long)prod.lost);
	if (prod.malformed)
		printf("# producer: %llu echoes shorter than %d B refused "
		       "unread\n", (unsigned long long)prod.malformed,
		       FEED_WIRE_COMPACT_LEN);
	printf("# producer: CPU %.1f%% of a core, peak RSS %ld kB\n",
	       self.cpu_pct, self.peak_rss_kb);
	printf("# consumer: CPU %.1f%% of a core, peak RSS %ld kB\n",
	       peer.cpu_pct, peer.peak_rss_kb);
	pin_report(o);
	if (o->by_name)
		printf("# by name: subscribed %.1f ms after msga_sub_connect\n",
		       (prod.ep.connected_ns - prod.ep.connect_ns) / 1e6);
	/* Close the JSON object that run_feed/run_pingpong started. */
	if (o->json && (json = fopen(o->json, "a"))) {
		if (o->by_name)
			fprintf(json, "\"by_name_connect_ms\": %.1f, ",
				(prod.ep.connected_ns - prod.ep.connect_ns) /
				1e6);
		fprintf(json, "\"producer\": {");
		pin_json(json, o, &pin_prod);
		fprintf(json, "\"cpu_pct\": %.1f, \"peak_rss_kb\": %ld}, "
			"\"consumer\": {", self.cpu_pct, self.peak_rss_kb);
		pin_json(json, o, &pin_cons);
		fprintf(json, "\"cpu_pct\": %.1f, \"peak_rss_kb\": %ld}}\n",
			peer.cpu_pct, peer.peak_rss_kb);
		fclose(json);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		die("%s", "the consumer process failed");
	return ret;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	printf("usage: msga_feed [options] ADDRESS\n"
	       "  ADDRESS           local IP of the RDMA device (both sides)\n"
	       "  -d DEV            device name (default: by address)\n"
	       "  -p PORT           producer port; consumer uses PORT+1 (18600)\n"
	       "  -s SIZE           message bytes (232; >= 32, or >= 12 with\n"
	       "                    --pingpong, 64 by default there)\n"
	       "  --base RATE       first rate, msg/s (1000)\n"
	       "  --step RATE       rate increment, msg/s (1000)\n"
	       "  --max-rate RATE   stop stepping here (100000)\n"
	       "  --duration SEC    seconds per step (2)\n"
	       "  --deadline SEC    failure: not reflected within (1)\n"
	       "  --warmup SEC      before the first step, SEC at its rate,\n"
	       "                    not counted (1; 0: none)\n"
	       "  --pingpong        latency mode: one in flight, -n iterations\n"
	       "  --mcast GROUP     over UD multicast: feed on GROUP (IPv4),\n"
	       "                    echoes on GROUP+1 (default: RC)\n"
	       "  --reliable        with --mcast: reliable publishers (they keep\n"
	       "                    messages and answer NAKs: loss recovery)\n"
	       "  --ud              over unicast UD (ud://) instead of RC\n"
	       "  --mac             with --mcast or --ud: contexts with a key,\n"
	       "                    every datagram MAC'd (MSGA_PUB_MAC) and\n"
	       "                    checked (MSGA_SUB_REQUIRE_MAC)\n"
	       "  --no-ring         RC data by SEND/RECV, not the WRITE ring\n"
	       "  --key-file FILE   both sides' contexts take their keys from\n"
	       "                    FILE (msga_ctx_open(3)): authenticated\n"
	       "  --vs-write BLOCK  with --pingpong over RC: also a bare RDMA\n"
	       "                    WRITE ping-pong on PORT+2, in alternating\n"
	       "                    blocks of BLOCK round trips; prints the ratio\n"
	       "  -n ITERS          ping-pong iterations (10000)\n"
	       "  --json FILE       write results as JSON\n"
	       "  --pin auto        producer and consumer each on the quietest\n"
	       "                    allowed CPU, on different cores if any\n"
	       "  --series FILE     write 'time rate mean max' per 100 ms\n"
	       "  --clock KIND      auto, tsc or monotonic (auto), as rdma_lat\n"
	       "  --publish MODE    -n messages as fast as MODE lets them go:\n"
	       "                    every (poll after each send), eagain (poll\n"
	       "                    on -EAGAIN only), more:N (MSGA_COMMIT_MORE,\n"
	       "                    a doorbell and a poll every N), adaptive,\n"
	       "                    adaptive-every (the coalescing default)\n"
	       "  --no-stats        contexts without live counters\n"
	       "                    (MSGA_CTX_NO_STATS): their cost, off\n"
	       "  --linger SEC      the producer prints its counts, then keeps\n"
	       "                    its context open SEC seconds (msga_stat -p)\n"
	       "  --by-name         subscribe by topic name (topic://) through\n"
	       "                    the topic resolver, not by address\n"
	       "  --resolver-group GROUP:PORT  with --by-name: the resolver's\n"
	       "                    group (default " MSGA_RESOLVER_GROUP_DEFAULT ")\n");
}

/* An IPv4 multicast group whose last byte can take +1. */
static const char *mcast_arg(const char *v)
{
	unsigned int a, b, c, d;
	char end;

	if (sscanf(v, "%u.%u.%u.%u%c", &a, &b, &c, &d, &end) != 4 ||
	    a < 224 || a > 239 || b > 255 || c > 255 || d > 254)
		usage_error("--mcast (an IPv4 group below x.x.x.255)", v);
	return v;
}

/* --resolver-group: an IPv4 multicast group and a port, "G:PORT" */
static const char *group_arg(const char *v)
{
	unsigned int a, b, c, d, port;
	char end;

	if (sscanf(v, "%u.%u.%u.%u:%u%c", &a, &b, &c, &d, &port, &end) != 5 ||
	    a < 224 || a > 239 || b > 255 || c > 255 || d > 255 || !port ||
	    port > 65535)
		usage_error("--resolver-group (IPv4 multicast GROUP:PORT)", v);
	return v;
}

/* --publish every|eagain|more:N|adaptive|adaptive-every */
static void publish_arg(struct opts *o, const char *v)
{
	if (!strcmp(v, "every"))
		o->publish = PUB_EVERY;
	else if (!strcmp(v, "eagain"))
		o->publish = PUB_EAGAIN;
	else if (!strcmp(v, "adaptive"))
		o->publish = PUB_ADAPTIVE;
	else if (!strcmp(v, "adaptive-every"))
		o->publish = PUB_ADAPTIVE_EVERY;
	else if (!strncmp(v, "more:", 5)) {
		o->publish = PUB_MORE;
		o->more_n = parse_num(v + 5, 1, 4096, "--publish more:N");
	} else {
		usage_error("--publish (every, eagain, more:N, adaptive or "
			    "adaptive-every)", v);
	}
}

/* (-s's error names the bounds) */
_Static_assert(FEED_WIRE_COMPACT_LEN == 12 && MSGA_MSG_MAX == 1048576,
	       "msga_feed -s: update the bounds in its error");

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longs[] = {
		{ "base", required_argument, NULL, 'B' },
		{ "step", required_argument, NULL, 'S' },
		{ "max-rate", required_argument, NULL, 'M' },
		{ "duration", required_argument, NULL, 'T' },
		{ "deadline", required_argument, NULL, 'L' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "pingpong", no_argument, NULL, 'P' },
		{ "mcast", required_argument, NULL, 'G' },
		{ "ud", no_argument, NULL, 'U' },
		{ "reliable", no_argument, NULL, 'Y' },
		{ "mac", no_argument, NULL, 'A' },
		{ "no-ring", no_argument, NULL, 'R' },
		{ "vs-write", required_argument, NULL, 'W' },
		{ "key-file", required_argument, NULL, 'k' },
		{ "json", required_argument, NULL, 'J' },
		{ "series", required_argument, NULL, 'C' },
		{ "clock", required_argument, NULL, 'K' },
		{ "publish", required_argument, NULL, 'E' },
		{ "no-stats", no_argument, NULL, 'N' },
		{ "linger", required_argument, NULL, 'g' },
		{ "by-name", no_argument, NULL, 'r' },
		{ "resolver-group", required_argument, NULL, 'o' },
		{ "pin", required_argument, NULL, 'X' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *size_arg = NULL;
	int c;

	*o = (struct opts){ .port = 18600, .size = 0, .base = 1000,
			    .step = 1000, .max_rate = 100000, .duration = 2,
			    .deadline = 1, .warmup = 1, .iters = 10000 };
	opterr = 0; /* one line of our own, not getopt's */
	while ((c = getopt_long(argc, argv, ":d:p:s:n:h", longs, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'p': o->port = parse_num(optarg, 1, 65534, "port"); break;
		case 's':
			size_arg = optarg;
			o->size = parse_num(optarg, FEED_WIRE_COMPACT_LEN,
					    MSGA_MSG_MAX,
					    "size (12 to 1048576 bytes)");
			break;
		case 'n': o->iters = parse_num(optarg, 10, 1e8, "-n"); break;
		case 'B': o->base = parse_num(optarg, 1, 1e8, "--base"); break;
		case 'S': o->step = parse_num(optarg, 1, 1e8, "--step"); break;
		case 'M': o->max_rate = parse_num(optarg, 1, 1e8, "--max-rate"); break;
		case 'T': o->duration = parse_num(optarg, 0.1, 3600, "--duration"); break;
		case 'L': o->deadline = parse_num(optarg, 0.01, 60, "--deadline"); break;
		case 'w': o->warmup = parse_num(optarg, 0, 3600, "--warmup"); break;
		case 'P': o->pingpong = 1; break;
		case 'G': o->mcast = mcast_arg(optarg); break;
		case 'U': o->ud = 1; break;
		case 'Y': o->reliable = 1; break;
		case 'A': o->mac = 1; break;
		case 'R': o->no_ring = 1; break;
		case 'W': o->vs_write = parse_num(optarg, 10, 100000, "--vs-write"); break;
		case 'J': o->json = optarg; break;
		case 'k': o->key_file = optarg; break;
		case 'C': o->series = optarg; break;
		case 'E': publish_arg(o, optarg); break;
		case 'N': o->no_stats = 1; break;
		case 'r': o->by_name = 1; break;
		case 'o': o->resolver_group = group_arg(optarg); break;
		case 'g': o->linger = parse_num(optarg, 0, 3600, "--linger"); break;
		case 'X':
			/* Only auto: the two sides need two CPUs, chosen. */
			if (strcmp(optarg, "auto"))
				usage_error("--pin (only auto)", optarg);
			o->pin = 1;
			break;
		case 'K':
			if (!strcmp(optarg, "auto"))
				o->clock = PERF_CLOCK_AUTO;
			else if (!strcmp(optarg, "tsc"))
				o->clock = PERF_CLOCK_TSC;
			else if (!strcmp(optarg, "monotonic"))
				o->clock = PERF_CLOCK_MONO;
			else
				usage_error("--clock", optarg);
			break;
		case 'h': usage(); exit(0);
		case ':':
			fprintf(stderr, "msga_feed: option '%s' needs a value\n",
				argv[optind - 1]);
			exit(2);
		default:
			fprintf(stderr, "msga_feed: unknown option '%s' (see msga_feed -h)\n",
				argv[optind - 1]);
			exit(2);
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "msga_feed: expected one ADDRESS\n");
		exit(2);
	}
	if (o->ud && o->mcast)
		usage_error("--ud (with --mcast: pick one)", "--ud");
	if (o->reliable && !o->mcast)
		usage_error("--reliable (only with --mcast)", "--reliable");
	if (o->mac && !o->mcast && !o->ud)
		usage_error("--mac (only with --mcast or --ud)", "--mac");
	if (o->base > o->max_rate)
		usage_error("--base (above --max-rate)", argv[optind]);
	if (o->publish && (o->pingpong || o->vs_write))
		usage_error("--publish (not with --pingpong)", "--publish");
	if (o->vs_write && (!o->pingpong || o->ud || o->mcast))
		usage_error("--vs-write (only with --pingpong over RC)",
			    "--vs-write");
	if (o->resolver_group && !o->by_name)
		usage_error("--resolver-group (only with --by-name)",
			    o->resolver_group);
	if (o->by_name && o->vs_write)
		usage_error("--vs-write (not with --by-name)", "--vs-write");
	/* (many messages in flight: each must bring its own stamps back) */
	if (o->size && o->size < FEED_WIRE_FULL_LEN && !o->pingpong)
		usage_error("size (below 32 only with --pingpong: rate steps "
			    "carry time stamps in a 32-byte header)",
			    size_arg);
	if (!o->size)
		o->size = o->pingpong ? 64 : 232; /* perftest's / STAC-N1's */
	o->addr = argv[optind];
}

int main(int argc, char **argv)
{
	struct opts o;
	int fds[2];
	pid_t pid;

	parse_opts(argc, argv, &o);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (perf_clock_init(o.clock)) {
		fprintf(stderr, "msga_feed: --clock: %s\n", perf_clock.why);
		return 2;
	}
	pin_choose(&o);
	if (pipe(fds))
		die("%s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("%s", strerror(errno));
	if (pid == 0) {
		close(fds[0]);
		pin_to(&o, &pin_cons);
		_exit(run_consumer(&o, fds[1]));
	}
	close(fds[1]);
	pin_to(&o, &pin_prod);
	return run_producer(&o, pid, fds[0]);
}
