/* SPDX-License-Identifier: MIT */
/*
 * backoff.h - when a subscriber's connection is tried again (0.10), for
 * rdma:// (lib/rc/rc_sub_retry.c) and ud:// (lib/ud/ud_unicast.c) alike:
 * a wait of 10 ms doubling up to 1 s, started over once the connection
 * had been up, each try drawn from the upper half of its wait so that the
 * subscribers of one restarted publisher spread out; and which failures
 * another try would only repeat.
 *
 * Pure logic: tested on the host (tests/test_backoff.c).
 */
#ifndef MSGA_BACKOFF_H
#define MSGA_BACKOFF_H

#include <stdint.h>

#define MSGA__BACKOFF_MIN_NS 10000000ull   /* 10 ms */
#define MSGA__BACKOFF_MAX_NS 1000000000ull /* 1 s */

/* The wait after one of wait_ns (0: none yet); restart: it had been up. */
uint64_t msga__backoff_next(uint64_t wait_ns, int restart);
/*
 * When a try after a wait of wait_ns from now is due: in
 * [now + wait/2, now + wait]. *rand is the jitter's state (xorshift64;
 * 0 is taken as a fixed seed).
 */
uint64_t msga__backoff_due(uint64_t now_ns, uint64_t wait_ns, uint64_t *rand);
/* A number in [0, range) (0 when range is 0), from *rand as above: the
 * spread that other schedules (tres_sched.h) use too. */
uint64_t msga__jitter(uint64_t *rand, uint64_t range);
/*
 * Whether status ends the retries: the publisher's key or allow list
 * (-EACCES, -EPERM), an address on another device than the context's
 * (-ENODEV), a bad argument (-EINVAL).
 */
int msga__backoff_final(int status);

#endif
