/* SPDX-License-Identifier: MIT */
/*
 * publisher.c - msga_pub_*: listen for subscribers, register topics, and
 * fan each message out to every matching subscriber's queue pair.
 *
 * A claimed message lives in one registered send buffer shared by all the
 * SENDs of its fan-out (each SEND has its own header in a second SGE), so a
 * publish never copies per subscriber. A message back-pressures (-EAGAIN)
 * unless every matching subscriber has credit: slow subscribers slow the
 * publisher down, they never lose messages. One that holds the stream up
 * for the slow-consumer time is dropped instead (slow_consumer.h).
 */
#include <stdlib.h>
#include <string.h>

#include "mcast.h"
#include "rc_batch.h"
#include "udep_policy.h"
#include "topic.h"

#define PUB_ATTR_MIN_SIZE \
	(offsetof(struct msga_pub_attr, user) + sizeof(void *))
#define CLAIM_BIG UINT32_MAX
#define CLAIM_INLINE (UINT32_MAX - 1) /* no send buffer (msga_pub_send) */


static const struct msga__ep_ops pub_ops;
static void pub_free(struct msga_pub *pub);


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
 * The 0.4 fields, which a caller built against 0.3 does not have (its
 * smaller .size says so): absent or 0 is the default.
 */
#define PUB_ATTR_HAS(attr, field) \
	((attr)->size >= offsetof(struct msga_pub_attr, field) + \
			 sizeof((attr)->field) && (attr)->field)

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
	pub->hb_ns = ms * 1000000u;
	pub->hb_cap_ms = (uint16_t)cap_ms;
	return 0;
}

/*
 * MSGA_PUB_RELIABLE (0.6): a UD publisher (mcast://, ud://) keeps
 * retransmit_bytes of messages to answer NAKs (mcast_retx.c). RC is
 * reliable already: the flag changes nothing there.
 */
static int pub_reliable(struct msga_pub *pub, const struct msga_pub_attr *attr,
			int mcast, int ud)
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
	if (!mcast && !ud)
		return 0;
	return msga__mpub_retx_init(pub, bytes);
}

/* Copy the allow list, checking each entry ("IDENTITY PATTERN"). */
static int pub_allow(struct msga_pub *pub, const char *const *allow)
{
	uint32_t n = 0;

	while (allow[n])
		if (msga__rc_allow_check(allow[n++]) || n > MSGA_PUB_ALLOW_MAX)
			return msga__ctx_fail(pub->ctx, -EINVAL,
					      "msga_pub_create: allow[%u] is "
					      "not \"IDENTITY PATTERN\" (or "
					      "past %u entries)", n - 1,
					      MSGA_PUB_ALLOW_MAX);
	pub->allow = calloc(n ? n : 1, sizeof(*pub->allow));
	if (!pub->allow)
		return -ENOMEM;
	for (pub->nallow = 0; pub->nallow < n; pub->nallow++) {
		pub->allow[pub->nallow] = strdup(allow[pub->nallow]);
		if (!pub->allow[pub->nallow])
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

	pub->max_handshakes = MSGA_PUB_HANDSHAKES_DEFAULT;
	pub->handshake_ns = MSGA_HANDSHAKE_DEFAULT_MS * 1000000ull;
	if (PUB_ATTR_HAS(attr, reject_events_per_s) &&
	    attr->reject_events_per_s)
		per_s = attr->reject_events_per_s;
	msga__reject_limit_init(&pub->rejects, per_s);
	if (attr->size < offsetof(struct msga_pub_attr, reserved))
		return 0;
	if (attr->max_handshakes) {
		if (attr->max_handshakes > (pub->max_conns ? pub->max_conns :
					   MSGA_PUB_CONNS_MAX))
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "max_handshakes %u is above "
					      "max_conns", attr->max_handshakes);
		pub->max_handshakes = attr->max_handshakes;
	}
	if (attr->handshake_ms) {
		if (attr->handshake_ms < MSGA_HANDSHAKE_MIN_MS ||
		    attr->handshake_ms > MSGA_HANDSHAKE_MAX_MS)
			return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
					      "handshake_ms %u is not 0 or %u "
					      "to %u", attr->handshake_ms,
					      MSGA_HANDSHAKE_MIN_MS,
					      MSGA_HANDSHAKE_MAX_MS);
		pub->handshake_ns = attr->handshake_ms * 1000000ull;
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
	pub->authorize = attr->authorize;
	return attr->allow ? pub_allow(pub, attr->allow) : 0;
}

