/* SPDX-License-Identifier: MIT */
/*
 * Device choice (issue 36, item 7): a context opened by the route to a
 * peer's address (msga_ctx_attr.route_to), a multicast membership and
 * publisher joined on a chosen address (?bind=), a subscriber that takes
 * datagrams from listed sources only (?source=), and the multicast
 * receive queue's depth (msga_sub_attr.rx_depth).
 *
 * route_to runs on every device; the multicast tests on RoCE only, and
 * on iWARP check the documented -EOPNOTSUPP. The VM gives what the tests
 * need beyond the device's address (tests/vm/env.sh): every device's
 * address (MSGA_TEST_ALL_DEVICES), a second address on the first
 * device's netdev (MSGA_TEST_ALIAS_ADDR, "another source"), an address
 * of a netdev without RDMA device (MSGA_TEST_NORDMA_ADDR) and one that no
 * host answers (MSGA_TEST_SILENT_ADDR).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "ud_wire.h"

#define GROUP "239.255.10.40"
#define TOPIC "bind.t"

static const char *need_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert(v && *v, "%s is not set (tests/vm/device-tests.sh)", name);
	return v;
}

/* ------------------------------------------------ route_to */

static int open_route(const char *to, const char *dev, const char *local,
		      uint8_t port, struct msga_ctx **ctx)
{
	struct msga_ctx_attr a = { .size = sizeof(a), .route_to = to,
				   .dev_name = dev, .local_addr = local,
				   .port = port };

	return msga_ctx_open(&a, ctx);
}

static void assert_route_picks(const char *to, const char *dev)
{
	struct msga_dev_info info = { .size = sizeof(info) };
	struct msga_ctx *ctx = NULL;
	int ret = open_route(to, NULL, NULL, 0, &ctx);

	cr_assert_eq(ret, 0, "route_to %s: %d: %s", to, ret, msga_open_error());
	cr_assert_eq(msga_ctx_query(ctx, &info), 0);
	cr_assert_str_eq(info.dev_name, dev, "route_to %s", to);
	msga_ctx_close(ctx);
}

Test(route_to, picks_the_device_of_each_address, .timeout = 60)
{
	const char *all = getenv("MSGA_TEST_ALL_DEVICES");
	char specs[512], *save = NULL;
	int others = 0;

	assert_route_picks(devtest_env()->addr, devtest_env()->dev);
	snprintf(specs, sizeof(specs), "%s", all ? all : "");
	for (char *s = strtok_r(specs, " ", &save); s;
	     s = strtok_r(NULL, " ", &save)) {
		char dev[64], addr[64];

		cr_assert_eq(sscanf(s, "%63[^:]:%63[^:]", dev, addr), 2);
		assert_route_picks(addr, dev);
		others += strcmp(dev, devtest_env()->dev) != 0;
	}
	cr_log_info("route_to picked %d other device(s) by address", others);
}

Test(route_to, a_netdev_without_rdma_device_is_enodev, .timeout = 60)
{
	struct msga_ctx *ctx = NULL;

	cr_assert_eq(open_route(need_env("MSGA_TEST_NORDMA_ADDR"), NULL, NULL,
				0, &ctx), -ENODEV, "%s", msga_open_error());
	cr_assert_null(ctx);
}

Test(route_to, no_route_is_enetunreach, .timeout = 60)
{
	struct msga_ctx *ctx = NULL;

	/* TEST-NET-3: the VM has no default route */
	cr_assert_eq(open_route("203.0.113.1", NULL, NULL, 0, &ctx),
		     -ENETUNREACH, "%s", msga_open_error());
	cr_assert_null(ctx);
}

Test(route_to, a_silent_neighbour_is_ehostunreach_in_time, .timeout = 60)
{
	struct msga_ctx *ctx = NULL;
	uint64_t t0 = dp_now_ms();

	cr_assert_eq(open_route(need_env("MSGA_TEST_SILENT_ADDR"), NULL, NULL,
				0, &ctx), -EHOSTUNREACH, "%s",
		     msga_open_error());
	cr_assert_null(ctx);
	/* a hang guard only: the kernel ends the resolve at the deadline */
	cr_assert_lt(dp_now_ms() - t0, devtest_scale_ms(
			     10u * MSGA_ROUTE_RESOLVE_MS));
}

