/* SPDX-License-Identifier: MIT */
/*
 * Device tests of topic resolution's advertising and browsing (issue 37;
 * msgaccel(7), TOPIC RESOLUTION): a publisher in a context that
 * advertises is heard by a browsing context with the uri to subscribe
 * at, on every transport it has (rdma:// on RoCE and iWARP, mcast:// and
 * ud:// where the device does UD); a destroy withdraws its topics at
 * once (not by expiry); a late browser's query is answered long before
 * the next periodic advert; keyed contexts take no advert without the
 * key (forged adverts and withdrawals from a plain socket are dropped
 * and counted); the allow list drops other senders; event mode wakes
 * for adverts; line B's adverts travel in datagrams of their own; and
 * every documented error of the calls.
 *
 * Each test uses a group of its own (by process id), so runs on two
 * devices at once do not hear each other.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "tres_wire.h"

#define WAIT_MS 10000

static const uint8_t KEY1[MSGA_KEY_LEN] = { 1, 2, 3 };
static const uint8_t KEY2[MSGA_KEY_LEN] = { 9, 8, 7 };

/* A group of this process's own, and its text. */
static const char *group(char *buf, size_t n, unsigned salt)
{
	snprintf(buf, n, "239.255.%u.%u:%u", 100 + salt,
		 devtest_salt(), 15000 + salt);
	return buf;
}

static struct msga_ctx *open_res(const struct msga_resolver_attr *ra,
				 const uint8_t *key)
{
	struct msga_ctx_attr a = { .size = sizeof(a) };
	struct msga_ctx *ctx = NULL;
	int ret;

	a.dev_name = devtest_env()->dev;
	a.resolver = ra;
	a.key = key;
	ret = msga_ctx_open(&a, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open = %d: %s", ret, msga_open_error());
	return ctx;
}

static struct msga_resolver_stats stats(struct msga_ctx *ctx)
{
	struct msga_resolver_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_resolver_stats(ctx, &st), 0);
	return st;
}

/* Poll every context until ctxs[0] keeps want topics (or WAIT_MS). */
static int poll_topics(struct msga_ctx **ctxs, int n, uint64_t want)
{
	uint64_t end = dp_now_ms() + devtest_scale_ms(WAIT_MS);

	while (dp_now_ms() < end) {
		for (int i = 0; i < n; i++)
			msga_ctx_poll(ctxs[i], 16);
		if (stats(ctxs[0]).topics == want)
			return 1;
		usleep(200);
	}
	return 0;
}

/* The topic named name heard by ctx, into *ti: 1, or 0 if none. */
static int find_topic(struct msga_ctx *ctx, const char *name,
		      struct msga_topic_info *ti)
{
	uint32_t slots = stats(ctx).topic_slots;

	for (uint32_t i = 0; i < slots; i++) {
		ti->size = sizeof(*ti);
		if (!msga_resolver_topic(ctx, i, ti) && !strcmp(ti->topic, name))
			return 1;
	}
	return 0;
}

static struct msga_pub *topics_on(struct msga_ctx *ctx, const char *uri,
				  struct dp_rec *ev, uint32_t flags)
{
	static const char *const names[] = { "md.eq.A", "md.eq.B", "ref.x" };
	struct msga_pub *pub = dp_pub_at(ctx, uri, flags, ev);
	uint32_t id;

	for (unsigned i = 0; i < 3; i++)
		cr_assert_eq(msga_pub_topic(pub, names[i], &id), 0, "%s",
			     msga_ctx_last_error(ctx));
	return pub;
}

/* An advertising context (ctxs[1]) and one browsing pattern (ctxs[0]),
 * on a group of their own. */
