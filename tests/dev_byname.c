/* SPDX-License-Identifier: MIT */
/*
 * Device tests of subscriptions by name (issue 37; topic://,
 * msga_sub_connect(3)): a subscriber finds the publishers of its pattern
 * through the resolver group and connects to each with the transport it
 * advertises (two publishers, on rdma:// and, on RoCE, mcast://; on
 * iWARP two rdma:// ones), gets both streams, and says which publisher
 * each connection is (MSGA_EVENT_PUBLISHER_FOUND); a publisher made after
 * the subscriber is found; one that restarts on a new port is followed
 * (GONE for the old one, FOUND for the new, in that order, and the
 * messages of the new one); the calls' documented errors; (0.12) an A/B
 * multicast publisher (uri_b) found by name: with MSGA_SUB_AB_LINES both
 * lines joined and arbitrated, each number once while line A loses
 * datagrams and then is gone; without it line A alone.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "pubsub.h"

#define WAIT_MS 20000
#define NEV 32

/* The events of a subscriber by name, in order, and its messages. */
struct log {
	struct dp_rec rec;
	int n;
	struct {
		uint32_t type, conn_id;
		int status;
		uint64_t origin;
		char peer[80];
	} ev[NEV];
	int found, gone;
};

static void on_event(const struct msga_event *ev, void *user)
{
	struct log *l = user;

	if (l->n < NEV) {
		l->ev[l->n].type = ev->type;
		l->ev[l->n].conn_id = ev->conn_id;
		l->ev[l->n].status = ev->status;
		l->ev[l->n].origin = ev->origin;
		snprintf(l->ev[l->n].peer, sizeof(l->ev[l->n].peer), "%s",
			 ev->peer ? ev->peer : "");
		l->n++;
	}
	l->found += ev->type == MSGA_EVENT_PUBLISHER_FOUND && !ev->status;
	l->gone += ev->type == MSGA_EVENT_PUBLISHER_GONE;
	dp_on_event(ev, &l->rec);
}

static void on_msg(const struct msga_msg *m, void *user)
{
	dp_on_msg(m, &((struct log *)user)->rec);
}

static const char *group(char *buf, size_t n, unsigned salt)
{
	snprintf(buf, n, "239.255.%u.%u:%u", 120 + salt,
		 devtest_salt(), 15100 + salt);
	return buf;
}

static struct msga_ctx *open_res(const char *grp, uint32_t flags)
{
	struct msga_resolver_attr ra = { .size = sizeof(ra), .flags = flags,
					 .group = grp };
	struct msga_ctx_attr a = { .size = sizeof(a) };
	struct msga_ctx *ctx = NULL;
	int ret;

	a.dev_name = devtest_env()->dev;
	a.resolver = &ra;
	ret = msga_ctx_open(&a, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open = %d: %s", ret, msga_open_error());
	return ctx;
}

static struct msga_sub *by_name_flags(struct msga_ctx *ctx,
				      const char *pattern, uint32_t flags,
				      struct log *l, uint32_t *id)
{
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = pattern,
				    .flags = flags, .on_msg = on_msg,
				    .on_event = on_event, .user = l };
	struct msga_sub *sub;

	cr_assert_eq(msga_sub_create(ctx, &sa, &sub), 0);
	cr_assert_eq(msga_sub_connect(sub, "topic://", id), 0, "%s",
		     msga_ctx_last_error(ctx));
	return sub;
}

static struct msga_sub *by_name(struct msga_ctx *ctx, const char *pattern,
				struct log *l, uint32_t *id)
{
	return by_name_flags(ctx, pattern, 0, l, id);
}

/* A publisher of one topic: its id in *t. */
static struct msga_pub *pub_of(struct msga_ctx *ctx, const char *uri,
			       const char *topic, uint32_t *t,
			       struct dp_rec *ev)
{
	struct msga_pub *pub = dp_pub_at(ctx, uri, 0, ev);

	cr_assert_eq(msga_pub_topic(pub, topic, t), 0, "%s",
		     msga_ctx_last_error(ctx));
	return pub;
}

/* Poll until *v >= want (WAIT_MS at most): 1 if reached. */
static int until(struct msga_ctx **c, int n, const volatile int *v, int want)
{
	return dp_poll_until(c, n, v, want, (int)devtest_scale_ms(WAIT_MS));
}

