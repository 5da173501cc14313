/* SPDX-License-Identifier: MIT */
/*
 * Device tests of the READ endpoint's access control (issue 26,
 * lib/ud/read_auth.c): with keys, a reliable multicast publisher lets a
 * subscriber READ its retention ring only after a connect request that
 * proves a key, once. A keyed subscriber still repairs by READ alone; a
 * raw rdma_cm peer (dev_raw_peer.h) that connects with no proof, a wrong
 * key, a stale clock or a replayed request is rejected before anything
 * is allocated, and each refusal is counted. The raw peer's valid
 * request, made with the library's own primitives (lib/core/auth.c built
 * in), is the control: it is accepted, with the endpoint's proof.
 * iWARP has no multicast: there the publisher is refused, and that is
 * what the test checks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "auth.h"
#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "mcast.h"
#include "pubsub.h"
#include "read_wire.h"

#define G_KEYED "mcast://239.255.15.1"
#define G_RAW "mcast://239.255.15.2"

static const uint8_t key_a[MSGA_KEY_LEN] = "msgaccel read-auth test key A..";
static const uint8_t key_b[MSGA_KEY_LEN] = "msgaccel read-auth test key B..";

static struct msga_ctx *ctx_keyed(const uint8_t *key)
{
	struct msga_ctx_attr a = { .size = sizeof(a), .key = key,
				   .key_name = "feed" };
	struct msga_ctx *ctx = NULL;
	int ret;

	a.dev_name = devtest_env()->dev;
	ret = msga_ctx_open(&a, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open = %d: %s", ret, msga_open_error());
	return ctx;
}

struct refusals {
	struct dp_rec rec;
	uint64_t rejected;  /* the sum of MSGA_EVENT_REJECTED counts */
	int last_status;
};

static void pe_on_event(const struct msga_event *ev, void *user)
{
	struct refusals *p = user;

	if (ev->type == MSGA_EVENT_REJECTED) {
		p->rejected += ev->count;
		p->last_status = ev->status;
		return;
	}
	dp_on_event(ev, &p->rec);
}

static struct msga_pub *reliable_pub(struct msga_ctx *ctx, const char *uri,
				     struct refusals *pe)
{
	struct msga_pub_attr a = { .size = sizeof(a), .uri = uri,
				   .flags = MSGA_PUB_RELIABLE,
				   .on_event = pe_on_event, .user = pe,
				   .reject_events_per_s = 1000000 };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &a, &pub);

	if (dp_is_iwarp()) {
		cr_assert_eq(ret, -EOPNOTSUPP, "iWARP: %d", ret);
		return NULL;
	}
	cr_assert_eq(ret, 0, "msga_pub_create = %d: %s", ret,
		     msga_ctx_last_error(ctx));
	cr_assert_not_null(pub->ud.serve, "no READ endpoint: %s",
			   msga_ctx_last_error(ctx));
	return pub;
}

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* A reader's connect request for pub, as read_auth.c describes it. */
static void make_request(uint8_t *pdata, const uint8_t *key, uint64_t ts_ms,
			 uint64_t origin)
{
	struct msga__auth_rreq r = { .key_id = msga__auth_key_id(key),
				     .ts_ms = ts_ms };
	uint8_t head[24];
	const struct msga__auth_piece pieces[] = {
		{ head, sizeof(head) }, { r.nonce, MSGA__AUTH_NONCE_LEN },
	};

	msga__auth_random(r.nonce, sizeof(r.nonce));
	for (int b = 0; b < 8; b++) {
		head[b] = (uint8_t)(r.key_id >> (8 * b));
		head[8 + b] = (uint8_t)(r.ts_ms >> (8 * b));
		head[16 + b] = (uint8_t)(origin >> (8 * b));
	}
	msga__auth_tag(key, "msgaccel read connect v1", pieces, 2, r.tag);
	msga__auth_rreq_put(pdata, &r);
}

/* Connect a raw peer to the READ endpoint with pdata; its outcome. */
static enum rdma_cm_event_type raw_try(struct msga_pub *pub,
				       struct msga_ctx *ctx,
				       const uint8_t *pdata, uint8_t plen,
				       struct raw_peer *p)
{
	return raw_connect_pdata(p, pub->ud.serve->port, ctx, pdata, plen);
}

