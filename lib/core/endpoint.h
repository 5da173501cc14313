/* SPDX-License-Identifier: MIT */
/*
 * endpoint.h - what the progress engine (engine.c) drives, and the few
 * services it offers back.
 *
 * The engine knows no transport. It keeps two lists of struct msga__ep:
 * endpoints with completions to poll (RC connections, UD endpoints), and
 * the objects above them (publishers, subscribers), which have timers,
 * deferred work or a listening rdma_cm id but no queue of their own. Each
 * one brings a table of operations, the way libfabric and UCX put a
 * provider behind an ops table; a transport implements them in its own
 * files and reaches the engine only through the services at the bottom.
 *
 * Every rdma_cm id's context is the struct msga__ep that takes its events
 * (a connection request goes to its listening id's). An endpoint with
 * nothing to poll and a lifetime its owner's (a multicast publisher's
 * READ endpoint) is on no list: its struct msga__ep is only its ids'
 * context, and its owner runs its timers and frees it.
 */
#ifndef MSGA_ENDPOINT_H
#define MSGA_ENDPOINT_H

#include <stdint.h>

#include <rdma/rdma_cma.h>

#include "internal.h"
#include "list.h"

struct msga__ep;

struct msga__ep_ops {
	/*
	 * Polled endpoints only (required there): up to budget completions,
	 * returns how many. *now is the tick's clock or 0; an endpoint that
	 * needs a receive time may read the clock and leave it in *now.
	 */
	int (*poll)(struct msga__ep *ep, int budget, uint64_t *now);
	/* An rdma_cm event of one of its ids: copied, already acked. */
	void (*on_cm)(struct msga__ep *ep, const struct rdma_cm_event *ev);
	/* Its timers at now; returns when they are next due (UINT64_MAX). */
	uint64_t (*tick)(struct msga__ep *ep, uint64_t now);
	/* Work asked for with msga__ctx_want_work(); nonzero: more to do. */
	int (*work)(struct msga__ep *ep);
	/* Event mode: arm its completion queue for one event. */
	void (*arm)(struct msga__ep *ep);
	/*
	 * Free it if it is dead and nothing holds it: returns 1 if it was
	 * freed, 0 if it lives (or waits, having called msga__ctx_reap_later).
	 */
	int (*reap)(struct msga__ep *ep, uint64_t now);
	/* msga_ctx_close(): free it whatever its state. */
	void (*destroy)(struct msga__ep *ep);
};

struct msga__ep {
	const struct msga__ep_ops *ops;
	struct msga_ctx *ctx;
	struct msga__list node;        /* ctx->eps, ctx->objs, or itself */
	/*
	 * Its data arrive with no completion event (an RDMA WRITE ring it
	 * reads): a program cannot sleep on msga_ctx_fd() while one lives.
	 */
	int silent;
};

/* Ready to be an id's context, on no list (on_cm is its only op used). */
void msga__ep_init(struct msga_ctx *ctx, struct msga__ep *ep,
		   const struct msga__ep_ops *ops);
/* Polled: an endpoint with completions. Not polled: an object above them. */
void msga__ep_add(struct msga_ctx *ctx, struct msga__ep *ep,
		  const struct msga__ep_ops *ops, int polled);
void msga__ep_del(struct msga__ep *ep);

/* ---------------------------------------------------- engine services */

/*
 * Every path that may run a user callback (msga_ctx_poll, and publishing
 * calls whose failures raise events) runs between enter and leave. A
 * destroy while inside frees nothing: it marks the object dead and asks
 * for a reap; the memory goes when the outermost leave returns, so no list
 * walk or caller up the stack holds a freed pointer.
 */
void msga__ctx_reap(struct msga_ctx *ctx);
static inline void msga__ctx_enter(struct msga_ctx *ctx)
{
	ctx->busy++;
}

static inline void msga__ctx_leave(struct msga_ctx *ctx)
{
	if (!--ctx->busy && ctx->reap)
		msga__ctx_reap(ctx);
}

/* Something died: the outermost leave (or the next poll) reaps. */
static inline void msga__ctx_reap_soon(struct msga_ctx *ctx)
{
	ctx->reap = 1;
}
/* A reap found something that must wait until deadline (event mode's
 * timer wakes the program for it). */
void msga__ctx_reap_later(struct msga_ctx *ctx, uint64_t now,
			  uint64_t deadline);
/* Call every object's work op on the next polls, until none has more. */
static inline void msga__ctx_want_work(struct msga_ctx *ctx)
{
	ctx->want_work = 1;
}

/* The non-blocking rdma_cm channel every id of this context uses. */
int msga__ctx_cm_channel(struct msga_ctx *ctx);
/* "address:port" of id's peer into buf[0, n). */
void msga__cm_peer_name(struct rdma_cm_id *id, char *buf, size_t n);
/*
 * Refuse connect request id with reason (EACCES, ECONNREFUSED: the peer
 * reads it, auth_wire.h) and destroy it; its peer's name into peer[0, n)
 * first, for the caller's report (MSGA_EVENT_REJECTED).
 */
void msga__cm_reject(struct rdma_cm_id *id, int reason, char *peer, size_t n);
/* We started a connection manager exchange: look for its events often. */
void msga__ctx_cm_soon(struct msga_ctx *ctx);

/* Event mode's timer, one-shot: wake within delay_ns of now (event_fd.c). */
void msga__ctx_timer_arm(struct msga_ctx *ctx, uint64_t now,
			 uint64_t delay_ns);
void msga__ctx_timer_ack(struct msga_ctx *ctx);
/* Event mode: fd (readable: work for the next poll) joins msga_ctx_fd()'s
 * set. 0 or -errno. */
int msga__ctx_watch_fd(struct msga_ctx *ctx, int fd);

/* msga_ctx_close(): every object, then every endpoint, destroyed. */
void msga__ctx_endpoints_close(struct msga_ctx *ctx);

/* "SCHEME://IPv4:PORT" or "SCHEME://[IPv6]:PORT", numeric only (uri.c). */
int msga__parse_uri(const char *uri, struct sockaddr_storage *ss);
int msga__parse_uri_as(const char *uri, const char *scheme,
		       struct sockaddr_storage *ss);

#endif