Test(route_to, conflicts_and_bad_input_are_einval, .timeout = 60)
{
	const char *addr = devtest_env()->addr;
	struct msga_ctx *ctx = NULL;

	cr_assert_eq(open_route(addr, devtest_env()->dev, NULL, 0, &ctx),
		     -EINVAL, "not with dev_name");
	cr_assert_eq(open_route(addr, NULL, addr, 0, &ctx), -EINVAL,
		     "not with local_addr");
	cr_assert_eq(open_route(addr, NULL, NULL, 2, &ctx), -EINVAL,
		     "the route's port is 1");
	cr_assert_eq(open_route("rdma.example", NULL, NULL, 0, &ctx), -EINVAL,
		     "numeric only");
	cr_assert_null(ctx);
}

Test(route_to, a_caller_before_0_10_has_no_route_to, .timeout = 60)
{
	struct msga_ctx_attr a = {
		.size = offsetof(struct msga_ctx_attr, route_to),
		.dev_name = devtest_env()->dev, .route_to = "not read",
	};
	struct msga_ctx *ctx = NULL;

	cr_assert_eq(msga_ctx_open(&a, &ctx), 0, "%s", msga_open_error());
	msga_ctx_close(ctx);
}

/* ------------------------------------------------ multicast */

/* One subscriber's view: the real publisher's and anyone else's. */
struct seen {
	uint64_t origin, real, other;
	int connected;
};

static void on_msg(const struct msga_msg *m, void *user)
{
	struct seen *s = user;

	if (!s->origin && m->origin < 0xf000000000000000ull)
		s->origin = m->origin;
	if (m->origin == s->origin)
		s->real++;
	else
		s->other++;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct seen *s = user;

	if (ev->type == MSGA_EVENT_CONNECTED)
		s->connected++;
}

static struct msga_sub *sub_depth(struct msga_ctx *ctx, uint32_t depth,
				  struct seen *s)
{
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "bind.*",
				   .on_msg = on_msg, .on_event = on_event,
				   .user = s, .rx_depth = depth };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	return sub;
}

static char *uri_with(const char *opts)
{
	static char uri[4][256];
	static int turn;
	char *u = uri[turn++ % 4];

	snprintf(u, sizeof(uri[0]), "mcast://" GROUP "%s", opts);
	return u;
}

static const char *opt_addr(const char *name, const char *addr)
{
	static char text[4][128];
	static int turn;
	char *t = text[turn++ % 4];

	snprintf(t, sizeof(text[0]), "?%s=%s", name, addr);
	return t;
}

/*
 * iWARP: a URI with options is refused as every multicast URI is (a
 * publisher's ?source= is -EINVAL first, as everywhere).
 */
static int iwarp_refuses_options(void)
{
	const char *src = uri_with(opt_addr("source", devtest_env()->addr));
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	struct seen s = { 0 };

	if (!dp_is_iwarp())
		return 0;
	cr_assert(dp_iwarp_refuses(uri_with(opt_addr("bind",
						      devtest_env()->addr))));
	ctx = devtest_open_ctx();
	sub = sub_depth(ctx, 0, &s);
	cr_assert_eq(msga_sub_connect(sub, src, NULL), -EOPNOTSUPP, "%s", src);
	msga_ctx_close(ctx);
	return 1;
}

struct rig {
	struct msga_ctx *ctx[2];
	struct msga_pub *pub;
	struct dp_rec pe;
	uint32_t t;
	uint64_t seq;
};

static void rig_up(struct rig *r, const char *uri)
{
	memset(r, 0, sizeof(*r));
	r->ctx[0] = devtest_open_ctx();
	r->ctx[1] = devtest_open_ctx();
	r->pub = dp_pub_at(r->ctx[0], uri, 0, &r->pe);
	cr_assert(dp_poll_until(r->ctx, 2, &r->pe.connected, 1, 10000),
		  "the publisher did not join");
	cr_assert_eq(msga_pub_topic(r->pub, TOPIC, &r->t), 0);
}