Test(read_auth, raw_readers_need_a_fresh_proof, .timeout = 120)
{
	struct msga_ctx *ctx = ctx_keyed(key_a);
	struct msga_ctx *ctxs[2] = { ctx, ctx };
	struct refusals pe = { 0 };
	struct msga_pub *pub = reliable_pub(ctx, G_RAW, &pe);
	uint8_t good[MSGA__AUTH_RREQ_LEN], bad[MSGA__AUTH_RREQ_LEN];
	struct raw_peer p;
	uint64_t origin;
	uint32_t t;

	if (!pub) {
		msga_ctx_close(ctx);
		return;
	}
	cr_assert_eq(msga_pub_topic(pub, "ra.x", &t), 0);
	origin = pub->ud.origin;

	/* the control: a fresh, valid request is taken, with a proof */
	make_request(good, key_a, realtime_ms(), origin);
	cr_assert_eq(raw_try(pub, ctx, good, sizeof(good), &p),
		     RDMA_CM_EVENT_ESTABLISHED, "a valid request was refused");
	cr_assert_geq(p.est_plen, MSGA__RDW_LEN + MSGA__AUTH_TAG_LEN);
	{
		uint8_t want[MSGA__AUTH_TAG_LEN];
		const struct msga__auth_piece pieces[] = {
			{ good + 16, MSGA__AUTH_NONCE_LEN },
			{ p.est_pdata, MSGA__RDW_LEN },
		};

		msga__auth_tag(key_a, "msgaccel read accept v1", pieces, 2,
			       want);
		cr_assert(msga__auth_tag_equal(want,
					       p.est_pdata + MSGA__RDW_LEN),
			  "the endpoint's accept does not prove the key");
	}
	raw_close(&p);
	cr_assert_eq(pe.rejected, 0);

	/* the same request again: a replay */
	cr_assert_eq(raw_try(pub, ctx, good, sizeof(good), &p),
		     RDMA_CM_EVENT_REJECTED, "a replayed request was taken");
	raw_close(&p);
	/* no proof at all */
	cr_assert_eq(raw_try(pub, ctx, (const uint8_t *)"", 0, &p),
		     RDMA_CM_EVENT_REJECTED);
	raw_close(&p);
	/* another key */
	make_request(bad, key_b, realtime_ms(), origin);
	cr_assert_eq(raw_try(pub, ctx, bad, sizeof(bad), &p),
		     RDMA_CM_EVENT_REJECTED);
	raw_close(&p);
	/* the right key, for another publisher */
	make_request(bad, key_a, realtime_ms(), origin ^ 1);
	cr_assert_eq(raw_try(pub, ctx, bad, sizeof(bad), &p),
		     RDMA_CM_EVENT_REJECTED);
	raw_close(&p);
	/* the right key, a clock a minute behind */
	make_request(bad, key_a, realtime_ms() - 60000, origin);
	cr_assert_eq(raw_try(pub, ctx, bad, sizeof(bad), &p),
		     RDMA_CM_EVENT_REJECTED);
	raw_close(&p);

	cr_assert(dp_poll_until64(ctxs, 1, &pe.rejected, 5, 10000),
		  "%llu refusals reported", (unsigned long long)pe.rejected);
	cr_assert_eq(pe.last_status, -EACCES);
	cr_assert_eq(pub->ud.serve->refused, 5);
	cr_assert_eq(pub->ud.serve->nreaders, 0, "a refused reader was kept");
	msga_ctx_close(ctx);
}

/*
 * Keyed publisher and subscriber: the subscriber starves through 600
 * messages and repairs them by READ alone, as without keys.
 */
Test(read_auth, keyed_subscriber_repairs_by_read, .timeout = 180)
{
	struct msga_ctx *ctx[2] = { ctx_keyed(key_a), ctx_keyed(key_a) };
	struct refusals pe = { 0 };
	struct msga_pub *pub = reliable_pub(ctx[0], G_KEYED, &pe);
	struct dp_rec rec = { .strict = 1 };
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "ra.x",
				   .on_msg = dp_on_msg,
				   .on_event = dp_on_event, .user = &rec };
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_sub *sub;
	uint64_t end;
	uint32_t t;

	if (!pub) {
		msga_ctx_close(ctx[1]);
		msga_ctx_close(ctx[0]);
		return;
	}
	cr_assert_eq(msga_pub_topic(pub, "ra.x", &t), 0);
	cr_assert(dp_poll_until(ctx, 2, &pe.rec.connected, 1, 15000));
	cr_assert_eq(msga_sub_create(ctx[1], &a, &sub), 0);
	cr_assert_geq(msga_sub_connect(sub, G_KEYED, NULL), 0);
	cr_assert(dp_poll_until(ctx, 2, &rec.connected, 1, 15000));
	for (uint64_t s = 1; s <= 10; s++)
		dp_send(pub, t, s, 64, ctx, 2);
	end = dp_now_ms() + 15000;
	while (pub->ud.serve->served < 1) {
		cr_assert_lt(dp_now_ms(), end, "the keyed reader never "
			     "connected (refused %llu)",
			     (unsigned long long)pub->ud.serve->refused);
		msga_ctx_poll(ctx[0], 64);
		msga_ctx_poll(ctx[1], 64);
	}
	for (uint64_t s = 11; s <= 600; s++) /* it starves */
		dp_send(pub, t, s, 64, ctx, 1);
	for (uint64_t s = 601; s <= 700; s++)
		dp_send(pub, t, s, 64, ctx, 2);
	cr_assert(dp_poll_until64(ctx, 2, &rec.total, 700, 30000),
		  "%llu of 700", (unsigned long long)rec.total);
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_assert_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_assert_gt(st.recovered, 0, "nothing was lost: nothing tested");
	cr_assert_gt(st.reads, 0);
	cr_assert_eq(st.naks, 0, "READ served every repair");
	cr_assert_eq(pub->ud.serve->refused, 0);
	cr_assert_eq(pe.rejected, 0);
	msga_ctx_close(ctx[1]);
	msga_ctx_close(ctx[0]);
}
