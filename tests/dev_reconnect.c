/* SPDX-License-Identifier: MIT */
/*
 * dev_reconnect.c - a subscription outlives its publisher (issue 36 item
 * 3): an rdma:// subscriber connected before its publisher exists, or
 * across the publisher's restart on the same port, connects on its own
 * (no retry loop here) and keeps its conn_id; the restarted publisher's
 * messages start again from seq 1 and are delivered; MSGA_SUB_NO_RECONNECT
 * keeps the old behaviour; msga_sub_disconnect() during the backoff ends
 * the retries. The same for ud:// (0.10), whose membership learns from
 * its publisher's silence that it went; on iWARP, which has no UD, the
 * documented refusal instead.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

/* The uri of port: ud:// (ud) or rdma://. */
static const char *uri_of(int ud, uint16_t port)
{
	return ud ? dp_ud_uri(port) : dp_uri(port);
}

/* A port that was free a moment ago: a publisher's, destroyed. */
static uint16_t free_port_of(struct msga_ctx *ctx, int ud)
{
	static struct dp_rec ev;
	struct msga_pub *pub = dp_pub_at(ctx, uri_of(ud, 0), 0, &ev);
	int port = msga_pub_port(pub);

	cr_assert_gt(port, 0);
	msga_pub_destroy(pub);
	return (uint16_t)port;
}

static struct msga_pub *pub_on_of(struct msga_ctx *ctx, int ud,
				  uint16_t port, struct dp_rec *ev, uint32_t *t)
{
	struct msga_pub *pub = dp_pub_at(ctx, uri_of(ud, port), 0, ev);

	cr_assert_eq(msga_pub_topic(pub, "r", t), 0);
	return pub;
}

#define free_port(ctx) free_port_of(ctx, 0)
#define pub_on(ctx, port, ev, t) pub_on_of(ctx, 0, port, ev, t)
#define free_ud_port(ctx) free_port_of(ctx, 1)
#define ud_pub_on(ctx, port, ev, t) pub_on_of(ctx, 1, port, ev, t)

/* n checked messages seq 1..n, then wait until rec has want in all. */
static void send_n(struct msga_pub *pub, uint32_t t, int n,
		   struct msga_ctx **ctxs, const struct dp_rec *rec,
		   const struct msga_sub *sub, uint64_t want)
{
	for (uint64_t s = 1; s <= (uint64_t)n; s++)
		dp_send(pub, t, s, 64, ctxs, 2);
	dp_wait_total(ctxs, 2, rec, sub, want);
}

static void teardown(struct msga_sub *sub, struct msga_pub *pub,
		     struct msga_ctx **ctxs)
{
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(ctxs[0]);
	msga_ctx_close(ctxs[1]);
}

/* Polls ctxs for about ms (an absence check: it cannot flake, only miss). */
static void poll_for(struct msga_ctx **ctxs, int n, int ms)
{
	static int never;

	dp_poll_until(ctxs, n, &never, 1, ms);
}

Test(reconnect, subscriber_before_publisher, .timeout = 60)
{
	static struct dp_rec ev, rec;
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	uint16_t port = free_port(ctxs[0]);
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t t;
	int id;

	rec.strict = 1;
	sub = dp_sub(ctxs[1], "*", &rec);
	id = dp_connect_id(sub, dp_uri(port));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.failed, 1, 10000),
		  "no CONNECT_FAILED with nobody listening");
	cr_expect_eq(rec.last_status, -ECONNREFUSED, "%d", rec.last_status);
	poll_for(&ctxs[1], 1, 200); /* a few retries: still one event */
	cr_expect_eq(rec.failed, 1, "CONNECT_FAILED once per outage");
	pub = pub_on(ctxs[0], port, &ev, &t);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 1, 20000),
		  "the subscriber never connected");
	cr_expect_eq(rec.last_conn, (uint32_t)id, "same conn_id");
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 1, 10000));
	send_n(pub, t, 10, ctxs, &rec, sub, 10);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.failed, 1);
	teardown(sub, pub, ctxs);
}

/* A publisher destroyed and made again on its port: DISCONNECTED (status
 * 0, a clean end), CONNECTED on the same conn_id, the new one's seq 1. */
