/* SPDX-License-Identifier: MIT */
/*
 * ud_unicast.c - publish to unicast UD peers ("ud://IP:PORT"). The
 * publisher's UD endpoint listens in rdma_cm's UDP port space; a
 * subscriber resolves it and "connects", which for UD is one service-ID
 * request/reply (SIDR) that hands it the publisher's QPN, Q_Key and an
 * address handle. It then sends SUBSCRIBE datagrams with its pattern; the
 * publisher builds an address handle back from the datagram's work
 * completion and answers SUBACK. There is no connection to break, so both
 * sides watch each other: SUBSCRIBE repeats as a keepalive, and a peer
 * silent for the context's peer timeout is reported gone
 * (MSGA_EVENT_DISCONNECTED, -ETIMEDOUT): by default a keepalive every
 * second and 5 s of silence, as on RC (liveness.h). Data datagrams are
 * the multicast ones: same header, same sequence tracking, same
 * fragmentation.
 *
 * Return-routability (issue 26): a SUBSCRIBE's source address is only
 * its sender's word, and on RoCE v2 anyone can write another's. So a
 * publisher adds no subscriber on a SUBSCRIBE alone: it answers COOKIE,
 * a keyed hash (SipHash, libsodium's crypto_shorthash, under a random
 * secret of the publisher) of the source's GID, QPN, LID, the
 * subscriber's nonce and the time step, and adds the subscriber when a
 * SUBSCRIBE from that address echoes it. Nothing is kept between the
 * two: a flood of SUBSCRIBEs costs answers, no memory. One address (GID)
 * may hold MSGA__UD_DESTS_PER_SOURCE of the MSGA__UD_DESTS_MAX places. A
 * subscriber's nonce names its SUBSCRIBEs: the SUBACK and COOKIE it takes
 * echo it, keepalives and UNSUBSCRIBE carry it, and only datagrams from
 * the publisher's address and QP it connected to count as the publisher.
 */
#include <sodium.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcast.h"
#include "pubsub.h"
#include "topic.h"
#include "backoff.h"

/*
 * One control datagram (no payload) to a peer: h's type, seq and origin,
 * and pattern. 0, or -EAGAIN when full.
 */
static int put_ctl(struct msga__udep *ep, struct msga__mgroup *to,
		   const struct msga__udw_hdr *h, const char *pattern,
		   int signal)
{
	struct msga__udw_hdr c = { .type = h->type, .seq = h->seq,
				   .origin = h->origin,
				   .topic_len = (uint8_t)strlen(pattern) };
	uint32_t hl;

	if (!to->ah || to->retiring || msga__udep_sq_room(ep) < 1)
		return -EAGAIN;
	hl = msga__udw_put(msga__udep_hdr_slot(ep), &c, pattern);
	return msga__udep_send_hdr(ep, to, hl, signal);
}

int msga__udep_send_ctl(struct msga__udep *ep, struct msga__mgroup *to,
			const struct msga__udw_hdr *h, const char *pattern)
{
	return put_ctl(ep, to, h, pattern, 0);
}

static int send_ctl(struct msga__udep *ep, struct msga__mgroup *to,
		    uint8_t type, uint64_t seq, uint64_t origin,
		    const char *pattern)
{
	struct msga__udw_hdr h = { .type = type, .seq = seq,
				   .origin = origin };

	return put_ctl(ep, to, &h, pattern, 0);
}

/* A random number, never 0 (0 says "none" on the wire). */
static uint64_t random_u64(void)
{
	uint64_t v = 0;

	while (!v)
		randombytes_buf(&v, sizeof(v));
	return v;
}

/* ------------------------------------------------------------ publisher */

/* The endpoint's rdma_cm events a unicast publisher takes: SIDR requests. */
void msga__upub_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		msga__upub_on_request(ep, ev->id);
}

/*
 * The endpoint's callbacks are its owner's table (cb: mcast_pub.c's
 * msga__upub_cb, which passes the handshake's parts here and the data
 * path's to the publisher), so this file never names the publisher.
 */