static void rig_down(struct rig *r)
{
	msga_ctx_close(r->ctx[0]);
	msga_ctx_close(r->ctx[1]);
}

static void join(struct rig *r, struct msga_sub *sub, const char *uri,
		 struct seen *s)
{
	int ret = dp_connect_id(sub, uri);

	cr_assert_geq(ret, 0, "%s: %d: %s", uri, ret,
		      msga_ctx_last_error(r->ctx[1]));
	cr_assert(dp_poll_until(r->ctx, 2, &s->connected, 1, 10000),
		  "no membership on %s", uri);
}

/* n real messages, each awaited at s (others are polled meanwhile). */
static void real_send(struct rig *r, uint64_t n, struct seen *s)
{
	for (uint64_t i = 0; i < n; i++) {
		dp_send(r->pub, r->t, ++r->seq, 64, r->ctx, 2);
		cr_assert(dp_poll_until64(r->ctx, 2, &s->real, r->seq, 10000),
			  "message %llu never came",
			  (unsigned long long)r->seq);
	}
}

Test(bind, publisher_and_subscriber_join_on_the_bound_address, .timeout = 120)
{
	const char *at;
	struct seen s = { 0 };
	struct msga_sub *sub;
	struct rig r;

	if (iwarp_refuses_options())
		return;
	at = opt_addr("bind", devtest_env()->addr);
	rig_up(&r, uri_with(at));
	sub = sub_depth(r.ctx[1], 0, &s);
	join(&r, sub, uri_with(at), &s);
	real_send(&r, 20, &s);
	cr_assert_eq(s.other, 0);
	rig_down(&r);
}

/*
 * Whether the kernel lists a connection-mode rdma_cm id (port space TCP:
 * a READ connection, not a UD membership) with addr as its source:
 * `rdma resource show cm_id` (iproute2) sees every id on the host. The
 * listing goes to the test's log.
 */
static int tcp_cm_id_from(const char *addr)
{
	FILE *f = popen("rdma resource show cm_id 2>&1", "r");
	char want[96], line[1024];
	int found = 0;

	cr_assert_not_null(f, "rdma resource show cm_id");
	snprintf(want, sizeof(want), "src-addr %s:", addr);
	while (fgets(line, sizeof(line), f)) {
		cr_log_info("%s", line);
		found |= strstr(line, want) && strstr(line, "ps TCP");
	}
	pclose(f);
	return found;
}

/*
 * A membership joined on ?bind=ADDR reads from a reliable publisher's
 * ring from ADDR too (0.10; before, from the context's address, and no
 * TCP id had the alias as its source): its READ connection's rdma_cm id
 * has the alias address as its source.
 */
Test(bind, read_repair_goes_from_the_bound_address, .timeout = 120)
{
	const char *alias;
	struct seen s = { 0 };
	struct msga_sub *sub;
	uint64_t end;
	struct rig r;
	int found = 0;

	if (iwarp_refuses_options())
		return;
	alias = need_env("MSGA_TEST_ALIAS_ADDR");
	memset(&r, 0, sizeof(r));
	r.ctx[0] = devtest_open_ctx();
	r.ctx[1] = devtest_open_ctx();
	r.pub = dp_pub_at(r.ctx[0], uri_with(""), MSGA_PUB_RELIABLE, &r.pe);
	cr_assert(dp_poll_until(r.ctx, 2, &r.pe.connected, 1, 10000),
		  "the publisher did not join");
	cr_assert_eq(msga_pub_topic(r.pub, TOPIC, &r.t), 0);
	sub = sub_depth(r.ctx[1], 0, &s);
	join(&r, sub, uri_with(opt_addr("bind", alias)), &s);
	/* a stream's first datagram names the READ endpoint: it connects */
	for (end = dp_now_ms() + 20000; !found && dp_now_ms() < end;) {
		real_send(&r, 1, &s);
		found = tcp_cm_id_from(alias);
	}
	cr_expect(found, "no READ connection from %s", alias);
	rig_down(&r);
}

