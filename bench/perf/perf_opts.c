/* SPDX-License-Identifier: MIT */
/*
 * perf_opts.c - see perf_opts.h. Option letters follow perftest where it
 * has one; long-only options cover what perftest lacks (--rate, --sample,
 * --warmup, --json, --csv, --histogram, --once, --clients, --bind, --clock,
 * --pin, --timeout). -M is perftest's multicast flag, but here it takes
 * the group address. Every value is range-checked here.
 *
 * The old OFED rdma_lat and rdma_bw used -c without a value for "connect
 * with rdma_cm"; getopt cannot take an optional value from the next word,
 * so old_c_argv() reads the words first and turns such a -c into --cma.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_opts.h"

enum {
	OPT_PIN = 256, OPT_RATE, OPT_SAMPLE, OPT_WARMUP, OPT_JSON, OPT_CSV,
	OPT_HIST, OPT_GBITS, OPT_ONCE, OPT_CLIENTS, OPT_CLOCK, OPT_TIMEOUT,
	OPT_VERSION, OPT_CMA, OPT_OLD_OUTPUT,
};

static const struct option long_opts[] = {
	{ "ib-dev", required_argument, NULL, 'd' },
	{ "ib-port", required_argument, NULL, 'i' },
	{ "gid-index", required_argument, NULL, 'x' },
	{ "connection", required_argument, NULL, 'c' },
	{ "verb", required_argument, NULL, 'V' },
	{ "size", required_argument, NULL, 's' },
	{ "all", no_argument, NULL, 'a' },
	{ "iters", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'D' },
	{ "inline_size", required_argument, NULL, 'I' },
	{ "tx-depth", required_argument, NULL, 't' },
	{ "rx-depth", required_argument, NULL, 'r' },
	{ "cq-mod", required_argument, NULL, 'Q' },
	{ "post_list", required_argument, NULL, 'l' },
	{ "rdma_cm", no_argument, NULL, 'R' },
	{ "port", required_argument, NULL, 'p' },
	{ "bidirectional", no_argument, NULL, 'b' },
	{ "events", no_argument, NULL, 'e' },
	{ "bind", required_argument, NULL, 'B' },
	{ "mcast", required_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "sample", required_argument, NULL, OPT_SAMPLE },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ "histogram", no_argument, NULL, OPT_HIST },
	{ "report_gbits", no_argument, NULL, OPT_GBITS },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "clients", required_argument, NULL, OPT_CLIENTS },
	{ "clock", required_argument, NULL, OPT_CLOCK },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "cma", no_argument, NULL, OPT_CMA },
	{ "old-output", no_argument, NULL, OPT_OLD_OUTPUT },
	{ NULL, 0, NULL, 0 },
};

static const char short_opts[] = ":d:i:x:c:V:s:an:D:I:t:r:Q:l:Rp:beB:M:h";

static int numeric_ip(const char *s)
{
	uint8_t buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

int perf_opts_old_c(const char *next)
{
	return !next || next[0] == '-' || numeric_ip(next);
}

/* Does the long option name (after "--") take its value from the next word? */
static int long_value_follows(const char *name)
{
	size_t len = strcspn(name, "=");
	const struct option *l;

	if (name[len] == '=')
		return 0;
	for (l = long_opts; l->name; l++)
		if (!strcmp(l->name, name))
			return l->has_arg == required_argument;
	/* getopt_long takes a unique prefix; an ambiguous one it refuses. */
	for (l = long_opts; l->name; l++)
		if (!strncmp(l->name, name, len))
			return l->has_arg == required_argument;
	return 0;
}

/* Does the option word a take its value from the next word? */
static int value_follows(const char *a)
{
	if (a[0] != '-' || !a[1])
		return 0;
	if (a[1] == '-')
		return long_value_follows(a + 2);
	for (const char *c = a + 1; *c; c++) {
		const char *s = *c == ':' ? NULL : strchr(short_opts + 1, *c);

		if (s && s[1] == ':')
			return !c[1]; /* else the rest of the word is the value */
	}
	return 0;
}

/*
 * A copy of argv in which each "-c" word that is the old flag (see
 * perf_opts_old_c()) reads "--cma". Words that are the value of the
 * option before them, and everything after "--", are left alone.
 */
