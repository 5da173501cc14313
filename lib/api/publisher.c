/* SPDX-License-Identifier: MIT */
/*
 * publisher.c - msga_pub_*: check the arguments, register topics, claim
 * send buffers, and keep the publisher's life; everything on the wire is
 * its transport's, reached through the table msga_pub_create() picks by
 * the uri's scheme (struct msga__pub_ops, pubsub.h): rdma:// fans out
 * over RC (lib/rc/rc_fanout.c), mcast:// and ud:// send datagrams
 * (lib/ud/mcast_pub.c, ud_unicast.c).
 *
 * A claimed message lives in one registered send buffer that the
 * transport sends from without a copy. A claim or send back-pressures
 * (-EAGAIN) while the transport has no room for it (its ready op), or
 * waits for room with MSGA_PUB_BLOCK.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyfile.h"
#include "pubsub.h"
#include "resolver.h"
#include "reject_limit.h"
#include "slow_consumer.h"
#include "stat_export.h"
#include "topic.h"
#include "ud_wire.h"

#define PUB_ATTR_MIN_SIZE \
	(offsetof(struct msga_pub_attr, user) + sizeof(void *))
#define CLAIM_BIG MSGA__SLOT_BIG
#define CLAIM_INLINE MSGA__SLOT_INLINE /* no send buffer (msga_pub_send) */
#define PUB_ATTR_HAS MSGA__PUB_ATTR_HAS


static const struct msga__ep_ops pub_ep_ops;
static void pub_free(struct msga_pub *pub);
static void pub_withdraw(struct msga_pub *pub);


static int pub_alloc(struct msga_pub *pub)
{
	pub->topics = calloc(MSGA_PUB_TOPICS_MAX, sizeof(*pub->topics));
	pub->tx_ref = calloc(MSGA__PUB_TX_SLOTS, sizeof(*pub->tx_ref));
	pub->tx_free = calloc(MSGA__PUB_TX_SLOTS, sizeof(*pub->tx_free));
	if (!pub->topics || !pub->tx_ref || !pub->tx_free)
		return -ENOMEM;
	pub->tx_buf = msga__reg_buf(pub->ctx, (size_t)MSGA__PUB_TX_SLOTS *
				    MSGA__DATA_SLOT, &pub->tx_mr);
	if (!pub->tx_buf)
		return msga__neg_errno(ENOMEM);
	for (uint32_t i = 0; i < MSGA__PUB_TX_SLOTS; i++)
		pub->tx_free[i] = MSGA__PUB_TX_SLOTS - 1 - i;
	pub->tx_nfree = MSGA__PUB_TX_SLOTS;
	return 0;
}

/*
 * UD streams' heartbeats (0.6): the first after heartbeat_ms of silence,
 * then twice as far apart each time, up to the cap their datagrams
 * announce. The cap is a fifth of the peer timeout, as for keepalives, so
 * a subscriber with the same timeout hears several before it gives up.
 */
static int pub_heartbeat(struct msga_pub *pub,
			 const struct msga_pub_attr *attr)
{
	uint64_t ms = MSGA_HEARTBEAT_DEFAULT_MS, cap_ms;

	if (PUB_ATTR_HAS(attr, heartbeat_ms)) {
		if (attr->heartbeat_ms < MSGA_HEARTBEAT_MIN_MS ||
		    attr->heartbeat_ms > MSGA_HEARTBEAT_MAX_MS)
			return msga__ctx_fail(pub->ctx, -EINVAL,
					      "msga_pub_create: heartbeat_ms "
					      "%u is not 0 or %u to %u",
					      attr->heartbeat_ms,
					      MSGA_HEARTBEAT_MIN_MS,
					      MSGA_HEARTBEAT_MAX_MS);
		ms = attr->heartbeat_ms;
	}
	cap_ms = pub->ctx->peer_timeout_ns / 5000000u;
	if (cap_ms < ms)
		cap_ms = ms;
	if (cap_ms > MSGA__UDW_HB_MS_MAX)
		cap_ms = MSGA__UDW_HB_MS_MAX;
	pub->ud.hb_ns = ms * 1000000u;
	pub->ud.hb_cap_ms = (uint16_t)cap_ms;
	return 0;
}

/*
 * MSGA_PUB_RELIABLE (0.6): a UD publisher (mcast://, ud://) keeps
 * retransmit_bytes of messages to answer NAKs (mcast_retx.c), which its
 * open sets up. RC is reliable already: the flag changes nothing there.
 */