Test(bind, an_address_elsewhere_is_refused, .timeout = 120)
{
	const char *all = getenv("MSGA_TEST_ALL_DEVICES");
	struct msga_pub_attr pa = { .size = sizeof(pa) };
	struct msga_pub *pub = NULL;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	struct seen s = { 0 };
	char specs[512], *save = NULL;
	int others = 0, ret;

	if (iwarp_refuses_options())
		return;
	ctx = devtest_open_ctx();
	sub = sub_depth(ctx, 0, &s);
	/* not an address of this host */
	cr_assert_eq(msga_sub_connect(sub, uri_with(opt_addr("bind",
							     "192.0.2.1")), NULL),
		     -EADDRNOTAVAIL);
	/* an address of no RDMA device */
	ret = dp_connect_id(sub, uri_with(opt_addr(
			"bind", need_env("MSGA_TEST_NORDMA_ADDR"))));
	cr_assert_eq(ret, -ENODEV, "%d: %s", ret, msga_ctx_last_error(ctx));
	pa.uri = uri_with(opt_addr("bind", "192.0.2.1"));
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EADDRNOTAVAIL);
	/* an address of another device */
	snprintf(specs, sizeof(specs), "%s", all ? all : "");
	for (char *sp = strtok_r(specs, " ", &save); sp;
	     sp = strtok_r(NULL, " ", &save)) {
		char dev[64], addr[64];

		cr_assert_eq(sscanf(sp, "%63[^:]:%63[^:]", dev, addr), 2);
		if (!strcmp(dev, devtest_env()->dev))
			continue;
		cr_assert_eq(msga_sub_connect(sub, uri_with(opt_addr(
				"bind", addr)), NULL), -ENODEV, "%s", addr);
		pa.uri = uri_with(opt_addr("bind", addr));
		cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -ENODEV);
		others++;
	}
	cr_log_info("bind to %d other device(s) refused", others);
	cr_assert_null(pub);
	msga_ctx_close(ctx);
}

Test(bind, bad_options_are_einval, .timeout = 60)
{
	static const char *const bad[] = {
		"?bind=not-an-ip", "?iface=eth0", "?bind=", "?",
		"?bind=198.18.0.1&bind=198.18.0.1",
	};
	struct msga_pub_attr pa = { .size = sizeof(pa) };
	struct msga_pub *pub = NULL;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct seen s = { 0 };
	struct msga_sub *sub = sub_depth(ctx, 0, &s);
	char many[512] = "";

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(msga_sub_connect(sub, uri_with(bad[i]), NULL), -EINVAL,
			     "%s", bad[i]);
		pa.uri = uri_with(bad[i]);
		cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL, "%s",
			     bad[i]);
	}
	/* a publisher names no sources */
	pa.uri = uri_with(opt_addr("source", devtest_env()->addr));
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL);
	for (unsigned i = 0; i <= MSGA_SUB_SOURCES_MAX; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many),
			 "%csource=10.0.0.%u", i ? '&' : '?', i + 1);
	cr_assert_eq(msga_sub_connect(sub, uri_with(many), NULL), -EINVAL,
		     "more than MSGA_SUB_SOURCES_MAX sources");
	cr_assert_null(pub);
	msga_ctx_close(ctx);
}

/* A DATA datagram of a new origin, from the raw sender's address. */
static void forge(struct raw_ud *u, uint64_t origin)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_DATA,
				   .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = sizeof(TOPIC) - 1,
				   .msg_len = 64, .origin = origin, .seq = 1,
				   .hb_ms = 100 };
	uint32_t n = msga__udw_put(u->buf, &h, TOPIC);

	dp_fill(u->buf + n, 64, 0, 1);
	raw_ud_post(u, n + 64, u->cm.ud.qkey);
}