int msga__upub_create(struct msga_pub *pub, const char *uri,
		      const struct msga__udep_cb *cb)
{
	struct msga_ctx *ctx = pub->ctx;
	struct sockaddr_storage ss;
	int ret;

	if (msga__parse_uri_as(uri, "ud://", &ss))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: bad "
				      "uri '%s'", uri);
	if (sodium_init() < 0)
		return msga__ctx_fail(ctx, -ENOMEM, "msga_pub_create: "
				      "sodium_init");
	pub->ud.unicast = 1;
	/* the places, then the answers' address handles (REPLY_AHS) */
	pub->ud.dests = calloc(MSGA__UD_DESTS_MAX + MSGA__UD_REPLY_AHS,
			    sizeof(*pub->ud.dests));
	if (!pub->ud.dests)
		return -ENOMEM;
	ret = msga__udep_new(ctx, cb, MSGA__UD_PUB_RX_DEPTH,
			     MSGA__UD_PUB_SQ_DEPTH, &ss, &pub->ud.ep);
	if (!ret)
		ret = pub->ud.up->setup(pub);
	if (ret)
		return ret;
	pub->ud.ep->unicast = 1;
	randombytes_buf(pub->ud.ep->cookie_key, sizeof(pub->ud.ep->cookie_key));
	if (rdma_listen(pub->ud.ep->cm, 64))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRINUSE),
				      "msga_pub_create: rdma_listen (UD)");
	return 0;
}

