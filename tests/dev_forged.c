/* SPDX-License-Identifier: MIT */
/*
 * Forged datagrams on multicast and ud:// (issue 26, parts 4 and 5): a
 * raw UD queue pair in this process, on the device under test, sends
 * what anyone who knows the Q_Key could: numbers far ahead of a real
 * stream, a flood of new origins, a flood of SUBSCRIBEs. The real stream
 * must flow with zero loss; the forged ones are counted.
 *
 * RoCE (rxe) only: iWARP has no UD; there each test checks the refusal.
 * The ud:// test reaches into the publisher's private struct (pubsub.h,
 * mcast.h) for its subscriber count and its refusal counters.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "auth.h"
#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "mcast.h"
#include "pubsub.h"
#include "ud_wire.h"

#define G_FAR "239.255.10.30"
#define G_FLOOD "239.255.10.31"
#define G_FRAG "239.255.10.32"
#define TOPIC "md.f"
#define REAL 200

/* One subscriber's view: the real publisher's messages, in order. */
struct seen {
	uint64_t origin;        /* the real publisher's, from its first */
	uint64_t real, next, bad, forged;
	int connected, disconnected, gaps, stream_gone;
};

static void on_msg(const struct msga_msg *m, void *user)
{
	struct seen *s = user;

	if (!s->origin)
		s->origin = m->origin;
	if (m->origin != s->origin) {
		s->forged++; /* (a forged origin's message: on probation) */
		return;
	}
	if (m->seq != s->next || dp_check(m->data, m->len, 0, m->seq))
		s->bad++;
	s->next = m->seq + 1;
	s->real++;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct seen *s = user;

	if (ev->type == MSGA_EVENT_CONNECTED)
		s->connected++;
	else if (ev->type == MSGA_EVENT_DISCONNECTED && ev->topic)
		s->stream_gone++;
	else if (ev->type == MSGA_EVENT_DISCONNECTED)
		s->disconnected++;
	else if (ev->type == MSGA_EVENT_GAP)
		s->gaps++;
}

static struct msga_sub *sub_on(struct msga_ctx *ctx, uint32_t flags,
			       struct seen *s)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = "md.*", .on_msg = on_msg,
				   .on_event = on_event, .user = s };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	s->next = 1;
	return sub;
}

static struct msga_sub_stats stats_of(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

/* iWARP: no UD, no multicast, as documented: both sides refuse. */
static void refused(void)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = dp_ud_uri(0) };
	struct msga_pub *pub = NULL;
	struct seen s = { 0 };
	struct msga_sub *sub = sub_on(ctx, 0, &s);

	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EOPNOTSUPP);
	pa.uri = "mcast://" G_FAR;
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(sub, "mcast://" G_FAR, NULL),
		     -EOPNOTSUPP);
	cr_assert_eq(msga_sub_connect(sub, dp_ud_uri(18990), NULL),
		     -EOPNOTSUPP);
	msga_ctx_close(ctx);
}

/* ------------------------------------------------ a raw UD sender */

/* One datagram of h (name: h->topic_len bytes) and len payload bytes. */
static void send_dgram(struct raw_ud *u, struct msga__udw_hdr *h,
			 const char *name, uint32_t len)
{
	uint32_t n = msga__udw_put(u->buf, h, name);

	cr_assert_leq(n + len, sizeof(u->buf));
	if (len)
		dp_fill(u->buf + n, len, 0, h->seq);
	raw_ud_post(u, n + len, u->cm.ud.qkey);
}

/* A forged DATA of the real stream (origin, TOPIC) numbered seq. */
static void forge(struct raw_ud *u, uint64_t origin, uint64_t seq)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_DATA,
				   .flags = MSGA__UDW_FIRST | MSGA__UDW_LAST,
				   .topic_len = sizeof(TOPIC) - 1,
				   .msg_len = 64, .origin = origin,
				   .seq = seq, .hb_ms = 100 };

	send_dgram(u, &h, TOPIC, 64);
}

/* ------------------------------------------------ multicast */

struct rig {
	struct msga_ctx *ctx[2];
	struct msga_pub *pub;
	struct dp_rec pe;
	uint32_t t;
	uint64_t seq;          /* the real stream's last number */
};

