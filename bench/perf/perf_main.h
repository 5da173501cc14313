/* SPDX-License-Identifier: MIT */
/*
 * perf_main.h - what rdma_lat and rdma_bw share around their measurement
 * loops: option handling (a bad option is one stderr line and exit 2),
 * clock and CPU setup, the client's walk over message sizes, and the
 * server's accept loop that outlives clients which vanish mid-run.
 */
#ifndef MSGA_PERF_MAIN_H
#define MSGA_PERF_MAIN_H

#include "perf_conn.h"

#define PERF_EXIT_OK 0
#define PERF_EXIT_FAIL 1
#define PERF_EXIT_USAGE 2

struct perf_tool_ops {
	/*
	 * Client, after the server said READY for size: measure, send STOP,
	 * collect DONE and print the row. Returns 0 or -errno (ep->err).
	 */
	int (*client_size)(struct perf_ep *ep, uint32_t size);
	/*
	 * Server, for a RUN message: prepare, send READY, serve until the
	 * client's STOP, answer DONE. Returns 0 or -errno (ep->err).
	 */
	int (*server_size)(struct perf_ep *ep, const struct perf_msg *run);
};

int perf_main(int argc, char **argv, enum perf_tool tool,
	      const struct perf_tool_ops *ops);

/*
 * The check every waiting loop makes now and then: has the peer sent a
 * control message (returned as 1, in *m), gone away (-ECONNRESET) or been
 * silent for longer than --timeout since *last_progress (-ETIMEDOUT)?
 */
int perf_check_peer(struct perf_ep *ep, struct perf_msg *m,
		    uint64_t last_progress_ns);

/* Client: STOP with the count sent, then the server's DONE into *done. */
int perf_stop(struct perf_ep *ep, uint64_t count, struct perf_msg *done);

/* Server: wait (blocking, bounded by --timeout) for the STOP message. */
int perf_wait_stop(struct perf_ep *ep, struct perf_msg *stop);

int perf_send_simple(struct perf_ep *ep, uint32_t type, uint64_t v0);

#endif
