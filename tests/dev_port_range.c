/* SPDX-License-Identifier: MIT */
/*
 * Device tests that change the whole host's state, and so run alone
 * (Makefile.am's DEVICE_TESTS_ALONE), never beside the other device's
 * loop: here the ephemeral port range, narrowed to two ports. While it is,
 * every connect on the host draws from those two, and a test of the other
 * loop connecting then fails for a reason not its own (CI saw it on
 * 2026-11-28, when this test was in dev_pubsub).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define MSG 64

static uint32_t topic(struct msga_pub *pub, const char *name)
{
	uint32_t id = UINT32_MAX;

	cr_assert_eq(msga_pub_topic(pub, name, &id), 0);
	return id;
}

/*
 * iWARP connects over TCP from the port rdma_cm picked, and TCP may have
 * that port busy (a listener, or an earlier connection in TIME_WAIT);
 * rdma_connect() then fails with EADDRINUSE, and the subscriber must try
 * another port instead of failing. Here the ephemeral range is narrowed to
 * two ports, P and P + 1, with a TCP listener on P: each connect picks P
 * half the time. Six rounds, alternating the ring and SEND/RECV (SRQ)
 * paths, each on new ports. On RoCE the listener is nobody's business and
 * every connect just works.
 */
#define PORT_RANGE "/proc/sys/net/ipv4/ip_local_port_range"
static char saved_range[64];

static void restore_port_range(void)
{
	FILE *f;

	if (!saved_range[0] || !(f = fopen(PORT_RANGE, "w")))
		return;
	fputs(saved_range, f);
	fclose(f);
}

static void set_port_range(unsigned lo, unsigned hi)
{
	FILE *f = fopen(PORT_RANGE, "w");

	cr_assert(f, "%s: %s (the test narrows it: run as root)", PORT_RANGE,
		  strerror(errno));
	fprintf(f, "%u %u\n", lo, hi);
	cr_assert_eq(fclose(f), 0, "%s: %s", PORT_RANGE, strerror(errno));
}

static int tcp_listener(const char *addr, unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	cr_assert_eq(inet_pton(AF_INET, addr, &sin.sin_addr), 1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0,
		     "bind %s:%u: %s", addr, port, strerror(errno));
	cr_assert_eq(listen(fd, 1), 0);
	return fd;
}

static void wait_subscribers(struct msga_ctx *ctx, struct msga_pub *pub,
			     int n)
{
	uint64_t end = dp_now_ms() + 10000;

	while (msga_pub_subscribers(pub) != n) {
		cr_assert_lt(dp_now_ms(), end, "publisher counts %d, not %d",
			     msga_pub_subscribers(pub), n);
		msga_ctx_poll(ctx, 64);
	}
}

Test(pubsub, connect_takes_another_port_when_tcp_has_it,
     .timeout = 120, .fini = restore_port_range)
{
	static struct dp_rec ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	uint32_t t = topic(pub, "p");
	FILE *f = fopen(PORT_RANGE, "r");

	cr_assert(f && fgets(saved_range, sizeof(saved_range), f));
	fclose(f);
	for (int round = 0; round < 6; round++) {
		static struct dp_rec rec;
		unsigned port = 61100u + 2u * (unsigned)round;
		int fd = tcp_listener(devtest_env()->addr, port);
		struct msga_sub_attr a = {
			.size = sizeof(a), .pattern = "p",
			.flags = round % 2 ? MSGA_SUB_NO_RING : 0,
			.on_msg = dp_on_msg, .on_event = dp_on_event,
			.user = &rec };
		struct msga_sub *sub;
		int id;

		memset(&rec, 0, sizeof(rec));
		cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
		set_port_range(port, port + 1);
		id = dp_connect_id(sub, dp_uri((uint16_t)msga_pub_port(pub)));
		cr_assert_geq(id, 0);
		cr_assert(dp_poll_until(&ctx, 1, &rec.connected, 1, 10000) ||
			  rec.failed, "round %d: no event", round);
		cr_assert_eq(rec.failed, 0, "round %d: connect failed: %s",
			     round, strerror(-rec.last_status));
		restore_port_range();
		close(fd);
		wait_subscribers(ctx, pub, 1);
		dp_send(pub, t, (uint64_t)round + 1, MSG, &ctx, 1);
		cr_assert(dp_poll_until64(&ctx, 1, &rec.total, 1, 10000),
			  "round %d: nothing delivered", round);
		cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
		msga_sub_destroy(sub);
		wait_subscribers(ctx, pub, 0);
	}
	cr_expect_eq(ev.failed, 0);
	msga_ctx_close(ctx);
}