static int pub_reliable(struct msga_pub *pub, const struct msga_pub_attr *attr,
			uint64_t *bytesp)
{
	uint64_t bytes = MSGA_RETRANSMIT_DEFAULT_BYTES;

	if (PUB_ATTR_HAS(attr, retransmit_bytes)) {
		if (attr->retransmit_bytes < MSGA_RETRANSMIT_MIN_BYTES ||
		    attr->retransmit_bytes > MSGA_RETRANSMIT_MAX_BYTES)
			return msga__ctx_fail(pub->ctx, -EINVAL,
					      "msga_pub_create: retransmit_bytes"
					      " %llu is not 0 or %u to %llu",
					      (unsigned long long)
					      attr->retransmit_bytes,
					      MSGA_RETRANSMIT_MIN_BYTES,
					      (unsigned long long)
					      MSGA_RETRANSMIT_MAX_BYTES);
		bytes = attr->retransmit_bytes;
	}
	*bytesp = bytes;
	return 0;
}

/* Copy the allow list, checking each entry ("IDENTITY PATTERN"). */
static int pub_allow(struct msga_pub *pub, const char *const *allow)
{
	uint32_t n = 0;

	while (allow[n])
		if (msga__allow_entry_check(allow[n++]) || n > MSGA_PUB_ALLOW_MAX)
			return msga__ctx_fail(pub->ctx, -EINVAL,
					      "msga_pub_create: allow[%u] is "
					      "not \"IDENTITY PATTERN\" (or "
					      "past %u entries)", n - 1,
					      MSGA_PUB_ALLOW_MAX);
	pub->rc.allow = calloc(n ? n : 1, sizeof(*pub->rc.allow));
	if (!pub->rc.allow)
		return -ENOMEM;
	for (pub->rc.nallow = 0; pub->rc.nallow < n; pub->rc.nallow++) {
		pub->rc.allow[pub->rc.nallow] = strdup(allow[pub->rc.nallow]);
		if (!pub->rc.allow[pub->rc.nallow])
			return -ENOMEM;
	}
	return 0;
}

/* Access control and handshake limits (msgaccel(7), SECURITY). */
static int pub_handshakes(struct msga_pub *pub,
			  const struct msga_pub_attr *attr)
{
	struct msga_ctx *ctx = pub->ctx;
	uint32_t per_s = MSGA_REJECT_EVENTS_DEFAULT;

	pub->rc.max_handshakes = MSGA_PUB_HANDSHAKES_DEFAULT;
	pub->rc.handshake_ns = MSGA_HANDSHAKE_DEFAULT_MS * 1000000ull;
	if (PUB_ATTR_HAS(attr, reject_events_per_s) &&
	    attr->reject_events_per_s)
		per_s = attr->reject_events_per_s;
	msga__reject_limit_init(&pub->rejects, per_s);
	if (attr->size < offsetof(struct msga_pub_attr, reserved))
		return 0;
	if (attr->max_handshakes) {
		if (attr->max_handshakes > (pub->rc.max_conns ?
					    pub->rc.max_conns :
					    MSGA_PUB_CONNS_MAX))
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "max_handshakes %u is above "
					      "max_conns", attr->max_handshakes);
		pub->rc.max_handshakes = attr->max_handshakes;
	}
	if (attr->handshake_ms) {
		if (attr->handshake_ms < MSGA_HANDSHAKE_MIN_MS ||
		    attr->handshake_ms > MSGA_HANDSHAKE_MAX_MS)
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "handshake_ms %u is not 0 or %u "
					      "to %u", attr->handshake_ms,
					      MSGA_HANDSHAKE_MIN_MS,
					      MSGA_HANDSHAKE_MAX_MS);
		pub->rc.handshake_ns = attr->handshake_ms * 1000000ull;
	}
	if ((attr->allow || attr->authorize) && !ctx->keys)
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: allow "
				      "and authorize need a context with "
				      "keys (key_file or key)");
	if ((attr->allow || attr->authorize) &&
	    (!attr->uri || strncmp(attr->uri, "rdma://", 7)))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: allow "
				      "and authorize are for rdma:// "
				      "publishers");
	pub->rc.authorize = attr->authorize;
	return attr->allow ? pub_allow(pub, attr->allow) : 0;
}