/* SIDR: answer with our one shared QP; the request's id is done then. */
void msga__upub_on_request(struct msga__udep *ep, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = { .qp_num = ep->qp->qp_num };

	if (msga__udep_dead(ep) || rdma_accept(id, &param))
		rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

static void dest_emit(struct msga_pub *pub, struct msga__udest *d,
		      enum msga_event_type type, int status)
{
	struct msga_event ev = { .size = sizeof(ev),
				 .type = type, .status = status,
				 .conn_id = d->id, .pub = pub,
				 .peer = d->g.name };

	if (pub->on_event)
		pub->on_event(&ev, pub->user);
}

/*
 * Forget a subscriber. Its AH goes once the sends queued to it complete
 * (udep.c, dst_put): destroyed under them, they would fail, and a failed
 * send takes the whole endpoint, every other subscriber's feed with it.
 * The slot is not reused until then.
 */
static void dest_drop(struct msga_pub *pub, struct msga__udest *d, int status)
{
	d->used = 0;
	pub->ud.dests_used &= ~(1ull << (d - pub->ud.dests));
	pub->ud.ndests--;
	msga__pub_count_gone(pub, status);
	if (d->g.inflight) {
		d->g.retiring = 1;
	} else if (d->g.ah) {
		ibv_destroy_ah(d->g.ah);
		d->g.ah = NULL;
	}
	dest_emit(pub, d, MSGA_EVENT_DISCONNECTED, status);
}

/* The endpoint died: every subscriber is gone, and each is told. */
int msga__upub_drop_all(struct msga_pub *pub, int status)
{
	int n = 0;

	for (uint32_t i = 0; pub->ud.dests && i < MSGA__UD_DESTS_MAX; i++)
		if (pub->ud.dests[i].used) {
			dest_drop(pub, &pub->ud.dests[i], status);
			n++;
		}
	return n;
}

/* The subscriber a datagram came from: its slot, a free one, or NULL. */
static struct msga__udest *dest_find(struct msga_pub *pub,
				     const struct ibv_wc *wc,
				     const struct ibv_ah_attr *ah, int add)
{
	struct msga__udest *free_d = NULL;

	for (uint32_t i = 0; i < MSGA__UD_DESTS_MAX; i++) {
		struct msga__udest *d = &pub->ud.dests[i];

		if (!d->used) {
			if (!free_d && !d->g.retiring)
				free_d = d;
			continue;
		}
		if (d->src_qp == wc->src_qp && d->lid == ah->dlid &&
		    !memcmp(&d->gid, &ah->grh.dgid, sizeof(d->gid)))
			return d;
	}
	return add ? free_d : NULL;
}

static int dest_add(struct msga_pub *pub, struct msga__udest *d,
		    const struct ibv_wc *wc, struct ibv_ah_attr *ah,
		    const char *pattern, uint64_t nonce)
{
	memset(d, 0, sizeof(*d));
	d->g.ah = ibv_create_ah(pub->ctx->pd, ah);
	if (!d->g.ah)
		return -ENOMEM;
	d->g.qpn = wc->src_qp;
	d->g.qkey = msga__ud_remote_qkey(pub->ud.ep, RDMA_UDP_QKEY);
	d->g.state = MSGA__G_READY;
	d->g.counted = 1;
	d->src_qp = wc->src_qp;
	d->gid = ah->grh.dgid;
	d->lid = ah->dlid;
	inet_ntop(AF_INET6, ah->grh.dgid.raw, d->g.name, sizeof(d->g.name));
	snprintf(d->pattern, sizeof(d->pattern), "%s", pattern);
	d->id = pub->ud.next_dest_id++;
	d->nonce = nonce;
	d->used = 1;
	pub->ud.dests_used |= 1ull << (d - pub->ud.dests);
	pub->ud.ndests++;
	pub->st.subscribed++;
	dest_emit(pub, d, MSGA_EVENT_CONNECTED, 0);
	return 0;
}

/* The cookie of a source and nonce in time step `step`: never 0. */
static uint64_t cookie_of(const struct msga__udep *ep,
			  const struct ibv_wc *wc,
			  const struct ibv_ah_attr *ah, uint64_t nonce,
			  uint64_t step)
{
	uint8_t in[16 + 4 + 2 + 8 + 8], out[crypto_shorthash_BYTES];
	uint64_t c;

	_Static_assert(sizeof(ep->cookie_key) == crypto_shorthash_KEYBYTES,
		       "a SipHash key");
	memcpy(in, ah->grh.dgid.raw, 16);
	memcpy(in + 16, &wc->src_qp, 4);
	memcpy(in + 20, &ah->dlid, 2);
	memcpy(in + 22, &nonce, 8);
	memcpy(in + 30, &step, 8);
	crypto_shorthash(out, in, sizeof(in), ep->cookie_key);
	memcpy(&c, out, sizeof(c));
	return c ? c : 1;
}

/* The echoed cookie is ours for this source: this step's or the last. */
static int cookie_ok(const struct msga__udep *ep, const struct ibv_wc *wc,
		     const struct ibv_ah_attr *ah, uint64_t nonce,
		     uint64_t cookie, uint64_t now_ns)
{
	uint64_t step = now_ns / MSGA__UD_COOKIE_STEP_NS;

	return cookie && nonce &&
	       (cookie == cookie_of(ep, wc, ah, nonce, step) ||
		cookie == cookie_of(ep, wc, ah, nonce, step - 1));
}

/*
 * An answer to a source that is no subscriber: an address handle of
 * the few kept for it, free once its last send is done; none free, no
 * answer (the subscriber asks again).
 */
static void send_cookie(struct msga__udep *ep, const struct ibv_wc *wc,
			struct ibv_ah_attr *ah, uint64_t nonce,
			const char *pattern, uint64_t now_ns)
{
	struct msga_pub *pub = ep->pub;
	struct msga__udw_hdr c = { .type = MSGA__UDW_COOKIE };
	struct msga__mgroup *g = NULL;

	for (uint32_t i = 0; i < MSGA__UD_REPLY_AHS && !g; i++)
		if (!pub->ud.dests[MSGA__UD_DESTS_MAX + i].g.inflight)
			g = &pub->ud.dests[MSGA__UD_DESTS_MAX + i].g;
	if (!g || !nonce)
		return;
	if (g->ah)
		ibv_destroy_ah(g->ah);
	memset(g, 0, sizeof(*g));
	g->ah = ibv_create_ah(pub->ctx->pd, ah);
	if (!g->ah)
		return;
	g->qpn = wc->src_qp;
	g->qkey = msga__ud_remote_qkey(ep, RDMA_UDP_QKEY);
	g->state = MSGA__G_READY;
	g->counted = 1;
	c.seq = nonce;
	c.origin = cookie_of(ep, wc, ah, nonce,
			     now_ns / MSGA__UD_COOKIE_STEP_NS);
	/* signalled: its completion frees the address handle for reuse */
	if (!put_ctl(ep, g, &c, pattern, 1))
		ep->cookies_sent++;
}

/* Subscribers of source gid: at most MSGA__UD_DESTS_PER_SOURCE. */
static uint32_t dests_of(const struct msga_pub *pub, const union ibv_gid *gid)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < MSGA__UD_DESTS_MAX; i++)
		n += pub->ud.dests[i].used &&
		     !memcmp(&pub->ud.dests[i].gid, gid, sizeof(*gid));
	return n;
}