/*
 * Send count messages on topic t of pub, polling everyone, until the
 * subscriber's log has total more. An rdma:// publisher first counts its
 * subscriber (what is committed before it subscribed is not its).
 */
static void stream(struct msga_pub *pub, uint32_t t, uint64_t from,
		   uint64_t count, struct msga_ctx **c, int n, struct log *l)
{
	uint64_t want = l->rec.total + count;
	uint64_t end = dp_now_ms() + devtest_scale_ms(WAIT_MS);

	while (msga_pub_subscribers(pub) == 0 && dp_now_ms() < end)
		for (int i = 0; i < n; i++)
			msga_ctx_poll(c[i], 16);

	for (uint64_t s = from; s < from + count; s++)
		dp_send(pub, t, s, 64, c, n);
	while (l->rec.total < want && dp_now_ms() < end)
		for (int i = 0; i < n; i++)
			msga_ctx_poll(c[i], 16);
	cr_expect_eq(l->rec.total, want, "got %lu of %lu",
		     (unsigned long)l->rec.total, (unsigned long)want);
}

Test(byname, finds_two_publishers_on_their_transports, .timeout = 240)
{
	char g[64];
	struct msga_ctx *c[2];
	struct dp_rec pev = { 0 };
	struct log l = { 0 };
	struct msga_pub *p1, *p2;
	const char *uri2 = dp_is_iwarp() ? dp_uri(0) : "mcast://239.255.29.1";
	uint32_t id, t1, t2;

	c[0] = open_res(group(g, sizeof(g), 1), MSGA_RESOLVER_ADVERTISE);
	c[1] = open_res(g, 0);
	p1 = pub_of(c[0], dp_uri(0), "md.eq.A", &t1, &pev);
	p2 = pub_of(c[0], uri2, "md.eq.B", &t2, &pev);
	by_name(c[1], "md.eq.*", &l, &id);
	cr_assert(until(c, 2, &l.found, 2), "found %d", l.found);
	cr_assert(until(c, 2, &l.rec.connected, dp_is_iwarp() ? 2 : 1),
		  "connected %d", l.rec.connected);
	cr_expect_neq(l.ev[0].origin, l.ev[1].origin);
	cr_expect_neq(l.ev[0].conn_id, id);
	if (!dp_is_iwarp()) /* the multicast membership joins: let it */
		usleep(200000);
	stream(p1, t1, 1, 20, c, 2, &l);
	stream(p2, t2, 1, 20, c, 2, &l);
	cr_expect_eq(l.rec.bad, 0, "%s", l.rec.first_bad);
	msga_pub_destroy(p1);
	msga_pub_destroy(p2);
	msga_ctx_close(c[1]);
	msga_ctx_close(c[0]);
}

/* A publisher made after the subscriber; then restarted on a new port. */
Test(byname, a_late_publisher_is_found_and_a_restart_followed,
     .timeout = 240)
{
	char g[64], first[80];
	struct msga_ctx *c[2];
	struct dp_rec pev = { 0 };
	struct log l = { 0 };
	struct msga_pub *pub;
	uint32_t id, t;
	int n0;

	c[0] = open_res(group(g, sizeof(g), 2), MSGA_RESOLVER_ADVERTISE);
	c[1] = open_res(g, 0);
	by_name(c[1], "md.*", &l, &id);
	dp_poll_until(c, 2, &l.found, 1, 300);
	cr_assert_eq(l.found, 0, "nothing published yet");
	pub = pub_of(c[0], dp_uri(0), "md.late", &t, &pev);
	cr_assert(until(c, 2, &l.rec.connected, 1));
	cr_assert_eq(l.ev[0].type, MSGA_EVENT_PUBLISHER_FOUND);
	snprintf(first, sizeof(first), "%s", l.ev[0].peer);
	stream(pub, t, 1, 10, c, 2, &l);

	/* restart: destroy (withdrawn at once), a new one on a new port */
	n0 = l.n;
	msga_pub_destroy(pub);
	cr_assert(until(c, 2, &l.gone, 1), "no PUBLISHER_GONE");
	pub = pub_of(c[0], dp_uri(0), "md.late", &t, &pev);
	cr_assert(until(c, 2, &l.found, 2));
	cr_assert(until(c, 2, &l.rec.connected, 2));
	stream(pub, t, 1, 10, c, 2, &l);
	cr_expect_eq(l.rec.bad, 0, "%s", l.rec.first_bad);
	/* the events in order: GONE (old) before FOUND (new) */
	{
		int gone_at = -1, found_at = -1;

		for (int i = n0; i < l.n; i++) {
			if (l.ev[i].type == MSGA_EVENT_PUBLISHER_GONE &&
			    gone_at < 0)
				gone_at = i;
			if (l.ev[i].type == MSGA_EVENT_PUBLISHER_FOUND &&
			    found_at < 0)
				found_at = i;
		}
		cr_expect(gone_at >= 0 && found_at > gone_at, "gone %d found %d",
			  gone_at, found_at);
		cr_expect_str_eq(l.ev[gone_at].peer, first);
		cr_expect_str_neq(l.ev[found_at].peer, first, "a new port");
		cr_expect_neq(l.ev[found_at].origin, l.ev[gone_at].origin);
	}
	msga_pub_destroy(pub);
	msga_ctx_close(c[1]);
	msga_ctx_close(c[0]);
}