/* Two contexts (publisher's, subscribers'), a publisher of TOPIC at uri. */
static void rig_up(struct rig *r, const char *uri)
{
	memset(r, 0, sizeof(*r));
	r->ctx[0] = devtest_open_ctx();
	r->ctx[1] = devtest_open_ctx();
	r->pub = dp_pub_at(r->ctx[0], uri, 0, &r->pe);
	if (!strncmp(uri, "mcast://", 8))
		cr_assert(dp_poll_until(r->ctx, 2, &r->pe.connected, 1,
					10000), "the publisher did not join");
	cr_assert_eq(msga_pub_topic(r->pub, TOPIC, &r->t), 0);
}

static void rig_down(struct rig *r)
{
	msga_ctx_close(r->ctx[0]);
	msga_ctx_close(r->ctx[1]);
}

static void join(struct msga_sub *sub, const char *uri, struct seen *s,
		 struct msga_ctx **ctx)
{
	cr_assert_geq(msga_sub_connect(sub, uri, NULL), 0);
	cr_assert(dp_poll_until(ctx, 2, &s->connected, 1, 10000),
		  "no membership");
}

/* n more real messages, each delivered to every seen before the next. */
static void real_send(struct rig *r, uint64_t n, struct seen **s, int ns)
{
	for (uint64_t i = 0; i < n; i++) {
		dp_send(r->pub, r->t, ++r->seq, 64, r->ctx, 2);
		for (int k = 0; k < ns; k++)
			cr_assert(dp_poll_until64(r->ctx, 2, &s[k]->real,
						  r->seq, 10000),
				  "subscriber %d: message %llu never came "
				  "(%llu real)", k,
				  (unsigned long long)r->seq,
				  (unsigned long long)s[k]->real);
	}
}

/* Poll until every sub's counter at offset off reaches want. */
static void until_stat(struct rig *r, struct msga_sub **sub, int n,
		       size_t off, uint64_t want)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;

	for (int k = 0; k < n; k++) {
		for (;;) {
			struct msga_sub_stats st = stats_of(sub[k]);
			uint64_t v;

			memcpy(&v, (char *)&st + off, sizeof(v));
			if (v >= want)
				break;
			cr_assert_lt(dp_now_ms(), end, "subscriber %d: "
				     "counter at %zu is %llu, not %llu", k,
				     off, (unsigned long long)v,
				     (unsigned long long)want);
			msga_ctx_poll(r->ctx[0], 64);
			msga_ctx_poll(r->ctx[1], 64);
		}
	}
}

/*
 * Numbers far ahead of a real stream, forged with its origin and topic,
 * each on its own (none corroborates another): held and dropped, counted
 * in far_ahead; the real stream goes on with zero loss and no gap, and
 * a MSGA_SUB_STOP_ON_GAP membership stays. One number just ahead of the
 * stream also goes to the stop-on-gap membership only as a candidate.
 */