static void restart(uint32_t flags)
{
	static struct dp_rec ev, ev2, rec;
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint16_t port;
	uint32_t t, t2;
	int id;

	memset(&ev, 0, sizeof(ev));
	memset(&ev2, 0, sizeof(ev2));
	memset(&rec, 0, sizeof(rec));
	rec.strict = 1;
	pub = dp_pub(ctxs[0], 0, &ev);
	port = (uint16_t)msga_pub_port(pub);
	cr_assert_eq(msga_pub_topic(pub, "r", &t), 0);
	sub = dp_sub_flags(ctxs[1], "*", flags, &rec);
	id = dp_connect_id(sub, dp_uri(port));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 1, 10000));
	send_n(pub, t, 5, ctxs, &rec, sub, 5);
	msga_pub_destroy(pub);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.disconnected, 1, 10000));
	cr_expect_eq(rec.last_status, 0, "%d", rec.last_status);
	pub = pub_on(ctxs[0], port, &ev2, &t2);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 2, 20000),
		  "no CONNECTED after the restart");
	cr_expect_eq(rec.last_conn, (uint32_t)id, "same conn_id");
	cr_assert(dp_poll_until(ctxs, 2, &ev2.connected, 1, 10000));
	/* the new publisher's stream starts again from 1 */
	rec.next[id % DP_CONNS][t2 % DP_TOPICS] = 1;
	send_n(pub, t2, 5, ctxs, &rec, sub, 10);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.failed, 0);
	teardown(sub, pub, ctxs);
}

DP_TEST_RC_PATHS(reconnect, restart_ring, restart_send_recv, restart, 60)

Test(reconnect, no_reconnect_flag, .timeout = 60)
{
	static struct dp_rec ev, ev2, rec;
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct msga_pub *pub = dp_pub(ctxs[0], 0, &ev);
	uint16_t port = (uint16_t)msga_pub_port(pub);
	struct msga_sub *sub;
	uint32_t t;
	int id;

	sub = dp_sub_flags(ctxs[1], "*", MSGA_SUB_NO_RECONNECT, &rec);
	id = dp_connect_id(sub, dp_uri(port));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 1, 10000));
	msga_pub_destroy(pub);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.disconnected, 1, 10000));
	pub = pub_on(ctxs[0], port, &ev2, &t);
	poll_for(ctxs, 2, 500);
	cr_expect_eq(rec.connected, 1, "it came back with NO_RECONNECT");
	cr_expect_eq(msga_pub_subscribers(pub), 0);
	cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), -ENOENT);
	/* and a first attempt that fails is final too */
	id = dp_connect_id(sub, dp_uri(free_port(ctxs[0])));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.failed, 1, 10000));
	cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), -ENOENT);
	teardown(sub, pub, ctxs);
}

/* ------------------------------------------------------------- ud:// */

/*
 * The subscriber's context times a silent publisher out in 1 s (scaled):
 * a ud:// membership learns that its publisher is gone, or not there,
 * from its silence.
 */
static void ud_ctxs(struct msga_ctx **ctxs)
{
	ctxs[0] = devtest_open_ctx();
	ctxs[1] = devtest_open_ctx_timeout(1000);
}

/* Sends until rec has want in all (datagrams: a lost one is sent again
 * under a later number, so no gap is asked for). */
static void ud_send_until(struct msga_pub *pub, uint32_t t,
			  struct msga_ctx **ctxs, const struct dp_rec *rec,
			  uint64_t want)
{
	for (uint64_t s = 1; s <= 1000 && rec->total < want; s++) {
		dp_send(pub, t, s, 64, ctxs, 2);
		poll_for(ctxs, 2, 5);
	}
	cr_assert_geq(rec->total, want, "%lu of %lu", rec->total, want);
}

/*
 * A subscriber (ud:// when ud, else rdma://) connected to a port nobody
 * serves, until its first CONNECT_FAILED: its conn_id; the port in *port.
 */
static int waiting(int ud, struct msga_ctx **ctxs, struct dp_rec *rec,
		   struct msga_sub **sub, uint16_t *port)
{
	int id;

	if (ud) {
		ud_ctxs(ctxs);
	} else {
		ctxs[0] = devtest_open_ctx();
		ctxs[1] = devtest_open_ctx();
	}
	*port = free_port_of(ctxs[0], ud);
	*sub = dp_sub(ctxs[1], "*", rec);
	id = dp_connect_id(*sub, uri_of(ud, *port));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec->failed, 1, 30000),
		  "no CONNECT_FAILED with nobody listening");
	return id;
}

#define ud_waiting(ctxs, rec, sub, port) waiting(1, ctxs, rec, sub, port)

/*
 * A connection disconnected while it waits to retry stops retrying: the
 * publisher that comes up later never sees it. A subscriber destroyed
 * while it retries is torn down cleanly (the sanitizers check it).
 */
