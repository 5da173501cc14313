/* SPDX-License-Identifier: MIT */
/* perf_main.c - see perf_main.h. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "perf_main.h"
#include "perf_out.h"
#include "pin_auto.h"

static int usage_error(const struct perf_opts *o, const char *why)
{
	fprintf(stderr, "%s: %s\n", o->prog, why);
	return PERF_EXIT_USAGE;
}

/* --pin auto: the quietest allowed CPU (pin_auto.h); one polling
 * thread per process, so nothing to avoid. */
static int pin_auto(struct perf_opts *o)
{
	int ret = pin_auto_pick(&o->pin_choice, NULL, 0, 1);

	if (ret) {
		char why[96];

		snprintf(why, sizeof(why), "--pin auto: %s",
			 msga_strerror(ret));
		return usage_error(o, why);
	}
	return 0;
}

static int pin(struct perf_opts *o)
{
	cpu_set_t set;

	if (o->pin_auto)
		return pin_auto(o);
	if (o->pin_cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(o->pin_cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		char why[96];

		snprintf(why, sizeof(why), "--pin %d: %s", o->pin_cpu,
			 strerror(errno));
		return usage_error(o, why);
	}
	return 0;
}

/*
 * Memory registration pins pages, and some providers (siw) hold that to
 * RLIMIT_MEMLOCK, 8 MiB by default: too little for -a. Lift the limit as
 * far as we are allowed; if we may not, registration reports it.
 */
static void raise_memlock(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl) && !getrlimit(RLIMIT_MEMLOCK, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
}

int perf_send_simple(struct perf_ep *ep, uint32_t type, uint64_t v0)
{
	struct perf_msg m = { .type = type };

	m.v[0] = v0;
	return perf_ctrl_send(&ep->ctrl, &m);
}

int perf_check_peer(struct perf_ep *ep, struct perf_msg *m,
		    uint64_t last_progress_ns)
{
	int ret = perf_ctrl_recv(&ep->ctrl, m, 0);

	if (ret < 0)
		return -ECONNRESET;
	if (ret > 0)
		return 1;
	if (perf_mono_ns() - last_progress_ns >
	    (uint64_t)ep->opts->timeout_s * 1000000000ull)
		return -ETIMEDOUT;
	return 0;
}

int perf_stop(struct perf_ep *ep, uint64_t count, struct perf_msg *done)
{
	int ret = perf_send_simple(ep, PERF_MSG_STOP, count);

	if (!ret)
		ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_DONE, done,
				       (int)ep->opts->timeout_s * 1000);
	return ret;
}

int perf_wait_stop(struct perf_ep *ep, struct perf_msg *stop)
{
	int ret = perf_ctrl_recv(&ep->ctrl, stop, -1);

	if (ret < 0)
		return ret;
	return stop->type == PERF_MSG_STOP ? 0 : -EPROTO;
}

/* ------------------------------------------------------------- client */

static int send_run(struct perf_ep *ep, uint32_t size)
{
	struct perf_msg m = { .type = PERF_MSG_RUN };

	m.v[0] = size;
	m.v[1] = ep->opts->iters;
	m.v[2] = ep->opts->duration;
	m.v[3] = ep->opts->warmup;
	return perf_ctrl_send(&ep->ctrl, &m);
}

static int client_sizes(struct perf_ep *ep, const struct perf_tool_ops *ops)
{
	uint32_t sizes[32];
	size_t n = perf_opts_sizes(ep->opts, sizes, 32);
	int ret = 0;

	for (size_t i = 0; i < n && !ret; i++) {
		struct perf_msg ready;

		/* UD -a stops at the path MTU, as perftest does. */
		if (sizes[i] > ep->prm.max_size)
			break;
		ret = send_run(ep, sizes[i]);
		if (!ret)
			ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_READY, &ready,
					       (int)ep->opts->timeout_s * 1000);
		if (ret) {
			snprintf(ep->err, sizeof(ep->err),
				 "server did not start size %u: %s", sizes[i],
				 strerror(-ret));
			break;
		}
		ret = ops->client_size(ep, sizes[i]);
	}
	if (!ret)
		perf_send_simple(ep, PERF_MSG_BYE, 0);
	return ret;
}