static void on_subscribe(struct msga__udep *ep, const struct ibv_wc *wc,
			 const void *grh, const struct msga__udw_hdr *h,
			 const char *pattern, uint64_t now_ns)
{
	struct msga_pub *pub = ep->pub;
	struct ibv_ah_attr ah;
	struct msga__udest *d;

	if (msga__pattern_check(pattern) ||
	    ibv_init_ah_from_wc(ep->ctx->verbs, ep->ctx->port,
				(struct ibv_wc *)wc, (struct ibv_grh *)grh,
				&ah))
		return;
	d = dest_find(pub, wc, &ah, 0);
	if (d && d->nonce == h->seq) /* a subscriber's keepalive */
		goto ack;
	if (!cookie_ok(ep, wc, &ah, h->seq, h->origin, now_ns)) {
		ep->cookies_bad += h->origin != 0;
		pub->st.spoofed += h->origin != 0;
		send_cookie(ep, wc, &ah, h->seq, pattern, now_ns);
		return;
	}
	if (d) { /* the same QP subscribes anew: the new nonce, pattern */
		d->nonce = h->seq;
		snprintf(d->pattern, sizeof(d->pattern), "%s", pattern);
		d->ann = 0;
		memset(d->match, 0, sizeof(d->match));
		goto ack;
	}
	if (dests_of(pub, &ah.grh.dgid) >= MSGA__UD_DESTS_PER_SOURCE) {
		ep->source_full++;
		pub->st.refused_limits++;
		return; /* the subscriber times out and says so */
	}
	d = dest_find(pub, wc, &ah, 1);
	if (!d) {
		ep->dests_full++;
		pub->st.refused_limits++;
		return; /* full: the subscriber times out and says so */
	}
	if (dest_add(pub, d, wc, &ah, pattern, h->seq))
		return;
ack:
	d->last_seen_ns = now_ns;
	send_ctl(ep, &d->g, MSGA__UDW_SUBACK, d->nonce, 0, d->pattern);
}

void msga__upub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns)
{
	const char *buf = ep->rx_buf + (size_t)slot->idx * ep->rx_slot;
	char pattern[MSGA_TOPIC_MAX + 2];
	struct msga__udw_hdr h;
	struct msga__udest *d;
	struct ibv_ah_attr ah;

	if (wc->byte_len < MSGA__UD_GRH ||
	    msga__udw_get(buf + MSGA__UD_GRH, wc->byte_len - MSGA__UD_GRH,
			  &h) || h.type == MSGA__UDW_DATA)
		goto repost; /* a publisher takes only control datagrams */
	memcpy(pattern, h.topic, h.topic_len);
	pattern[h.topic_len] = '\0';
	if (h.type == MSGA__UDW_SUBSCRIBE) {
		on_subscribe(ep, wc, buf, &h, pattern, now_ns);
	} else if (h.type == MSGA__UDW_NAK && ep->pub->ud.reliable &&
		   ep->state != MSGA__UDEP_CLOSING &&
		   !ibv_init_ah_from_wc(ep->ctx->verbs, ep->ctx->port,
					(struct ibv_wc *)wc,
					(struct ibv_grh *)buf, &ah) &&
		   (d = dest_find(ep->pub, wc, &ah, 0))) {
		/* resends go to the one who asked (mcast_retx.c) */
		ep->pub->ud.naks_taken++;
		ep->pub->ud.up->nak(ep->pub, &h, &d->g, now_ns);
	} else if (h.type == MSGA__UDW_UNSUBSCRIBE &&
		   !ibv_init_ah_from_wc(ep->ctx->verbs, ep->ctx->port,
					(struct ibv_wc *)wc,
					(struct ibv_grh *)buf, &ah) &&
		   (d = dest_find(ep->pub, wc, &ah, 0)) && d->nonce == h.seq) {
		dest_drop(ep->pub, d, 0); /* (its nonce: not a forger's) */
	}
repost:
	if (!msga__udep_dead(ep) && msga__udep_post_recv(ep, slot->idx))
		msga__udep_kill(ep, -EIO, 1);
}

/* Bits of the subscribers whose pattern matches topic_id. */
_Static_assert(MSGA__UD_DESTS_MAX <= 64, "dests_used has a bit per place");