Test(byname, documented_errors_and_disconnect, .timeout = 240)
{
	char g[64];
	struct msga_ctx *c[2];
	struct dp_rec pev = { 0 };
	struct log l = { 0 };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_sub *sub;
	struct msga_pub *pub;
	uint32_t id, id2, t;

	c[0] = open_res(group(g, sizeof(g), 3), MSGA_RESOLVER_ADVERTISE);
	c[1] = open_res(g, 0);
	sub = by_name(c[1], "md.*", &l, &id);
	cr_expect_eq(msga_sub_connect(sub, "topic://", &id2), -EALREADY);
	{
		struct msga_sub *s2 = dp_sub(c[1], "md.*", &pev);

		cr_expect_eq(msga_sub_connect(s2, "topic://md.*", &id2),
			     -EINVAL, "the pattern is the subscriber's");
		cr_expect_eq(msga_sub_connect(s2, "topic:/", &id2), -EINVAL);
		msga_sub_destroy(s2);
	}
	pub = pub_of(c[0], dp_uri(0), "md.x", &t, &pev);
	cr_assert(until(c, 2, &l.rec.connected, 1));
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_expect_eq(st.byname_conns, 1);
	cr_expect_eq(st.byname_refused, 0);
	/* disconnecting the subscription by name ends what it made */
	cr_expect_eq(msga_sub_disconnect(sub, id), 0);
	cr_expect_eq(msga_sub_disconnect(sub, id), -ENOENT);
	cr_expect_eq(msga_pub_subscribers(pub) >= 0, 1);
	{
		uint64_t end = dp_now_ms() + devtest_scale_ms(WAIT_MS);

		while (msga_pub_subscribers(pub) > 0 && dp_now_ms() < end) {
			msga_ctx_poll(c[0], 16);
			msga_ctx_poll(c[1], 16);
		}
		cr_expect_eq(msga_pub_subscribers(pub), 0);
	}
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_expect_eq(st.byname_conns, 0);
	/* and it can subscribe by name again */
	cr_expect_eq(msga_sub_connect(sub, "topic://", &id2), 0);
	cr_assert(until(c, 2, &l.rec.connected, 2));
	msga_pub_destroy(pub);
	msga_ctx_close(c[1]);
	msga_ctx_close(c[0]);
}


/* A subscriber by name's last values (0.12): what it got, in order. */
struct lv_log {
	uint64_t seq[16];
	uint32_t flags[16];
	int n;
};

static void lv_on_msg(const struct msga_msg *m, void *user)
{
	struct lv_log *l = user;

	if (l->n < 16) {
		l->seq[l->n] = m->seq;
		l->flags[l->n] = m->flags;
	}
	l->n++;
}

/*
 * MSGA_SUB_LAST_VALUE passes through topic:// to the rdma:// connection
 * it makes: a publisher that kept md.lv's last message (seq 5) sends it
 * first, flagged, then 6.. live, with nothing before or between.
 */