static int pub_limits(struct msga_pub *pub, const struct msga_pub_attr *attr)
{
	struct msga_ctx *ctx = pub->ctx;
	int ret;

	pub->slow_ns = MSGA_SLOW_CONSUMER_DEFAULT_PEER_TIMEOUTS *
		       ctx->peer_timeout_ns;
	pub->max_conns = MSGA_PUB_CONNS_DEFAULT;
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
		pub->max_conns = attr->max_conns;
	}
	ret = pub_handshakes(pub, attr);
	return ret ? ret : pub_heartbeat(pub, attr);
}

static int pub_listen(struct msga_pub *pub, struct sockaddr_storage *ss)
{
	struct msga_ctx *ctx = pub->ctx;
	int ret = msga__ctx_cm_channel(ctx);

	if (ret)
		return ret;
	if (rdma_create_id(ctx->cm_ch, &pub->listen, &pub->eng, RDMA_PS_TCP))
		return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
				      "rdma_create_id");
	if (rdma_bind_addr(pub->listen, (struct sockaddr *)ss))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRNOTAVAIL),
				      "msga_pub_create: rdma_bind_addr");
	if (pub->listen->verbs && pub->listen->verbs != ctx->verbs)
		return msga__ctx_fail(ctx, -ENODEV,
				      "msga_pub_create: address is not on %s",
				      ctx->dev_name);
	if (rdma_listen(pub->listen, 64))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRINUSE),
				      "msga_pub_create: rdma_listen");
	return 0;
}

MSGA_API int msga_pub_create(struct msga_ctx *ctx,
			     const struct msga_pub_attr *attr,
			     struct msga_pub **pubp)
{
	struct sockaddr_storage ss;
	struct msga_pub *pub;
	int mcast, ud, ret;

	if (pubp)
		*pubp = NULL;
	if (!ctx || !attr || !pubp || attr->size < PUB_ATTR_MIN_SIZE ||
	    (attr->flags & ~(uint32_t)(MSGA_PUB_BLOCK | MSGA_PUB_RELIABLE |
				       MSGA_PUB_MAC)))
		return -EINVAL;
	if ((attr->flags & MSGA_PUB_MAC) && !ctx->keys)
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "MSGA_PUB_MAC needs a context with keys");
	mcast = attr->uri && !strncmp(attr->uri, "mcast://", 8);
	ud = attr->uri && !strncmp(attr->uri, "ud://", 5);
	if ((mcast || ud) && attr->size >= offsetof(struct msga_pub_attr,
			max_datagram) + sizeof(attr->max_datagram) &&
	    msga__dgram_check(attr->max_datagram))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "max_datagram %u is below %u",
				      attr->max_datagram, MSGA_DATAGRAM_MIN);
	if (!mcast && PUB_ATTR_HAS(attr, uri_b))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: uri_b "
				      "is for mcast:// publishers");
	if (!mcast && !ud && msga__parse_uri(attr->uri, &ss))
		return msga__ctx_fail(ctx, -EINVAL,
				      "msga_pub_create: bad uri '%s'",
				      attr->uri ? attr->uri : "(null)");
	pub = calloc(1, sizeof(*pub));
	if (!pub)
		return -ENOMEM;
	pub->ctx = ctx;
	pub->flags = attr->flags;
	pub->on_event = attr->on_event;
	pub->user = attr->user;
	if (attr->size >= offsetof(struct msga_pub_attr, max_datagram) +
			  sizeof(attr->max_datagram))
		pub->max_datagram = attr->max_datagram;
	msga__list_init(&pub->conns);
	msga__ep_add(ctx, &pub->eng, &pub_ops, 0);
	ret = pub_limits(pub, attr);
	if (!ret)
		ret = pub_alloc(pub);
	if (!ret && (attr->flags & MSGA_PUB_RELIABLE))
		ret = pub_reliable(pub, attr, mcast, ud);
	if (!ret)
		ret = mcast ? msga__mpub_create(pub, attr->uri,
						PUB_ATTR_HAS(attr, uri_b) ?
						attr->uri_b : NULL) :
		      ud ? msga__upub_create(pub, attr->uri) :
			   pub_listen(pub, &ss);
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
	struct msga__list *pos, *tmp;

	pub->dead = 1;
	msga__ctx_reap_soon(pub->ctx);
	msga__list_for_each_safe(pos, tmp, &pub->conns)
		msga__conn_kill(msga__own_conn(pos), 0, 0);
	if (pub->mc)
		msga__udep_kill(pub->mc, 0, 0);
}