uint64_t msga__upub_targets(struct msga_pub *pub, uint32_t topic_id,
			    uint32_t *count)
{
	uint64_t mask = 0;
	uint32_t n = 0;

	/* (every message: only the places in use, not all of them) */
	for (uint64_t u = pub->ud.dests_used; u; u &= u - 1) {
		uint32_t i = (uint32_t)__builtin_ctzll(u);
		struct msga__udest *d = &pub->ud.dests[i];

		for (; d->ann < pub->ntopics; d->ann++)
			if (msga__topic_match(d->pattern,
					      pub->topics[d->ann].name))
				d->match[d->ann / 64] |= 1ull << (d->ann % 64);
		if (d->match[topic_id / 64] >> (topic_id % 64) & 1) {
			mask |= 1ull << i;
			n++; /* (a popcount is a libgcc call without -mpopcnt) */
		}
	}
	*count = n;
	return mask;
}

/*
 * Forget subscribers that stopped saying they are there. Returns when the
 * next of them would be due (UINT64_MAX: none), for event mode's timer.
 */
uint64_t msga__upub_tick(struct msga_pub *pub, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; pub->ud.ndests && i < MSGA__UD_DESTS_MAX; i++) {
		struct msga__udest *d = &pub->ud.dests[i];

		uint64_t dead_at = d->last_seen_ns + pub->ctx->peer_timeout_ns + 1;

		if (!d->used)
			continue;
		if (msga__time_reached(now_ns, dead_at))
			dest_drop(pub, d, -ETIMEDOUT);
		else if (dead_at < next)
			next = dead_at;
	}
	return next;
}

void msga__upub_fini(struct msga_pub *pub)
{
	for (uint32_t i = 0;
	     pub->ud.dests && i < MSGA__UD_DESTS_MAX + MSGA__UD_REPLY_AHS; i++)
		if (pub->ud.dests[i].g.ah)
			ibv_destroy_ah(pub->ud.dests[i].g.ah);
	free(pub->ud.dests);
	pub->ud.dests = NULL;
}

/* ------------------------------------------------------------ subscriber */

/*
 * A membership conn_id to the publisher at dst (peer names it in events),
 * resolving its address; cb its owner's table (mcast_sub.c's
 * msga__usub_cb), r its reconnection record (NULL: none), quiet if a
 * failure of it was told already (a retry). Returns 0, or -errno with
 * nothing left behind but r, still the caller's.
 */
static int usub_start(struct msga_sub *sub, const char *peer,
		      const struct sockaddr_storage *dst, uint32_t conn_id,
		      const struct msga__udep_cb *cb, struct msga__retry *r,
		      int quiet)
{
	struct msga_ctx *ctx = sub->ctx;
	struct msga__udep *ep;
	int ret;

	ret = sub->ud.up->init(sub);
	if (!ret)
		ret = msga__udep_new(ctx, cb, sub->ud.rx_depth,
				     MSGA__UD_SUB_SQ_DEPTH, NULL, &ep);
	if (ret)
		return ret;
	ep->sub = sub;
	ep->unicast = 1;
	ep->nonce = random_u64();
	ep->id = conn_id;
	ep->quiet_fail = quiet;
	msga__udep_on(ep, MSGA__UDEP_EV_RESOLVE);
	ep->started_ns = msga__now_ns();
	snprintf(ep->peer.name, sizeof(ep->peer.name), "%s", peer);
	msga__list_add_tail(&sub->ud.mships, &ep->own_node);
	msga__ctx_cm_soon(ctx);
	if (rdma_resolve_addr(ep->cm, NULL, (struct sockaddr *)dst, 2000)) {
		ret = msga__neg_errno(EHOSTUNREACH);
		msga__ctx_fail(ctx, ret, "msga_sub_connect(ud://%s): "
			       "rdma_resolve_addr", peer);
		msga__udep_free(ep);
		return ret == -ENOMEM ? ret : -EHOSTUNREACH;
	}
	ep->retry = r;
	return 0;
}

/*
 * msga_sub_connect(ud://...): a membership, with its reconnection record
 * unless the subscriber wants none (MSGA_SUB_NO_RECONNECT). 0 with *id
 * its conn_id, or -errno.
 */