static int pub_limits(struct msga_pub *pub, const struct msga_pub_attr *attr)
{
	struct msga_ctx *ctx = pub->ctx;
	int ret;

	pub->slow_ns = MSGA_SLOW_CONSUMER_DEFAULT_PEER_TIMEOUTS *
		       ctx->peer_timeout_ns;
	pub->rc.max_conns = MSGA_PUB_CONNS_DEFAULT;
	if (PUB_ATTR_HAS(attr, slow_consumer_ms)) {
		if (attr->slow_consumer_ms < MSGA_PEER_TIMEOUT_MIN_MS ||
		    attr->slow_consumer_ms > MSGA_PEER_TIMEOUT_MAX_MS)
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "slow_consumer_ms %u is not 0 "
					      "or %u to %u",
					      attr->slow_consumer_ms,
					      MSGA_PEER_TIMEOUT_MIN_MS,
					      MSGA_PEER_TIMEOUT_MAX_MS);
		pub->slow_ns = (uint64_t)attr->slow_consumer_ms * 1000000u;
	}
	if (PUB_ATTR_HAS(attr, max_conns)) {
		if (attr->max_conns > MSGA_PUB_CONNS_MAX)
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "max_conns %u is above %u",
					      attr->max_conns,
					      MSGA_PUB_CONNS_MAX);
		pub->rc.max_conns = attr->max_conns;
	}
	ret = pub_handshakes(pub, attr);
	return ret ? ret : pub_heartbeat(pub, attr);
}

/* The one place that names the transports: the uri's scheme. */
static const struct msga__pub_ops *pub_ops_for(const char *uri)
{
	if (uri && !strncmp(uri, "mcast://", 8))
		return &msga__mcast_pub_ops;
	if (uri && !strncmp(uri, "ud://", 5))
		return &msga__ud_pub_ops;
	return &msga__rc_pub_ops;
}

MSGA_API int msga_pub_create(struct msga_ctx *ctx,
			     const struct msga_pub_attr *attr,
			     struct msga_pub **pubp)
{
	const struct msga__pub_ops *ops;
	struct msga__pub_args args = { 0 };
	struct msga_pub *pub;
	int ret;

	if (pubp)
		*pubp = NULL;
	if (!ctx || !attr || !pubp || attr->size < PUB_ATTR_MIN_SIZE ||
	    (attr->flags & ~(uint32_t)(MSGA_PUB_BLOCK | MSGA_PUB_RELIABLE |
				       MSGA_PUB_MAC | MSGA_PUB_NO_COALESCE |
				       MSGA_PUB_LAST_VALUE)))
		return -EINVAL;
	if (PUB_ATTR_HAS(attr, reserved) || PUB_ATTR_HAS(attr, reserved3))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: a "
				      "reserved field is not 0");
	if ((attr->flags & MSGA_PUB_MAC) && !ctx->keys)
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "MSGA_PUB_MAC needs a context with keys");
	if (PUB_ATTR_HAS(attr, linger_ms) &&
	    attr->linger_ms > MSGA_LINGER_MAX_MS)
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "linger_ms %u is above %u",
				      attr->linger_ms, MSGA_LINGER_MAX_MS);
	ops = pub_ops_for(attr->uri);
	/* (datagrams: the retransmit buffer serves a late joiner's last
	 * message, msgaccel(7) LAST VALUE) */
	if ((attr->flags & MSGA_PUB_LAST_VALUE) && ops != &msga__rc_pub_ops &&
	    !(attr->flags & MSGA_PUB_RELIABLE))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "MSGA_PUB_LAST_VALUE over mcast:// or "
				      "ud:// needs MSGA_PUB_RELIABLE");
	ret = ops->check(ctx, attr);
	if (ret)
		return ret;
	pub = calloc(1, sizeof(*pub));
	if (!pub)
		return -ENOMEM;
	if ((attr->flags & MSGA_PUB_LAST_VALUE) && ops == &msga__rc_pub_ops &&
	    !(pub->lv = calloc(1, sizeof(*pub->lv)))) {
		free(pub);
		return -ENOMEM;
	}
	pub->ops = ops;
	pub->ctx = ctx;
	pub->flags = attr->flags;
	pub->db_coalesce = !(attr->flags & MSGA_PUB_NO_COALESCE);
	pub->on_event = attr->on_event;
	pub->user = attr->user;
	if (attr->size >= offsetof(struct msga_pub_attr, max_datagram) +
			  sizeof(attr->max_datagram))
		pub->ud.max_datagram = attr->max_datagram;
	if (PUB_ATTR_HAS(attr, linger_ms))
		pub->linger_ms = attr->linger_ms;
	msga__list_init(&pub->rc.conns);
	msga__ep_add(ctx, &pub->eng, &pub_ep_ops, 0);
	ret = pub_limits(pub, attr);
	if (!ret)
		ret = pub_alloc(pub);
	if (!ret && (attr->flags & MSGA_PUB_RELIABLE))
		ret = pub_reliable(pub, attr, &args.retransmit_bytes);
	args.uri = attr->uri;
	snprintf(pub->label, sizeof(pub->label), "%s", attr->uri);
	args.uri_b = PUB_ATTR_HAS(attr, uri_b) ? attr->uri_b : NULL;
	if (!ret)
		ret = ops->open(pub, &args);
	if (ret) {
		msga_pub_destroy(pub);
		return ret;
	}
	*pubp = pub;
	msga__pub_work(pub); /* (a multicast publisher always has some) */
	return 0;
}

