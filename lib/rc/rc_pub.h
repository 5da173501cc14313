/* SPDX-License-Identifier: MIT */
/*
 * rc_pub.h - the rdma:// parts of struct msga_pub and struct msga_sub,
 * which pubsub.h embeds as pub->rc and sub->rc. The publisher's: its
 * listening id, its subscribers' connections, their limits and access
 * control (lib/api fills in the limits from msga_pub_attr; lib/rc does
 * the rest; the fan-out's hot fields, conns and solo, come first). The
 * subscriber's: its connections and their shared receive queue.
 */
#ifndef MSGA_RC_PUB_H
#define MSGA_RC_PUB_H

#include <stdint.h>

#include "msgaccel.h"
#include "list.h"
#include "retry.h"

struct msga__conn;
struct msga__srq;
struct rdma_cm_id;

struct msga__pub_rc {
	struct msga__list conns;       /* its subscribers' connections */
	struct msga__conn *solo;       /* the one ready subscriber, on a ring */
	int nready;
	uint32_t nconns;               /* not dead yet, handshakes included */
	struct rdma_cm_id *listen;
	uint32_t next_id;
	uint32_t max_conns;            /* msga_pub_attr.max_conns */
	uint64_t conns_refused;        /* requests over max_conns */
	/* access control (rc_auth.c) */
	char **allow;                  /* msga_pub_attr.allow, copied */
	uint32_t nallow;
	msga_authorize_cb authorize;
	uint32_t nhandshakes;          /* accepted, not yet subscribed */
	uint32_t max_handshakes;
	uint64_t handshake_ns;
	uint64_t origin;               /* its id in topic resolution's adverts */
};

/* The rdma:// subscriber's part of struct msga_sub (sub->rc). */
struct msga__sub_rc {
	struct msga__list conns;       /* its connections to publishers */
	struct msga__srq *srq;         /* of SEND/RECV connections (srq.h) */
	int no_srq;                    /* the device has none */
	/* connections waiting to try again (0.10, rc_sub_retry.c) */
	struct msga__retries retries;
	/* connections gone: what they delivered, why they went, and the
	 * tries made again (0.10, rc_sub_stats.c: msga_sub_stats) */
	uint64_t gone_msgs, gone_bytes;
	uint64_t gone_clean, gone_reset, gone_timeout, gone_other;
	uint64_t retries_made;
};

#endif
