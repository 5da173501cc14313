/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private types and helpers shared by lib/ files.
 * Names with the msga__ prefix are internal and not exported (see
 * libmsgaccel.map); nothing here is ABI.
 */
#ifndef MSGA_INTERNAL_H
#define MSGA_INTERNAL_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "msgaccel.h"
#include "list.h"
#include "rx_clock.h"

#define MSGA_ERRBUF_LEN 256

#define msga__unlikely(x) __builtin_expect(!!(x), 0)
#define msga__likely(x) __builtin_expect(!!(x), 1)
/* Kept out of a hot caller, so the caller's fast path saves no registers
 * and builds no locals for it (issue 39: counted per message). */
#define MSGA__SLOW_PATH __attribute__((cold, noinline))
/* Inline even where the compiler would not: a hot path's own steps. */
#define MSGA__HOT_INLINE inline __attribute__((always_inline))
#define MSGA__ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * An opened device port. The ibv_context comes from rdma_get_devices(), not
 * ibv_open_device(), so that cm_ids bound to this device later share it and
 * can use our protection domain and registered memory.
 */
struct msga_ctx {
	struct ibv_context **cm_devices; /* rdma_get_devices() list, owned */
	struct ibv_context *verbs;       /* one entry of cm_devices */
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_channel; /* NULL with NO_EVENTS */
	struct ibv_device_attr dev_attr;
	struct ibv_port_attr port_attr;
	enum msga_transport transport;
	uint32_t flags;
	uint32_t max_inline;
	int zero_based;                  /* the device honours iova 0, so
					  * remote addresses are MR offsets
					  * (probed at open: zero_based.c) */
	uint8_t port;
	char dev_name[64];
	char errbuf[MSGA_ERRBUF_LEN];
	/* the progress engine (endpoint.h, engine.c, event_fd.c) */
	struct rdma_event_channel *cm_ch; /* non-blocking, made on first use */
	struct msga__list eps;            /* endpoints with completions */
	struct msga__list objs;           /* publishers, subscribers */
	int epfd;                         /* msga_ctx_fd(), when evmode */
	int timerfd;                      /* in epfd: wakes for nudges */
	int timer_armed;
	uint64_t timer_due;               /* when it fires, if armed */
	int evmode;                       /* CQs are armed for events */
	int reap;                         /* the dead wait to be freed */
	int want_work;                    /* an object has work (work op) */
	uint64_t cm_next_ns;              /* next busy-poll look at rdma_cm */
	uint64_t cm_busy_until;           /* look often until then (engine.c) */
	uint32_t polls;                   /* msga_ctx_poll() calls */
	/* ticks: the clock, rdma_cm and timers, on one poll in tick_stride */
	uint64_t tick_ns;                 /* the last tick */
	uint32_t tick_stride;             /* polls per tick, adapted (engine.c) */
	uint32_t tick_countdown;          /* polls until the next tick */
	/* unicast peers, RC and UD: keepalives and timeouts (liveness.h) */
	uint64_t peer_timeout_ns;         /* msga_ctx_attr.peer_timeout_ms */
	int polling;                      /* inside msga_ctx_poll(): no nesting */
	uint32_t busy;                    /* msga__ctx_enter() depth */
	int closing;                      /* msga_ctx_close(): no linger */
	struct msga__rx_clock rx_clock;   /* msga_msg.rx_time_ns */
	/* multicast (mcast.h) */
	struct sockaddr_storage local_ss; /* msga_ctx_attr.local_addr, if given */
	int has_local;
	/* authentication (auth.h, key_gen.c): NULL = none */
	struct msga__keyring *keys;
	struct msga__keyring *prev_keys;  /* a reload replaced it: peers may
					   * still prove its keys until */
	uint64_t prev_until_ns;
	char *key_file;                   /* msga_ctx_attr.key_file, to reload */
	uint32_t qkey;                    /* new UD queue pairs' Q_Key */
	/* live counters (stat_file.c): NULL = none */
	struct msga__stat_file *stat_file;
	uint32_t stat_ids;                /* ids of the objects exported */
	/* topic resolution (resolver.h): NULL until configured or used */
	struct msga__resolver *resolver;
};

/*
 * A context's keys (key_gen.c): loaded at open (0, or the error
 * msga__open_fail() recorded), dropped at close; the key a peer proves
 * by its id, among the current keys and, during a reload's overlap, the
 * replaced ones (NULL: none).
 */
struct msga__key;
int msga__ctx_keys_open(struct msga_ctx *ctx, const struct msga_ctx_attr *attr);
void msga__ctx_keys_close(struct msga_ctx *ctx);
const struct msga__key *msga__ctx_key_find(struct msga_ctx *ctx, uint64_t id);

/*
 * Record "what failed and where" on ctx and return err (a negative errno),
 * so callers can write `return msga__ctx_fail(ctx, -EINVAL, "...")`.
 */
int msga__ctx_fail(struct msga_ctx *ctx, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The same for msga_ctx_open(), which has no context yet: thread-local. */
int msga__open_fail(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void msga__open_error_clear(void);

/*
 * rdma-core reports failure as NULL+errno, -1+errno or a positive errno,
 * depending on the call; this turns the errno forms into our -errno, with a
 * fallback for providers that forget to set errno.
 */
static inline int msga__neg_errno(int fallback)
{
	return errno > 0 ? -errno : -fallback;
}

/*
 * Memory isolation (msgaccel(7), SECURITY): ctx->pd holds local-access
 * registrations only, so a QP in it (publisher connections, SEND/RECV
 * subscriber connections and their SRQ, UD endpoints) lets no peer read
 * or write anything. Memory a peer may READ or WRITE is registered with
 * msga__reg_zero_based, in a protection domain of its own that holds
 * only the QPs meant to reach it (a ring subscriber connection, a READ
 * endpoint).
 */
void *msga__page_alloc(size_t len);
void *msga__reg_buf(struct msga_ctx *ctx, size_t len, struct ibv_mr **mr);
void *msga__reg_buf_pd(struct ibv_pd *pd, size_t len, struct ibv_mr **mr);
struct ibv_mr *msga__reg_zero_based(struct msga_ctx *ctx, struct ibv_pd *pd,
				    void *buf, size_t len, int access);
/*
 * 1 if the device honours the iova of a zero-based registration (a READ
 * through a QP connected to itself says so), 0 if not or if the probe
 * failed or timed out. Needs ctx's verbs, port and transport; for
 * ctx->zero_based at open (zero_based.c).
 */
int msga__zero_based_probe(struct msga_ctx *ctx);

/*
 * CLOCK_MONOTONIC in ns from the kernel: timers and timeouts. Receive
 * timestamps come from ctx->rx_clock (rx_clock.h), which is cheaper.
 */
/* A unicast peer's keepalive interval: a fifth of its timeout. */
static inline uint64_t msga__keepalive_ns(const struct msga_ctx *ctx)
{
	return ctx->peer_timeout_ns / 5;
}

static inline uint64_t msga__now_ns(void)
{
	return msga__mono_ns();
}

/*
 * An address of ctx's device port, of family (AF_INET, AF_INET6 or
 * AF_UNSPEC: either), port 0: 0, or -EADDRNOTAVAIL (own_addr.c).
 */
int msga__ctx_own_addr(struct msga_ctx *ctx, int family,
		       struct sockaddr_storage *ss);

/* Device selection (device_select.c). */
int msga__select_device(struct msga_ctx *ctx, const struct msga_ctx_attr *attr);
enum msga_transport msga__transport_of(struct ibv_context *verbs,
				       const struct ibv_port_attr *pattr);

#endif /* MSGA_INTERNAL_H */