/*
 * Destroyed from a callback: stop everything that could call the user
 * again (connections, the endpoint), stay on every list so that walks in
 * progress go on safely, and wait for the reap (endpoint.h).
 */
static void pub_bury(struct msga_pub *pub)
{
	pub->dead = 1;
	msga__ctx_reap_soon(pub->ctx);
	pub->ops->bury(pub);
}

static int pub_flush(struct msga_pub *pub, int timeout_ms);
static int pub_ring(struct msga_pub *pub);

MSGA_API void msga_pub_destroy(struct msga_pub *pub)
{
	if (!pub || pub->dead)
		return;
	/* (a callback cannot poll: no linger there) */
	if (pub->linger_ms && !pub->ctx->busy && !pub->ctx->closing) {
		struct msga_ctx *ctx = pub->ctx;
		int dead;

		msga__ctx_enter(ctx);
		pub_flush(pub, (int)pub->linger_ms);
		dead = pub->dead; /* (read before the leave may free it) */
		msga__ctx_leave(ctx);
		if (dead)
			return; /* a callback during the linger destroyed it */
	}
	pub_ring(pub); /* (nothing committed stays held back) */
	pub_withdraw(pub);
	if (pub->ops->close)
		pub->ops->close(pub); /* (multicast: each stream's END) */
	if (pub->ctx->busy)
		pub_bury(pub); /* from a callback: freed later */
	else
		pub_free(pub);
}

static void pub_free(struct msga_pub *pub)
{
	pub_withdraw(pub); /* (a half-made publisher's) */
	for (uint32_t i = 0; i < pub->rc.nallow; i++)
		free(pub->rc.allow[i]);
	free(pub->rc.allow);
	msga__pub_export_free(pub);
	pub->ops->free(pub); /* its queue pairs first: they use tx_mr */
	if (pub->tx_mr)
		ibv_dereg_mr(pub->tx_mr);
	if (pub->big_mr)
		ibv_dereg_mr(pub->big_mr);
	msga__ep_del(&pub->eng);
	free(pub->tx_buf);
	free(pub->big_buf);
	free(pub->tx_ref);
	free(pub->tx_free);
	free(pub->topics);
	if (pub->lv)
		msga__lv_free(pub->lv);
	free(pub->lv);
	free(pub);
}

MSGA_API int msga_pub_port(const struct msga_pub *pub)
{
	return pub ? pub->ops->port(pub) : -EINVAL;
}

MSGA_API int msga_pub_subscribers(const struct msga_pub *pub)
{
	return pub ? pub->ops->subscribers(pub) : -EINVAL;
}

static struct msga_pub *pub_of(struct msga__ep *ep)
{
	return msga__container_of(ep, struct msga_pub, eng);
}

/* The events of the publisher's own id (rdma://: connection requests). */
static void pub_on_cm(struct msga__ep *ep, const struct rdma_cm_event *ev)
{
	struct msga_pub *pub = pub_of(ep);

	if (pub->ops->on_cm)
		pub->ops->on_cm(pub, ev);
}

/* ---------------------------------------------------- publishing */

static int topic_ok(const struct msga_pub *pub, uint32_t topic_id)
{
	return topic_id < pub->ntopics;
}

/*
 * Topic resolution: in a context that advertises, topic_id's adverts
 * start (lib/core/resolver.h), one a line (a multicast uri_b has two).
 * 0, or -errno (the topic is not made: a publisher that says it
 * advertises must be found; a line advertised already is withdrawn).
 */
