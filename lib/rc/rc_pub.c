/* SPDX-License-Identifier: MIT */
/*
 * rc_pub.c - a publisher's RC connections: accepting a subscriber (the
 * hello and the ring it offers), its SUBSCRIBE, announcing topic names,
 * flushing coalesced batches, the choice of the one-subscriber fast path,
 * and retiring what a completed send referenced: the callbacks its
 * connections call it back through (pub_owner). rc_fanout.c and
 * rc_pub_ops.c call these; they call nothing above lib/rc.
 */
#include <string.h>

#include "rc_batch.h"
#include "topic.h"

/* Its connections' owner callbacks (rc.h), at the end of this file. */
static const struct msga__conn_owner_ops pub_owner;

/*
 * The fast path (solo_send, rc_fanout.c) serves a publisher with exactly
 * one ready subscriber, on a ring: the common order gateway or
 * feed-handler pair. Recomputed when a subscriber becomes ready or goes
 * (rare): a send only loads the pointer.
 */
static void solo_update(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	struct msga__conn *only = NULL;

	pub->rc.solo = NULL;
	if (pub->rc.nready != 1)
		return;
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns)
		if (msga__own_conn(pos)->state == MSGA__C_READY)
			only = msga__own_conn(pos);
	if (only && only->ring)
		pub->rc.solo = only;
}

/* ---------------------------------------------------- connections */