static char **old_c_argv(int argc, char **argv)
{
	static char cma[] = "--cma";
	char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i, rest = 0;

	if (!v)
		return NULL;
	for (i = 0; i < argc; i++) {
		const char *next = i + 1 < argc ? argv[i + 1] : NULL;

		v[i] = argv[i];
		if (!i || rest)
			continue;
		if (!strcmp(argv[i], "--"))
			rest = 1;
		else if (!strcmp(argv[i], "-c") && perf_opts_old_c(next))
			v[i] = cma;
		else if (next && value_follows(argv[i])) {
			i++;
			v[i] = argv[i]; /* a value, never the flag */
		}
	}
	return v;
}

struct parse {
	struct perf_opts *o;
	char *err;
	size_t errlen;
	int seen_s, seen_n, seen_sample, seen_l, seen_q, seen_c, seen_v,
	    seen_t;
};

static int bad(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A whole decimal number in [lo, hi]; no sign, no junk, no overflow. */
static int num(struct parse *p, const char *name, const char *s, uint64_t lo,
	       uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return bad(p, "%s: '%s' is not a number", name, s ? s : "");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return bad(p, "%s: '%s' is not a number", name, s);
	if (v < lo || v > hi)
		return bad(p, "%s: %llu is out of range %llu..%llu", name, v,
			   (unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

static int num32(struct parse *p, const char *name, const char *s,
		 uint64_t lo, uint64_t hi, uint32_t *out)
{
	uint64_t v;
	int ret = num(p, name, s, lo, hi, &v);

	if (!ret)
		*out = (uint32_t)v;
	return ret;
}

static int numint(struct parse *p, const char *name, const char *s,
		  uint64_t lo, uint64_t hi, int *out)
{
	uint64_t v;
	int ret = num(p, name, s, lo, hi, &v);

	if (!ret)
		*out = (int)v;
	return ret;
}

static int parse_conn(struct parse *p, const char *s)
{
	if (!strcasecmp(s, "RC"))
		p->o->conn = PERF_RC;
	else if (!strcasecmp(s, "UC"))
		p->o->conn = PERF_UC;
	else if (!strcasecmp(s, "UD"))
		p->o->conn = PERF_UD;
	else
		return bad(p, "-c: '%s' is not RC, UC or UD", s);
	return 0;
}

static int parse_verb(struct parse *p, const char *s)
{
	if (!strcmp(s, "send"))
		p->o->verb = PERF_SEND;
	else if (!strcmp(s, "write"))
		p->o->verb = PERF_WRITE;
	else if (!strcmp(s, "read"))
		p->o->verb = PERF_READ;
	else if (!strcmp(s, "write_imm"))
		p->o->verb = PERF_WRITE_IMM;
	else
		return bad(p, "-V: '%s' is not send, write, read or write_imm",
			   s);
	return 0;
}

static int parse_clock(struct parse *p, const char *s)
{
	if (!strcmp(s, "auto"))
		p->o->clock = PERF_CLOCK_AUTO;
	else if (!strcmp(s, "tsc"))
		p->o->clock = PERF_CLOCK_TSC;
	else if (!strcmp(s, "monotonic"))
		p->o->clock = PERF_CLOCK_MONO;
	else
		return bad(p, "--clock: '%s' is not auto, tsc or monotonic", s);
	return 0;
}

static int nonempty(struct parse *p, const char *name, const char *s,
		    const char **out)
{
	if (!*s)
		return bad(p, "%s: empty value", name);
	*out = s;
	return 0;
}

static int parse_long_only(struct parse *p, int c, const char *arg)
{
	struct perf_opts *o = p->o;

	switch (c) {
	case OPT_PIN:
		/* "auto": the quietest allowed CPU, measured at start. */
		o->pin_auto = !strcmp(arg, "auto");
		if (o->pin_auto) {
			o->pin_cpu = -1;
			return 0;
		}
		return numint(p, "--pin", arg, 0, 1023, &o->pin_cpu);
	case OPT_RATE:
		return num(p, "--rate", arg, 1, 10000000, &o->rate);
	case OPT_SAMPLE:
		p->seen_sample = 1;
		return num32(p, "--sample", arg, 1, 1000000, &o->sample);
	case OPT_WARMUP:
		return num(p, "--warmup", arg, 0, 1000000000, &o->warmup);
	case OPT_JSON:
		if (o->format == PERF_FMT_CSV)
			return bad(p, "--json and --csv are mutually exclusive");
		o->format = PERF_FMT_JSON;
		return 0;
	case OPT_CSV:
		if (o->format == PERF_FMT_JSON)
			return bad(p, "--json and --csv are mutually exclusive");
		o->format = PERF_FMT_CSV;
		return 0;
	case OPT_HIST:
		o->histogram = 1;
		return 0;
	case OPT_GBITS:
		o->report_gbits = 1;
		return 0;
	case OPT_ONCE:
		o->once = 1;
		return 0;
	case OPT_CLIENTS:
		return num32(p, "--clients", arg, 1, 1000000, &o->clients);
	case OPT_CLOCK:
		return parse_clock(p, arg);
	case OPT_TIMEOUT:
		return num32(p, "--timeout", arg, 1, 3600, &o->timeout_s);
	case OPT_VERSION:
		o->version = 1;
		return 0;
	case OPT_CMA:
		o->old_cli = 1;
		return 0;
	case OPT_OLD_OUTPUT:
		o->old_output = 1;
		return 0;
	}
	return bad(p, "internal: unhandled option %d", c);
}

static int parse_one(struct parse *p, int c, const char *arg)
{
	struct perf_opts *o = p->o;
	uint16_t *tp = &o->tcp_port;
	uint32_t port32 = 0;
	int ret;

	switch (c) {
	case 'd': return nonempty(p, "-d", arg, &o->dev);
	case 'i': return numint(p, "-i", arg, 1, 255, &o->ib_port);
	case 'x': return numint(p, "-x", arg, 0, 255, &o->gid_index);
	case 'c':
		p->seen_c = 1;
		return parse_conn(p, arg);
	case 'V':
		p->seen_v = 1;
		return parse_verb(p, arg);
	case 's':
		p->seen_s = 1;
		return num32(p, "-s", arg, 1, PERF_MAX_SIZE, &o->size);
	case 'a': o->all_sizes = 1; return 0;
	case 'n':
		p->seen_n = 1;
		return num(p, "-n", arg, 1, 1000000000, &o->iters);
	case 'D': return num32(p, "-D", arg, 1, 3600, &o->duration);
	case 'I': return numint(p, "-I", arg, 0, 1024, &o->inline_size);
	case 't':
		p->seen_t = 1;
		return num32(p, "-t", arg, 1, 8192, &o->tx_depth);
	case 'r': return num32(p, "-r", arg, 1, 8192, &o->rx_depth);
	case 'Q':
		p->seen_q = 1;
		return num32(p, "-Q", arg, 1, 8192, &o->cq_mod);
	case 'l':
		p->seen_l = 1;
		return num32(p, "-l", arg, 1, 8192, &o->post_list);
	case 'R': o->use_cm = 1; return 0;
	case 'p':
		ret = num32(p, "-p", arg, 1, 65535, &port32);
		*tp = (uint16_t)port32;
		return ret;
	case 'b': o->bidir = 1; return 0;
	case 'e': o->events = 1; return 0;
	case 'B': return nonempty(p, "--bind", arg, &o->bind_addr);
	case 'M': return nonempty(p, "-M", arg, &o->mcast);
	case 'h': o->help = 1; return 0;
	}
	return parse_long_only(p, c, arg);
}

static void set_defaults(struct perf_opts *o, enum perf_tool tool)
{
	memset(o, 0, sizeof(*o));
	o->tool = tool;
	o->prog = tool == PERF_TOOL_LAT ? "rdma_lat" : "rdma_bw";
	o->gid_index = -1;
	o->inline_size = -1;
	o->size = tool == PERF_TOOL_LAT ? 2 : 65536;
	o->iters = tool == PERF_TOOL_LAT ? 1000 : 5000;
	o->tcp_port = PERF_DEFAULT_TCP_PORT;
	o->pin_cpu = -1;
	o->tx_depth = tool == PERF_TOOL_LAT ? 64 : 128;
	o->rx_depth = tool == PERF_TOOL_LAT ? 64 : 512;
	o->post_list = 1;
	o->warmup = tool == PERF_TOOL_LAT ? 100 : 0;
	o->timeout_s = 10;
}

/*
 * The old OFED tools' -c (--cma): rdma_cm, RC and, as both old tools
 * timed, RDMA write, with their defaults where ours differ (rdma_lat one
 * byte, rdma_bw 1000 iterations; send queues of 50 and 100; a server
 * for one client). Their output
 * lines come with it unless --json or --csv says otherwise.
 */
static int check_old(struct parse *p)
{
	struct perf_opts *o = p->o;

	if (o->old_cli) {
		if (p->seen_c && o->conn != PERF_RC)
			return bad(p, "the old -c (rdma_cm over RC) does not combine with -c %s",
				   perf_conn_name(o->conn));
		o->use_cm = 1;
		if (!p->seen_v)
			o->verb = PERF_WRITE;
		if (o->tool == PERF_TOOL_LAT && !p->seen_s && !o->all_sizes)
			o->size = 1;
		if (!p->seen_n)
			o->iters = 1000;
		if (!p->seen_t)
			o->tx_depth = o->tool == PERF_TOOL_LAT ? 50 : 100;
		if (!o->server && !o->clients)
			o->clients = 1; /* the old server ended with its run */
		if (o->format == PERF_FMT_TEXT)
			o->old_output = 1;
	}
	if (!o->old_output)
		return 0;
	if (o->format != PERF_FMT_TEXT)
		return bad(p, "--old-output and --%s are mutually exclusive",
			   o->format == PERF_FMT_JSON ? "json" : "csv");
	if (o->all_sizes)
		return bad(p, "the old output reports one size; -a needs --json or --csv");
	if (o->histogram || o->rate || o->report_gbits)
		return bad(p, "the old output has no %s; drop it or add --json",
			   o->histogram ? "--histogram" :
			   o->rate ? "--rate" : "--report_gbits");
	return 0;
}

/* Combinations that no device could run. */
static int check_verb_conn(struct parse *p)
{
	struct perf_opts *o = p->o;

	if (o->conn == PERF_UD && o->verb != PERF_SEND)
		return bad(p, "-c UD supports only -V send");
	if (o->conn == PERF_UC && o->verb == PERF_READ)
		return bad(p, "-V read needs -c RC (UC has no RDMA read)");
	if (o->conn == PERF_UD && o->use_cm)
		return bad(p, "-c UD with -R is not supported; use the TCP exchange");
	if (o->conn == PERF_UD && o->tool == PERF_TOOL_BW && o->bidir)
		return bad(p, "-b needs -c RC or UC (UD bandwidth is one way)");
	/* A UD message must fit the path MTU; 1024 fits every RoCE port. */
	if (o->conn == PERF_UD && o->tool == PERF_TOOL_BW && !p->seen_s &&
	    !o->all_sizes)
		o->size = 1024;
	if (o->verb == PERF_WRITE && o->size < 1)
		return bad(p, "-V write needs -s >= 1");
	return 0;
}

/*
 * -M GROUP: rdma_bw sends to GROUP; rdma_lat's client sends to GROUP and
 * the server replies to the next address, so that neither side's queue
 * pair receives its own messages.
 */
static int check_mcast(struct parse *p)
{
	struct perf_opts *o = p->o;
	struct in_addr a;

	if (!o->mcast)
		return 0;
	if (inet_pton(AF_INET, o->mcast, &a) != 1)
		return bad(p, "-M: '%s' is not an IPv4 address", o->mcast);
	if (!IN_MULTICAST(ntohl(a.s_addr)))
		return bad(p, "-M: %s is not a multicast address (224.0.0.0/4)",
			   o->mcast);
	if (o->conn != PERF_UD)
		return bad(p, "-M needs -c UD (multicast is datagram only)");
	if (!o->server)
		return bad(p, "-M is a client option (the server joins the groups the client names)");
	if (o->tool == PERF_TOOL_LAT && !IN_MULTICAST(ntohl(a.s_addr) + 1))
		return bad(p, "-M %s: the reply group (the next address) is not multicast",
			   o->mcast);
	o->mcast_group = a.s_addr;
	return 0;
}

static int check_lat_only(struct parse *p)
{
	struct perf_opts *o = p->o;

	if (o->tool == PERF_TOOL_LAT) {
		if (o->bidir)
			return bad(p, "-b is an rdma_bw option");
		if (o->post_list != 1)
			return bad(p, "-l is an rdma_bw option");
		if (o->events && o->verb == PERF_WRITE)
			return bad(p, "-e needs -V send or write_imm (write latency polls memory)");
		return 0;
	}
	if (o->rate || p->seen_sample)
		return bad(p, "--rate and --sample are rdma_lat options");
	if (o->histogram)
		return bad(p, "--histogram is an rdma_lat option");
	return 0;
}

static int check_rate(struct parse *p)
{
	struct perf_opts *o = p->o;

	if (p->seen_sample && !o->rate)
		return bad(p, "--sample needs --rate");
	if (!o->rate)
		return 0;
	if (!p->seen_sample)
		o->sample = 100;
	if (o->verb != PERF_SEND)
		return bad(p, "--rate needs -V send");
	if (o->all_sizes || o->size < 8)
		return bad(p, "--rate needs one -s of at least 8 bytes (the sequence number)");
	if (o->events)
		return bad(p, "--rate busy-polls; it does not combine with -e");
	return 0;
}

static int check_depths(struct parse *p)
{
	struct perf_opts *o = p->o;

	if (!p->seen_q)
		o->cq_mod = o->tool == PERF_TOOL_LAT ? 16 : 64;
	if (o->cq_mod > o->tx_depth) {
		if (p->seen_q)
			return bad(p, "-Q %u is larger than -t %u", o->cq_mod,
				   o->tx_depth);
		o->cq_mod = o->tx_depth;
	}
	if (o->post_list > o->tx_depth)
		return bad(p, "-l %u is larger than -t %u", o->post_list,
			   o->tx_depth);
	return 0;
}

static int check_roles(struct parse *p)
{
	struct perf_opts *o = p->o;

	/* rdma_cm resolves numeric addresses only; say so up front. */
	if (o->server && !numeric_ip(o->server))
		return bad(p, "'%s' is not a numeric IP address", o->server);
	if (o->bind_addr && !numeric_ip(o->bind_addr))
		return bad(p, "--bind: '%s' is not a numeric IP address",
			   o->bind_addr);
	if (o->server && o->bind_addr)
		return bad(p, "--bind is a server option (no address)");

	if (p->seen_s && o->all_sizes)
		return bad(p, "-a and -s are mutually exclusive");
	if (p->seen_n && o->duration)
		return bad(p, "-n and -D are mutually exclusive");
	if (o->server && (o->once || o->clients))
		return bad(p, "--once and --clients are server options (no address)");
	if (o->once && o->clients)
		return bad(p, "--once and --clients are mutually exclusive");
	if (o->once)
		o->clients = 1;
	if (o->histogram && o->format == PERF_FMT_CSV)
		return bad(p, "--histogram needs text or --json output");
	return 0;
}

static int parse_words(struct parse *p, int argc, char **argv)
{
	struct perf_opts *o = p->o;
	int c, ret;

	opterr = 0;
	optind = 0; /* GNU: full reset, so tests can parse many times */
	while ((c = getopt_long(argc, argv, short_opts, long_opts, NULL)) != -1) {
		if (c == '?')
			return optopt ? bad(p, "unknown option -%c", optopt) :
			       bad(p, "unknown option %s", argv[optind - 1]);
		if (c == ':')
			return bad(p, "option %s needs a value", argv[optind - 1]);
		ret = parse_one(p, c, optarg);
		if (ret)
			return ret;
	}
	if (o->help || o->version)
		return 0;
	if (optind < argc)
		o->server = argv[optind++];
	if (optind < argc)
		return bad(p, "unexpected argument '%s' (one address at most)",
			   argv[optind]);
	if (o->server && !*o->server)
		return bad(p, "empty server address");
	ret = check_roles(p);
	if (!ret)
		ret = check_old(p);
	if (!ret)
		ret = check_verb_conn(p);
	if (!ret)
		ret = check_mcast(p);
	if (!ret)
		ret = check_lat_only(p);
	if (!ret)
		ret = check_rate(p);
	if (!ret)
		ret = check_depths(p);
	return ret;
}

int perf_opts_parse(struct perf_opts *o, enum perf_tool tool, int argc,
		    char **argv, char *err, size_t errlen)
{
	struct parse p = { .o = o, .err = err, .errlen = errlen };
	char **v;
	int ret;

	set_defaults(o, tool);
	err[0] = '\0';
	v = old_c_argv(argc, argv);
	if (!v) {
		bad(&p, "out of memory");
		return -ENOMEM;
	}
	ret = parse_words(&p, argc, v);
	free(v);
	return ret;
}

const char *perf_conn_name(enum perf_conn_type c)
{
	static const char *const names[] = { "RC", "UC", "UD" };

	return names[c];
}

const char *perf_verb_name(enum perf_verb v)
{
	static const char *const names[] = { "send", "write", "read",
					     "write_imm" };

	return names[v];
}

size_t perf_opts_sizes(const struct perf_opts *o, uint32_t *sizes, size_t max)
{
	size_t n = 0;

	if (!o->all_sizes) {
		if (max)
			sizes[n++] = o->size;
		return n;
	}
	for (uint32_t s = PERF_MIN_ALL_SIZE; s <= PERF_MAX_SIZE && n < max;
	     s *= 2)
		sizes[n++] = s;
	return n;
}

void perf_usage(const struct perf_opts *o)
{
	printf("usage: %s [options]            (server)\n"
	       "       %s [options] ADDRESS    (client)\n"
	       "  -d, --ib-dev DEV       device (default: the one ADDRESS/--bind resolves to)\n"
	       "  -i, --ib-port N        port (default: first active)\n"
	       "  -x, --gid-index N      GID index (default: chosen automatically)\n"
	       "  -c, --connection T     RC, UC or UD (default RC)\n"
	       "  -c, --cma              old OFED form (-c with no type): rdma_cm, RC,\n"
	       "                         RDMA write, the old output lines\n"
	       "  -V, --verb V           send, write, read or write_imm (default send)\n"
	       "  -s, --size N           message size in bytes\n"
	       "  -a, --all              sizes 2 .. 8388608, powers of two\n"
	       "  -n, --iters N          measured iterations\n"
	       "  -D, --duration S       run for S seconds instead of -n\n"
	       "  -I, --inline_size N    largest inline message (default: device maximum)\n"
	       "  -t, --tx-depth N       send queue depth\n"
	       "  -r, --rx-depth N       receive queue depth\n"
	       "  -Q, --cq-mod N         request a completion every N sends\n"
	       "  -l, --post_list N      post N work requests per doorbell (rdma_bw)\n"
	       "  -R, --rdma_cm          connect the queue pair with rdma_cm\n"
	       "  -p, --port N           TCP control port (default 18515)\n"
	       "  -b, --bidirectional    both sides send (rdma_bw)\n"
	       "  -e, --events           wait for completion events instead of polling\n"
	       "  -B, --bind ADDR        server: listen on ADDR only\n"
	       "  -M, --mcast GROUP      client, -c UD: send to IPv4 multicast GROUP\n"
	       "      --pin CPU|auto     pin to CPU, or to the quietest allowed one\n"
	       "      --rate N           rdma_lat: send N msgs/s without waiting\n"
	       "      --sample N         with --rate: the server replies to every Nth\n"
	       "      --warmup N         unmeasured iterations first\n"
	       "      --json | --csv     machine-readable output\n"
	       "      --old-output       the old OFED tool's result lines\n"
	       "      --histogram        rdma_lat: print a latency histogram\n"
	       "      --report_gbits     rdma_bw: text output in Gb/s\n"
	       "      --once             server: exit after one client\n"
	       "      --clients N        server: exit after N clients\n"
	       "      --clock C          auto, tsc or monotonic\n"
	       "      --timeout S        peer silent for S seconds = gone (default 10)\n"
	       "      --version          print the version\n"
	       "See %s(1).\n", o->prog, o->prog, o->prog);
}