static void open_pair(struct msga_ctx *ctxs[2], char *g, size_t n,
		      unsigned salt, const char *pattern)
{
	struct msga_resolver_attr pa = { .size = sizeof(pa),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct msga_resolver_attr ba = { .size = sizeof(ba) };

	pa.group = ba.group = group(g, n, salt);
	ctxs[1] = open_res(&pa, NULL);
	ctxs[0] = open_res(&ba, NULL);
	cr_assert_eq(msga_resolver_browse(ctxs[0], pattern), 0);
}

static void close_pair(struct msga_ctx *ctxs[2])
{
	msga_ctx_close(ctxs[0]);
	msga_ctx_close(ctxs[1]);
}

Test(resolver, rc_advert_is_heard_with_its_uri_then_withdrawn, .timeout = 120)
{
	char g[64], want[96];
	struct msga_ctx *ctxs[2];
	struct msga_topic_info ti;
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;

	open_pair(ctxs, g, sizeof(g), 1, "md.eq.*");
	pub = topics_on(ctxs[1], dp_uri(0), &ev, 0);
	cr_assert(poll_topics(ctxs, 2, 2), "heard %lu topics, not 2",
		  (unsigned long)stats(ctxs[0]).topics);
	snprintf(want, sizeof(want), "rdma://%s:%d", devtest_env()->addr,
		 msga_pub_port(pub));
	cr_assert(find_topic(ctxs[0], "md.eq.B", &ti));
	cr_expect_str_eq(ti.uri, want);
	cr_expect_str_eq(ti.sender, devtest_env()->addr);
	cr_expect_neq(ti.origin, 0);
	cr_expect_eq(ti.flags, 0);
	cr_expect_not(find_topic(ctxs[0], "ref.x", &ti), "not browsed");
	cr_expect_eq(stats(ctxs[0]).publishers, 1);
	cr_expect_eq(stats(ctxs[1]).advertised, 3);
	cr_expect_geq(stats(ctxs[1]).tx_adverts, 3);

	/* a destroy withdraws: gone at once, not after the TTL */
	msga_pub_destroy(pub);
	cr_expect_eq(stats(ctxs[1]).advertised, 0);
	cr_assert(poll_topics(ctxs, 2, 0), "still %lu topics",
		  (unsigned long)stats(ctxs[0]).topics);
	cr_expect_eq(stats(ctxs[0]).rx_withdrawn, 2);
	cr_expect_eq(stats(ctxs[0]).rx_expired, 0);
	cr_expect_eq(stats(ctxs[0]).publishers, 0);
	cr_expect_eq(stats(ctxs[1]).tx_withdraws, 3);
	close_pair(ctxs);
}

/* A publisher bound to no address is advertised at its context's own. */
Test(resolver, wildcard_publisher_says_its_own_address, .timeout = 120)
{
	char g[64], want[96];
	struct msga_ctx *ctxs[2];
	struct msga_topic_info ti;
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;

	open_pair(ctxs, g, sizeof(g), 2, "md.*");
	pub = topics_on(ctxs[1], "rdma://0.0.0.0:0", &ev, 0);
	cr_assert(poll_topics(ctxs, 2, 2));
	snprintf(want, sizeof(want), "rdma://%s:%d", devtest_env()->addr,
		 msga_pub_port(pub));
	cr_assert(find_topic(ctxs[0], "md.eq.A", &ti));
	cr_expect_str_eq(ti.uri, want);
	msga_pub_destroy(pub);
	close_pair(ctxs);
}

/*
 * Multicast and ud:// publishers: their port, and each topic's own group
 * of a range (one publisher, no conflict) (RoCE).
 */
Test(resolver, datagram_publishers_are_advertised, .timeout = 120)
{
	char g[64], want[96];
	struct msga_ctx *ctxs[2];
	struct msga_topic_info ti;
	struct dp_rec ev = { 0 };
	struct msga_pub *mpub, *upub;

	open_pair(ctxs, g, sizeof(g), 3, "md.eq.*");
	if (dp_is_iwarp()) {
		cr_expect(dp_iwarp_refuses("mcast://239.255.28.1"));
		close_pair(ctxs);
		return;
	}
	mpub = topics_on(ctxs[1], "mcast://239.255.28.0/28", &ev,
			 MSGA_PUB_RELIABLE);
	upub = topics_on(ctxs[1], dp_ud_uri(0), &ev, 0);
	cr_assert(poll_topics(ctxs, 2, 4), "heard %lu",
		  (unsigned long)stats(ctxs[0]).topics);
	cr_expect_eq(stats(ctxs[0]).publishers, 2);
	snprintf(want, sizeof(want), "ud://%s:%d", devtest_env()->addr,
		 msga_pub_port(upub));
	for (uint32_t i = 0, n = 0; i < stats(ctxs[0]).topic_slots; i++) {
		ti.size = sizeof(ti);
		if (msga_resolver_topic(ctxs[0], i, &ti))
			continue;
		if (!strncmp(ti.uri, "mcast://", 8)) {
			cr_expect_eq(strncmp(ti.uri, "mcast://239.255.28.", 19),
				     0, "%s", ti.uri);
			cr_expect_eq(ti.flags, MSGA_TOPIC_RELIABLE);
		} else {
			cr_expect_str_eq(ti.uri, want);
		}
		cr_expect_leq(++n, 4u);
	}
	cr_expect_eq(stats(ctxs[0]).rx_conflicts, 0);
	msga_pub_destroy(mpub);
	msga_pub_destroy(upub);
	close_pair(ctxs);
}

/*
 * A browser that starts after the fast phase, under a sustain period of
 * ten minutes, hears the topics at once: its query brought them forward.
 */
Test(resolver, a_query_is_answered, .timeout = 120)
{
	char g[64];
	struct msga_resolver_attr pa = {
		.size = sizeof(pa), .flags = MSGA_RESOLVER_ADVERTISE,
		.fast_ms = 10, .fast_max_ms = 20, .fast_for_ms = 30,
		.sustain_ms = 600000,
	};
	struct msga_resolver_attr ba = pa;
	struct msga_ctx *ctxs[2];
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;
	uint64_t end, sent;

	ba.flags = 0;
	pa.group = ba.group = group(g, sizeof(g), 4);
	ctxs[1] = open_res(&pa, NULL);
	pub = topics_on(ctxs[1], dp_uri(0), &ev, 0);
	/* past the fast phase: its adverts stop */
	end = dp_now_ms() + 300;
	while (dp_now_ms() < end)
		msga_ctx_poll(ctxs[1], 16);
	sent = stats(ctxs[1]).tx_adverts;
	cr_assert_geq(sent, 3);
	ctxs[0] = open_res(&ba, NULL);
	cr_assert_eq(msga_resolver_browse(ctxs[0], "*"), 0);
	cr_assert(poll_topics(ctxs, 2, 3));
	cr_expect_geq(stats(ctxs[1]).queries_answered, 3);
	cr_expect_geq(stats(ctxs[0]).tx_queries, 1);
	msga_pub_destroy(pub);
	close_pair(ctxs);
}

/*
 * A datagram as a host without the key would send it (no MAC): one
 * advert (or withdrawal) like *a, its addr set to this device's address
 * (::ffff:IPv4).
 */
static void forge_advert(const char *grp, uint8_t type,
			 struct msga__trw_advert a)
{
	uint8_t buf[MSGA__TRW_DGRAM_MAX];
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct msga__trw_enc e;
	char host[32];
	uint32_t len;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct in_addr ifa;

	snprintf(host, sizeof(host), "%s", grp);
	*strchr(host, ':') = '\0';
	inet_pton(AF_INET, host, &to.sin_addr);
	to.sin_port = htons((uint16_t)atoi(strchr(grp, ':') + 1));
	inet_pton(AF_INET, devtest_env()->addr, &ifa);
	cr_assert_geq(fd, 0);
	cr_assert_eq(setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifa,
				sizeof(ifa)), 0);
	memset(a.addr, 0, 10);
	a.addr[10] = a.addr[11] = 0xff;
	memcpy(a.addr + 12, &ifa, 4);
	msga__trw_begin(&e, buf, sizeof(buf), type, a.origin, 1);
	cr_assert_eq(msga__trw_add_advert(&e, &a), 0);
	len = msga__trw_end(&e);
	cr_assert_eq(sendto(fd, buf, len, 0, (struct sockaddr *)&to,
			    sizeof(to)), (ssize_t)len);
	close(fd);
}