Test(byname, last_value_by_name, .timeout = 240)
{
	char g[64];
	struct msga_ctx *c[2];
	struct dp_rec pev = { 0 };
	struct lv_log l = { 0 };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "md.*",
				    .flags = MSGA_SUB_LAST_VALUE,
				    .on_msg = lv_on_msg, .user = &l };
	struct msga_pub *pub;
	struct msga_sub *sub;
	volatile int *n = &l.n;
	uint32_t t;

	c[0] = open_res(group(g, sizeof(g), 4), MSGA_RESOLVER_ADVERTISE);
	c[1] = open_res(g, 0);
	pub = dp_pub_at(c[0], dp_uri(0), MSGA_PUB_LAST_VALUE, &pev);
	cr_assert_eq(msga_pub_topic(pub, "md.lv", &t), 0);
	for (uint64_t s = 1; s <= 5; s++)
		dp_send(pub, t, s, 64, c, 2);
	cr_assert_eq(msga_sub_create(c[1], &sa, &sub), 0);
	cr_assert_eq(msga_sub_connect(sub, "topic://", NULL), 0, "%s",
		     msga_ctx_last_error(c[1]));
	cr_assert(until(c, 2, n, 1), "no last value");
	for (uint64_t s = 6; s <= 8; s++)
		dp_send(pub, t, s, 64, c, 2);
	cr_assert(until(c, 2, n, 4));
	dp_poll_until(c, 2, n, 5, 100);
	cr_expect_eq(l.n, 4);
	cr_expect_eq(l.seq[0], 5);
	cr_expect_eq(l.flags[0], MSGA_MSG_LAST_VALUE);
	for (int i = 1; i < 4; i++) {
		cr_expect_eq(l.seq[i], (uint64_t)(5 + i));
		cr_expect_eq(l.flags[i], 0);
	}
	msga_pub_destroy(pub);
	msga_ctx_close(c[1]);
	msga_ctx_close(c[0]);
}

/* ------------------------------------------------------ A/B by name */

/* The conn_id of the FOUND event (status 0) whose peer is uri, or -1. */
static int found_at(const struct log *l, const char *uri)
{
	for (int i = 0; i < l->n; i++)
		if (l->ev[i].type == MSGA_EVENT_PUBLISHER_FOUND &&
		    !l->ev[i].status && !strcmp(l->ev[i].peer, uri))
			return (int)l->ev[i].conn_id;
	return -1;
}

static struct msga_line_stats line_of(struct msga_sub *sub, int conn_id)
{
	struct msga_line_stats ls = { .size = sizeof(ls) };

	cr_assert_eq(msga_sub_line_stats(sub, (uint32_t)conn_id, &ls), 0);
	return ls;
}

/*
 * What msga_resolver_topic() lists of md.ab: bit 0 for line A's slot
 * (uri ga, no MSGA_TOPIC_LINE_B), bit 1 for line B's (uri gb, flagged);
 * bit 2 for any other slot of it.
 */
static int lines_listed(struct msga_ctx *ctx, const char *ga, const char *gb)
{
	struct msga_resolver_stats rs = { .size = sizeof(rs) };
	int seen = 0;

	cr_assert_eq(msga_resolver_stats(ctx, &rs), 0);
	for (uint32_t i = 0; i < rs.topic_slots; i++) {
		struct msga_topic_info ti = { .size = sizeof(ti) };

		if (msga_resolver_topic(ctx, i, &ti) || strcmp(ti.topic, "md.ab"))
			continue;
		if (!(ti.flags & MSGA_TOPIC_LINE_B) && !strcmp(ti.uri, ga))
			seen |= 1;
		else if ((ti.flags & MSGA_TOPIC_LINE_B) && !strcmp(ti.uri, gb))
			seen |= 2;
		else
			seen |= 4;
	}
	return seen;
}

/* Send from..to on t, polling c, until ab has them all (each checked). */
static void ab_send(struct msga_pub *pub, uint32_t t, uint64_t from,
		    uint64_t to, struct msga_ctx **c, struct log *ab)
{
	for (uint64_t s = from; s <= to; s++) {
		dp_send(pub, t, s, 64, c, 2);
		cr_assert(dp_poll_until64(c, 2, &ab->rec.total, s,
					  (int)devtest_scale_ms(WAIT_MS)),
			  "seq %llu not delivered", (unsigned long long)s);
	}
}

/*
 * A multicast publisher on two lines (msga_pub_attr.uri_b) advertises
 * each topic's group on both (line B's record flagged LINE_B). Found by
 * name: a subscriber with MSGA_SUB_AB_LINES joins both groups and
 * arbitrates as one given both by address does: with every third
 * datagram of line A dropped (the publisher's fault hook, pubsub.h) it
 * gets each number once, in order, B filling in; with line A then
 * dropping everything (the line gone), B alone carries it on. A
 * subscriber without the flag joins line A only (one FOUND, A's group)
 * and so loses exactly what A lost. iWARP has no multicast: the
 * documented refusal.
 */
