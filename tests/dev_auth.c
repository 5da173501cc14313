/* SPDX-License-Identifier: MIT */
/*
 * Device tests of access control on RC connections (issue 26,
 * msgaccel(7) SECURITY): a subscriber proving the publisher's key gets
 * its stream; one with no key, a wrong key, a replayed handshake, or a
 * pattern the publisher does not allow it is refused, the refusal
 * counted (MSGA_EVENT_REJECTED) and nothing of it kept; half-open
 * handshakes stay within max_handshakes and die at handshake_ms.
 *
 * The hostile peers are raw rdma_cm ids in this process (dev_raw_peer.h)
 * that speak the handshake as auth_wire.h and rc_auth.c describe it,
 * with tags made by the library's own primitives (lib/core/auth.c is
 * built in): the first proves that what the test sends is what a real
 * subscriber would, so that what it then changes is all that is wrong.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "auth.h"
#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "pubsub.h"
#include "wire.h"

static const uint8_t key_a[MSGA_KEY_LEN] = {
	0x6d, 0x73, 0x67, 0x61, 0x63, 0x63, 0x65, 0x6c, 0x2d, 0x74, 0x65,
	0x73, 0x74, 0x2d, 0x6b, 0x65, 0x79, 0x2d, 0x41, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
};
static const uint8_t key_b[MSGA_KEY_LEN] = {
	0x6d, 0x73, 0x67, 0x61, 0x63, 0x63, 0x65, 0x6c, 0x2d, 0x74, 0x65,
	0x73, 0x74, 0x2d, 0x6b, 0x65, 0x79, 0x2d, 0x42, 0x01, 0x02, 0x03,
	0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
};

static struct msga_ctx *ctx_keyed(const uint8_t *key, const char *name)
{
	struct msga_ctx_attr a = { .size = sizeof(a) };
	struct msga_ctx *ctx = NULL;
	int ret;

	a.dev_name = devtest_env()->dev;
	a.key = key;
	a.key_name = name;
	ret = msga_ctx_open(&a, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open(key %s) = %d: %s", name, ret,
		     msga_open_error());
	return ctx;
}

/* ------------------------------------------------ the publisher's view */

struct pub_events {
	int connected, rejected_events;
	uint64_t rejected;             /* the sum of the events' counts */
	int last_status;
	int authorize_calls;
	char identity[MSGA_KEY_NAME_MAX + 1];
	const char *deny;              /* authorize() refuses this pattern */
};

static void pe_on_event(const struct msga_event *ev, void *user)
{
	struct pub_events *pe = user;

	if (ev->type == MSGA_EVENT_CONNECTED)
		pe->connected++;
	if (ev->type != MSGA_EVENT_REJECTED)
		return;
	cr_assert_gt(ev->count, 0);
	cr_assert(ev->peer && ev->peer[0]);
	pe->rejected_events++;
	pe->rejected += ev->count;
	pe->last_status = ev->status;
}

static int pe_authorize(const struct msga_peer_info *peer,
			const char *pattern, void *user)
{
	struct pub_events *pe = user;

	cr_assert_eq(peer->size, sizeof(*peer));
	cr_assert(peer->peer && peer->peer[0]);
	pe->authorize_calls++;
	snprintf(pe->identity, sizeof(pe->identity), "%s",
		 peer->identity ? peer->identity : "(none)");
	return pe->deny && !strcmp(pattern, pe->deny) ? -EPERM : 0;
}