MSGA_API void msga_pub_destroy(struct msga_pub *pub)
{
	if (!pub || pub->dead)
		return;
	if (pub->mc)
		msga__mpub_close(pub); /* each stream's END (mcast_pub.c) */
	if (pub->ctx->busy)
		pub_bury(pub); /* from a callback: freed later */
	else
		pub_free(pub);
}

static void pub_free(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	for (uint32_t i = 0; i < pub->nallow; i++)
		free(pub->allow[i]);
	free(pub->allow);
	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		msga__conn_kill(msga__own_conn(pos), 0, 0);
		msga__conn_free(msga__own_conn(pos));
	}
	if (pub->listen)
		rdma_destroy_id(pub->listen);
	if (pub->mc)
		msga__udep_free(pub->mc); /* its QP first: it uses tx_mr */
	msga__upub_fini(pub);
	msga__mpub_retx_fini(pub);
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
	free(pub);
}

MSGA_API int msga_pub_port(const struct msga_pub *pub)
{
	if (pub && pub->unicast && pub->mc)
		return ntohs(rdma_get_src_port(pub->mc->cm));
	if (pub && pub->mc)
		return -EOPNOTSUPP; /* a group has no port */
	if (!pub || !pub->listen)
		return -EINVAL;
	return ntohs(rdma_get_src_port(pub->listen));
}

MSGA_API int msga_pub_subscribers(const struct msga_pub *pub)
{
	if (pub && pub->unicast)
		return pub->ndests;
	if (pub && pub->mc)
		return -EOPNOTSUPP; /* a sender never learns who joined */
	return pub ? pub->nready : -EINVAL;
}

static struct msga_pub *pub_of(struct msga__ep *ep)
{
	return msga__container_of(ep, struct msga_pub, eng);
}

/* The listening id's events: connection requests. */
static void pub_on_cm(struct msga__ep *ep, const struct rdma_cm_event *ev)
{
	struct msga_pub *pub = pub_of(ep);

	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return;
	msga__rc_pub_on_request(pub, ev);
}

/* ---------------------------------------------------- publishing */

static int topic_ok(const struct msga_pub *pub, uint32_t topic_id)
{
	return topic_id < pub->ntopics;
}

MSGA_API int msga_pub_topic(struct msga_pub *pub, const char *name,
			    uint32_t *topic_id)
{
	struct msga__list *pos, *tmp;
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
		ret = pub->mc ? msga__mpub_topic_added(pub, i) : 0;
		if (ret)
			return ret;
		pub->ntopics++;
		msga__pub_work(pub);
		msga__list_for_each_safe(pos, tmp, &pub->conns)
			if (msga__own_conn(pos)->state == MSGA__C_READY)
				msga__conn_announce(pub, msga__own_conn(pos));
	}
	*topic_id = i;
	return 0;
}

/*
 * c has no room for what a publish needs of it: it holds up the stream
 * from now on, until it has room (slow_consumer.h). *now is read once per
 * publish, and only when something blocks it.
 */
static void held_up_by(struct msga_pub *pub, struct msga__conn *c,
		       uint64_t *now)
{
	if (!*now)
		*now = msga__now_ns();
	msga__slow_blocked(&c->slow, *now, msga__conn_room_made(c),
			   pub->slow_ns);
}

/*
 * Every matching subscriber can take a data message now, and still could
 * after a poll flushed its open batch: a claim's room must
 * survive until commit (msga__conn_can_ctl keeps control messages off it).
 * Each one that cannot is marked as holding up the stream, so that all
 * of them, not only the first, start their slow-consumer time now.
 */