/* An rdma:// publisher 42 at port 1 of topic, forged. */
static void forge(const char *grp, uint8_t type, const char *topic)
{
	struct msga__trw_advert a = { .kind = MSGA__TRW_RC, .port = 1,
				      .origin = 42 };

	snprintf(a.topic, sizeof(a.topic), "%s", topic);
	forge_advert(grp, type, a);
}

static void poll_ms(struct msga_ctx **ctxs, int n, uint64_t ms)
{
	uint64_t end = dp_now_ms() + ms;

	while (dp_now_ms() < end)
		for (int i = 0; i < n; i++)
			msga_ctx_poll(ctxs[i], 16);
}

/*
 * Keys: a browser with the publisher's key hears it; one with another
 * key, and a plain socket's adverts and withdrawals, are dropped and
 * counted (forged); a browser without keys cannot read keyed adverts.
 */
Test(resolver, keyed_adverts_need_the_key, .timeout = 120)
{
	char g[64];
	struct msga_resolver_attr pa = { .size = sizeof(pa),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct msga_resolver_attr ba = { .size = sizeof(ba) };
	struct msga_ctx *ctxs[4];
	struct msga_topic_info ti;
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;

	pa.group = ba.group = group(g, sizeof(g), 5);
	ctxs[0] = open_res(&ba, KEY1);  /* the right key */
	ctxs[1] = open_res(&pa, KEY1);  /* the publisher */
	ctxs[2] = open_res(&ba, KEY2);  /* another key */
	ctxs[3] = open_res(&ba, NULL);  /* none */
	for (int i = 0; i < 4; i++)
		if (i != 1)
			cr_assert_eq(msga_resolver_browse(ctxs[i], "md.*"), 0);
	pub = topics_on(ctxs[1], dp_uri(0), &ev, 0);
	cr_assert(poll_topics(ctxs, 4, 2));
	cr_assert(find_topic(ctxs[0], "md.eq.A", &ti));
	cr_expect_eq(ti.flags, MSGA_TOPIC_KEYS);
	cr_expect_eq(stats(ctxs[2]).topics, 0);
	cr_expect_gt(stats(ctxs[2]).rx_forged, 0);
	cr_expect_eq(stats(ctxs[3]).topics, 0);
	cr_expect_gt(stats(ctxs[3]).rx_malformed, 0, "a MAC makes it too long");

	/* forgeries without the key: an advert, a withdrawal */
	forge(g, MSGA__TRW_ADVERT, "md.forged");
	forge(g, MSGA__TRW_WITHDRAW, "md.eq.A");
	{
		uint64_t before = stats(ctxs[0]).rx_forged;
		uint64_t end = dp_now_ms() + devtest_scale_ms(WAIT_MS);

		while (stats(ctxs[0]).rx_forged < before + 2 &&
		       dp_now_ms() < end)
			poll_ms(ctxs, 4, 5);
		cr_expect_geq(stats(ctxs[0]).rx_forged, before + 2);
	}
	cr_expect_eq(stats(ctxs[0]).topics, 2, "the forged withdrawal "
		     "removed nothing, the forged advert added nothing");
	cr_expect_not(find_topic(ctxs[0], "md.forged", &ti));
	/* ... and the unkeyed browser takes the forgery: it has no key */
	poll_ms(ctxs, 4, 50);
	cr_expect(find_topic(ctxs[3], "md.forged", &ti));
	msga_pub_destroy(pub);
	for (int i = 0; i < 4; i++)
		msga_ctx_close(ctxs[i]);
}

/* allow: adverts from other senders are dropped and counted. */
Test(resolver, allow_list_drops_other_senders, .timeout = 120)
{
	char g[64];
	struct msga_resolver_attr pa = { .size = sizeof(pa),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct msga_resolver_attr ba = { .size = sizeof(ba),
					 .allow = "198.18.9.9,198.18.9.10" };
	struct msga_resolver_attr oa = { .size = sizeof(oa) };
	struct msga_ctx *ctxs[3];
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;

	pa.group = ba.group = oa.group = group(g, sizeof(g), 6);
	oa.allow = devtest_env()->addr;
	ctxs[0] = open_res(&oa, NULL); /* allows the publisher */
	ctxs[1] = open_res(&pa, NULL);
	ctxs[2] = open_res(&ba, NULL); /* does not */
	cr_assert_eq(msga_resolver_browse(ctxs[0], "md.*"), 0);
	cr_assert_eq(msga_resolver_browse(ctxs[2], "md.*"), 0);
	pub = topics_on(ctxs[1], dp_uri(0), &ev, 0);
	cr_assert(poll_topics(ctxs, 3, 2));
	cr_expect_eq(stats(ctxs[2]).topics, 0);
	cr_expect_gt(stats(ctxs[2]).rx_not_allowed, 0);
	msga_pub_destroy(pub);
	for (int i = 0; i < 3; i++)
		msga_ctx_close(ctxs[i]);
}

/* A program asleep on msga_ctx_fd() wakes for an advert. */
Test(resolver, event_mode_wakes_for_adverts, .timeout = 120)
{
	char g[64];
	struct msga_resolver_attr pa = { .size = sizeof(pa),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct msga_resolver_attr ba = { .size = sizeof(ba) };
	struct msga_ctx *pctx, *bctx;
	struct dp_rec ev = { 0 };
	struct msga_pub *pub;
	uint64_t end;
	int fd, wakes = 0;

	pa.group = ba.group = group(g, sizeof(g), 7);
	bctx = open_res(&ba, NULL);
	fd = msga_ctx_fd(bctx);
	cr_assert_geq(fd, 0);
	cr_assert_eq(msga_resolver_browse(bctx, "md.*"), 0);
	pctx = open_res(&pa, NULL);
	pub = topics_on(pctx, dp_uri(0), &ev, 0);
	end = dp_now_ms() + devtest_scale_ms(WAIT_MS);
	while (stats(bctx).topics < 2 && dp_now_ms() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		msga_ctx_poll(pctx, 16);
		if (poll(&p, 1, 5) > 0) {
			wakes++;
			while (msga_ctx_poll(bctx, 16) > 0)
				;
			msga_ctx_poll(bctx, 16);
		}
	}
	cr_expect_eq(stats(bctx).topics, 2);
	cr_expect_gt(wakes, 0);
	msga_pub_destroy(pub);
	msga_ctx_close(bctx);
	msga_ctx_close(pctx);
}

/*
 * Subscribing by name, a flood of forged adverts cannot open unbounded
 * connections: 65 publishers (distinct origins, rdma:// at ports where
 * nobody listens) make 64 connections and one refusal (-ENOSPC); a
 * publisher that wants keys is refused (-EACCES) by a context without
 * any. Each refusal is a MSGA_EVENT_PUBLISHER_FOUND with that status,
 * and counted (msga_sub_stats.byname_refused).
 */
struct found_log {
	int ok, enospc, eacces, other;
};

static void count_found(const struct msga_event *ev, void *user)
{
	struct found_log *f = user;

	if (ev->type != MSGA_EVENT_PUBLISHER_FOUND)
		return;
	if (!ev->status)
		f->ok++;
	else if (ev->status == -ENOSPC)
		f->enospc++;
	else if (ev->status == -EACCES && ev->origin == 1000)
		f->eacces++;
	else
		f->other++;
}

static void ignore_msg(const struct msga_msg *m, void *user)
{
	(void)m;
	(void)user;
}

Test(resolver, byname_flood_is_bounded_keyed_refused, .timeout = 180)
{
	char g[64];
	struct msga_resolver_attr ba = { .size = sizeof(ba) };
	struct found_log f = { 0 };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "flood.*",
				    .on_msg = ignore_msg,
				    .on_event = count_found, .user = &f,
				    .flags = MSGA_SUB_NO_RECONNECT };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga__trw_advert a = { .kind = MSGA__TRW_RC };
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	uint64_t end;

	ba.group = group(g, sizeof(g), 9);
	ctx = open_res(&ba, NULL);
	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	cr_assert_eq(msga_sub_connect(sub, "topic://", NULL), 0);
	/* a keyed publisher first: refused before the table fills */
	a.flags = MSGA__TRW_F_KEYS;
	a.origin = 1000;
	a.port = 9;
	snprintf(a.topic, sizeof(a.topic), "flood.keyed");
	forge_advert(g, MSGA__TRW_ADVERT, a);
	a.flags = 0;
	for (unsigned i = 0; i <= MSGA_SUB_BYNAME_MAX; i++) {
		a.origin = 1 + i;
		a.port = (uint16_t)(20000 + i);
		snprintf(a.topic, sizeof(a.topic), "flood.%u", i);
		forge_advert(g, MSGA__TRW_ADVERT, a);
		poll_ms(&ctx, 1, 2);
	}
	end = dp_now_ms() + devtest_scale_ms(WAIT_MS);
	while (f.ok + f.enospc + f.eacces + f.other < 66 &&
	       dp_now_ms() < end)
		poll_ms(&ctx, 1, 5);
	cr_expect_eq(f.eacces, 1, "the keyed publisher refused: %d",
		     f.eacces);
	cr_expect_eq(f.ok, (int)MSGA_SUB_BYNAME_MAX);
	cr_expect_eq(f.enospc, 1);
	cr_expect_eq(f.other, 0);
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_expect_eq(st.byname_refused, 2);
	cr_expect_leq(st.byname_conns, MSGA_SUB_BYNAME_MAX);
	msga_sub_destroy(sub);
	msga_ctx_close(ctx);
}

/*
 * msga_stat --topics --json lists what a publisher advertises: one line
 * per topic of the pattern, with its uri, then the counters.
 */
Test(resolver, msga_stat_lists_the_topics, .timeout = 180)
{
	char g[64], cmd[512], out[8192], want[160];
	struct msga_resolver_attr pa = { .size = sizeof(pa),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct dp_rec ev = { 0 };
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	size_t n = 0;
	FILE *f;
	int fd;

	pa.group = group(g, sizeof(g), 9);
	ctx = open_res(&pa, NULL);
	pub = topics_on(ctx, dp_uri(0), &ev, 0);
	snprintf(cmd, sizeof(cmd), "%s --topics -g %s -d %s -t 'md.*' -D %d "
		 "--json", MSGA_STAT_PATH, g, devtest_env()->dev,
		 devtest_wait_s(3));
	f = popen(cmd, "r");
	cr_assert_not_null(f);
	fd = fileno(f);
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	for (;;) {
		ssize_t k;

		msga_ctx_poll(ctx, 16);
		k = read(fd, out + n, sizeof(out) - 1 - n);
		if (k == 0)
			break;
		if (k > 0)
			n += (size_t)k;
		else
			usleep(500);
	}
	out[n] = '\0';
	cr_expect_eq(pclose(f), 0, "%s", out);
	snprintf(want, sizeof(want), "{\"topic\":\"md.eq.A\",");
	cr_expect_not_null(strstr(out, want), "%s", out);
	snprintf(want, sizeof(want), "\"transport\":\"rdma\",\"uri\":"
		 "\"rdma://%s:%d\"", devtest_env()->addr, msga_pub_port(pub));
	cr_expect_not_null(strstr(out, want), "%s", out);
	cr_expect_not_null(strstr(out, "\"md.eq.B\""), "%s", out);
	cr_expect_null(strstr(out, "ref.x"), "not matched: %s", out);
	cr_expect_not_null(strstr(out, "{\"topics\":2,\"publishers\":1,"),
			   "%s", out);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
}

Test(resolver, documented_errors, .timeout = 60)
{
	struct msga_resolver_attr ra = { .size = sizeof(ra) };
	struct msga_ctx_attr a = { .size = sizeof(a), .resolver = &ra };
	struct msga_resolver_stats st = { .size = sizeof(st) };
	struct msga_topic_info ti = { .size = sizeof(ti) };
	struct msga_ctx *ctx = NULL;
	char g[64], pat[16];

	a.dev_name = devtest_env()->dev;
	/* msga_ctx_open: every bad setting is -EINVAL */
	ra.group = "1.2.3.4:5";
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "not a group");
	ra.group = "239.1.1.1";
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "no port");
	ra.group = "239.1.1.1:0";
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "port 0");
	ra.group = NULL;
	ra.flags = 1u << 7;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "unknown flag");
	ra.flags = 0;
	ra.allow = "198.18.0.1,";
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "allow");
	ra.allow = "nohost";
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "allow");
	ra.allow = NULL;
	ra.fast_ms = 100;
	ra.fast_max_ms = 50;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "fast > max");
	ra.fast_ms = ra.fast_max_ms = 0;
	ra.sustain_ms = MSGA_RESOLVER_PERIOD_MAX_MS + 1;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "sustain");
	ra.sustain_ms = 0;
	ra.bytes_per_s = MSGA_RESOLVER_RATE_MIN - 1;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "rate");
	ra.bytes_per_s = 0;
	ra.ttl = 256;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "ttl");
	ra.ttl = 0;
	ra.size = 8;
	cr_expect_eq(msga_ctx_open(&a, &ctx), -EINVAL, "size");
	ra.size = sizeof(ra);
	cr_expect_null(ctx);

	ra.group = group(g, sizeof(g), 8);
	cr_assert_eq(msga_ctx_open(&a, &ctx), 0, "%s", msga_open_error());
	/* nothing used yet: all 0, no topic */
	cr_expect_eq(msga_resolver_stats(ctx, &st), 0);
	cr_expect_eq(st.topics + st.tx_dgrams + st.topic_slots, 0);
	cr_expect_eq(msga_resolver_topic(ctx, 0, &ti), -ENOENT);
	cr_expect_eq(msga_resolver_stats(NULL, &st), -EINVAL);
	cr_expect_eq(msga_resolver_stats(ctx, NULL), -EINVAL);
	st.size = 8;
	cr_expect_eq(msga_resolver_stats(ctx, &st), -EINVAL);
	cr_expect_eq(msga_resolver_browse(NULL, "a"), -EINVAL);
	cr_expect_eq(msga_resolver_browse(ctx, NULL), -EINVAL);
	cr_expect_eq(msga_resolver_browse(ctx, "a*b"), -EINVAL);
	cr_expect_eq(msga_resolver_browse(ctx, ""), -EINVAL);
	for (unsigned i = 0; i < MSGA_RESOLVER_BROWSE_MAX; i++) {
		snprintf(pat, sizeof(pat), "p%u.*", i);
		cr_expect_eq(msga_resolver_browse(ctx, pat), 0);
	}
	cr_expect_eq(msga_resolver_browse(ctx, "p0.*"), 0, "again: no-op");
	cr_expect_eq(msga_resolver_browse(ctx, "one.more"), -ENOSPC);
	cr_expect_eq(msga_resolver_topic(NULL, 0, &ti), -EINVAL);
	cr_expect_eq(msga_resolver_topic(ctx, 0, NULL), -EINVAL);
	ti.size = 8;
	cr_expect_eq(msga_resolver_topic(ctx, 0, &ti), -EINVAL);
	ti.size = sizeof(ti);
	cr_expect_eq(msga_resolver_topic(ctx, 0, &ti), -ENOENT);
	cr_expect_eq(msga_resolver_topic(ctx, UINT32_MAX, &ti), -ENOENT);
	msga_ctx_close(ctx);
}