static void disconnect_during_backoff(int ud)
{
	static struct dp_rec ev, rec;
	struct msga_ctx *ctxs[2];
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint16_t port;
	uint32_t t;
	int id = waiting(ud, ctxs, &rec, &sub, &port);

	cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), 0);
	cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), -ENOENT);
	pub = pub_on_of(ctxs[0], ud, port, &ev, &t);
	poll_for(ctxs, 2, ud ? 1500 : 500);
	cr_expect_eq(rec.connected, 0, "the retries went on");
	cr_expect_eq(msga_pub_subscribers(pub), 0);
	msga_pub_destroy(pub);
	cr_assert_eq(msga_sub_connect(sub, uri_of(ud, port), NULL), 0);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.failed, 2, 30000));
	msga_sub_destroy(sub);
	msga_ctx_close(ctxs[0]);
	msga_ctx_close(ctxs[1]);
}

Test(reconnect, disconnect_during_backoff, .timeout = 60)
{
	disconnect_during_backoff(0);
}

Test(reconnect, ud_subscriber_before_publisher, .timeout = 120)
{
	static struct dp_rec ev, rec;
	struct msga_ctx *ctxs[2];
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint16_t port;
	uint32_t t;
	int id;

	if (dp_iwarp_refuses(dp_ud_uri(7471)))
		return; /* (no UD on iWARP: the refusal is what it must do) */
	id = ud_waiting(ctxs, &rec, &sub, &port);
	cr_log_info("ud:// with nobody listening: %d", rec.last_status);
	poll_for(&ctxs[1], 1, 300); /* a few retries: still one event */
	cr_expect_eq(rec.failed, 1, "CONNECT_FAILED once per outage");
	pub = ud_pub_on(ctxs[0], port, &ev, &t);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 1, 30000),
		  "the subscriber never connected");
	cr_expect_eq(rec.last_conn, (uint32_t)id, "same conn_id");
	ud_send_until(pub, t, ctxs, &rec, 5);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_expect_eq(rec.failed, 1);
	cr_expect_eq(rec.disconnected, 0);
	teardown(sub, pub, ctxs);
}

/*
 * A ud:// publisher destroyed and made again on its port: its streams end
 * (their DISCONNECTED, status 0), the membership times the silent
 * publisher out (DISCONNECTED -ETIMEDOUT), and comes back on its own on
 * the same conn_id (CONNECTED), with no CONNECT_FAILED in between; the
 * new publisher's stream is a new origin, from seq 1.
 */
static void ud_restart(uint32_t flags)
{
	static struct dp_rec ev, ev2, rec;
	struct msga_ctx *ctxs[2];
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint16_t port;
	uint32_t t, t2;
	int id;

	memset(&rec, 0, sizeof(rec));
	ud_ctxs(ctxs);
	pub = ud_pub_on(ctxs[0], 0, &ev, &t);
	port = (uint16_t)msga_pub_port(pub);
	sub = dp_sub_flags(ctxs[1], "*", flags, &rec);
	id = dp_connect_id(sub, dp_ud_uri(port));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 1, 30000));
	ud_send_until(pub, t, ctxs, &rec, 3);
	msga_pub_destroy(pub);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.disconnected, 1, 30000),
		  "the membership never saw its publisher go");
	cr_expect_eq(rec.last_status, -ETIMEDOUT, "%d", rec.last_status);
	pub = ud_pub_on(ctxs[0], port, &ev2, &t2);
	if (flags & MSGA_SUB_NO_RECONNECT) {
		poll_for(ctxs, 2, 1500);
		cr_expect_eq(rec.connected, 1, "back with NO_RECONNECT");
		cr_expect_eq(msga_pub_subscribers(pub), 0);
		cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), -ENOENT);
	} else {
		cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 2, 30000),
			  "no CONNECTED after the restart");
		cr_expect_eq(rec.last_conn, (uint32_t)id, "same conn_id");
		/* the new publisher's stream: a new origin, from 1 */
		memset(rec.next, 0, sizeof(rec.next));
		ud_send_until(pub, t2, ctxs, &rec, rec.total + 3);
		cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
		cr_expect_eq(rec.failed, 0, "a quiet outage after DISCONNECTED");
		cr_expect_eq(rec.disconnected, 1);
		cr_expect_eq(msga_sub_disconnect(sub, (uint32_t)id), 0);
	}
	teardown(sub, pub, ctxs);
}

Test(reconnect, ud_restart, .timeout = 120)
{
	if (dp_iwarp_refuses(dp_ud_uri(7471)))
		return; /* (no UD on iWARP: the refusal is what it must do) */
	ud_restart(0);
}

Test(reconnect, ud_no_reconnect_flag, .timeout = 120)
{
	if (dp_iwarp_refuses(dp_ud_uri(7471)))
		return; /* (no UD on iWARP: the refusal is what it must do) */
	ud_restart(MSGA_SUB_NO_RECONNECT);
}

Test(reconnect, ud_disconnect_during_backoff, .timeout = 120)
{
	if (dp_iwarp_refuses(dp_ud_uri(7471)))
		return; /* (no UD on iWARP: the refusal is what it must do) */
	disconnect_during_backoff(1);
}