static int fanout_ready(struct msga_pub *pub, uint32_t topic_id)
{
	struct msga__list *pos, *tmp;
	uint64_t now = 0;
	int blocked = 0;

	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);
		int ret;

		if (c->state != MSGA__C_READY)
			continue;
		ret = c->ann < pub->ntopics ? msga__conn_announce(pub, c) : 0;
		if (ret == -EAGAIN ||
		    (!ret && msga__topic_bit(c, topic_id) &&
		     !msga__conn_can_data(c))) {
			held_up_by(pub, c, &now);
			blocked = 1;
		}
	}
	return blocked ? -EAGAIN : 0;
}

/*
 * The other two waits of a publish: a big message still going out, and
 * no free send buffer. Each is held up by subscribers without room: for
 * the big message's next fragment, or for the signalled message that
 * would give back the send buffers their unsignalled sends still hold.
 */
static void note_holders(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	uint64_t now = 0;

	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->state != MSGA__C_READY)
			continue;
		if ((pub->big_busy && c->big_active &&
		     c->big_off < pub->big_len && !msga__conn_can_data(c)) ||
		    (!pub->tx_nfree && c->unsig_tagged &&
		     !msga__conn_can_ctl(c)))
			held_up_by(pub, c, &now);
	}
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
	uint64_t give_up = 0, now;

	for (;;) {
		int ret = pub->big_busy ? -EAGAIN :
			  pub->mc ? msga__mpub_ready(pub, topic_id, len) :
				    fanout_ready(pub, topic_id);

		if (!ret && need_buf && !pub->tx_nfree)
			ret = -EAGAIN;
		if (ret == -EAGAIN && !pub->mc)
			note_holders(pub);
		if (ret != -EAGAIN || !(pub->flags & MSGA_PUB_BLOCK))
			return ret;
		now = msga__now_ns();
		if (!give_up)
			give_up = now + msga__slow_wait_ns(pub->slow_ns);
		else if (now >= give_up)
			return msga__ctx_fail(pub->ctx, -ETIMEDOUT,
					      "msga_pub_claim/send: no room "
					      "for %llu ms",
					      (unsigned long long)
					      (msga__slow_wait_ns(pub->slow_ns) /
					       1000000u));
		/* (from a callback of this context: -EDEADLK) */
		ret = msga_ctx_poll(pub->ctx, 64);
		if (ret < 0)
			return ret;
		if (pub->dead)
			return -ESHUTDOWN; /* a callback destroyed it */
	}
}

static int pub_claim(struct msga_pub *pub, uint32_t topic_id, size_t len,
		     struct msga_claim *claim)
{
	uint32_t slot;
	int ret;

	if (!pub || !claim || !topic_ok(pub, topic_id))
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

/*
 * Send a whole message to every matching subscriber. slot is the send
 * buffer data is in, or CLAIM_INLINE for msga_pub_send()'s own buffer when
 * every connection will post it inline (the provider copies it at once).
 */
static int commit_small(struct msga_pub *pub, uint32_t slot,
			uint32_t topic_id, const void *data, size_t len)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
		.topic = (uint16_t)topic_id, .len = (uint32_t)len,
		.seq = ++pub->topics[topic_id].seq,
	};
	struct msga__list *pos, *tmp;
	int sent = 0;

	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);

		/* A subscriber that joined after the claim starts later. */
		if (c->state != MSGA__C_READY || c->ann <= topic_id ||
		    !msga__topic_bit(c, topic_id))
			continue;
		if (msga__bat_fits(c, len)) {
			msga__bat_append(c, &h, data, len);
			sent++;
			continue;
		}
		if (c->bat_open && msga__bat_flush(c))
			continue;
		if (msga__bat_should_open(c, len)) {
			c->bat_open = 1;
			msga__pub_work(pub);
			c->bat_len = 0;
			msga__bat_append(c, &h, data, len);
			sent++;
			continue;
		}
		if (!msga__conn_can_data(c)) {
			/*
			 * The claim found room here and control messages left
			 * it alone since: unreachable. Were it not, a subscriber
			 * must not miss a message without being told.
			 */
			msga__conn_kill(c, -ENOBUFS, 1);
			continue;
		}
		if (msga__conn_send(c, &h, 0, data, (uint32_t)len,
				    pub->tx_mr->lkey, (int32_t)slot, 0))
			continue;
		/* The record's own size decided it (rc_conn.c), not ours. */
		if (!c->last_inline)
			pub->tx_ref[slot]++;
		sent++;
	}
	if (slot != CLAIM_INLINE && !pub->tx_ref[slot])
		msga__pub_slot_put(pub, slot);
	return sent;
}

