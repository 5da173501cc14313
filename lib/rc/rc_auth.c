/* SPDX-License-Identifier: MIT */
/*
 * rc_auth.c - access control on RC connections (msgaccel(7), SECURITY):
 * the mutual challenge-response of an authenticated context's handshake,
 * the publisher's authorisation of a SUBSCRIBE, and its rate-limited
 * report of refused peers.
 *
 * The exchange (auth_wire.h has the bytes):
 *   connect:  the subscriber's hello, the id of the key it will prove,
 *             and a fresh nonce Nc;
 *   accept:   the publisher, holding that key K, its hello, a fresh
 *             nonce Ns and tag(K, "accept", Nc, Ns, both hellos): it
 *             proves K on the subscriber's fresh challenge;
 *   first SEND: the subscriber's AUTH, tag(K, "subscribe", the same):
 *             it proves K on the publisher's fresh challenge.
 * Neither sends K, and a recorded exchange is worth nothing on another
 * connection: the other side's nonce will differ. Tags bind the hellos,
 * so what each side offered (receive depth, ring) is what the other saw.
 * The publisher takes nothing from the subscriber (no SUBSCRIBE, no
 * credit) before the AUTH checks, and allocates nothing for a connect
 * naming a key it does not hold: it rejects it with a reason.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "keyfile.h"
#include "rc.h"
#include "topic.h"

#define LABEL_ACCEPT "msgaccel rc accept v1"
#define LABEL_SUBSCRIBE "msgaccel rc subscribe v1"

static void handshake_tag(const struct msga__key *k, const char *label,
			  const uint8_t *nc, const uint8_t *ns,
			  const uint8_t *hello_c, const uint8_t *hello_s,
			  uint8_t tag[MSGA__AUTH_TAG_LEN])
{
	const struct msga__auth_piece pieces[] = {
		{ nc, MSGA__AUTH_NONCE_LEN }, { ns, MSGA__AUTH_NONCE_LEN },
		{ hello_c, MSGA__WIRE_HELLO_LEN },
		{ hello_s, MSGA__WIRE_HELLO_LEN },
	};

	msga__auth_tag(k->key, label, pieces, 4, tag);
}

/* ---------------------------------------------------- subscriber */

size_t msga__rc_auth_connect(struct msga__conn *c, uint8_t *pdata)
{
	struct msga__auth_req req;
	const struct msga__keyring *kr = c->ctx->keys;

	if (!kr)
		return MSGA__WIRE_HELLO_LEN;
	/* (a connection that tries again proves the current key) */
	msga__key_put(c->key);
	c->key = msga__key_hold(&kr->keys[0]);
	req.key_id = c->key->id;
	msga__auth_random(req.nonce, sizeof(req.nonce));
	memcpy(c->auth.nonce, req.nonce, sizeof(req.nonce));
	memcpy(c->auth.hello, pdata, MSGA__WIRE_HELLO_LEN);
	msga__auth_req_put(pdata + MSGA__WIRE_HELLO_LEN, &req);
	return MSGA__WIRE_HELLO_LEN + MSGA__AUTH_REQ_LEN;
}

int msga__rc_auth_established(struct msga__conn *c, const void *pdata,
			      size_t plen)
{
	struct msga__auth_rsp rsp;
	uint8_t want[MSGA__AUTH_TAG_LEN];

	if (!c->key)
		return 0;
	/* A publisher without our key (or of before 0.8) proves nothing. */
	if (!msga__auth_rsp_get(pdata, plen, MSGA__WIRE_HELLO_LEN, &rsp))
		return msga__ctx_fail(c->ctx, -EACCES, "connection %u to %s: "
				      "the publisher did not prove our key",
				      c->id, c->peer);
	handshake_tag(c->key, LABEL_ACCEPT, c->auth.nonce, rsp.nonce,
		      c->auth.hello, pdata, want);
	if (!msga__auth_tag_equal(want, rsp.tag))
		return msga__ctx_fail(c->ctx, -EACCES, "connection %u to %s: "
				      "the publisher's proof of key '%s' is "
				      "wrong", c->id, c->peer, c->key->name);
	handshake_tag(c->key, LABEL_SUBSCRIBE, c->auth.nonce, rsp.nonce,
		      c->auth.hello, pdata, c->auth.tag);
	return 0;
}

int msga__rc_auth_send_proof(struct msga__conn *c)
{
	struct msga__wire_hdr h = { .type = MSGA__W_AUTH,
				    .len = MSGA__AUTH_TAG_LEN };

	if (!c->key)
		return 0;
	memcpy(msga__conn_ctl_payload(c), c->auth.tag, MSGA__AUTH_TAG_LEN);
	return msga__conn_send_ctl(c, &h, h.len);
}

