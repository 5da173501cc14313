/* SPDX-License-Identifier: MIT */
/*
 * cm_conn.h - the rdma_cm steps every bench tool takes, in one place: an
 * event channel, numeric addresses, resolving an address and a route,
 * listening, and waiting (with a bound) for the next event or for one
 * expected event. Queue pairs, buffers and connection parameters stay
 * with each tool: that is where they differ.
 *
 * Errors are negative errnos with a one-line reason written to the
 * caller's buffer (err, errlen), so each tool keeps its own messages.
 */
#ifndef MSGA_BENCH_CM_CONN_H
#define MSGA_BENCH_CM_CONN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>

/* rdma_resolve_addr()/rdma_resolve_route()'s own timeout. */
#define CM_RESOLVE_MS 2000

struct cm_conn {
	struct rdma_event_channel *ch;  /* non-blocking; NULL until open */
	/*
	 * Called about every millisecond while a wait has no event yet
	 * (msga_feed keeps its library context polled); NULL: just sleep.
	 */
	void (*idle)(void *arg);
	void *idle_arg;
	char *err;
	size_t errlen;
};

/* The event channel; reasons go to err. 0 or -errno. */
int cm_conn_open(struct cm_conn *c, char *err, size_t errlen);
/* Destroy the channel (ids on it must be gone); a zeroed c is fine. */
void cm_conn_close(struct cm_conn *c);

/*
 * addr (numeric IPv4 or IPv6) and port into ss; -EINVAL if addr is NULL
 * or not numeric (the caller says so in its own words: no channel needed).
 */
int cm_numeric_addr(const char *addr, uint16_t port,
		    struct sockaddr_storage *ss);

/* The next event on any id of c, within timeout_ms; -ETIMEDOUT after. */
int cm_conn_next(struct cm_conn *c, int timeout_ms,
		 struct rdma_cm_event **evp);
/*
 * The next event, which must be of type want: another is acknowledged
 * and is -ECONNREFUSED (a refused or unreachable peer). With evp NULL
 * the event is acknowledged here, else the caller acknowledges *evp.
 */
int cm_conn_expect(struct cm_conn *c, enum rdma_cm_event_type want,
		   int timeout_ms, struct rdma_cm_event **evp);

/*
 * Resolve dst's address on id (from src, or any local address if NULL),
 * and then, if route, its route; each step waits up to timeout_ms.
 */
int cm_conn_resolve(struct cm_conn *c, struct rdma_cm_id *id,
		    struct sockaddr *src, struct sockaddr *dst, int route,
		    int timeout_ms);

/* A new TCP-port-space id on c (context ctx) bound to sa, listening. */
int cm_conn_listen(struct cm_conn *c, struct rdma_cm_id **idp,
		   struct sockaddr *sa, void *ctx);

#endif