static int run_client(const struct perf_opts *o, const struct perf_tool_ops *ops)
{
	uint32_t sizes[32];
	size_t n = perf_opts_sizes(o, sizes, 32);
	struct perf_ep ep;
	int ret = perf_client_open(&ep, o, sizes[n - 1]);

	if (ret == -EINVAL) {
		fprintf(stderr, "%s: %s\n", o->prog, ep.err);
		perf_ep_close(&ep);
		return PERF_EXIT_USAGE;
	}
	if (!ret) {
		perf_out_begin(stdout, o, &ep);
		ret = client_sizes(&ep, ops);
		perf_out_end(stdout, o);
	}
	if (ret)
		fprintf(stderr, "%s: %s\n", o->prog, ep.err[0] ? ep.err :
			strerror(-ret));
	perf_ep_close(&ep);
	return ret ? PERF_EXIT_FAIL : PERF_EXIT_OK;
}

/* ------------------------------------------------------------- server */

static int serve_sizes(struct perf_ep *ep, const struct perf_tool_ops *ops)
{
	for (;;) {
		struct perf_msg m;
		int ret = perf_ctrl_recv(&ep->ctrl, &m, -1);

		if (ret < 0) {
			snprintf(ep->err, sizeof(ep->err),
				 "client went away");
			return ret;
		}
		if (m.type == PERF_MSG_BYE)
			return 0;
		if (m.type != PERF_MSG_RUN || !m.v[0] ||
		    m.v[0] > ep->prm.max_size) {
			snprintf(ep->err, sizeof(ep->err),
				 "protocol error: message %u", m.type);
			return -EPROTO;
		}
		ret = ops->server_size(ep, &m);
		if (ret)
			return ret;
	}
}

static void serve_one(const struct perf_opts *o, struct perf_ctrl *ctrl,
		      const char *peer, const struct perf_tool_ops *ops)
{
	struct perf_ep ep;
	int ret = perf_server_open(&ep, o, ctrl);

	if (!ret)
		ret = serve_sizes(&ep, ops);
	if (ret)
		fprintf(stderr, "%s: client %s: %s\n", o->prog, peer,
			ep.err[0] ? ep.err : strerror(-ret));
	perf_ep_close(&ep);
}

static int run_server(const struct perf_opts *o, const struct perf_tool_ops *ops)
{
	int lfd = perf_ctrl_listen(o->bind_addr, o->tcp_port);
	uint32_t served = 0;

	if (lfd < 0) {
		fprintf(stderr, "%s: cannot listen on %s port %u: %s\n",
			o->prog, o->bind_addr ? o->bind_addr : "*", o->tcp_port,
			strerror(-lfd));
		/* An address that is not ours is bad input, a busy port is not. */
		return lfd == -EHOSTUNREACH || lfd == -EADDRNOTAVAIL ?
		       PERF_EXIT_USAGE : PERF_EXIT_FAIL;
	}
	while (!o->clients || served < o->clients) {
		struct perf_ctrl ctrl;
		char peer[64];
		int ret = perf_ctrl_accept(lfd, &ctrl, peer, sizeof(peer));

		if (ret == -EINTR)
			continue;
		if (ret) {
			fprintf(stderr, "%s: accept: %s\n", o->prog,
				strerror(-ret));
			close(lfd);
			return PERF_EXIT_FAIL;
		}
		serve_one(o, &ctrl, peer, ops);
		perf_ctrl_close(&ctrl);
		served++;
	}
	close(lfd);
	return PERF_EXIT_OK;
}

int perf_main(int argc, char **argv, enum perf_tool tool,
	      const struct perf_tool_ops *ops)
{
	struct perf_opts o;
	char err[256];
	int ret = perf_opts_parse(&o, tool, argc, argv, err, sizeof(err));

	if (ret)
		return usage_error(&o, err);
	if (o.help) {
		perf_usage(&o);
		return PERF_EXIT_OK;
	}
	if (o.version) {
		printf("%s (msgaccel) %s\n", o.prog, PACKAGE_VERSION);
		return PERF_EXIT_OK;
	}
	if (perf_clock_init(o.clock))
		return usage_error(&o, "--clock tsc: the TSC is missing or its calibrations disagree");
	ret = pin(&o);
	if (ret)
		return ret;
	signal(SIGPIPE, SIG_IGN);
	raise_memlock();
	return o.server ? run_client(&o, ops) : run_server(&o, ops);
}
