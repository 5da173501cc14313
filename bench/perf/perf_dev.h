/* SPDX-License-Identifier: MIT */
/*
 * perf_dev.h - which device and port an endpoint uses, what it is (IB,
 * RoCE, iWARP), its GID and MTU, and whether it can run the requested
 * test (perf_dev.c).
 */
#ifndef MSGA_PERF_DEV_H
#define MSGA_PERF_DEV_H

#include <stdint.h>
#include <sys/socket.h>

#include "perf_ep.h"

/* Device name and port from -d/-i, else from addr, else the first active. */
int perf_dev_choose(struct perf_ep *ep, const char *addr, int resolve);
/* Open ep->dev_name. An unknown name is -EINVAL (a usage error). */
int perf_dev_open(struct perf_ep *ep);
/* Port state, transport, MTU, GID (ip4: the local IPv4 address or NULL). */
int perf_dev_query(struct perf_ep *ep, const uint8_t *ip4);
/* Device rules the option parser could not know; -EINVAL if broken. */
int perf_dev_check(struct perf_ep *ep);
void perf_local_ip4(const char *addr, uint8_t *ip4, const uint8_t **p);
/* cm_numeric_addr() with the reason in ep->err. */
int perf_numeric_addr(struct perf_ep *ep, const char *addr, uint16_t port,
		      struct sockaddr_storage *ss);

#endif
