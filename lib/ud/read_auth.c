/* SPDX-License-Identifier: MIT */
/*
 * read_auth.c - who may READ a reliable publisher's retention ring
 * (mcast_serve.c), when its context has keys (msgaccel(7), SECURITY).
 *
 * A reader has no message of its own to prove a key in: after the
 * handshake it only READs, and a READ a publisher's CPU never sees cannot
 * be refused. So the proof is in the connect request, and the endpoint
 * allocates nothing for a request without one: a key id, the reader's
 * real-time clock, a fresh nonce, and a tag over them and the
 * publisher's origin (so a request for one publisher is worth nothing to
 * another). The replay guard (replay_guard.h) refuses a request whose
 * clock is off by more than the window, or whose nonce it has seen; the
 * hosts' clocks must agree within MSGA__READ_AUTH_WINDOW_MS. The
 * endpoint's accept appends its own tag over the reader's nonce and the
 * offer, so a reader trusts an offer only from a holder of the key.
 */
#include <string.h>
#include <time.h>

#include "auth.h"
#include "mcast.h"
#include "pubsub.h"
#include "read_wire.h"

#define LABEL_REQUEST "msgaccel read connect v1"
#define LABEL_ACCEPT "msgaccel read accept v1"

static uint64_t realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void request_tag(const struct msga__key *k,
			const struct msga__auth_rreq *r, uint64_t origin,
			uint8_t tag[MSGA__AUTH_TAG_LEN])
{
	uint8_t head[24];
	const struct msga__auth_piece pieces[] = {
		{ head, sizeof(head) }, { r->nonce, MSGA__AUTH_NONCE_LEN },
	};

	for (int b = 0; b < 8; b++) {
		head[b] = (uint8_t)(r->key_id >> (8 * b));
		head[8 + b] = (uint8_t)(r->ts_ms >> (8 * b));
		head[16 + b] = (uint8_t)(origin >> (8 * b));
	}
	msga__auth_tag(k->key, LABEL_REQUEST, pieces, 2, tag);
}

static void accept_tag(const struct msga__key *k, const uint8_t *nonce,
		       const uint8_t *offer, uint8_t tag[MSGA__AUTH_TAG_LEN])
{
	const struct msga__auth_piece pieces[] = {
		{ nonce, MSGA__AUTH_NONCE_LEN }, { offer, MSGA__RDW_LEN },
	};

	msga__auth_tag(k->key, LABEL_ACCEPT, pieces, 2, tag);
}

/* ---------------------------------------------------- reader */

size_t msga__read_auth_connect(struct msga__rconn *rc, uint8_t *pdata)
{
	const struct msga__keyring *kr = rc->sub->ctx->keys;
	struct msga__auth_rreq r;

	if (!kr)
		return 0;
	r.key_id = kr->keys[0].id;
	r.ts_ms = realtime_ms();
	msga__auth_random(r.nonce, sizeof(r.nonce));
	request_tag(&kr->keys[0], &r, rc->origin, r.tag);
	memcpy(rc->nonce, r.nonce, sizeof(r.nonce));
	msga__auth_rreq_put(pdata, &r);
	return MSGA__AUTH_RREQ_LEN;
}

int msga__read_auth_established(const struct msga__rconn *rc,
				const void *pdata, size_t plen)
{
	const struct msga__keyring *kr = rc->sub->ctx->keys;
	uint8_t want[MSGA__AUTH_TAG_LEN];

	if (!kr)
		return 0;
	if (!pdata || plen < MSGA__RDW_LEN + MSGA__AUTH_TAG_LEN)
		return -EACCES;
	accept_tag(&kr->keys[0], rc->nonce, pdata, want);
	return msga__auth_tag_equal(want, (const uint8_t *)pdata +
						  MSGA__RDW_LEN) ? 0 : -EACCES;
}

/* ---------------------------------------------------- endpoint */

int msga__read_auth_request(struct msga__rserve *sv, const void *pdata,
			    size_t plen, const struct msga__key **key,
			    uint8_t nonce[MSGA__AUTH_NONCE_LEN])
{
	const struct msga__keyring *kr = sv->ctx->keys;
	struct msga__auth_rreq r;
	uint8_t want[MSGA__AUTH_TAG_LEN];
	int has = msga__auth_rreq_get(pdata, plen, &r);

	*key = NULL;
	if (!kr)
		return has ? -EACCES : 0; /* (we cannot prove its key) */
	*key = has ? msga__ctx_key_find(sv->ctx, r.key_id) : NULL;
	if (!*key)
		return -EACCES;
	request_tag(*key, &r, sv->pub->ud.origin, want);
	if (!msga__auth_tag_equal(want, r.tag) ||
	    msga__replay_check(&sv->replay, realtime_ms(), r.ts_ms, r.nonce) !=
		    MSGA__REPLAY_OK)
		return -EACCES;
	memcpy(nonce, r.nonce, MSGA__AUTH_NONCE_LEN);
	return 0;
}

size_t msga__read_auth_accept(const struct msga__key *key,
			      const uint8_t *nonce, uint8_t *offer)
{
	if (!key)
		return MSGA__RDW_LEN;
	accept_tag(key, nonce, offer, offer + MSGA__RDW_LEN);
	return MSGA__RDW_LEN + MSGA__AUTH_TAG_LEN;
}
