/* SPDX-License-Identifier: MIT */
/*
 * UD and multicast endpoints under faults (issue 23, items 12-14, 16): a
 * unicast subscriber leaving with sends to it still queued, an error
 * completion on the publisher's queue pair, a datagram longer than a
 * and a link flap under a joined group. RoCE (rxe)
 * only: iWARP has no UD, and there each test checks the refusal.
 *
 * Two tests reach into the library's private structs (lib/pubsub.h) to
 * find the publisher's queue pair and its free send buffers: the fault is
 * a real ibv_modify_qp on the real device, nothing is mocked.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "mcast.h"
#include "pubsub.h"

#define G_FLAP "mcast://239.255.10.22"

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

static const char *ud_uri(int port)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "ud://%s:%d", devtest_env()->addr, port);
	return buf;
}

/* iWARP: UD and multicast publishers and subscribers are refused. */
static void refused(void)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr a = { .size = sizeof(a), .uri = ud_uri(0),
				   .max_datagram = 1024 };
	struct msga_pub_attr bad = { .size = sizeof(bad), .uri = G_FLAP,
				     .max_datagram = MSGA_DATAGRAM_MIN - 1 };
	struct msga_pub *pub = NULL;
	struct dp_rec rec = { 0 };
	struct msga_sub *sub = dp_sub(ctx, "x", &rec);

	cr_assert_eq(msga_pub_create(ctx, &bad, &pub), -EINVAL);
	cr_assert_eq(msga_pub_create(ctx, &a, &pub), -EOPNOTSUPP);
	a.uri = G_FLAP;
	cr_assert_eq(msga_pub_create(ctx, &a, &pub), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(sub, ud_uri(18999)), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(sub, G_FLAP), -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

static int ud_subscribe(struct msga_sub *sub, struct dp_rec *rec,
			struct msga_pub *pub, struct msga_ctx **ctx)
{
	int want = rec->connected + 1;
	int id = msga_sub_connect(sub, ud_uri(msga_pub_port(pub)));

	cr_assert_geq(id, 0, "msga_sub_connect = %d", id);
	cr_assert(dp_poll_until(ctx, 2, &rec->connected, want, 15000),
		  "not subscribed (failed %d, status %d)", rec->failed,
		  rec->last_status);
	return id;
}

/* Messages the subscriber gets from now on: poll until one arrives. */
static void feed_alive(struct msga_pub *pub, uint32_t t, uint64_t *seq,
		       struct dp_rec *rec, struct msga_ctx **ctx, int nctx,
		       size_t len)
{
	uint64_t want = rec->total + 1;

	for (uint64_t end = dp_now_ms() + 15000; rec->total < want;) {
		cr_assert_lt(dp_now_ms(), end, "the feed stopped (seq %llu)",
			     (unsigned long long)*seq);
		dp_send(pub, t, (*seq)++, len, ctx, nctx);
		dp_poll_until64(ctx, nctx, &rec->total, want, 200);
	}
}

/*
 * Item 12: subscribers come and go while the publisher has sends to them
 * queued. Their address handles must outlive those sends: destroyed
 * under them, rxe fails the send and the whole endpoint with it, and the
 * steady subscriber loses the feed.
 */
Test(ud_hardening, a_leaving_subscriber_does_not_kill_the_feed, .timeout = 300)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, steady = { 0 }, churn = { 0 };
	struct msga_sub *s_steady, *s_churn;
	struct msga_pub *pub;
	uint64_t seq = 1;
	uint32_t t;

	if (is_iwarp())
		return refused();
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = dp_pub_at(ctx[0], ud_uri(0), 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "x", &t), 0);
	s_steady = dp_sub(ctx[1], "x", &steady);
	s_churn = dp_sub(ctx[1], "x", &churn);
	ud_subscribe(s_steady, &steady, pub, ctx);
	for (int round = 0; round < 40; round++) {
		int id = ud_subscribe(s_churn, &churn, pub, ctx);

		/* Fill the send queue, then let the UNSUBSCRIBE overtake
		 * it: only the publisher's context is polled meanwhile. */
		for (int i = 0; i < 100; i++)
			dp_send(pub, t, seq++, 900, ctx, 1);
		cr_assert_eq(msga_sub_disconnect(s_churn, (uint32_t)id), 0);
		cr_assert(dp_poll_until(ctx, 1, &pe.disconnected, round + 1,
					5000), "round %d: no UNSUBSCRIBE", round);
		cr_assert_eq(pe.last_status, 0, "round %d: publisher lost a "
			     "subscriber with %d", round, pe.last_status);
		feed_alive(pub, t, &seq, &steady, ctx, 2, 900);
	}
	cr_assert_eq(steady.disconnected, 0);
	cr_assert_eq(msga_pub_subscribers(pub), 1);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/*
 * Item 13: an error completion on the publisher's queue pair (the queue
 * pair forced into the error state with sends queued, as a device fault
 * would) is reported, with a status, to the publisher, and every send
 * buffer the flushed sends held comes back.
 */