static void reject(struct rdma_cm_id *id)
{
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

/*
 * Our side of an accepted request could not be set up (registered memory
 * is the usual want: siw counts it against RLIMIT_MEMLOCK even for root,
 * msga_pub_create(3)). The subscriber sees a refusal; the reason is in the
 * context's last error, never silently dropped.
 */
static void accept_failed(struct msga__conn *c, int status, const char *step)
{
	struct msga_pub *pub = c->pub;

	msga__ctx_fail(pub->ctx, status, "publisher: could not accept %s: %s",
		       c->peer, step);
	rdma_reject(c->cm, NULL, 0);
	c->state = MSGA__C_DEAD;
	pub->rc.nconns--;
	pub->rc.nhandshakes--;
	msga__conn_free(c);
}

static void on_connect_request(struct msga_pub *pub, struct rdma_cm_id *id,
			       const void *pdata, size_t plen)
{
	static const struct msga__conn_geom geom = {
		MSGA__PUB_RX_DEPTH, MSGA__PUB_RX_SLOT, MSGA__PUB_SQ_DEPTH,
		MSGA__PUB_SIG_EVERY,
	};
	struct rdma_conn_param param = { .retry_count = 7 };
	struct msga__wire_hello peer, mine;
	uint8_t buf[MSGA__WIRE_HELLO_LEN + MSGA__AUTH_RSP_LEN];
	const struct msga__key *key;
	struct msga__auth_req req;
	struct msga__conn *c;
	uint32_t ring_size;
	char name[64];
	int ret;

	if (msga__wire_hello_get(pdata, plen, &peer) || peer.role != 2 ||
	    peer.slot_size < MSGA__DATA_SLOT ||
	    peer.ring_addr /* an offset, always 0: wire.h */)
		return reject(id);
	/* Before anything is allocated: a flood costs us nothing. */
	if (msga__rc_auth_request(pub, id, pdata, plen, &key, &req))
		return;
	if (pub->rc.nconns >= pub->rc.max_conns ||
	    pub->rc.nhandshakes >= pub->rc.max_handshakes) {
		pub->rc.conns_refused++;
		msga__ctx_fail(pub->ctx, -ECONNREFUSED, "publisher: max_conns "
			       "(%u) or max_handshakes (%u) reached, %llu "
			       "connection(s) refused", pub->rc.max_conns,
			       pub->rc.max_handshakes,
			       (unsigned long long)pub->rc.conns_refused);
		msga__cm_reject(id, ECONNREFUSED, name, sizeof(name));
		msga__pub_rejected(pub, -ECONNREFUSED, name);
		return;
	}
	c = msga__conn_new(pub->ctx, &geom, &msga__rc_pub_conn_ops,
			   &pub_owner);
	if (!c)
		return reject(id);
	pub->rc.nconns++;
	pub->rc.nhandshakes++;
	c->pub = pub;
	msga__conn_hs_start(c, msga__now_ns());
	c->cm = id;
	id->context = &c->eng;
	c->id = pub->rc.next_id++;
	c->state = MSGA__C_CONNECTING;
	msga__list_add_tail(&pub->rc.conns, &c->own_node);
	msga__conn_peer_name(c);
	msga__credit_init(&c->cr, c->rx_depth, peer.recv_depth);
	ring_size = msga__ring_offered_size(peer.ring_size);
	if (ring_size && msga__ring_size_ok(ring_size) &&
	    c->ctx->dev_attr.max_sge >= 3) {
		c->ring = MSGA__C_RING_WRITER;
		msga__ring_tx_setup(c, peer.ring_rkey, ring_size);
	}
	msga__conn_hello(c, &mine, 1);
	msga__wire_hello_put(buf, &mine);
	param.private_data = buf;
	param.private_data_len = (uint8_t)msga__rc_auth_accept(c, key, &req,
							       pdata, buf);
	/* A ring needs no batches: a record costs ring bytes, not a receive. */
	errno = 0; /* (stale: msga__conn_setup says why) */
	if (!c->ring)
		c->bat_buf = msga__reg_buf(c->ctx, (size_t)MSGA__BATCH_BUFS *
					   MSGA__DATA_SLOT, &c->bat_mr);
	if (!c->ring && !c->bat_buf)
		return accept_failed(c, msga__neg_errno(ENOMEM),
				     "registering its batch buffers");
	ret = msga__conn_setup(c);
	if (ret)
		return accept_failed(c, ret, c->setup_step);
	errno = 0;
	if (rdma_accept(id, &param))
		accept_failed(c, msga__neg_errno(ECONNABORTED), "rdma_accept");
}

int msga__bat_flush(struct msga__conn *c)
{
	struct msga__wire_hdr h = { .type = MSGA__W_BATCH };
	int inl;
	char *buf;

	/* Called on every poll: test before building anything. */
	if (!c->bat_open)
		return 0;
	h.len = c->bat_len;
	inl = MSGA__WIRE_HDR_LEN + c->bat_len <= c->ctx->max_inline;
	buf = msga__bat_cur(c);
	c->bat_open = 0;
	if (!inl)
		c->bat_head++;
	/* Signalled, so batch buffers come back even when traffic stops. */
	return msga__conn_send(c, &(const struct msga__send_desc){
		.hdr = &h, .ext = buf, .ext_len = c->bat_len,
		.ext_lkey = c->bat_mr->lkey, .tag = MSGA__TAG_BATCH,
		.signal = 1 });
}

/*
 * Topic t's last value to c, which asked for it (0.12), from a send
 * buffer as a claimed message goes (the store is not registered memory):
 * 0 sent, or nothing to send; -EAGAIN no room or no send buffer now.
 */
static int send_last_value(struct msga_pub *pub, struct msga__conn *c,
			   uint32_t t)
{
	const struct msga__lv_ent *e = msga__lv_get(pub->lv, t);
	struct msga__wire_hdr h = { .type = MSGA__W_LAST_VALUE,
				    .topic = (uint16_t)t };
	uint32_t slot;
	char *buf;
	int ret;

	if (!e)
		return 0;
	if (!msga__conn_can_data(c) || !msga__conn_can_ctl(c) ||
	    !pub->tx_nfree)
		return -EAGAIN;
	slot = pub->tx_free[--pub->tx_nfree];
	buf = pub->tx_buf + (size_t)slot * MSGA__DATA_SLOT;
	memcpy(buf, e->data, e->len);
	h.seq = e->seq;
	h.len = e->len;
	ret = msga__conn_send(c, &(const struct msga__send_desc){
		.hdr = &h, .ext = buf, .ext_len = e->len,
		.ext_lkey = pub->tx_mr->lkey, .tag = (int32_t)slot });
	if (!ret && !c->last_inline)
		pub->tx_ref[slot]++;
	if (!pub->tx_ref[slot])
		msga__pub_slot_put(pub, slot);
	return ret;
}

/*
 * Tell c the names of the topics it matches, in id order, before data;
 * and each one's last value, if c asked, right after its name. Data of
 * topic t goes to c only once c->ann is past t (rc_fanout.c), so the
 * value sent here is the last message committed before c's live stream
 * of t: no gap and no duplicate at the seam, by construction.
 */
int msga__conn_announce(struct msga_pub *pub, struct msga__conn *c)
{
	if (c->ann < pub->ntopics)
		msga__bat_flush(c);
	while (c->ann < pub->ntopics) {
		const char *name = pub->topics[c->ann].name;
		struct msga__wire_hdr h = { .type = MSGA__W_TOPIC,
					    .topic = (uint16_t)c->ann };
		int ret;

		if (!c->ann_named && msga__topic_match(c->pattern, name)) {
			/* (can_ctl: a claim's room is not ours to take) */
			if (!msga__conn_can_data(c) || !msga__conn_can_ctl(c))
				return -EAGAIN;
			h.len = (uint32_t)strlen(name);
			memcpy(msga__conn_ctl_payload(c), name, h.len);
			ret = msga__conn_send_ctl(c, &h, h.len);
			if (ret)
				return ret;
			c->match[c->ann / 64] |= 1ull << (c->ann % 64);
			c->ann_named = 1;
		}
		if (c->ann_named && c->want_lv) {
			ret = send_last_value(pub, c, c->ann);
			if (ret)
				return ret;
		}
		c->ann_named = 0;
		c->ann++;
	}
	return 0;
}

/*
 * Tell a refused subscriber why, and give it nothing else: it hangs up
 * when it reads the REFUSE, and the handshake deadline drops it if it
 * does not. (Hanging up ourselves could flush the REFUSE unsent.)
 */
static int refuse_subscribe(struct msga__conn *c, int status)
{
	struct msga__wire_hdr h = { .type = MSGA__W_REFUSE,
				    .seq = (uint64_t)-status };

	c->auth.refused = 1;
	if (status == -EACCES || !msga__conn_can_ctl(c))
		return status; /* (no proof: we owe it no answer) */
	msga__conn_send(c, &(const struct msga__send_desc){
		.hdr = &h, .tag = MSGA__TAG_NONE, .signal = 1 });
	return 0;
}

static int on_subscribe(struct msga__conn *c, const struct msga__wire_hdr *h,
			const char *payload)
{
	uint64_t sent;
	int ret;

	if (c->state != MSGA__C_CONNECTING || c->auth.refused)
		return -EPROTO;
	memcpy(c->pattern, payload, h->len);
	c->pattern[h->len] = '\0';
	/* (asked of a publisher that keeps none: the live stream only) */
	c->want_lv = (h->flags & MSGA__WF_WANT_LV) && c->pub->lv;
	if (msga__pattern_check(c->pattern))
		return -EPROTO;
	ret = msga__rc_authorize(c);
	if (ret)
		return refuse_subscribe(c, ret);
	c->state = MSGA__C_READY;
	c->was_ready = 1;
	c->pub->st.subscribed++;
	c->pub->rc.nhandshakes--;
	c->pub->rc.nready++;
	solo_update(c->pub);
	msga__pub_work(c->pub);
	sent = c->tx_seq;
	msga__conn_announce(c->pub, c);
	/* Answer at once, whatever matched: subscriber.c says why. */
	if (c->tx_seq == sent)
		msga__conn_send_credit(c);
	msga__conn_emit(c, MSGA_EVENT_CONNECTED, 0);
	return 0;
}

/* (a publisher's receives are control messages: no slot to keep) */
static int pub_on_recv(struct msga__conn *c, struct msga__rxslot *slot,
		       const struct msga__wire_hdr *h, const char *payload,
		       uint32_t plen, uint64_t now_ns)
{
	(void)slot;
	(void)plen;
	(void)now_ns;
	switch (h->type) {
	case MSGA__W_AUTH:
		return msga__rc_auth_on_proof(c, payload);
	case MSGA__W_SUBSCRIBE:
		return on_subscribe(c, h, payload);
	case MSGA__W_CREDIT:
		/* (nothing from an unproven peer counts) */
		return c->key && !c->auth.proven ? -EACCES : 0;
	case MSGA__W_BYE: /* a clean leave: DISCONNECTED with status 0 */
		msga__conn_kill(c, 0, 1);
		return 0;
	default:
		return -EPROTO;
	}
}

static void pub_conn_gone(struct msga__conn *c, int status, int notify)
{
	(void)status;
	(void)notify;
	c->pub->rc.nconns--;
	if (c->was_ready) {
		c->pub->rc.nready--;
		msga__pub_count_gone(c->pub, c->gone_status);
	} else
		c->pub->rc.nhandshakes--;
	solo_update(c->pub);
	c->big_active = 0;
	c->bat_open = 0;
}

static void pub_tag_done(struct msga__conn *c, int32_t tag)
{
	struct msga_pub *pub = c->pub;

	if (tag == MSGA__TAG_BIG) {
		c->big_inflight--;
		return;
	}
	if (tag == MSGA__TAG_BATCH) {
		c->bat_tail++;
		return;
	}
	if (--pub->tx_ref[tag] == 0)
		msga__pub_slot_put(pub, (uint32_t)tag);
}

static const struct msga__conn_owner_ops pub_owner = {
	.on_recv = pub_on_recv,
	.on_tag_done = pub_tag_done,
	.on_gone = pub_conn_gone,
	.drain = msga__conn_poll,
};

/* A connection request on the publisher's listening id. */
void msga__rc_pub_on_request(struct msga_pub *pub,
			     const struct rdma_cm_event *ev)
{
	if (pub->dead)
		return reject(ev->id);
	on_connect_request(pub, ev->id, ev->param.conn.private_data,
			   ev->param.conn.private_data_len);
}
