/* SPDX-License-Identifier: MIT */
/*
 * perf_conn.h - a connected rdma_lat/rdma_bw endpoint (perf_ep.h): the
 * session's parameters sent over the TCP control channel, then the queue
 * pair connected either by exchanging queue pair numbers and GIDs over
 * that channel (perftest's default) or through rdma_cm (-R, and always on
 * iWARP), or joined to multicast groups (-M, perf_mcast.h).
 */
#ifndef MSGA_PERF_CONN_H
#define MSGA_PERF_CONN_H

#include <stdint.h>

#include "perf_ep.h"

/*
 * Client: find the device (-d, else the one the route to the server uses),
 * apply the device rules (iWARP => rdma_cm, RC only), connect the control
 * channel and the queue pair. Returns 0; -EINVAL for a combination this
 * device cannot run (exit 2); another -errno otherwise. ep->err says why.
 */
int perf_client_open(struct perf_ep *ep, const struct perf_opts *o,
		     uint32_t max_size);

/* Server: one client session on an accepted control channel. */
int perf_server_open(struct perf_ep *ep, const struct perf_opts *o,
		     struct perf_ctrl *ctrl);

void perf_ep_close(struct perf_ep *ep);

#endif