static struct msga_pub *auth_pub(struct msga_ctx *ctx, struct pub_events *pe,
				 const char *const *allow,
				 uint32_t max_handshakes,
				 uint32_t handshake_ms)
{
	struct msga_pub_attr a = {
		.size = sizeof(a), .uri = dp_uri(0), .on_event = pe_on_event,
		.user = pe, .allow = allow, .max_handshakes = max_handshakes,
		.handshake_ms = handshake_ms,
		/* (every refusal its own event: the tests count them) */
		.reject_events_per_s = 1000000,
	};
	struct msga_pub *pub = NULL;
	int ret;

	if (allow)
		a.authorize = pe_authorize;
	ret = msga_pub_create(ctx, &a, &pub);
	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

static uint32_t topic_of(struct msga_pub *pub, const char *name)
{
	uint32_t id;

	cr_assert_eq(msga_pub_topic(pub, name, &id), 0);
	return id;
}

/* Connect sub to pub; poll until it is refused or connected. */
static void connect_and_wait(struct msga_sub *sub, struct msga_pub *pub,
			     struct msga_ctx **ctxs, struct dp_rec *rec)
{
	int before = rec->connected + rec->failed + rec->disconnected;
	int ret = dp_connect_id(sub, dp_uri((uint16_t)msga_pub_port(pub)));
	uint64_t end = dp_now_ms() + devtest_wait_s(10) * 1000ull;

	cr_assert_geq(ret, 0, "msga_sub_connect = %d", ret);
	while (rec->connected + rec->failed + rec->disconnected == before) {
		cr_assert_lt(dp_now_ms(), end, "no connect outcome");
		cr_assert_geq(msga_ctx_poll(ctxs[0], 64), 0);
		cr_assert_geq(msga_ctx_poll(ctxs[1], 64), 0);
	}
}

/* Poll both until the publisher has reported want refusals. */
static void wait_rejected(struct msga_ctx **ctxs, struct pub_events *pe,
			  uint64_t want)
{
	cr_assert(dp_poll_until64(ctxs, 2, &pe->rejected, want,
				  devtest_wait_s(10) * 1000),
		  "publisher reported %llu refusals, not %llu",
		  (unsigned long long)pe->rejected, (unsigned long long)want);
}

/* Nothing of a refused peer is left: no connection, no handshake. */
static void assert_nothing_kept(struct msga_pub *pub, struct msga_ctx **ctxs,
				uint32_t live)
{
	uint64_t end = dp_now_ms() + devtest_wait_s(10) * 1000ull;

	while (pub->rc.nconns != live || pub->rc.nhandshakes) {
		cr_assert_lt(dp_now_ms(), end, "publisher keeps %u connection(s)"
			     ", %u handshake(s)", pub->rc.nconns,
			     pub->rc.nhandshakes);
		cr_assert_geq(msga_ctx_poll(ctxs[0], 64), 0);
		cr_assert_geq(msga_ctx_poll(ctxs[1], 64), 0);
	}
	cr_assert_eq(msga_pub_subscribers(pub), (int)live);
}

/* ------------------------------------------------ proven keys */

static void proven_key_streams(uint32_t sub_flags)
{
	struct msga_ctx *pc = ctx_keyed(key_a, "feed");
	struct msga_ctx *sc = ctx_keyed(key_a, "feed");
	struct msga_ctx *ctxs[2] = { pc, sc };
	struct pub_events pe = { 0 };
	struct dp_rec rec = { .strict = 1 };
	struct msga_pub *pub = auth_pub(pc, &pe, NULL, 0, 0);
	struct msga_sub *sub = dp_sub_flags(sc, "auth.*", sub_flags, &rec);
	uint32_t t = topic_of(pub, "auth.t");

	connect_and_wait(sub, pub, ctxs, &rec);
	cr_assert_eq(rec.connected, 1, "status %d: %s", rec.last_status,
		     msga_ctx_last_error(sc));
	cr_assert(dp_poll_until(ctxs, 2, &pe.connected, 1, 5000));
	for (uint64_t seq = 1; seq <= 300; seq++)
		dp_send(pub, t, seq, 24 + seq % 200, ctxs, 2);
	cr_assert(dp_poll_until64(ctxs, 2, &rec.total, 300, 10000));
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_eq(pe.rejected, 0);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(sc);
	msga_ctx_close(pc);
}

DP_TEST_RC_PATHS(auth, proven_key_ring, proven_key_send_recv,
		 proven_key_streams, 60)

/* ------------------------------------------------ refused keys */

/* A subscriber in sc connecting to pub in pc is refused with -EACCES. */
static void refused_with_eacces(struct msga_ctx *pc, struct msga_ctx *sc)
{
	struct msga_ctx *ctxs[2] = { pc, sc };
	struct pub_events pe = { 0 };
	struct dp_rec rec = { 0 };
	struct msga_pub *pub = auth_pub(pc, &pe, NULL, 0, 0);
	struct msga_sub *sub = dp_sub(sc, "auth.*", &rec);

	for (int i = 1; i <= 3; i++) {
		connect_and_wait(sub, pub, ctxs, &rec);
		cr_assert_eq(rec.failed, i, "attempt %d: connected %d, "
			     "disconnected %d", i, rec.connected,
			     rec.disconnected);
		cr_assert_eq(rec.last_status, -EACCES, "status %d (%s)",
			     rec.last_status, msga_strerror(rec.last_status));
		wait_rejected(ctxs, &pe, (uint64_t)i);
		cr_assert_eq(pe.last_status, -EACCES);
		assert_nothing_kept(pub, ctxs, 0);
	}
	cr_assert_eq(rec.connected, 0);
	cr_assert_eq(pe.connected, 0);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(sc);
	msga_ctx_close(pc);
}

Test(auth, no_key_refused, .timeout = 60)
{
	refused_with_eacces(ctx_keyed(key_a, "feed"), devtest_open_ctx());
}

Test(auth, wrong_key_refused, .timeout = 60)
{
	refused_with_eacces(ctx_keyed(key_a, "feed"),
			    ctx_keyed(key_b, "feed"));
}

/* A publisher without the key cannot prove it: the subscriber refuses. */
Test(auth, unkeyed_publisher_refused, .timeout = 60)
{
	refused_with_eacces(devtest_open_ctx(), ctx_keyed(key_a, "feed"));
}

/* ------------------------------------------------ a raw subscriber */

#define RS_SLOT 4096 /* (a publisher wants MSGA__DATA_SLOT) */

struct raw_sub {
	struct raw_peer cm;
	struct ibv_mr *mr;
	uint8_t buf[8][RS_SLOT];       /* [0..3] receives, [4..7] sends */
	uint8_t pdata[MSGA__WIRE_HELLO_LEN + MSGA__AUTH_REQ_LEN];
	uint32_t sends;
};

/* The connect of a subscriber proving key: a hello and a request. */
static void raw_sub_pdata(struct raw_sub *rs, const uint8_t *key)
{
	struct msga__wire_hello hello = {
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = 2, .recv_depth = 4, .slot_size = RS_SLOT,
	};
	struct msga__auth_req req = { .key_id = msga__auth_key_id(key) };

	msga__auth_random(req.nonce, sizeof(req.nonce));
	msga__wire_hello_put(rs->pdata, &hello);
	msga__auth_req_put(rs->pdata + MSGA__WIRE_HELLO_LEN, &req);
}

/* Connect with rs->pdata; with receives posted, as the hello says. */
static enum rdma_cm_event_type raw_sub_connect(struct raw_sub *rs,
					       uint16_t port,
					       struct msga_ctx *ctx)
{
	enum rdma_cm_event_type ev = raw_connect_pdata(&rs->cm, port, ctx,
						       rs->pdata,
						       sizeof(rs->pdata));

	if (ev != RDMA_CM_EVENT_ESTABLISHED)
		return ev;
	rs->mr = ibv_reg_mr(rs->cm.id->qp->pd, rs->buf, sizeof(rs->buf),
			    IBV_ACCESS_LOCAL_WRITE);
	cr_assert(rs->mr);
	for (uint32_t i = 0; i < 4; i++) {
		struct ibv_sge sge = { (uintptr_t)rs->buf[i], RS_SLOT,
				       rs->mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		cr_assert_eq(ibv_post_recv(rs->cm.id->qp, &wr, &bad), 0);
	}
	return ev;
}

/* SEND one message of ours (a header and len bytes of payload). */
static void raw_sub_send(struct raw_sub *rs, uint8_t type, const void *payload,
			 uint32_t len, struct msga_ctx *ctx)
{
	struct msga__wire_hdr h = { .type = type, .len = len };
	uint8_t *b = rs->buf[4 + rs->sends % 4];
	struct ibv_sge sge = { (uintptr_t)b, MSGA__WIRE_HDR_LEN + len,
			       rs->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 100 + rs->sends++, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	uint64_t end = dp_now_ms() + devtest_wait_s(10) * 1000ull;
	struct ibv_wc wc;
	int n;

	msga__wire_hdr_put(b, &h);
	memcpy(b + MSGA__WIRE_HDR_LEN, payload, len);
	cr_assert_eq(ibv_post_send(rs->cm.id->qp, &wr, &bad), 0);
	do {
		cr_assert_lt(dp_now_ms(), end, "raw send did not complete");
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		n = ibv_poll_cq(rs->cm.id->send_cq, 1, &wc);
	} while (n == 0);
	cr_assert_eq(n, 1);
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "raw send: %s",
		     ibv_wc_status_str(wc.status));
}

/* The subscriber's proof for the accept in rs->cm.est_pdata (rc_auth.c). */
static void raw_sub_proof(const struct raw_sub *rs, const uint8_t *key,
			  uint8_t tag[MSGA__AUTH_TAG_LEN])
{
	struct msga__auth_req req;
	struct msga__auth_rsp rsp;

	cr_assert(msga__auth_req_get(rs->pdata, sizeof(rs->pdata),
				     MSGA__WIRE_HELLO_LEN, &req));
	cr_assert(msga__auth_rsp_get(rs->cm.est_pdata, rs->cm.est_plen,
				     MSGA__WIRE_HELLO_LEN, &rsp),
		  "the accept carries no proof (%u bytes)", rs->cm.est_plen);
	{
		const struct msga__auth_piece pieces[] = {
			{ req.nonce, MSGA__AUTH_NONCE_LEN },
			{ rsp.nonce, MSGA__AUTH_NONCE_LEN },
			{ rs->pdata, MSGA__WIRE_HELLO_LEN },
			{ rs->cm.est_pdata, MSGA__WIRE_HELLO_LEN },
		};

		msga__auth_tag(key, "msgaccel rc subscribe v1", pieces, 4,
			       tag);
	}
}

static void raw_sub_close(struct raw_sub *rs)
{
	raw_free_verbs(rs->cm.id, rs->mr, NULL);
	rs->mr = NULL;
	raw_close(&rs->cm);
}

/*
 * A recorded handshake is worth nothing on another connection. The raw
 * subscriber first does it right (the control: the publisher takes it);
 * a second connection then replays its connect and its proof: the
 * publisher's new nonce makes the old proof wrong, and it is refused.
 */
Test(auth, replayed_handshake_refused, .timeout = 90)
{
	struct msga_ctx *pc = ctx_keyed(key_a, "feed");
	struct msga_ctx *ctxs[2] = { pc, pc };
	struct pub_events pe = { 0 };
	struct msga_pub *pub = auth_pub(pc, &pe, NULL, 0, 0);
	uint16_t port = (uint16_t)msga_pub_port(pub);
	struct raw_sub *one = calloc(1, sizeof(*one));
	struct raw_sub *two = calloc(1, sizeof(*two));
	uint8_t tag[MSGA__AUTH_TAG_LEN];
	const char pattern[] = "auth.*";

	cr_assert(one && two);
	raw_sub_pdata(one, key_a);
	cr_assert_eq(raw_sub_connect(one, port, pc),
		     RDMA_CM_EVENT_ESTABLISHED);
	raw_sub_proof(one, key_a, tag);
	raw_sub_send(one, MSGA__W_AUTH, tag, sizeof(tag), pc);
	raw_sub_send(one, MSGA__W_SUBSCRIBE, pattern, strlen(pattern), pc);
	cr_assert(dp_poll_until(ctxs, 1, &pe.connected, 1, 5000),
		  "the control: a correct handshake was not taken (%s)",
		  msga_ctx_last_error(pc));

	memcpy(two->pdata, one->pdata, sizeof(one->pdata));
	cr_assert_eq(raw_sub_connect(two, port, pc),
		     RDMA_CM_EVENT_ESTABLISHED);
	cr_assert_neq(memcmp(two->cm.est_pdata + MSGA__WIRE_HELLO_LEN,
			     one->cm.est_pdata + MSGA__WIRE_HELLO_LEN,
			     MSGA__AUTH_NONCE_LEN), 0,
		      "the publisher's nonce repeated");
	raw_sub_send(two, MSGA__W_AUTH, tag, sizeof(tag), pc);
	wait_rejected(ctxs, &pe, 1);
	cr_assert_eq(pe.last_status, -EACCES);
	cr_assert_eq(pe.connected, 1);
	assert_nothing_kept(pub, ctxs, 1);

	raw_sub_close(two);
	raw_sub_close(one);
	free(two);
	free(one);
	msga_pub_destroy(pub);
	msga_ctx_close(pc);
}

/* A SUBSCRIBE before the proof is refused like a wrong proof. */
Test(auth, subscribe_without_proof_refused, .timeout = 60)
{
	struct msga_ctx *pc = ctx_keyed(key_a, "feed");
	struct msga_ctx *ctxs[2] = { pc, pc };
	struct pub_events pe = { 0 };
	struct msga_pub *pub = auth_pub(pc, &pe, NULL, 0, 0);
	struct raw_sub *rs = calloc(1, sizeof(*rs));
	const char pattern[] = "*";

	cr_assert(rs);
	raw_sub_pdata(rs, key_a);
	cr_assert_eq(raw_sub_connect(rs, (uint16_t)msga_pub_port(pub), pc),
		     RDMA_CM_EVENT_ESTABLISHED);
	raw_sub_send(rs, MSGA__W_SUBSCRIBE, pattern, strlen(pattern), pc);
	wait_rejected(ctxs, &pe, 1);
	cr_assert_eq(pe.last_status, -EACCES);
	assert_nothing_kept(pub, ctxs, 0);
	raw_sub_close(rs);
	free(rs);
	msga_pub_destroy(pub);
	msga_ctx_close(pc);
}

/* ------------------------------------------------ authorisation */

Test(auth, forbidden_pattern_refused, .timeout = 90)
{
	static const char *const allow[] = { "feed md.*", "ops admin", NULL };
	struct msga_ctx *pc = ctx_keyed(key_a, "feed");
	struct msga_ctx *sc = ctx_keyed(key_a, "feed");
	struct msga_ctx *ctxs[2] = { pc, sc };
	struct pub_events pe = { .deny = "md.secret" };
	struct msga_pub *pub = auth_pub(pc, &pe, allow, 0, 0);
	struct dp_rec ok = { .strict = 1 }, bad = { 0 }, denied = { 0 };
	struct msga_sub *s_ok = dp_sub(sc, "md.eq*", &ok);
	struct msga_sub *s_bad = dp_sub(sc, "admin", &bad);
	struct msga_sub *s_denied = dp_sub(sc, "md.secret", &denied);
	uint32_t t = topic_of(pub, "md.eq.x");

	/* allowed by "feed md.*", and by authorize() */
	connect_and_wait(s_ok, pub, ctxs, &ok);
	cr_assert_eq(ok.connected, 1, "status %d: %s / %s", ok.last_status,
		     msga_ctx_last_error(sc), msga_ctx_last_error(pc));
	cr_assert_eq(pe.authorize_calls, 1);
	cr_assert_str_eq(pe.identity, "feed");

	/* "admin" is allowed to "ops", not to "feed" */
	connect_and_wait(s_bad, pub, ctxs, &bad);
	cr_assert_eq(bad.failed, 1, "connected %d, disconnected %d",
		     bad.connected, bad.disconnected);
	cr_assert_eq(bad.last_status, -EPERM, "status %d", bad.last_status);
	wait_rejected(ctxs, &pe, 1);
	cr_assert_eq(pe.last_status, -EPERM);
	cr_assert_eq(pe.authorize_calls, 1, "authorize() ran past the list");

	/* on the list, refused by authorize() */
	connect_and_wait(s_denied, pub, ctxs, &denied);
	cr_assert_eq(denied.failed, 1);
	cr_assert_eq(denied.last_status, -EPERM);
	wait_rejected(ctxs, &pe, 2);
	cr_assert_eq(pe.authorize_calls, 2);
	assert_nothing_kept(pub, ctxs, 1);

	/* the allowed one has its stream */
	for (uint64_t seq = 1; seq <= 50; seq++)
		dp_send(pub, t, seq, 64, ctxs, 2);
	cr_assert(dp_poll_until64(ctxs, 2, &ok.total, 50, 10000));
	cr_assert_eq(ok.bad, 0, "%s", ok.first_bad);
	cr_assert_eq(denied.total + bad.total, 0);

	msga_sub_destroy(s_denied);
	msga_sub_destroy(s_bad);
	msga_sub_destroy(s_ok);
	msga_pub_destroy(pub);
	msga_ctx_close(sc);
	msga_ctx_close(pc);
}

/* ------------------------------------------------ handshake limits */

#define HALF_OPEN 1000
#define HS_MAX 4
#define HS_MS 400
#define HS_SLOTS 16

/* Close the raw peers whose connection the publisher dropped. */
static uint32_t reap_dropped(struct raw_peer *slot, int *alive,
			     struct msga_ctx *ctx)
{
	uint32_t n = 0;

	for (int i = 0; i < HS_SLOTS; i++) {
		if (!alive[i])
			continue;
		raw_turn(&slot[i], ctx);
		if (slot[i].disconnected) {
			raw_close(&slot[i]);
			alive[i] = 0;
		}
		n += alive[i];
	}
	return n;
}

/*
 * 1000 connects that name the key and then prove nothing: each accepted
 * one holds a handshake slot until handshake_ms drops it, and the rest
 * are rejected before anything is allocated. The publisher never holds
 * more than max_handshakes, reports every refusal and every timeout, and
 * a real subscriber connects afterwards.
 */
Test(auth, half_open_connects_bounded, .timeout = 300)
{
	struct msga_ctx *pc = ctx_keyed(key_a, "feed");
	struct msga_ctx *sc = ctx_keyed(key_a, "feed");
	struct msga_ctx *ctxs[2] = { pc, sc };
	struct pub_events pe = { 0 };
	struct msga_pub *pub = auth_pub(pc, &pe, NULL, HS_MAX, HS_MS);
	uint16_t port = (uint16_t)msga_pub_port(pub);
	struct raw_peer *slot = calloc(HS_SLOTS, sizeof(*slot));
	struct raw_sub *rs = calloc(1, sizeof(*rs));
	int alive[HS_SLOTS] = { 0 };
	struct dp_rec rec = { 0 };
	struct msga_sub *sub;
	uint32_t accepted = 0, refused = 0, peak = 0;
	uint64_t end;

	cr_assert(slot && rs);
	for (int i = 0; i < HALF_OPEN; i++) {
		enum rdma_cm_event_type ev;
		int k = 0;

		end = dp_now_ms() + devtest_wait_s(10) * 1000ull;
		while (reap_dropped(slot, alive, pc) == HS_SLOTS)
			cr_assert_lt(dp_now_ms(), end, "no slot came free");
		while (alive[k])
			k++;
		raw_sub_pdata(rs, key_a);
		ev = raw_connect_pdata(&slot[k], port, pc, rs->pdata,
				       sizeof(rs->pdata));
		cr_assert(ev == RDMA_CM_EVENT_ESTABLISHED ||
			  ev == RDMA_CM_EVENT_REJECTED, "event %s",
			  rdma_event_str(ev));
		if (ev == RDMA_CM_EVENT_ESTABLISHED) {
			accepted++;
			alive[k] = 1; /* until the publisher drops it */
		} else {
			refused++;
			raw_close(&slot[k]);
		}
		if (pub->rc.nhandshakes > peak)
			peak = pub->rc.nhandshakes;
		cr_assert_leq(pub->rc.nconns, HS_MAX);
	}
	cr_assert_leq(peak, HS_MAX);
	cr_assert_gt(accepted, HS_MAX, "the deadline never freed a slot");
	cr_assert_gt(refused, 0, "max_handshakes never reached");
	/* every refusal and every timed-out handshake reported */
	wait_rejected(ctxs, &pe, refused + accepted);
	assert_nothing_kept(pub, ctxs, 0);
	end = dp_now_ms() + devtest_wait_s(10) * 1000ull;
	while (reap_dropped(slot, alive, pc))
		cr_assert_lt(dp_now_ms(), end, "a raw peer never dropped");

	sub = dp_sub(sc, "auth.*", &rec);
	connect_and_wait(sub, pub, ctxs, &rec);
	cr_assert_eq(rec.connected, 1, "status %d", rec.last_status);
	msga_sub_destroy(sub);
	free(rs);
	free(slot);
	msga_pub_destroy(pub);
	msga_ctx_close(sc);
	msga_ctx_close(pc);
}

/* ------------------------------------------------ bad attributes */

Test(auth, allow_needs_keys, .timeout = 30)
{
	static const char *const allow[] = { "feed md.*", NULL };
	static const char *const bad[] = { "feed", NULL };
	struct msga_ctx *plain = devtest_open_ctx();
	struct msga_ctx *keyed = ctx_keyed(key_a, "feed");
	struct msga_pub_attr a = { .size = sizeof(a), .uri = dp_uri(0),
				   .allow = allow };
	struct msga_pub *pub = NULL;

	cr_assert_eq(msga_pub_create(plain, &a, &pub), -EINVAL);
	cr_assert_null(pub);
	a.allow = bad;
	cr_assert_eq(msga_pub_create(keyed, &a, &pub), -EINVAL);
	a.allow = allow;
	a.handshake_ms = MSGA_HANDSHAKE_MIN_MS - 1;
	cr_assert_eq(msga_pub_create(keyed, &a, &pub), -EINVAL);
	a.handshake_ms = 0;
	a.max_handshakes = MSGA_PUB_CONNS_MAX + 1;
	cr_assert_eq(msga_pub_create(keyed, &a, &pub), -EINVAL);
	msga_ctx_close(keyed);
	msga_ctx_close(plain);
}