Test(forged, far_ahead_numbers_neither_blackhole_nor_stop_a_stream,
     .timeout = 300)
{
	static const uint64_t ahead[] = { 5000, 1000000, 1ull << 40,
					   (1ull << 62) + 7, 1ull << 63 };
	struct seen tol = { 0 }, stop = { 0 }, *all[2] = { &tol, &stop };
	struct msga_sub *sub[2];
	struct msga_sub_stats st;
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct raw_ud u;
	struct rig r;
	size_t n = sizeof(ahead) / sizeof(ahead[0]);

	if (dp_is_iwarp())
		return refused();
	rig_up(&r, "mcast://" G_FAR);
	sub[0] = sub_on(r.ctx[1], 0, &tol);
	sub[1] = sub_on(r.ctx[1], MSGA_SUB_STOP_ON_GAP, &stop);
	join(sub[0], "mcast://" G_FAR, &tol, r.ctx);
	join(sub[1], "mcast://" G_FAR, &stop, r.ctx);
	real_send(&r, REAL / 2, all, 2);
	raw_ud_join(&u, r.ctx[1], G_FAR);
	for (size_t i = 0; i < n; i++) {
		forge(&u, tol.origin, r.seq + ahead[i]);
		until_stat(&r, sub, 2,
			   offsetof(struct msga_sub_stats, far_ahead), i + 1);
		real_send(&r, 10, all, 2);
	}
	real_send(&r, REAL / 2, all, 2);
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(all[k]->real, r.seq, "zero loss");
		cr_assert_eq(all[k]->bad, 0, "in order, each once");
		cr_assert_eq(all[k]->disconnected, 0, "the membership stays");
		st = stats_of(sub[k]);
		cr_assert_eq(st.msgs, r.seq);
		cr_assert_eq(st.dups, 0);
		cr_assert_eq(msga_sub_stream_stats(sub[k], 0, &ss), 0);
		cr_assert_eq(ss.origin, tol.origin);
		cr_assert_eq(ss.verified, 1);
		cr_assert_eq(ss.last_seq, r.seq);
	}
	cr_assert_eq(stats_of(sub[0]).far_ahead, n);
	cr_assert_eq(stats_of(sub[1]).far_ahead, n);
	cr_assert_eq(tol.gaps + stop.gaps, 0);
	/*
	 * Stop-on-gap takes no gap at all on one datagram's word: a number
	 * just one ahead is held too, and the membership stays. (The
	 * tolerant one would take it, inside its window: gone first.)
	 */
	msga_sub_destroy(sub[0]);
	forge(&u, tol.origin, r.seq + 2);
	until_stat(&r, &sub[1], 1,
		   offsetof(struct msga_sub_stats, far_ahead), n + 1);
	real_send(&r, 20, &all[1], 1);
	cr_assert_eq(stop.real, r.seq, "zero loss");
	cr_assert_eq(stop.bad, 0);
	cr_assert_eq(stop.gaps, 0, "no gap on one forged word");
	cr_assert_eq(stop.disconnected, 0, "the membership stays");
	raw_ud_close(&u);
	rig_down(&r);
}

/*
 * 2000 forged origins on a group, each one datagram: on probation, they
 * evict only each other (at most MSGA__UD_PROBATION_MAX of them at once);
 * the real stream, verified, keeps its place and loses nothing.
 */
Test(forged, a_flood_of_origins_stays_on_probation, .timeout = 300)
{
	struct seen s = { 0 }, *all[1] = { &s };
	struct msga_sub *sub[1];
	struct msga_sub_stats st;
	struct msga_stream_stats ss = { .size = sizeof(ss) };
	struct raw_ud u;
	struct rig r;
	uint64_t sent = 0;

	if (dp_is_iwarp())
		return refused();
	rig_up(&r, "mcast://" G_FLOOD);
	sub[0] = sub_on(r.ctx[1], 0, &s);
	join(sub[0], "mcast://" G_FLOOD, &s, r.ctx);
	real_send(&r, 20, all, 1);
	cr_assert_eq(stats_of(sub[0]).probation, 0, "verified by now");
	raw_ud_join(&u, r.ctx[1], G_FLOOD);
	for (uint64_t o = 1; o <= 2000; o++) {
		forge(&u, 0xf0f0000000000000ull + o, 1);
		if (++sent % 50)
			continue;
		/* each forged origin is on probation or was evicted */
		if (sent > MSGA__UD_PROBATION_MAX)
			until_stat(&r, sub, 1,
				   offsetof(struct msga_sub_stats,
					    probation_evicted),
				   sent - MSGA__UD_PROBATION_MAX);
		real_send(&r, 1, all, 1);
	}
	real_send(&r, 20, all, 1);
	cr_log_info("forged messages delivered on probation: %llu",
		    (unsigned long long)s.forged);
	st = stats_of(sub[0]);
	cr_assert_eq(st.probation, MSGA__UD_PROBATION_MAX);
	cr_assert_eq(st.probation_evicted, 2000 - MSGA__UD_PROBATION_MAX);
	cr_assert_eq(st.evicted, 0, "no verified stream went");
	cr_assert_eq(st.overflow, 0);
	cr_assert_eq(s.real, r.seq, "zero loss");
	cr_assert_eq(s.bad, 0);
	cr_assert_eq(s.gaps, 0);
	cr_assert_eq(msga_sub_stream_stats(sub[0], 0, &ss), 0);
	cr_assert_eq(ss.origin, s.origin, "the real stream kept its index");
	cr_assert_eq(ss.verified, 1);
	cr_assert_eq(ss.msgs, r.seq);
	cr_assert_leq(st.streams, MSGA__UD_PROBATION_MAX + 1,
		      "indexes reused: the table stays small");
	raw_ud_close(&u);
	rig_down(&r);
}