int msga__rc_reject_status(const struct rdma_cm_event *ev)
{
	int reason = msga__auth_rej_get(ev->param.conn.private_data,
					ev->param.conn.private_data_len);

	return reason == EACCES ? -EACCES : -ECONNREFUSED;
}

/* ---------------------------------------------------- publisher */

void msga__pub_rejected(struct msga_pub *pub, int status, const char *peer)
{
	msga__reject_report(&pub->rejects, msga__now_ns(), status, peer, pub,
			    pub->on_event, pub->user);
}

int msga__rc_auth_request(struct msga_pub *pub, struct rdma_cm_id *id,
			  const void *pdata, size_t plen,
			  const struct msga__key **key,
			  struct msga__auth_req *req)
{
	int has = msga__auth_req_get(pdata, plen, MSGA__WIRE_HELLO_LEN, req);
	char peer[64];

	*key = has ? msga__ctx_key_find(pub->ctx, req->key_id) : NULL;
	if (*key || (!has && !pub->ctx->keys))
		return 0;
	/* No key, one we do not hold, or one where we need none. */
	msga__cm_reject(id, EACCES, peer, sizeof(peer));
	msga__ctx_fail(pub->ctx, -EACCES, "publisher: refused %s: %s", peer,
		       has ? "it proves a key we do not hold" :
			     "it has no key");
	msga__pub_rejected(pub, -EACCES, peer);
	return -EACCES;
}

int msga__rc_auth_accept(struct msga__conn *c, const struct msga__key *key,
			 const struct msga__auth_req *req, const void *pdata,
			 uint8_t *buf)
{
	struct msga__auth_rsp rsp;

	if (!key)
		return MSGA__WIRE_HELLO_LEN;
	c->key = msga__key_hold(key);
	msga__auth_random(rsp.nonce, sizeof(rsp.nonce));
	handshake_tag(key, LABEL_ACCEPT, req->nonce, rsp.nonce, pdata, buf,
		      rsp.tag);
	handshake_tag(key, LABEL_SUBSCRIBE, req->nonce, rsp.nonce, pdata, buf,
		      c->auth.tag);
	msga__auth_rsp_put(buf + MSGA__WIRE_HELLO_LEN, &rsp);
	return MSGA__WIRE_HELLO_LEN + MSGA__AUTH_RSP_LEN;
}

static int refuse(struct msga__conn *c, int status, const char *why)
{
	msga__ctx_fail(c->ctx, status, "publisher: refused %s: %s", c->peer,
		       why);
	msga__pub_rejected(c->pub, status, c->peer);
	return status;
}

int msga__rc_auth_on_proof(struct msga__conn *c, const char *payload)
{
	if (c->state != MSGA__C_CONNECTING || !c->key || c->auth.proven)
		return -EPROTO;
	if (!msga__auth_tag_equal((const uint8_t *)payload, c->auth.tag))
		return refuse(c, -EACCES, "a wrong proof of its key");
	c->auth.proven = 1;
	return 0;
}

/* Whether allowed (an allow-list PATTERN) covers the pattern asked for. */
static int pattern_covers(const char *allowed, const char *asked)
{
	size_t n = strlen(allowed);

	if (n && allowed[n - 1] == '*')
		return !strncmp(allowed, asked, n - 1);
	return !strcmp(allowed, asked);
}

static int allow_listed(const struct msga_pub *pub, const char *identity,
			const char *pattern)
{
	for (uint32_t i = 0; i < pub->rc.nallow; i++) {
		const char *e = pub->rc.allow[i], *sp = strchr(e, ' ');
		size_t idlen = (size_t)(sp - e);

		if (((idlen == 1 && e[0] == '*') ||
		     (idlen == strlen(identity) &&
		      !strncmp(e, identity, idlen))) &&
		    pattern_covers(sp + 1, pattern))
			return 1;
	}
	return 0;
}

int msga__rc_authorize(struct msga__conn *c)
{
	struct msga_pub *pub = c->pub;
	struct msga_peer_info info = {
		.size = sizeof(info), .conn_id = c->id,
		.identity = c->key ? c->key->name : NULL, .peer = c->peer,
	};
	int ret;

	if (c->key && !c->auth.proven)
		return refuse(c, -EACCES, "SUBSCRIBE before its proof");
	if (!c->key)
		return 0; /* (an unauthenticated publisher has no list) */
	if (pub->rc.nallow && !allow_listed(pub, info.identity, c->pattern))
		return refuse(c, -EPERM, "pattern not on the allow list");
	if (pub->rc.authorize) {
		ret = pub->rc.authorize(&info, c->pattern, pub->user);
		if (ret)
			return refuse(c, ret < 0 && ret > -4096 ? ret : -EPERM,
				      "pattern refused by authorize()");
	}
	return 0;
}