/* Push fragments of the big message to every connection that has room. */
static void big_pump(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	int busy = 0;

	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->big_active)
			msga__bat_flush(c);
		while (c->big_active && c->big_off < pub->big_len &&
		       msga__conn_can_data(c)) {
			uint32_t off = c->big_off, left = pub->big_len - off;
			uint32_t n = left < MSGA_FRAG_MAX ? left :
							    MSGA_FRAG_MAX;
			struct msga__wire_hdr h = {
				.type = MSGA__W_DATA, .topic = pub->big_topic,
				.seq = pub->big_seq, .len = pub->big_len,
				.off = off,
				.flags = (off ? 0 : MSGA__WF_FIRST) |
					 (n == left ? MSGA__WF_LAST : 0),
			};

			if (msga__conn_send(c, &h, 0, pub->big_buf + off, n,
					    pub->big_mr->lkey, MSGA__TAG_BIG,
					    n == left))
				break;
			c->big_off += n;
			if (!c->last_inline)
				c->big_inflight++;
		}
		if (c->big_active && c->big_off == pub->big_len &&
		    !c->big_inflight)
			c->big_active = 0;
		busy |= c->big_active;
	}
	pub->big_busy = busy;
}

static int commit_big(struct msga_pub *pub, const struct msga_claim *claim)
{
	struct msga__list *pos, *tmp;
	int sent = 0;

	pub->big_len = (uint32_t)claim->len;
	pub->big_topic = (uint16_t)claim->topic_id;
	pub->big_seq = ++pub->topics[claim->topic_id].seq;
	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->state != MSGA__C_READY || c->ann <= claim->topic_id ||
		    !msga__topic_bit(c, claim->topic_id))
			continue;
		c->big_active = 1;
		c->big_off = 0;
		c->big_inflight = 0;
		sent++;
	}
	big_pump(pub);
	msga__pub_work(pub);
	return sent;
}

/*
 * One subscriber, on a ring, already told the topic's name, and nothing
 * to keep order behind (no claim, no big message going out): a short
 * record straight from data (rc_ring.c). 1 when sent; 0 when the post
 * failed, which killed the connection and counts as no subscriber (as in
 * commit_small); -1 to leave it to the general path, which then finds
 * room, announces, or back-pressures.
 */
static int solo_send(struct msga_pub *pub, uint32_t topic_id,
		     const void *data, size_t len)
{
	struct msga__conn *c = pub->solo;
	int ret;

	if (!c || topic_id >= c->ann || pub->claimed || pub->big_busy ||
	    !msga__topic_bit(c, topic_id) || len > MSGA__RING_FAST_MAX)
		return -1;
	ret = msga__ring_send_short(c, topic_id,
				    pub->topics[topic_id].seq + 1, data,
				    (uint32_t)len);
	if (!ret)
		return -1;
	pub->topics[topic_id].seq++;
	return ret > 0;
}

static int pub_send(struct msga_pub *pub, uint32_t topic_id,
		    const void *data, size_t len);

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
	if (pub->mc)
		return msga__mpub_commit(pub, &mine, slot, slot == CLAIM_BIG);
	if (slot == CLAIM_BIG && !mine.len)
		/*
		 * Shrunk to nothing: no fragment would carry it, yet its
		 * sequence number would be spent. An empty message is a small
		 * one; the claim's room check covered its credit.
		 */
		return pub_send(pub, mine.topic_id, NULL, 0);
	if (slot == CLAIM_BIG)
		return commit_big(pub, &mine);
	ret = solo_send(pub, mine.topic_id, mine.data, mine.len);
	if (ret >= 0) {
		msga__pub_slot_put(pub, slot); /* (copied: the post was inline) */
		return ret;
	}
	return commit_small(pub, slot, mine.topic_id, mine.data, mine.len);
}