static int pub_advertise(struct msga_pub *pub, uint32_t topic_id)
{
	if (!msga__resolver_advertises(pub->ctx) || !pub->ops->advert)
		return 0;
	if (!pub->adverts) {
		pub->adverts = calloc(2 * MSGA_PUB_TOPICS_MAX,
				      sizeof(*pub->adverts));
		if (!pub->adverts)
			return msga__ctx_fail(pub->ctx, -ENOMEM,
					      "msga_pub_topic: advert");
	}
	for (uint32_t line = 0; line < 2; line++) {
		struct msga__trw_advert a = { .kind = 0 };
		int ret;

		if (!pub->ops->advert(pub, topic_id, line, &a))
			break;
		strcpy(a.topic, pub->topics[topic_id].name); /* (fits) */
		ret = msga__resolver_add(pub->ctx, &a,
					 &pub->adverts[2 * topic_id + line]);
		if (ret) {
			while (line--) {
				msga__resolver_del(pub->ctx, pub->adverts[
						   2 * topic_id + line]);
				pub->adverts[2 * topic_id + line] = NULL;
			}
			return ret;
		}
	}
	return 0;
}

/* A clean end: every advertised topic is withdrawn on the group. */
static void pub_withdraw(struct msga_pub *pub)
{
	if (!pub->adverts)
		return;
	for (uint32_t i = 0; i < 2 * pub->ntopics; i++)
		msga__resolver_del(pub->ctx, pub->adverts[i]);
	free(pub->adverts);
	pub->adverts = NULL;
}

MSGA_API int msga_pub_topic(struct msga_pub *pub, const char *name,
			    uint32_t *topic_id)
{
	uint32_t i;

	if (!pub || !topic_id || msga__topic_check(name))
		return -EINVAL;
	for (i = 0; i < pub->ntopics; i++)
		if (!strcmp(pub->topics[i].name, name))
			break;
	if (i == MSGA_PUB_TOPICS_MAX)
		return -ENOSPC;
	if (i == pub->ntopics) {
		int ret;

		strcpy(pub->topics[i].name, name);
		pub->topics[i].seq = 0;
		pub->ntopics++;
		ret = pub->ops->topic_added(pub, i);
		if (!ret)
			ret = pub_advertise(pub, i);
		if (ret) {
			pub->ntopics--; /* (it never was) */
			return ret;
		}
		msga__pub_work(pub);
	}
	*topic_id = i;
	return 0;
}

static int big_buffer(struct msga_pub *pub)
{
	if (pub->big_buf)
		return 0;
	pub->big_buf = msga__reg_buf(pub->ctx, MSGA_MSG_MAX, &pub->big_mr);
	return pub->big_buf ? 0 : msga__neg_errno(ENOMEM);
}

/*
 * Room for a message of len bytes on every matching subscriber (and a send
 * buffer, if it needs one): -EAGAIN when there is none yet, or with
 * MSGA_PUB_BLOCK poll until there is. The one wait of claim and send, and
 * a bounded one: subscribers holding it up are dropped within the
 * slow-consumer time, so after twice that it ends with -ETIMEDOUT.
 */
static int room_for(struct msga_pub *pub, uint32_t topic_id, size_t len,
		    int need_buf)
{
	uint64_t give_up = 0, now, start = 0;
	int ret;

	for (;;) {
		ret = pub->big_busy ? -EAGAIN :
		      pub->ops->ready(pub, topic_id, len);

		if (!ret && need_buf && !pub->tx_nfree)
			ret = -EAGAIN;
		if (ret == -EAGAIN && pub->ops->held_up)
			pub->ops->held_up(pub);
		if (ret == -EAGAIN && !(pub->flags & MSGA_PUB_BLOCK))
			pub->st.eagain++;
		if (ret != -EAGAIN || !(pub->flags & MSGA_PUB_BLOCK))
			break;
		now = msga__now_ns();
		if (!give_up) {
			give_up = now + msga__slow_wait_ns(pub->slow_ns);
			start = now;
		} else if (now >= give_up) {
			pub->st.blocked_ns += now - start;
			return msga__ctx_fail(pub->ctx, -ETIMEDOUT,
					      "msga_pub_claim/send: no room "
					      "for %llu ms",
					      (unsigned long long)
					      (msga__slow_wait_ns(pub->slow_ns) /
					       1000000u));
		}
		/* (from a callback of this context: -EDEADLK) */
		ret = msga_ctx_poll(pub->ctx, 64);
		if (ret < 0 || pub->dead) {
			pub->st.blocked_ns += msga__now_ns() - start;
			/* (-ESHUTDOWN: a callback destroyed it) */
			return ret < 0 ? ret : -ESHUTDOWN;
		}
	}
	if (give_up)
		pub->st.blocked_ns += msga__now_ns() - start;
	return ret;
}