int msga__usub_connect(struct msga_sub *sub, const char *uri,
		       const struct msga__udep_cb *cb, uint32_t *id)
{
	const char *peer = uri + strlen("ud://");
	struct msga_ctx *ctx = sub->ctx;
	struct msga__retry *r = NULL;
	struct sockaddr_storage dst;
	int ret;

	if (msga__parse_uri_as(uri, "ud://", &dst))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_connect: bad "
				      "uri '%s'", uri);
	if (sodium_init() < 0)
		return msga__ctx_fail(ctx, -ENOMEM, "msga_sub_connect: "
				      "sodium_init");
	if (!(sub->flags & MSGA_SUB_NO_RECONNECT)) {
		r = msga__retry_new(peer, &dst);
		if (!r)
			return -ENOMEM;
	}
	ret = usub_start(sub, peer, &dst, sub->next_id, cb, r, 0);
	if (ret < 0) {
		free(r);
		return ret;
	}
	*id = sub->next_id++;
	return 0;
}

/*
 * ep ended for a reason that may pass: its record waits for the next try
 * on the same conn_id (lib/core/retry.h), unless the subscriber wants
 * none, is going, or the status is final (lib/proto/backoff.h). The
 * streams it brought go with it: a restarted publisher's are a new
 * origin, and the old ones must not be reported silent later under the
 * conn_id that lives on.
 */
static void retry_later(struct msga__udep *ep, int status)
{
	struct msga__retry *r = ep->retry;
	struct msga_sub *sub = ep->sub;

	if (!r || msga__backoff_final(status) ||
	    (sub->flags & MSGA_SUB_NO_RECONNECT) || sub->dead)
		return;
	ep->retry = NULL;
	r->id = ep->id;
	msga__retry_wait(&sub->ud.retries, r, ep->was_ready, msga__now_ns());
	if (!(sub->flags & MSGA_SUB_AB_LINES))
		msga__ustreams_evict_conn(&sub->ud.streams, ep->id);
}

/* A membership's end (struct msga__udep_cb's on_end): one the subscriber
 * did not ask for may be tried again. */
void msga__usub_on_end(struct msga__udep *ep, int status, int notify)
{
	if (notify && ep->sub)
		retry_later(ep, status);
}

/*
 * The memberships whose try is due (cb: their owner's table); returns when
 * the next one is (UINT64_MAX: none), for event mode's timer.
 */
uint64_t msga__usub_retry_tick(struct msga_sub *sub,
			       const struct msga__udep_cb *cb, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;
	struct msga__retry *r;

	while ((r = msga__retry_due(&sub->ud.retries, now_ns, &next)))
		if (usub_start(sub, r->peer, &r->ss, r->id, cb, r, 1) < 0)
			msga__retry_wait(&sub->ud.retries, r, 0, now_ns);
	/* (one put back is due later: the walk that ends the loop saw it) */
	return next;
}

/* msga_sub_disconnect of a conn_id that waits to try again: 0, -ENOENT. */
int msga__usub_retry_cancel(struct msga_sub *sub, uint32_t conn_id)
{
	return msga__retry_cancel(&sub->ud.retries, conn_id);
}

static void fail(struct msga__udep *ep, int status)
{
	if (ep->state == MSGA__UDEP_READY) {
		msga__udep_kill(ep, status, 1); /* (on_end: try again?) */
		return;
	}
	if (!ep->quiet_fail) /* (a retry's: told once) */
		msga__udep_emit(ep, &ep->peer, MSGA_EVENT_CONNECT_FAILED,
				status);
	retry_later(ep, status);
	msga__udep_kill(ep, status, 0);
}

static int subscribe(struct msga__udep *ep, uint64_t now_ns)
{
	ep->next_tx_ns = now_ns + (ep->state == MSGA__UDEP_READY ?
				   msga__keepalive_ns(ep->ctx) : MSGA__UD_RESEND_NS);
	return send_ctl(ep, &ep->peer, MSGA__UDW_SUBSCRIBE, ep->nonce,
			ep->cookie, ep->sub->pattern);
}

