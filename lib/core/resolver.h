/* SPDX-License-Identifier: MIT */
/*
 * resolver.h - a context's topic resolution (issue 37; msgaccel(7),
 * TOPIC RESOLUTION): one kernel UDP socket on the resolver group, the
 * adverts of the topics its publishers advertise, and what it has heard
 * of other publishers' topics.
 *
 * Three files, one concern each:
 *   resolver.c       the socket, its datagrams (MAC, sender checks), the
 *                    settings, the counters; what the engine and
 *                    msga_ctx_open/close call.
 *   resolver_adv.c   the advertising side: each advertised topic's
 *                    schedule (lib/proto/tres_sched.h) in a heap by due
 *                    time, adverts batched into datagrams under the
 *                    byte budget, withdrawals, queries answered.
 *   resolver_heard.c the listening side: the patterns browsed, their
 *                    queries, the table of what was heard
 *                    (lib/proto/tres_table.h) and its expiry.
 * The two sides reach the socket through resolver.c's msga__res_send();
 * resolver.c hands each side the records it received. Nothing here
 * knows a transport: a publisher's transport fills in its advert
 * (struct msga__pub_ops.advert), and lib/api hands it over.
 */
#ifndef MSGA_RESOLVER_H
#define MSGA_RESOLVER_H

#include <netinet/in.h>
#include <stdint.h>

#include "internal.h"
#include "tres_sched.h"
#include "tres_table.h"
#include "tres_wire.h"

struct msga__tres_adv;

/* The advertising side's state (resolver_adv.c). */
struct msga__res_adv {
	struct msga__tres_adv **heap;  /* by due time, earliest first */
	uint32_t n, cap;
	uint64_t rec_bytes;            /* their records' bytes, together */
	/* adverts a query asked for: they go before the periodic ones */
	struct msga__tres_adv **answers;
	uint32_t nanswers;
	struct msga__tres_budget budget;
	/* withdrawals waiting to go out (bounded: the rest expire) */
	struct msga__trw_advert *gone;
	uint32_t ngone;
	uint32_t query_budget;         /* query records left this second */
	uint64_t query_second;
};

/*
 * Who is told what the table learns (resolver_heard.c): a subscriber by
 * name (lib/api), through these callbacks, never by name. found: a
 * publisher's topic that pattern matches, heard first (a: where to
 * reach it; a->addr is the topic's own group for mcast://); gone: the
 * publisher (origin) withdrew or fell silent on its last topic.
 */
struct msga__res_watch_ops {
	void (*found)(void *user, const struct msga__trw_advert *a);
	void (*gone)(void *user, uint64_t origin);
};

struct msga__res_watch {
	const struct msga__res_watch_ops *ops; /* NULL: a free slot */
	void *user;
	char pattern[MSGA_TOPIC_MAX + 2];
};

#define MSGA__RES_WATCH_MAX 64u

/* The listening side's state (resolver_heard.c). */
struct msga__res_heard {
	struct msga__res_watch watch[MSGA__RES_WATCH_MAX];
	char pattern[MSGA_RESOLVER_BROWSE_MAX][MSGA_TOPIC_MAX + 2];
	uint32_t npattern;
	struct msga__tres_topic query; /* the queries' schedule */
	struct msga__tres_table table; /* (allocated on the first browse) */
	char (*sender)[48];            /* per publisher slot: who said so */
	uint64_t next_expire_ns;
};

struct msga__resolver {
	struct msga_ctx *ctx;
	int fd;                        /* -1: not opened yet */
	int advertise;                 /* MSGA_RESOLVER_ADVERTISE */
	struct sockaddr_in group;
	struct sockaddr_storage self;  /* what a wildcard publisher says */
	int has_self;
	uint32_t ttl;
	struct in_addr allow[MSGA_RESOLVER_ALLOW_MAX];
	uint32_t nallow;               /* 0: any sender */
	struct msga__tres_timing tm;
	uint64_t sender;               /* this context's id on the wire */
	uint32_t seq;
	uint64_t rand;                 /* xorshift64 state */
	int keyed;
	uint8_t mac_key[16];
	struct msga__res_adv adv;
	struct msga__res_heard heard;
	struct msga_resolver_stats st;
};