/* The part of struct msga_claim a caller sets .size to cover (0.10's). */
#define CLAIM_MIN_SIZE (offsetof(struct msga_claim, priv_) + \
			sizeof(((struct msga_claim *)0)->priv_))

static int pub_claim(struct msga_pub *pub, uint32_t topic_id, size_t len,
		     struct msga_claim *claim)
{
	uint32_t slot;
	int ret;

	if (!pub || !claim || claim->size < CLAIM_MIN_SIZE ||
	    !topic_ok(pub, topic_id))
		return -EINVAL;
	if (len > MSGA_MSG_MAX)
		return -EMSGSIZE;
	if (pub->claimed)
		return -EBUSY;
	ret = room_for(pub, topic_id, len, len <= MSGA_FRAG_MAX);
	if (ret)
		return ret;
	if (len > MSGA_FRAG_MAX) {
		ret = big_buffer(pub);
		if (ret)
			return ret;
		slot = CLAIM_BIG;
		pub->claim.data = pub->big_buf;
	} else {
		slot = pub->tx_free[--pub->tx_nfree];
		if (pub->tx_nfree < MSGA__PUB_TX_SLOTS / 2)
			msga__pub_work(pub); /* flush_unsignalled's turn */
		pub->claim.data = pub->tx_buf + (size_t)slot * MSGA__DATA_SLOT;
	}
	pub->claim.slot = slot;
	pub->claim.topic = topic_id;
	pub->claim.len = (uint32_t)len;
	/* (never 0: a committed claim's priv_[1] is zeroed) */
	if (++pub->claim.gen == 0)
		pub->claim.gen = 1;
	pub->claimed = 1;
	claim->data = pub->claim.data;
	claim->len = len;
	claim->topic_id = topic_id;
	claim->priv_[0] = slot;
	claim->priv_[1] = pub->claim.gen;
	claim->priv_[2] = 0;
	return 0;
}

/* (a blocking claim polls, and so may run callbacks: engine.c) */
MSGA_API int msga_pub_claim(struct msga_pub *pub, uint32_t topic_id,
			    size_t len, struct msga_claim *claim)
{
	int ret;

	if (!pub)
		return -EINVAL;
	msga__ctx_enter(pub->ctx);
	ret = pub_claim(pub, topic_id, len, claim);
	msga__ctx_leave(pub->ctx);
	return ret;
}

/*
 * claim is the outstanding claim, as msga_pub_claim() filled it in (len
 * may have shrunk): anything else is refused and changes nothing, so a
 * stale claim, one committed twice, or one whose data or topic were
 * changed can neither send foreign memory nor skip the room check.
 */
static int claim_ok(const struct msga_pub *pub, const struct msga_claim *claim)
{
	const struct msga__claim_rec *rec;

	if (!pub || !claim || !pub->claimed)
		return 0;
	rec = &pub->claim;
	return claim->priv_[0] == rec->slot && claim->priv_[1] == rec->gen &&
	       claim->data == rec->data && claim->topic_id == rec->topic &&
	       claim->len <= rec->len;
}

static inline int pub_send(struct msga_pub *pub, uint32_t topic_id,
			   const void *data, size_t len);

/*
 * A message went out on topic (ret: to how many, or -errno): its
 * counters, and with MSGA_PUB_LAST_VALUE its copy (the transport gave it
 * its seq). A copy that cannot be made forgets the value (last_value.h):
 * the message itself went out, so the commit still succeeds.
 */
static int counted(struct msga_pub *pub, uint32_t topic, const void *data,
		   size_t len, int ret)
{
	if (ret >= 0 && pub->lv)
		msga__lv_put(pub->lv, topic, pub->topics[topic].seq, data, len);
	if (ret >= 0) {
		pub->st.msgs++;
		pub->st.bytes += len;
		pub->st.deliveries += (uint64_t)ret;
	}
	return ret;
}

static int pub_commit(struct msga_pub *pub, struct msga_claim *claim)
{
	/* From here on only the publisher's own record (claim_ok). */
	struct msga_claim mine;
	uint32_t slot;
	int ret;

	if (!claim_ok(pub, claim))
		return -EINVAL;
	mine = (struct msga_claim){ .data = pub->claim.data, .len = claim->len,
				    .topic_id = pub->claim.topic };
	slot = pub->claim.slot;
	claim->priv_[1] = 0;
	pub->claimed = 0;
	ret = pub->ops->commit(pub, &mine, slot, slot == CLAIM_BIG);
	if (ret == MSGA__PUB_AS_SEND)
		return pub_send(pub, mine.topic_id, NULL, 0);
	return counted(pub, mine.topic_id, mine.data, mine.len, ret);
}