/*
 * A forged first fragment of a 1 MiB message from each of 40 new origins
 * arrives before a verified stream's 64 KiB message (both wait in the
 * receive ring, the subscriber not polled, so the order is fixed): the
 * forged ones, on probation, reassemble in a budget of their own and
 * leave the verified stream's 16 MiB alone: its message arrives whole.
 */
Test(forged, forged_fragments_leave_the_verified_reassembly_alone,
     .timeout = 300)
{
	struct seen s = { 0 }, *all[1] = { &s };
	struct msga_sub *sub[1];
	struct msga_sub_stats st;
	struct raw_ud u;
	struct rig r;

	if (dp_is_iwarp())
		return refused();
	rig_up(&r, "mcast://" G_FRAG);
	sub[0] = sub_on(r.ctx[1], 0, &s);
	join(sub[0], "mcast://" G_FRAG, &s, r.ctx);
	real_send(&r, 20, all, 1);
	raw_ud_join(&u, r.ctx[0], G_FRAG);
	for (uint64_t o = 1; o <= 40; o++) {
		struct msga__udw_hdr h = {
			.type = MSGA__UDW_DATA, .flags = MSGA__UDW_FIRST,
			.topic_len = sizeof(TOPIC) - 1, .seq = 1,
			.msg_len = MSGA_MSG_MAX, .frag_size = 256,
			.origin = 0xf4a0000000000000ull + o,
		};

		send_dgram(&u, &h, TOPIC, 256);
	}
	dp_send(r.pub, r.t, ++r.seq, 65536, r.ctx, 1);
	cr_assert(dp_poll_until64(r.ctx, 2, &s.real, r.seq, 10000),
		  "the verified stream's large message never came");
	st = stats_of(sub[0]);
	cr_assert_eq(s.bad, 0);
	cr_assert_eq(st.msgs, r.seq, "(nothing forged was whole)");
	cr_assert_geq(st.reasm_drops, 40 - 2,
		      "the forged ones past the probation budget");
	raw_ud_close(&u);
	rig_down(&r);
}

/* ------------------------------------------------ ud:// */

static void raw_subscribe(struct raw_ud *u, uint64_t nonce, uint64_t cookie)
{
	struct msga__udw_hdr h = { .type = MSGA__UDW_SUBSCRIBE,
				   .topic_len = 4, .seq = nonce,
				   .origin = cookie };

	send_dgram(u, &h, "md.*", 0);
}

/* The publisher's next COOKIE for nonce, polling ctx meanwhile. */
static uint64_t raw_cookie(struct raw_ud *u, struct msga_ctx *ctx,
			   uint64_t nonce)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	struct msga__udw_hdr h;
	struct ibv_wc wc;

	for (;;) {
		cr_assert_lt(dp_now_ms(), end, "no COOKIE came");
		msga_ctx_poll(ctx, 64);
		if (ibv_poll_cq(u->cq, 1, &wc) < 1 ||
		    wc.wr_id >= RAW_UD_RX)
			continue;
		cr_assert_eq(wc.status, IBV_WC_SUCCESS);
		if (msga__udw_get(u->rx[wc.wr_id] + MSGA__UD_GRH,
				  wc.byte_len - MSGA__UD_GRH, &h) ||
		    h.type != MSGA__UDW_COOKIE || h.seq != nonce) {
			raw_ud_post_recv(u, (uint32_t)wc.wr_id);
			continue;
		}
		raw_ud_post_recv(u, (uint32_t)wc.wr_id);
		cr_assert_neq(h.origin, 0);
		return h.origin;
	}
}