/* (a connection that fails here raises its event at once: engine.c) */
MSGA_API int msga_pub_commit(struct msga_pub *pub, struct msga_claim *claim)
{
	int ret;

	if (!pub)
		return -EINVAL;
	msga__ctx_enter(pub->ctx);
	ret = pub_commit(pub, claim);
	msga__ctx_leave(pub->ctx);
	return ret;
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
 * Whether a whole message of len bytes goes inline on every connection,
 * whatever its path: a SEND (24-byte header) or a ring record (ring.h,
 * at most a long head, padding and the bytes before the ring's end).
 */
static int always_inline(const struct msga_pub *pub, size_t len)
{
	return len + MSGA__RING_REC_EXTRA_MAX <= pub->ctx->max_inline &&
	       len + MSGA__WIRE_HDR_LEN <= pub->ctx->max_inline;
}

/*
 * A small message over RC goes from the caller's buffer straight into the
 * provider's inline copy: no send buffer is claimed and nothing is copied
 * twice. Every check is msga_pub_claim()'s, in its order.
 */
static int send_inline(struct msga_pub *pub, uint32_t topic_id,
		       const void *data, size_t len)
{
	int ret;

	if (!topic_ok(pub, topic_id))
		return -EINVAL;
	if (pub->claimed)
		return -EBUSY;
	ret = room_for(pub, topic_id, len, 0);
	return ret ? ret : commit_small(pub, CLAIM_INLINE, topic_id, data, len);
}

static int pub_send(struct msga_pub *pub, uint32_t topic_id,
		    const void *data, size_t len)
{
	struct msga_claim claim;
	int ret;

	if (!pub || (!data && len))
		return -EINVAL;
	ret = solo_send(pub, topic_id, data, len);
	if (ret >= 0)
		return ret;
	if (!pub->mc && always_inline(pub, len))
		return send_inline(pub, topic_id, data, len);
	ret = msga_pub_claim(pub, topic_id, len, &claim);
	if (ret)
		return ret;
	if (len)
		memcpy(claim.data, data, len);
	return msga_pub_commit(pub, &claim);
}

MSGA_API int msga_pub_send(struct msga_pub *pub, uint32_t topic_id,
			   const void *data, size_t len)
{
	int ret;

	if (!pub)
		return -EINVAL;
	msga__ctx_enter(pub->ctx);
	ret = pub_send(pub, topic_id, data, len);
	msga__ctx_leave(pub->ctx);
	return ret;
}

/*
 * Send buffers are freed by signalled completions only. When they run
 * short, ask each connection that still holds some unsignalled for a
 * signalled CREDIT, so an idle subscriber cannot pin them forever.
 */
static void flush_unsignalled(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);
		struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };

		if (c->state == MSGA__C_READY && c->unsig_tagged &&
		    msga__conn_can_ctl(c))
			msga__conn_send(c, &h, 0, NULL, 0, 0, MSGA__TAG_NONE,
					1);
	}
}

/*
 * The publisher's work that no completion starts: big fragments to pump,
 * open batches to flush, topic names to announce, send buffers to win
 * back. 1 if some remains, so the next poll comes back (the engine skips
 * this while no publisher has any: see msga__pub_work).
 */
static int pub_progress(struct msga__ep *ep)
{
	struct msga_pub *pub = pub_of(ep);
	struct msga__list *pos, *tmp;
	int more = 0;

	if (pub->dead)
		return 0;
	if (pub->mc) {
		msga__mpub_progress(pub);
		return 1;
	}
	if (pub->big_busy)
		big_pump(pub);
	msga__list_for_each_safe(pos, tmp, &pub->conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->state != MSGA__C_READY)
			continue;
		if (c->bat_open)
			msga__bat_flush(c);
		if (c->ann < pub->ntopics)
			msga__conn_announce(pub, c);
		more |= c->bat_open || c->ann < pub->ntopics;
	}
	if (pub->tx_nfree < MSGA__PUB_TX_SLOTS / 2) {
		flush_unsignalled(pub);
		more = 1;
	}
	return more || pub->big_busy;
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
	return msga__pub_reject_tick(pub_of(ep), now);
}

static const struct msga__ep_ops pub_ops = {
	.on_cm = pub_on_cm,
	.tick = pub_tick,
	.work = pub_progress,
	.reap = pub_reap,
	.destroy = pub_destroy,
};