#define MSGA__RES_MAC_LEN 16u
/* Withdrawals queued at most; queries answered per second at most. */
#define MSGA__RES_GONE_MAX 4096u
#define MSGA__RES_ANSWERS_MAX 4096u
#define MSGA__RES_QUERIES_PER_S 256u

/* ------------------------------------------------------- resolver.c */

/*
 * msga_ctx_open(): check attr->resolver and keep its settings (nothing
 * is opened unless it advertises): 0, or -EINVAL / -ENOMEM / the
 * socket's error, recorded with msga__open_fail().
 */
int msga__resolver_open(struct msga_ctx *ctx,
			const struct msga_ctx_attr *attr);
/* msga_ctx_close(), after the publishers: their withdrawals go out. */
void msga__resolver_close(struct msga_ctx *ctx);
/* The engine's tick: receive, send what is due; when next due. */
uint64_t msga__resolver_tick(struct msga_ctx *ctx, uint64_t now);
/* Its socket for msga_ctx_fd()'s epoll set, or -1. */
int msga__resolver_fd(const struct msga_ctx *ctx);
/* ctx's resolver (made with the defaults if it has none) with its
 * socket open: 0, or -errno (the last error says why). */
int msga__res_get(struct msga_ctx *ctx, struct msga__resolver **rp);
/* The socket, opened on first use: 0 or -errno (the last error set). */
int msga__res_socket(struct msga__resolver *r);
/* Send a datagram of len bytes (room for the MAC after them): 0 or
 * -errno (counted). */
int msga__res_send(struct msga__resolver *r, uint8_t *buf, uint32_t len);
/* A new datagram's header into e (the sender id, the next number). */
void msga__res_begin(struct msga__resolver *r, struct msga__trw_enc *e,
		     uint8_t *buf, uint8_t type);

/* ---------------------------------------------------- resolver_adv.c */

/*
 * Advertise a (its address unspecified: the context's own): 0 with
 * *adv set, *adv NULL when ctx does not advertise, or -EINVAL (a bad
 * record), -ENOMEM, -EADDRNOTAVAIL (no address of its own to say).
 */
int msga__resolver_add(struct msga_ctx *ctx, const struct msga__trw_advert *a,
		       struct msga__tres_adv **adv);
/* Whether ctx's publishers advertise (MSGA_RESOLVER_ADVERTISE). */
static inline int msga__resolver_advertises(const struct msga_ctx *ctx)
{
	return ctx->resolver && ctx->resolver->advertise;
}
/* Stop advertising adv (NULL: no-op) and say so on the group. */
void msga__resolver_del(struct msga_ctx *ctx, struct msga__tres_adv *adv);
/* Send what is due at now, within the budget; when next due. */
uint64_t msga__res_adv_run(struct msga__resolver *r, uint64_t now);
/* A checked query datagram: bring the matching adverts forward. */
void msga__res_adv_query(struct msga__resolver *r, struct msga__trw_dec *d,
			 uint64_t now);
void msga__res_adv_fini(struct msga__resolver *r);

/* -------------------------------------------------- resolver_heard.c */

/* Send the browse queries that are due; when next due. */
uint64_t msga__res_heard_run(struct msga__resolver *r, uint64_t now);
/* A checked advert or withdraw datagram from sender (its source). */
void msga__res_heard_dgram(struct msga__resolver *r, struct msga__trw_dec *d,
			   const struct sockaddr_in *from, uint64_t now);
void msga__res_heard_fini(struct msga__resolver *r);
/*
 * Tell ops about every publisher of a topic pattern matches, those heard
 * already first (from inside this call), and ask for them: 0 with *slot
 * set, or -ENOSPC (MSGA__RES_WATCH_MAX watches), -ENOMEM, or the socket's
 * error (the last error says why).
 */
int msga__resolver_watch(struct msga_ctx *ctx, const char *pattern,
			 const struct msga__res_watch_ops *ops, void *user,
			 uint32_t *slot);
/* Stop telling slot's watcher anything (ctx's resolver gone: no-op). */
void msga__resolver_unwatch(struct msga_ctx *ctx, uint32_t slot);

#endif