static void poll_ms(struct msga_ctx **ctx, uint64_t ms)
{
	for (uint64_t end = dp_now_ms() + ms; dp_now_ms() < end;) {
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
}

/*
 * 1000 SUBSCRIBEs from a raw peer that never echoes a cookie, and 1000
 * that echo made-up ones: no subscriber is added, nothing is kept for
 * them (cookies are stateless). The raw peer that does echo its cookie
 * is added, once, however many nonces it tries; a real subscriber
 * still connects and gets every message.
 */
Test(forged, subscribes_without_the_cookie_add_no_destination,
     .timeout = 300)
{
	struct seen s = { 0 };
	struct msga_sub *sub;
	struct msga__udep *ep;
	struct raw_ud u;
	struct rig r;
	uint64_t cookie;

	if (dp_is_iwarp())
		return refused();
	rig_up(&r, dp_ud_uri(0));
	ep = r.pub->ud.ep;
	raw_ud_resolve(&u, r.ctx[0], (uint16_t)msga_pub_port(r.pub));
	for (uint64_t i = 1; i <= 1000; i++) {
		raw_subscribe(&u, i, 0);
		msga_ctx_poll(r.ctx[0], 64);
	}
	for (uint64_t i = 1; i <= 1000; i++) {
		raw_subscribe(&u, 5000 + i, 0x5eed000000000000ull + i);
		msga_ctx_poll(r.ctx[0], 64);
	}
	poll_ms(r.ctx, 200);
	cr_assert_eq(r.pub->ud.ndests, 0, "no destination on a SUBSCRIBE's word");
	cr_assert_eq(r.pe.connected, 0);
	cr_assert_gt(ep->cookies_sent, 0);
	cr_assert_gt(ep->cookies_bad, 0, "made-up cookies were refused");
	cr_assert_leq(ep->cookies_bad, 1000);
	/* echoing its own cookie, the raw peer is added: once */
	for (uint64_t i = 1; i <= 20; i++) {
		raw_subscribe(&u, 90000 + i, 0);
		cookie = raw_cookie(&u, r.ctx[0], 90000 + i);
		raw_subscribe(&u, 90000 + i, cookie);
		msga_ctx_poll(r.ctx[0], 64);
	}
	poll_ms(r.ctx, 100);
	cr_assert_eq(r.pub->ud.ndests, 1, "one QP, one destination");
	cr_assert_eq(r.pe.connected, 1);
	/* a real subscriber still gets in, and everything */
	sub = sub_on(r.ctx[1], 0, &s);
	cr_assert_geq(msga_sub_connect(sub, dp_ud_uri(msga_pub_port(r.pub)), NULL),
		      0);
	cr_assert(dp_poll_until(r.ctx, 2, &s.connected, 1, 15000),
		  "the real subscriber did not connect");
	cr_assert_eq(r.pub->ud.ndests, 2);
	for (uint64_t seq = 1; seq <= REAL; seq++) {
		dp_send(r.pub, r.t, seq, 64, r.ctx, 2);
		cr_assert(dp_poll_until64(r.ctx, 2, &s.real, seq, 10000),
			  "message %llu never came", (unsigned long long)seq);
	}
	cr_assert_eq(s.bad, 0);
	cr_assert_eq(stats_of(sub).msgs, REAL);
	raw_ud_close(&u);
	rig_down(&r);
}

/*
 * A ud:// subscriber takes nothing from an address other than its
 * publisher's: a raw peer's SUBACK, COOKIE and DATA sent to its queue
 * pair are counted (spoofed) and dropped, and do not keep a silent
 * publisher alive.
 */
Test(forged, a_ud_subscriber_takes_only_its_publishers_datagrams,
     .timeout = 300)
{
	struct msga__udw_hdr h = { .topic_len = 4 };
	struct seen s = { 0 };
	struct msga__udep *mep;
	struct msga_sub *sub;
	struct raw_ud u;
	struct rig r;
	uint64_t cookie;
	int id;

	if (dp_is_iwarp())
		return refused();
	rig_up(&r, dp_ud_uri(0));
	sub = sub_on(r.ctx[1], 0, &s);
	id = dp_connect_id(sub, dp_ud_uri(msga_pub_port(r.pub)));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(r.ctx, 2, &s.connected, 1, 15000));
	mep = msga__container_of(sub->ud.mships.next, struct msga__udep,
				 own_node);
	cr_assert_eq(mep->id, (uint32_t)id);
	cookie = mep->cookie;
	cr_assert_neq(cookie, 0, "it subscribed with the publisher's cookie");
	/* the raw peer aims at the subscriber's QP, through the
	 * publisher's SIDR for its address handle (same device) */
	raw_ud_resolve(&u, r.ctx[0], (uint16_t)msga_pub_port(r.pub));
	u.cm.ud.qp_num = mep->qp->qp_num;
	h.type = MSGA__UDW_SUBACK;
	h.seq = mep->nonce; /* even with the right nonce: wrong address */
	send_dgram(&u, &h, "md.*", 0);
	h.type = MSGA__UDW_COOKIE;
	h.origin = 77;
	send_dgram(&u, &h, "md.*", 0);
	h.type = MSGA__UDW_DATA;
	h.flags = MSGA__UDW_FIRST | MSGA__UDW_LAST;
	h.origin = 1;
	h.seq = 1;
	h.msg_len = 64;
	send_dgram(&u, &h, TOPIC, 64);
	for (uint64_t end = dp_now_ms() + 10000;
	     stats_of(sub).spoofed < 3;) {
		cr_assert_lt(dp_now_ms(), end, "spoofed: %llu",
			     (unsigned long long)stats_of(sub).spoofed);
		msga_ctx_poll(r.ctx[1], 64);
	}
	cr_assert_eq(stats_of(sub).spoofed, 3);
	cr_assert_eq(mep->cookie, cookie, "no COOKIE taken");
	cr_assert_eq(s.real + s.forged, 0, "no DATA taken");
	cr_assert_eq(s.disconnected, 0);
	raw_ud_close(&u);
	rig_down(&r);
}

