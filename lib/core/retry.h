/* SPDX-License-Identifier: MIT */
/*
 * retry.h - a subscriber's connections waiting to be tried again (0.10):
 * one record per conn_id that may reconnect, made with its connection (so
 * a death never allocates), on a queue while it waits, and given back by
 * msga__retry_due() when its try is due. The backoff is
 * lib/proto/backoff.h's; the transports (lib/rc/rc_sub_retry.c for
 * rdma://, lib/ud/ud_unicast.c for ud://) decide when a connection waits
 * and make its try.
 */
#ifndef MSGA_RETRY_H
#define MSGA_RETRY_H

#include <stdint.h>
#include <sys/socket.h>

#include "list.h"

struct msga__retry {
	struct msga__list node;        /* its queue's, while waiting */
	uint32_t id;                   /* the conn_id it keeps */
	uint64_t due, backoff;         /* ns */
	struct sockaddr_storage ss;    /* the publisher's address */
	char peer[64];                 /* as the connection names it */
};

struct msga__retries {
	struct msga__list list;        /* waiting records */
	uint64_t rand;                 /* their jitter's state */
};

void msga__retries_init(struct msga__retries *q);
struct msga__retry *msga__retry_new(const char *peer,
				    const struct sockaddr_storage *ss);
/* r waits on q: its backoff grows (restart: it had been up, start over). */
void msga__retry_wait(struct msga__retries *q, struct msga__retry *r,
		      int restart, uint64_t now);
/*
 * The first record due at now, taken off q (its try is the caller's), or
 * NULL with *next lowered to when the next one is due.
 */
struct msga__retry *msga__retry_due(struct msga__retries *q, uint64_t now,
				    uint64_t *next);
/* msga_sub_disconnect of a waiting conn_id: 0, or -ENOENT. */
int msga__retry_cancel(struct msga__retries *q, uint32_t conn_id);
void msga__retry_free_all(struct msga__retries *q);

#endif