/* SIDR reply: the publisher's QP; then say what we want. */
static int on_established(struct msga__udep *ep,
			  const struct rdma_cm_event *ev)
{
	struct ibv_ah_attr ah = ev->param.ud.ah_attr;

	ep->peer.ah = ibv_create_ah(ep->ctx->pd, &ah);
	if (!ep->peer.ah)
		return msga__neg_errno(ENOMEM);
	ep->peer.qpn = ev->param.ud.qp_num;
	ep->peer.qkey = msga__ud_remote_qkey(ep, ev->param.ud.qkey);
	ep->peer_gid = ah.grh.dgid;
	ep->peer_global = ah.is_global;
	msga__udep_on(ep, MSGA__UDEP_EV_PEER_FOUND);
	ep->last_heard_ns = msga__now_ns();
	return subscribe(ep, ep->last_heard_ns);
}

static int cm_status(const struct rdma_cm_event *ev)
{
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		return -ECONNREFUSED;
	return ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
}

void msga__usub_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev)
{
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(ep->cm, 2000))
			ret = msga__neg_errno(EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (rdma_connect(ep->cm, &(struct rdma_conn_param){ 0 }))
			ret = msga__neg_errno(ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = on_established(ep, ev);
		break;
	default:
		ret = cm_status(ev);
		break;
	}
	if (ret)
		fail(ep, ret);
}

/*
 * Whether a datagram comes from the publisher this membership connected
 * to: its QP, and its GID where the path has one. The only source a
 * ud:// subscriber takes anything from.
 */
int msga__usub_from_peer(const struct msga__udep *ep, const struct ibv_wc *wc,
			 const void *grh)
{
	union ibv_gid gid;

	if (ep->state == MSGA__UDEP_RESOLVING || wc->src_qp != ep->peer.qpn)
		return 0;
	if (!ep->peer_global)
		return 1; /* (InfiniBand in one subnet: the LID) */
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	msga__ud_sender_gid(grh, &gid);
	return !memcmp(&gid, &ep->peer_gid, sizeof(gid));
}

/*
 * The publisher's answers, which echo our nonce: a COOKIE (we subscribe
 * again at once, echoing it), a SUBACK: subscribed (the first), or the
 * publisher is still there. Anything else is not ours.
 */
void msga__usub_on_ctl(struct msga__udep *ep, const struct msga__udw_hdr *h,
		       uint64_t now_ns)
{
	if ((h->type != MSGA__UDW_SUBACK && h->type != MSGA__UDW_COOKIE) ||
	    ep->state == MSGA__UDEP_RESOLVING || h->seq != ep->nonce) {
		ep->sub->ud.st.spoofed++;
		return;
	}
	ep->last_heard_ns = now_ns;
	if (h->type == MSGA__UDW_COOKIE) {
		ep->cookie = h->origin;
		subscribe(ep, now_ns);
		return;
	}
	if (ep->state == MSGA__UDEP_READY)
		return;
	msga__udep_on(ep, MSGA__UDEP_EV_SUBACK);
	ep->was_ready = 1;
	ep->next_tx_ns = now_ns + msga__keepalive_ns(ep->ctx);
	msga__udep_emit(ep, &ep->peer, MSGA_EVENT_CONNECTED, 0);
}

/*
 * Resolving too long, a silent publisher, a keepalive or a SUBSCRIBE
 * resend due. Returns when this endpoint next needs a tick (UINT64_MAX:
 * never), for event mode's timer.
 */
uint64_t msga__usub_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t dead_at;

	if (msga__udep_dead(ep))
		return UINT64_MAX;
	/* resolving for too long, or a publisher gone quiet */
	dead_at = (ep->state == MSGA__UDEP_RESOLVING ? ep->started_ns :
						     ep->last_heard_ns) +
		  ep->ctx->peer_timeout_ns + 1;
	if (msga__time_reached(now_ns, dead_at)) {
		fail(ep, -ETIMEDOUT);
		return UINT64_MAX;
	}
	if (ep->state == MSGA__UDEP_RESOLVING)
		return dead_at;
	if (now_ns >= ep->next_tx_ns)
		subscribe(ep, now_ns);
	return ep->next_tx_ns < dead_at ? ep->next_tx_ns : dead_at;
}

/* Before leaving: tell the publisher, so it stops sending at once. */
void msga__usub_leave(struct msga__udep *ep)
{
	if (ep->state == MSGA__UDEP_SUBSCRIBING ||
	    ep->state == MSGA__UDEP_READY)
		send_ctl(ep, &ep->peer, MSGA__UDW_UNSUBSCRIBE, ep->nonce, 0,
			 ep->sub->pattern);
}