/* (a connection that fails here raises its event at once: engine.c) */
MSGA_API int msga_pub_commit(struct msga_pub *pub, struct msga_claim *claim)
{
	return msga_pub_commit_flags(pub, claim, 0);
}

MSGA_API int msga_pub_abort(struct msga_pub *pub, struct msga_claim *claim)
{
	if (!claim_ok(pub, claim))
		return -EINVAL;
	if (pub->claim.slot != CLAIM_BIG)
		msga__pub_slot_put(pub, pub->claim.slot);
	claim->priv_[1] = 0;
	pub->claimed = 0;
	return 0;
}

/*
 * A small message the transport posts inline (MSGA__PUB_INLINE) goes
 * from the caller's buffer straight into the provider's copy: no send
 * buffer is claimed and nothing is copied twice. Every check is
 * msga_pub_claim()'s, in its order.
 */
static MSGA__SLOW_PATH int send_inline(struct msga_pub *pub,
					uint32_t topic_id, const void *data,
					size_t len)
{
	struct msga_claim mine = { .data = (void *)data, .len = len,
				   .topic_id = topic_id };
	int ret;

	if (!topic_ok(pub, topic_id))
		return -EINVAL;
	if (pub->claimed)
		return -EBUSY;
	ret = room_for(pub, topic_id, len, 0);
	return ret ? ret : counted(pub, topic_id, data, len,
				   pub->ops->commit(pub, &mine, CLAIM_INLINE,
						    0));
}

/* The general way: a send buffer claimed, the message copied into it. */
static MSGA__SLOW_PATH int send_claimed(struct msga_pub *pub,
					uint32_t topic_id, const void *data,
					size_t len)
{
	struct msga_claim claim = { .size = sizeof(claim) };
	int ret = msga_pub_claim(pub, topic_id, len, &claim);

	if (ret)
		return ret;
	if (len)
		memcpy(claim.data, data, len);
	return pub_commit(pub, &claim); /* (the caller's flags stand) */
}

/*
 * First the transport's own send (its fast path: the solo ring's short
 * record), then an inline commit, then a claimed buffer. Inline, and the
 * other two out of line, so the first costs no more than it does.
 */
static inline int pub_send(struct msga_pub *pub, uint32_t topic_id,
			   const void *data, size_t len)
{
	int ret;

	if (!pub || (!data && len))
		return -EINVAL;
	ret = pub->ops->send ? pub->ops->send(pub, topic_id, data, len) :
			       MSGA__PUB_CLAIM;
	if (msga__likely(ret >= 0))
		return counted(pub, topic_id, data, len, ret);
	if (ret == MSGA__PUB_INLINE)
		return send_inline(pub, topic_id, data, len);
	return send_claimed(pub, topic_id, data, len);
}

/* ---------------------------------------------------- doorbells */

/* Post what the send queues hold back (lib/proto/doorbell.h). */
static int pub_ring(struct msga_pub *pub)
{
	if (!pub->db_held)
		return 0;
	pub->db_held = 0;
	pub->db_held_more = 0;
	return pub->ops->doorbell(pub);
}

/*
 * A commit or send under flags: with MSGA_COMMIT_MORE its sends may be
 * held back (pub->db_more while it runs); without it, it also rings what
 * earlier ones held back under MSGA_COMMIT_MORE (what a queue held back
 * on its own, while busy, waits for its doorbell: doorbell.h).
 */
static inline int flags_enter(struct msga_pub *pub, unsigned int flags)
{
	if (!pub || (flags & ~(unsigned int)MSGA_COMMIT_MORE))
		return -EINVAL;
	msga__ctx_enter(pub->ctx);
	pub->db_more = (flags & MSGA_COMMIT_MORE) != 0;
	return 0;
}

/* What earlier MSGA_COMMIT_MORE sends held back goes now; ret stands
 * unless it was a success and the doorbell failed. */
static MSGA__SLOW_PATH int ring_held(struct msga_pub *pub, int ret)
{
	int rung = pub_ring(pub);

	return ret >= 0 && rung < 0 ? rung : ret;
}

static inline int flags_leave(struct msga_pub *pub, unsigned int flags,
			      int ret)
{
	pub->db_more = 0;
	if (msga__unlikely(!(flags & MSGA_COMMIT_MORE) && pub->db_held_more))
		ret = ring_held(pub, ret);
	msga__ctx_leave(pub->ctx);
	return ret;
}

