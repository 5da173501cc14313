/* SPDX-License-Identifier: MIT */
/*
 * perf_mcast.h - rdma_lat/rdma_bw over IPv4 multicast groups (-M): a UD
 * queue pair from rdma_cm, joined as a full member to the group this side
 * receives on and as a send-only member to the group it sends to, whose
 * address handle, QPN (0xFFFFFF) and Q_Key come from the join event.
 *
 * Groups: rdma_bw's client sends to GROUP, its server receives there.
 * rdma_lat's client sends to GROUP and receives on GROUP + 1, where the
 * server replies: a queue pair attached to the group it sends to would
 * receive its own messages (the device loops multicast back) and take
 * them for replies.
 */
#ifndef MSGA_PERF_MCAST_H
#define MSGA_PERF_MCAST_H

#include "perf_ep.h"

#define PERF_MC_QPN 0xFFFFFFu

/*
 * After the control channel is up: bind to the local address of that
 * channel (the server's --bind address if given), create the queue pair
 * and join this side's groups. Returns 0 or -errno with ep->err set.
 */
int perf_mcast_open(struct perf_ep *ep);

/* Leave the joined groups (before the queue pair goes). */
void perf_mcast_leave(struct perf_ep *ep);

#endif
