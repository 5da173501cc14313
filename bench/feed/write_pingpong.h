/* SPDX-License-Identifier: MIT */
/*
 * write_pingpong.h - the bare primitive under msgaccel's RC ring, as
 * perftest's ib_write_lat drives it: two processes, one RC queue pair
 * each (connected through rdma_cm), a registered buffer of the message's
 * size, and a round trip that is "RDMA WRITE the buffer, signalled and
 * inline where the device allows; reap that completion; spin on the last
 * byte of our own buffer until the peer's WRITE changes it".
 *
 * msga_feed --vs-write runs it in the same two processes as the library's
 * ping-pong, alternating blocks of round trips, so that both see the same
 * state of a noisy host (see msga_feed(1)).
 */
#ifndef MSGA_WRITE_PINGPONG_H
#define MSGA_WRITE_PINGPONG_H

#include <stddef.h>
#include <stdint.h>

struct write_pp;

/*
 * Connect to the peer on addr:port (numeric IPv4 or IPv6), for messages
 * of size bytes. The passive side listens and accepts one connection; the
 * active side connects, retrying while the listener is not up yet. Both
 * give up after timeout_s. While waiting, idle(arg) is called now and then
 * (msga_feed keeps its library context polled). The active side sends
 * first, as iWARP requires. Returns 0, or a negative errno with a one-line
 * reason in err.
 */
int write_pp_open(struct write_pp **out, const char *addr, int port,
		  int active, size_t size, double timeout_s,
		  void (*idle)(void *), void *arg, char *err, size_t errlen);

/*
 * Active side, one round trip: WRITE, reap, wait for the peer's WRITE.
 * Passive side, one turn: wait for the peer's WRITE, WRITE back, reap.
 * 0, -EIO on a failed completion or post, -ETIMEDOUT when nothing came
 * within timeout_ms.
 */
int write_pp_ping(struct write_pp *wp, int timeout_ms);
int write_pp_pong(struct write_pp *wp, int timeout_ms);

/* Whether the WRITEs go inline (the device's limit allows size bytes). */
int write_pp_inline(const struct write_pp *wp);

void write_pp_close(struct write_pp *wp);

#endif
