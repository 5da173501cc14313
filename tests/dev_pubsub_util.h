/* SPDX-License-Identifier: MIT */
/*
 * dev_pubsub_util.h - helpers shared by the pub/sub device tests: payloads
 * that carry their own sequence and checksum, a receiver that checks
 * order per (connection, topic), and polling with a deadline so no test
 * can hang.
 */
#ifndef MSGA_DEV_PUBSUB_UTIL_H
#define MSGA_DEV_PUBSUB_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "msgaccel.h"

#define DP_CONNS 16
#define DP_TOPICS 16

/* Receiver state for one subscriber. */
struct dp_rec {
	uint64_t next[DP_CONNS][DP_TOPICS]; /* next expected seq, 0 = any */
	uint64_t got[DP_CONNS][DP_TOPICS];
	uint64_t total;
	uint64_t bytes;
	uint64_t bad;                       /* order, dup or checksum errors */
	char first_bad[256];
	char topic_name[DP_CONNS][DP_TOPICS][MSGA_TOPIC_MAX + 1];
	int strict;                         /* first seq must be 1 */
	/* events; a stream's DISCONNECTED (ev->topic set) is counted
	 * apart: ended (status 0) or silent (-ETIMEDOUT) */
	int connected, disconnected, failed;
	int stream_ended, stream_silent;
	int last_status;
	uint32_t last_conn;
};

/* Fill len bytes for (topic, seq); the last 4 bytes are a checksum. */
void dp_fill(void *buf, size_t len, uint32_t topic, uint64_t seq);
/* 0 if buf holds what dp_fill() wrote for (topic, seq). */
int dp_check(const void *buf, size_t len, uint32_t topic, uint64_t seq);

/* Callbacks to put into msga_sub_attr (user = struct dp_rec *). */
void dp_on_msg(const struct msga_msg *msg, void *user);
void dp_on_event(const struct msga_event *ev, void *user);

/* "rdma://<test addr>:port" */
const char *dp_uri(uint16_t port);
/*
 * msga_sub_connect() with the id it stores (0.10: an out parameter) or
 * its -errno, in one int for asserts: a test's ids are small.
 */
int dp_connect_id(struct msga_sub *sub, const char *uri);
/* "ud://<test addr>:port" (unicast UD) */
const char *dp_ud_uri(int port);
/* The device under test is iWARP: no UD, no multicast. */
int dp_is_iwarp(void);
/*
 * On iWARP, assert the documented refusal of uri (mcast:// or ud://):
 * msga_pub_create and msga_sub_connect fail with -EOPNOTSUPP, and
 * return 1, so that a test which cannot run there still checks what the
 * device must do instead of passing empty. Elsewhere return 0.
 */
int dp_iwarp_refuses(const char *uri);

struct msga_pub *dp_pub(struct msga_ctx *ctx, uint32_t flags,
			struct dp_rec *events);
/* A publisher on any uri (rdma://, ud://, mcast://), events to *events. */
struct msga_pub *dp_pub_at(struct msga_ctx *ctx, const char *uri,
			   uint32_t flags, struct dp_rec *events);
struct msga_sub *dp_sub(struct msga_ctx *ctx, const char *pattern,
			struct dp_rec *rec);
/* The same with msga_sub_attr.flags (MSGA_SUB_NO_RING, ...). */
struct msga_sub *dp_sub_flags(struct msga_ctx *ctx, const char *pattern,
			      uint32_t flags, struct dp_rec *rec);
/* Connect and poll ctxs until the publisher counts nsubs subscribers. */
void dp_connect(struct msga_sub *sub, struct msga_pub *pub,
		struct msga_ctx **ctxs, int nctx, int nsubs);

/* Poll every ctx until *flag >= want or timeout; returns 1 if reached. */
int dp_poll_until(struct msga_ctx **ctxs, int nctx, const volatile int *flag,
		  int want, int timeout_ms);
int dp_poll_until64(struct msga_ctx **ctxs, int nctx,
		    const volatile uint64_t *val, uint64_t want,
		    int timeout_ms);
/* The subscriber's stats (asserting the call succeeds). */
struct msga_sub_stats dp_sub_stats(const struct msga_sub *sub);
/*
 * Poll ctxs until rec counted n messages; if it never does, fail with
 * sub's recovery stats (multicast) so the failure says where they went.
 */
void dp_wait_total(struct msga_ctx **ctxs, int nctx, const struct dp_rec *rec,
		   const struct msga_sub *sub, uint64_t n);
/* Send one checked message, polling ctxs while back-pressured. */
void dp_send(struct msga_pub *pub, uint32_t topic, uint64_t seq, size_t len,
	     struct msga_ctx **ctxs, int nctx);
uint64_t dp_now_ms(void);

/*
 * Two Criterion tests of fn(sub_flags), one per RC data path: fn(0) on the
 * ring, fn(MSGA_SUB_NO_RING) on SEND/RECV. (The includer includes
 * criterion.h.)
 */
#define DP_TEST_RC_PATHS(suite, ring_test, send_recv_test, fn, secs)        \
	Test(suite, ring_test, .timeout = secs) { fn(0); }                   \
	Test(suite, send_recv_test, .timeout = secs) { fn(MSGA_SUB_NO_RING); }

#endif