MSGA_API int msga_pub_commit_flags(struct msga_pub *pub,
				   struct msga_claim *claim,
				   unsigned int flags)
{
	int ret = flags_enter(pub, flags);

	return ret ? ret : flags_leave(pub, flags, pub_commit(pub, claim));
}

/* (msga_pub_send's too: a call between exported functions would go
 * through the PLT) */
static inline int send_flags(struct msga_pub *pub, uint32_t topic_id,
			     const void *data, size_t len, unsigned int flags)
{
	int ret = flags_enter(pub, flags);

	return ret ? ret : flags_leave(pub, flags,
				       pub_send(pub, topic_id, data, len));
}

MSGA_API int msga_pub_send_flags(struct msga_pub *pub, uint32_t topic_id,
				 const void *data, size_t len,
				 unsigned int flags)
{
	return send_flags(pub, topic_id, data, len, flags);
}

MSGA_API int msga_pub_send(struct msga_pub *pub, uint32_t topic_id,
			   const void *data, size_t len)
{
	return send_flags(pub, topic_id, data, len, 0);
}

MSGA_API int msga_pub_doorbell(struct msga_pub *pub)
{
	int ret;

	if (!pub)
		return -EINVAL;
	if (pub->dead)
		return -ESHUTDOWN;
	msga__ctx_enter(pub->ctx);
	ret = pub_ring(pub);
	msga__ctx_leave(pub->ctx);
	return ret;
}

/*
 * Poll until the transport says every committed message is out, or
 * timeout_ms passed (-1: no limit; 0: one look, no poll). A subscriber
 * that leaves meanwhile no longer counts (the transport looks only at the
 * ones it has).
 */
static int pub_flush(struct msga_pub *pub, int timeout_ms)
{
	uint64_t end = msga__now_ns() + (uint64_t)timeout_ms * 1000000u;
	int first = 1, ret;

	pub_ring(pub); /* (what is held back would never be out) */
	for (;;) {
		ret = pub->ops->flushed(pub, first);
		first = 0;
		if (ret)
			return ret < 0 ? ret : 0;
		if (!timeout_ms)
			return -ETIMEDOUT;
		if (timeout_ms > 0 && msga__time_reached(msga__now_ns(), end))
			return msga__ctx_fail(pub->ctx, -ETIMEDOUT,
					      "msga_pub_flush: not out after "
					      "%d ms", timeout_ms);
		/* (from a callback of this context: -EDEADLK) */
		ret = msga_ctx_poll(pub->ctx, 64);
		if (ret < 0)
			return ret;
		if (pub->dead)
			return -ESHUTDOWN; /* a callback destroyed it */
	}
}

MSGA_API int msga_pub_flush(struct msga_pub *pub, int timeout_ms)
{
	int ret;

	if (!pub || timeout_ms < -1)
		return -EINVAL;
	if (pub->dead)
		return -ESHUTDOWN;
	if (timeout_ms && pub->ctx->polling)
		return -EDEADLK; /* a callback cannot poll */
	msga__ctx_enter(pub->ctx);
	ret = pub_flush(pub, timeout_ms);
	msga__ctx_leave(pub->ctx);
	return ret;
}

/*
 * The publisher's work that no completion starts (the transport's: a
 * fragmented message to pump, batches to flush, names to announce). 1 if
 * some remains, so the next poll comes back (the engine skips this while
 * no publisher has any: see msga__pub_work).
 */
static int pub_progress(struct msga__ep *ep)
{
	struct msga_pub *pub = pub_of(ep);
	int more;

	if (pub->dead)
		return 0;
	more = pub->ops->progress(pub);
	pub_ring(pub); /* (a poll never leaves sends held back) */
	return more;
}

static int pub_reap(struct msga__ep *ep, uint64_t now)
{
	(void)now;
	if (!pub_of(ep)->dead)
		return 0;
	pub_free(pub_of(ep));
	return 1;
}

static void pub_destroy(struct msga__ep *ep)
{
	msga_pub_destroy(pub_of(ep));
}

/* Refusals the rate limit held back are reported when it allows. */
static uint64_t pub_tick(struct msga__ep *ep, uint64_t now)
{
	struct msga_pub *pub = pub_of(ep);

	msga__pub_export(pub, now);
	return msga__reject_report_due(&pub->rejects, now, pub, pub->on_event,
				       pub->user);
}

static const struct msga__ep_ops pub_ep_ops = {
	.on_cm = pub_on_cm,
	.tick = pub_tick,
	.work = pub_progress,
	.reap = pub_reap,
	.destroy = pub_destroy,
};