static struct msga_sub_stats stats_of(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

/*
 * Three subscribers of one group: one takes only the publisher's address,
 * one only the other source's, one everyone's. A stranger at a second
 * address of the same device sends datagrams of new origins: the first
 * drops them before any stream exists (unlisted_source), the control
 * delivers them (on probation, as without keys), the second takes them
 * and drops the real publisher's.
 */
Test(source, unlisted_senders_are_dropped_and_counted, .timeout = 120)
{
	enum { FORGED = 10 };
	const char *alias;
	struct seen s_pub = { 0 }, s_alias = { 0 }, s_any = { 0 };
	struct msga_sub *f_pub, *f_alias, *any;
	struct msga_sub_stats st;
	struct raw_ud u;
	struct rig r;

	if (iwarp_refuses_options())
		return;
	alias = need_env("MSGA_TEST_ALIAS_ADDR");
	rig_up(&r, uri_with(""));
	f_pub = sub_depth(r.ctx[1], 0, &s_pub);
	f_alias = sub_depth(r.ctx[1], 0, &s_alias);
	any = sub_depth(r.ctx[1], 0, &s_any);
	join(&r, f_pub, uri_with(opt_addr("source", devtest_env()->addr)),
	     &s_pub);
	join(&r, f_alias, uri_with(opt_addr("source", alias)), &s_alias);
	join(&r, any, uri_with(""), &s_any);
	real_send(&r, 10, &s_pub);
	cr_assert(dp_poll_until64(r.ctx, 2, &s_any.real, r.seq, 10000));

	raw_ud_join_from(&u, r.ctx[1], GROUP, alias);
	for (uint64_t o = 1; o <= FORGED; o++)
		forge(&u, 0xf0f0000000000000ull + o);
	cr_assert(dp_poll_until64(r.ctx, 2, &s_any.other, FORGED, 10000),
		  "the control never saw the stranger (%llu)",
		  (unsigned long long)s_any.other);
	cr_assert(dp_poll_until64(r.ctx, 2, &s_alias.other, FORGED, 10000),
		  "the stranger's listed subscriber never saw it");
	real_send(&r, 10, &s_pub);
	cr_assert(dp_poll_until64(r.ctx, 2, &s_any.real, r.seq, 10000));

	st = stats_of(f_pub);
	cr_assert_eq(s_pub.other, 0, "nothing of the stranger delivered");
	cr_assert_eq(s_pub.real, r.seq, "every real message delivered");
	cr_assert_eq(st.unlisted_source, FORGED, "each forged one counted");
	cr_assert_eq(st.streams, 1, "no state for the stranger");
	cr_assert_eq(st.probation, 0);
	cr_assert_eq(st.probation_evicted, 0);
	cr_assert_eq(s_alias.real, 0, "the publisher is not listed there");
	cr_assert_geq(stats_of(f_alias).unlisted_source, r.seq);
	cr_assert_eq(stats_of(any).unlisted_source, 0);
	raw_ud_close(&u);
	rig_down(&r);
}

/* ------------------------------------------------ rx_depth */

Test(rx_depth, bounds_are_einval, .timeout = 60)
{
	struct msga_dev_info info = { .size = sizeof(info) };
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "bind.*",
				   .on_msg = on_msg };
	struct msga_sub *sub = NULL;

	a.rx_depth = MSGA_SUB_RX_DEPTH_MIN - 1;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), -EINVAL);
	a.rx_depth = MSGA_SUB_RX_DEPTH_MAX + 1;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), -EINVAL);
	cr_assert_eq(msga_ctx_query(ctx, &info), 0);
	if (info.max_qp_wr < MSGA_SUB_RX_DEPTH_MAX) {
		a.rx_depth = info.max_qp_wr + 1;
		cr_assert_eq(msga_sub_create(ctx, &a, &sub), -EINVAL);
	}
	a.rx_depth = 0;
	a.reserved_rx = 1;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), -EINVAL);
	a.reserved_rx = 0;
	a.rx_depth = MSGA_SUB_RX_DEPTH_MIN;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	msga_ctx_close(ctx);
}

Test(rx_depth, a_small_queue_receives, .timeout = 120)
{
	struct seen s = { 0 };
	struct msga_sub *sub;
	struct rig r;

	if (dp_iwarp_refuses(uri_with("")))
		return;
	rig_up(&r, uri_with(""));
	sub = sub_depth(r.ctx[1], MSGA_SUB_RX_DEPTH_MIN, &s);
	join(&r, sub, uri_with(""), &s);
	/* each awaited: a queue of 16 never overflows one at a time */
	real_send(&r, 3 * MSGA_SUB_RX_DEPTH_MIN, &s);
	cr_assert_eq(s.real, r.seq);
	rig_down(&r);
}