/*
 * A ud:// connect between contexts with keys is a challenge-response
 * (lib/ud/dgram_auth.c): SUBSCRIBE, COOKIE and SUBACK carry MACs, and a
 * publisher answers no SUBSCRIBE without a valid one, even from a peer
 * that knows the Q_Key (it travels in clear: an on-path host learns it).
 * The raw peer here has the Q_Key but not the key: its SUBSCRIBEs are
 * dropped and counted, it gets no COOKIE and no stream; a subscriber
 * with the key connects and gets everything.
 */
Test(forged, a_keyed_ud_connect_needs_the_key, .timeout = 120)
{
	static const uint8_t key[MSGA_KEY_LEN] = "dev_forged ud connect key......";
	struct msga_ctx_attr ca = { .size = sizeof(ca), .key = key };
	struct msga_ctx *ctx[2];
	struct msga_pub *pub;
	struct msga_sub *sub;
	struct dp_rec pe = { 0 };
	struct seen s = { 0 };
	struct raw_ud u;
	uint32_t t;

	if (dp_is_iwarp())
		return refused();
	ca.dev_name = devtest_env()->dev;
	cr_assert_eq(msga_ctx_open(&ca, &ctx[0]), 0, "%s", msga_open_error());
	cr_assert_eq(msga_ctx_open(&ca, &ctx[1]), 0, "%s", msga_open_error());
	pub = dp_pub_at(ctx[0], dp_ud_uri(0), 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, TOPIC, &t), 0);
	raw_ud_resolve(&u, ctx[0], (uint16_t)msga_pub_port(pub));
	u.cm.ud.qkey = msga__auth_qkey(key); /* the Q_Key, not the key */
	for (uint64_t i = 1; i <= 100; i++) {
		raw_subscribe(&u, i, 0);
		msga_ctx_poll(ctx[0], 64);
	}
	poll_ms(ctx, 200);
	cr_assert_geq(pub->ud.forged, 100, "unsigned SUBSCRIBEs counted: %llu",
		      (unsigned long long)pub->ud.forged);
	cr_assert_eq(pub->ud.ep->cookies_sent, 0, "a COOKIE went to no proof");
	cr_assert_eq(pub->ud.ndests, 0);
	sub = sub_on(ctx[1], 0, &s);
	cr_assert_geq(msga_sub_connect(sub, dp_ud_uri(msga_pub_port(pub)), NULL),
		      0);
	cr_assert(dp_poll_until(ctx, 2, &s.connected, 1, 15000),
		  "the keyed subscriber did not connect");
	for (uint64_t seq = 1; seq <= 50; seq++) {
		dp_send(pub, t, seq, 64, ctx, 2);
		cr_assert(dp_poll_until64(ctx, 2, &s.real, seq, 10000),
			  "message %llu never came", (unsigned long long)seq);
	}
	cr_assert_eq(s.bad, 0);
	raw_ud_close(&u);
	msga_ctx_close(ctx[1]);
	msga_ctx_close(ctx[0]);
}
