/* SPDX-License-Identifier: MIT */
/*
 * perf_opts.h - command line of rdma_lat and rdma_bw. Parsing and
 * validation are pure (no device access) so the host tests cover every
 * rejected option; checks that need the device (UD on iWARP, message size
 * against the path MTU) live in perf_conn.c.
 */
#ifndef MSGA_PERF_OPTS_H
#define MSGA_PERF_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "msgaccel.h"
#include "perf_clock.h"

enum perf_tool { PERF_TOOL_LAT, PERF_TOOL_BW };
enum perf_conn_type { PERF_RC, PERF_UC, PERF_UD };
enum perf_verb { PERF_SEND, PERF_WRITE, PERF_READ, PERF_WRITE_IMM };
enum perf_format { PERF_FMT_TEXT, PERF_FMT_JSON, PERF_FMT_CSV };

#define PERF_MAX_SIZE (8u << 20)
#define PERF_MIN_ALL_SIZE 2u
#define PERF_DEFAULT_TCP_PORT 18515

struct perf_opts {
	enum perf_tool tool;
	const char *prog;        /* "rdma_lat" or "rdma_bw" */
	const char *dev;         /* -d, NULL = from the address or first active */
	int ib_port;             /* -i, 0 = from the address or first active */
	int gid_index;           /* -x, -1 = automatic */
	enum perf_conn_type conn;
	enum perf_verb verb;
	uint32_t size;           /* -s */
	int all_sizes;           /* -a */
	uint64_t iters;          /* -n */
	uint32_t duration;       /* -D seconds, 0 = use iters */
	int inline_size;         /* -I, -1 = automatic */
	uint32_t tx_depth, rx_depth, cq_mod, post_list;
	int use_cm;              /* -R */
	uint16_t tcp_port;       /* -p */
	int bidir;               /* -b (rdma_bw) */
	int pin_cpu;             /* --pin CPU, -1 = no pinning (or auto) */
	int pin_auto;            /* --pin auto: msga_cpu_pick(3) chooses */
	struct msga_cpu_choice pin_choice; /* its choice, set at start */
	int events;              /* -e */
	uint64_t rate;           /* --rate msgs/s, 0 = ping-pong */
	uint32_t sample;         /* --sample: reply to every Nth message */
	uint64_t warmup;         /* --warmup */
	enum perf_format format;
	int histogram, report_gbits;
	int once;                /* --once: serve one client, then exit */
	uint32_t clients;        /* --clients N, 0 = forever */
	const char *bind_addr;   /* -B/--bind (server) */
	const char *mcast;       /* -M/--mcast GROUP (client, with -c UD) */
	uint32_t mcast_group;    /* -M as an IPv4 address, network order */
	const char *server;      /* positional address: client mode */
	enum perf_clock_kind clock;
	uint32_t timeout_s;      /* --timeout: peer silent this long = gone */
	int old_cli;             /* old OFED -c / --cma: rdma_cm, RC, write */
	int old_output;          /* --old-output, or implied by old_cli */
	int help, version;
};

/*
 * Is arg, the word after a "-c" of its own, the old OFED flag's neighbour
 * rather than a connection type? Yes when there is none (NULL), when it is
 * an option (starts with '-') or a numeric IP address (the server); any
 * other word is the -c type. See rdma_lat(1), "OLD OFED COMMAND LINES".
 */
int perf_opts_old_c(const char *next);

/*
 * Parse argv for tool into *o. Returns 0, or -EINVAL (-ENOMEM) with a
 * one-line reason (no program name, no newline) in err.
 */
int perf_opts_parse(struct perf_opts *o, enum perf_tool tool, int argc,
		    char **argv, char *err, size_t errlen);

const char *perf_conn_name(enum perf_conn_type c);
const char *perf_verb_name(enum perf_verb v);

/* Message sizes to run: -a gives 2..8 MiB, else the one -s size. */
size_t perf_opts_sizes(const struct perf_opts *o, uint32_t *sizes, size_t max);

void perf_usage(const struct perf_opts *o);

#endif