/* A socket that reads the resolver group g ("A.B.C.D:PORT") raw. */
static int raw_listener(const char *g)
{
	unsigned int a, b, c, d, port;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	struct ip_mreq mr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0), one = 1;

	cr_assert_eq(sscanf(g, "%u.%u.%u.%u:%u", &a, &b, &c, &d, &port), 5);
	cr_assert_geq(fd, 0);
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
				sizeof(one)), 0);
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(a << 24 | b << 16 | c << 8 | d);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0,
		     "bind: %s", strerror(errno));
	mr.imr_multiaddr = sin.sin_addr;
	cr_assert_eq(inet_pton(AF_INET, devtest_env()->addr, &mr.imr_interface),
		     1);
	cr_assert_eq(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mr,
				sizeof(mr)), 0, "join: %s", strerror(errno));
	return fd;
}

/*
 * A reader before 0.12 refuses a whole datagram with a flag it does not
 * know, so an A/B publisher's line B adverts travel in datagrams of their
 * own (resolver_adv.c), never beside line A's or another publisher's:
 * read raw off the group, every advert datagram is all line B or none.
 */
Test(resolver, line_b_adverts_travel_alone, .timeout = 120)
{
	char g[64], ga[48], gb[48], buf[2048];
	struct msga_resolver_attr ra = { .size = sizeof(ra),
					 .flags = MSGA_RESOLVER_ADVERTISE };
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = ga, .uri_b = gb };
	struct msga_pub *ab = NULL, *plain;
	struct msga_ctx *ctx;
	struct dp_rec ev = { 0 };
	unsigned int with_a = 0, with_b = 0, mixed = 0;
	uint64_t end;
	uint32_t id;
	int fd;

	snprintf(ga, sizeof(ga), "mcast://239.255.152.%u", devtest_salt());
	snprintf(gb, sizeof(gb), "mcast://239.255.153.%u", devtest_salt());
	ra.group = group(g, sizeof(g), 10);
	ctx = open_res(&ra, NULL);
	if (dp_is_iwarp()) {
		cr_expect(dp_iwarp_refuses(ga));
		msga_ctx_close(ctx);
		return;
	}
	fd = raw_listener(g);
	cr_assert_eq(msga_pub_create(ctx, &pa, &ab), 0, "%s",
		     msga_ctx_last_error(ctx));
	plain = topics_on(ctx, dp_ud_uri(0), &ev, 0);
	for (int i = 0; i < 8; i++) {
		char name[16];

		snprintf(name, sizeof(name), "ab.%d", i);
		cr_assert_eq(msga_pub_topic(ab, name, &id), 0);
	}
	/* the fast phase sends each topic's advert several times */
	for (end = dp_now_ms() + 3000; dp_now_ms() < end;) {
		struct msga__trw_dec d;
		struct msga__trw_advert rec;
		unsigned int a = 0, b = 0;
		ssize_t n;

		msga_ctx_poll(ctx, 64);
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0 || msga__trw_open(buf, (uint32_t)n, &d) ||
		    d.type != MSGA__TRW_ADVERT)
			continue;
		while (msga__trw_next_advert(&d, &rec))
			(rec.flags & MSGA__TRW_F_LINE_B) ? b++ : a++;
		with_a += a && !b;
		with_b += b && !a;
		mixed += a && b;
	}
	cr_expect_gt(with_a, 0, "no advert datagram of line A heard");
	cr_expect_gt(with_b, 0, "no advert datagram of line B heard");
	cr_expect_eq(mixed, 0, "%u datagrams mixed line B with others",
		     mixed);
	close(fd);
	msga_pub_destroy(ab);
	msga_pub_destroy(plain);
	msga_ctx_close(ctx);
}
