/* SPDX-License-Identifier: MIT */
/*
 * rc_pingpair.h - two RC endpoints on one RDMA device, connected through
 * rdma_cm over a local address, driven by one thread. The device test bed's
 * first proof that a message really crosses a queue pair, and the README
 * demo's measurement.
 */
#ifndef MSGA_RC_PINGPAIR_H
#define MSGA_RC_PINGPAIR_H

#include <stddef.h>
#include <stdint.h>

struct rc_pingpair;

/*
 * Listen on addr (numeric) at an ephemeral port, connect a client to it,
 * and register buffers for messages of up to max_msg bytes. Returns 0 or a
 * negative errno; err gets a one-line reason.
 */
int rc_pingpair_open(struct rc_pingpair **ppp, const char *addr,
		     size_t max_msg, char *err, size_t errlen);

/*
 * Client sends msg (len bytes) over RC SEND; the server receives it and
 * sends it back; the client receives the echo into reply. Returns 0, or a
 * negative errno (-ETIMEDOUT if a completion does not come within
 * timeout_ms, -EIO on a failed completion).
 */
int rc_pingpair_roundtrip(struct rc_pingpair *pp, const void *msg, size_t len,
			  void *reply, int timeout_ms);

/* Name of the device the pair runs on, as rdma_cm chose it. */
const char *rc_pingpair_device(const struct rc_pingpair *pp);

void rc_pingpair_close(struct rc_pingpair *pp);

#endif