Test(ud_hardening, an_error_completion_is_an_event_and_frees_buffers,
     .timeout = 120)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct ibv_qp_attr err = { .qp_state = IBV_QPS_ERR };
	struct msga_claim claim;
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t t;

	if (is_iwarp())
		return refused();
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = dp_pub_at(ctx[0], ud_uri(0), 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "x", &t), 0);
	sub = dp_sub(ctx[1], "x", &rec);
	ud_subscribe(sub, &rec, pub, ctx);
	for (int i = 0; i < 200; i++)
		dp_send(pub, t, (uint64_t)i + 1, 2000, ctx, 1);
	cr_assert_eq(ibv_modify_qp(pub->mc->qp, &err, IBV_QP_STATE), 0);
	cr_assert(dp_poll_until(ctx, 1, &pe.disconnected, 1, 10000),
		  "the publisher's death was not reported");
	cr_assert_lt(pe.last_status, 0);
	for (uint64_t end = dp_now_ms() + 10000;
	     pub->tx_nfree != MSGA__PUB_TX_SLOTS || pub->big_inflight;) {
		cr_assert_lt(dp_now_ms(), end, "%u of %u send buffers back, "
			     "%u big sends out", pub->tx_nfree,
			     MSGA__PUB_TX_SLOTS, pub->big_inflight);
		msga_ctx_poll(ctx[0], 64);
	}
	cr_assert_eq(msga_pub_claim(pub, t, 64, &claim), -ENETDOWN);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}

/* The netdev under the rxe device, from its sysfs "parent". */
static void rxe_netdev(char *name, size_t size)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent",
		 devtest_env()->dev);
	f = fopen(path, "r");
	cr_assert_not_null(f, "no %s", path);
	cr_assert_not_null(fgets(name, (int)size, f));
	fclose(f);
	name[strcspn(name, "\n")] = '\0';
}

static int sh(const char *fmt, const char *netdev)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), fmt, netdev);
	return system(cmd);
}

/* Poll until the port is ACTIVE again (rxe follows the carrier). */
static void wait_port_active(void)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "rdma link show %s/1 | grep -q 'state "
		 "ACTIVE'", devtest_env()->dev);
	for (uint64_t end = dp_now_ms() + 10000; system(cmd);)
		cr_assert_lt(dp_now_ms(), end, "port not ACTIVE again");
}

static struct msga_pub *pub_dgram(struct msga_ctx *ctx, const char *uri,
				  uint32_t max_datagram, struct dp_rec *pe)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri,
				   .on_event = dp_on_event, .user = pe,
				   .max_datagram = max_datagram };
	struct msga_pub *pub = NULL;

	cr_assert_eq(msga_pub_create(ctx, &a, &pub), 0, "%s",
		     msga_ctx_last_error(ctx));
	return pub;
}

static void wait_joined(struct msga_ctx **ctx, int nctx, struct dp_rec *pe,
			struct dp_rec *rec)
{
	cr_assert(dp_poll_until(ctx, nctx, &pe->connected, 1, 15000));
	cr_assert(dp_poll_until(ctx, nctx, &rec->connected, 1, 15000));
}

/*
 * Item 16 on RoCE: the link under a joined group flaps. Whatever rdma_cm
 * reports for it, the subscriber must get the feed again, and if it was
 * told DISCONNECTED it must be told CONNECTED after.
 */
Test(ud_hardening, the_feed_comes_back_after_a_link_flap, .timeout = 180)
{
	struct msga_ctx *ctx[2];
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_sub *sub;
	struct msga_pub *pub;
	char netdev[64];
	uint64_t seq = 1;
	uint32_t t;

	if (is_iwarp())
		return refused();
	rxe_netdev(netdev, sizeof(netdev));
	ctx[0] = devtest_open_ctx();
	ctx[1] = devtest_open_ctx();
	pub = pub_dgram(ctx[0], G_FLAP, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "x", &t), 0);
	sub = dp_sub(ctx[1], "x", &rec);
	cr_assert_geq(msga_sub_connect(sub, G_FLAP), 0);
	wait_joined(ctx, 2, &pe, &rec);
	feed_alive(pub, t, &seq, &rec, ctx, 2, 64);
	cr_assert_eq(sh("ip link set dev %s down", netdev), 0);
	for (int i = 0; i < 20; i++) /* whatever happens to these */
		msga_ctx_poll(ctx[i % 2], 64);
	cr_assert_eq(sh("ip link set dev %s up", netdev), 0);
	wait_port_active();
	for (uint64_t end = dp_now_ms() + 30000;
	     rec.disconnected > rec.connected - 1 ||
	     pe.disconnected > pe.connected - 1;) {
		cr_assert_lt(dp_now_ms(), end, "not rejoined: sub %d/%d, "
			     "pub %d/%d", rec.connected, rec.disconnected,
			     pe.connected, pe.disconnected);
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
	feed_alive(pub, t, &seq, &rec, ctx, 2, 64);
	cr_log_info("link flap: subscriber saw %d DISCONNECTED, publisher %d",
		    rec.disconnected, pe.disconnected);
	cr_assert_eq(rec.failed + pe.failed, 0);
	msga_ctx_close(ctx[0]);
	msga_ctx_close(ctx[1]);
}