Test(byname, a_b_lines_by_name, .timeout = 240)
{
	char g[64], ga[48], gb[48];
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = ga, .uri_b = gb,
				    .on_event = dp_on_event };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_line_stats la, lb;
	struct msga_ctx *c[2];
	struct dp_rec pev = { 0 };
	static struct log ab, one;
	struct msga_sub *sab, *sone;
	struct msga_pub *pub = NULL;
	int ida, idb;
	uint32_t t;

	snprintf(ga, sizeof(ga), "mcast://239.255.150.%u", devtest_salt());
	snprintf(gb, sizeof(gb), "mcast://239.255.151.%u", devtest_salt());
	if (dp_iwarp_refuses(ga))
		return;
	memset(&ab, 0, sizeof(ab));
	memset(&one, 0, sizeof(one));
	c[0] = open_res(group(g, sizeof(g), 5), MSGA_RESOLVER_ADVERTISE);
	c[1] = open_res(g, 0);
	pa.user = &pev;
	cr_assert_eq(msga_pub_create(c[0], &pa, &pub), 0, "%s",
		     msga_ctx_last_error(c[0]));
	cr_assert_eq(msga_pub_topic(pub, "md.ab", &t), 0);
	cr_assert(until(c, 2, &pev.connected, 2),
		  "the publisher joined %d of its 2 lines", pev.connected);
	sab = by_name_flags(c[1], "md.*", MSGA_SUB_AB_LINES, &ab, NULL);
	sone = by_name(c[1], "md.*", &one, NULL);
	cr_assert(until(c, 2, &ab.rec.connected, 2), "A/B: %d lines joined",
		  ab.rec.connected);
	cr_assert(until(c, 2, &one.rec.connected, 1));
	dp_poll_until(c, 2, &one.found, 2, 500); /* (a B line would come) */
	ida = found_at(&ab, ga);
	idb = found_at(&ab, gb);
	cr_assert(ida >= 0 && idb >= 0 && ida != idb,
		  "A/B found line A as %d, line B as %d", ida, idb);
	cr_expect_eq(ab.found, 2);
	cr_expect_eq(one.found, 1, "without MSGA_SUB_AB_LINES: line A alone");
	cr_expect_geq(found_at(&one, ga), 0, "and it is line A");
	cr_expect_lt(found_at(&one, gb), 0);
	cr_expect_eq(lines_listed(c[1], ga, gb), 3, "msga_resolver_topic: "
		     "line A, and line B flagged MSGA_TOPIC_LINE_B");
	cr_assert_eq(msga_sub_stats(sab, &st), 0);
	cr_expect_eq(st.byname_conns, 2);
	cr_assert_eq(msga_sub_stats(sone, &st), 0);
	cr_expect_eq(st.byname_conns, 1);
	usleep(200000); /* (the memberships' joins settle) */

	/* every third datagram of line A lost: B fills in */
	pub->ud.fault_drop_every = 3;
	pub->ud.fault_drop_line = 0;
	ab_send(pub, t, 1, 150, c, &ab);
	dp_poll_until(c, 2, &one.found, 2, 300); /* (the last copies) */
	cr_expect_eq(pub->ud.fault_count, 150);
	cr_expect_eq(ab.rec.total, 150);
	cr_expect_eq(ab.rec.bad, 0, "%s", ab.rec.first_bad);
	la = line_of(sab, ida);
	lb = line_of(sab, idb);
	cr_expect_eq(la.first + lb.first, 150, "each number once");
	cr_expect_geq(lb.first, 50, "B brought what A lost");
	cr_expect_eq(one.rec.total, 100, "line A alone: a third lost");

	/* line A gone (every datagram dropped): B carries on alone */
	pub->ud.fault_drop_every = 1;
	ab_send(pub, t, 151, 200, c, &ab);
	dp_poll_until(c, 2, &one.found, 2, 300);
	cr_expect_eq(ab.rec.total, 200);
	cr_expect_eq(ab.rec.bad, 0, "%s", ab.rec.first_bad);
	la = line_of(sab, ida);
	lb = line_of(sab, idb);
	cr_expect_eq(la.first + lb.first, 200);
	cr_expect_geq(lb.first, 100);
	cr_expect_eq(one.rec.total, 100, "nothing of line A's arrived");
	msga_pub_destroy(pub);
	msga_ctx_close(c[1]);
	msga_ctx_close(c[0]);
}
