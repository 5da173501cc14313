/* SPDX-License-Identifier: MIT */
/* perf_ep.c - see perf_ep.h: error text, names, parameters from options. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "perf_ep.h"

int perf_fail(struct perf_ep *ep, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ep->err, sizeof(ep->err), fmt, ap);
	va_end(ap);
	return ret;
}

int perf_neg_errno(void)
{
	return errno ? -errno : -EIO;
}

const char *perf_transport_name(enum perf_transport t)
{
	static const char *const names[] = { "InfiniBand", "RoCE", "iWARP" };

	return names[t];
}

void perf_params_from_opts(struct perf_params *p, const struct perf_opts *o,
			   uint32_t max_size)
{
	memset(p, 0, sizeof(*p));
	p->tool = o->tool;
	p->conn = o->conn;
	p->verb = o->verb;
	p->use_cm = o->use_cm;
	p->bidir = o->bidir;
	p->events = o->events;
	p->inline_size = o->inline_size;
	p->tx_depth = o->tx_depth;
	p->rx_depth = o->rx_depth;
	p->cq_mod = o->cq_mod;
	p->post_list = o->post_list;
	p->max_size = max_size;
	p->sample = o->sample;
	p->rate = o->rate;
	p->mcast_group = o->mcast_group;
}
