/* SPDX-License-Identifier: MIT */
/*
 * two_host_util.h - what the two-VM tests' peers (two_host_peer,
 * two_host_mcast_peer) share: the clock, the marker files the host
 * script waits for, and a context on the link's device.
 */
#ifndef TWO_HOST_UTIL_H
#define TWO_HOST_UTIL_H

#include <stdint.h>

#include "msgaccel.h"

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t th_now_ms(void);
/* Create DIR/NAME, synced (the host reads it through 9p): 0 or -errno. */
int th_mark(const char *dir, const char *name);
/* A context on DEV with that peer timeout, or NULL (msga_open_error()). */
struct msga_ctx *th_open_ctx(const char *dev, uint32_t timeout_ms);
/*
 * The same with the topic resolver on its default group; resolver_flags
 * is msga_resolver_attr.flags (MSGA_RESOLVER_ADVERTISE for a publisher).
 */
struct msga_ctx *th_open_ctx_resolver(const char *dev, uint32_t timeout_ms,
				      uint32_t resolver_flags);

#endif
