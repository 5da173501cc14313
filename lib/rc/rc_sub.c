/* SPDX-License-Identifier: MIT */
/*
 * rc_sub.c - a subscriber's RC connections: connecting (address, route,
 * the hello with our ring's offer, SUBSCRIBE, nudges until the publisher
 * answers), decoding what arrives (topic names, whole, fragmented and
 * batched messages) into the subscriber's callback, in place, and holding
 * a message past its callback. subscriber.c calls these; they call nothing
 * above lib/rc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "srq.h"
#include "topic.h"

/*
 * The RC part of msga_sub_connect(): a connection to the publisher at ss
 * (uri names it in events), resolving its address. Returns its conn_id.
 */
int msga__rc_sub_connect(struct msga_sub *sub, const char *uri,
			 const struct sockaddr_storage *ss)
{
	struct msga__conn_geom geom = {
		MSGA__SUB_RX_DEPTH, MSGA__DATA_SLOT, MSGA__SUB_SQ_DEPTH,
		MSGA__SUB_SIG_EVERY,
	};
	struct msga__conn *c;
	int ring, ret;

	/* The ring raises no completion here: event mode needs SEND/RECV. */
	ring = !(sub->flags & MSGA_SUB_NO_RING) && !sub->ctx->evmode &&
	       sub->ctx->zero_based; /* (siw: context.c) */
	if (ring)
		geom.rx_depth = MSGA__SUB_RING_RX_DEPTH;
	c = msga__conn_new(sub->ctx, &geom, &msga__rc_sub_conn_ops);
	if (!c)
		return -ENOMEM;
	c->sub = sub;
	c->ring = ring;
	c->eng.silent = ring; /* (msga_ctx_fd() refuses to sleep on it) */
	c->id = sub->next_id++;
	c->state = MSGA__C_RESOLVING;
	msga__list_add_tail(&sub->conns, &c->own_node);
	snprintf(c->peer, sizeof(c->peer), "%s", uri + strlen("rdma://"));
	c->names = calloc(MSGA_PUB_TOPICS_MAX, sizeof(*c->names));
	if (!c->names) {
		ret = -ENOMEM;
		goto fail;
	}
	if (rdma_create_id(sub->ctx->cm_ch, &c->cm, &c->eng, RDMA_PS_TCP)) {
		ret = msga__neg_errno(ENOMEM);
		goto fail;
	}
	msga__ctx_cm_soon(sub->ctx);
	if (rdma_resolve_addr(c->cm, NULL, (struct sockaddr *)ss, 2000)) {
		/* No route, no such network: one documented code for all. */
		ret = msga__neg_errno(EHOSTUNREACH);
		msga__ctx_fail(sub->ctx, ret, "msga_sub_connect(%s): "
			       "rdma_resolve_addr", uri);
		if (ret != -ENOMEM)
			ret = -EHOSTUNREACH;
		goto fail;
	}
	return (int)c->id;
fail:
	c->state = MSGA__C_DEAD;
	msga__conn_free(c);
	return ret;
}

/*
 * iWARP connects over TCP from the port rdma_cm bound for the cm_id, and
 * a TCP connection from that port to the same publisher may still be in
 * TIME_WAIT: rdma_connect() fails with EADDRINUSE (seen on siw when
 * subscribers reconnect quickly). rdma_cm's port space is not TCP's, so
 * it cannot avoid that port; a new id can. The new one binds its port
 * (rdma_resolve_addr) while the old still holds its own, so it gets
 * another, and the connection starts over from address resolution.
 */
#define CONNECT_TRIES 4

static int connect_again(struct msga__conn *c)
{
	struct rdma_cm_id *old = c->cm, *id;

	if (++c->connect_tries >= CONNECT_TRIES)
		return -EADDRINUSE;
	if (rdma_create_id(c->ctx->cm_ch, &id, &c->eng, RDMA_PS_TCP))
		return msga__neg_errno(ENOMEM);
	if (rdma_resolve_addr(id, NULL, rdma_get_peer_addr(old), 2000)) {
		rdma_destroy_id(id);
		return -EHOSTUNREACH;
	}
	msga__conn_drop_qp(c);
	rdma_destroy_id(old); /* (its event was acked: cm_one) */
	c->cm = id;
	msga__ctx_cm_soon(c->ctx);
	return 0;
}

static int on_route(struct msga__conn *c)
{
	struct rdma_conn_param param = { .retry_count = 7 };
	struct msga__wire_hello mine;
	uint8_t buf[MSGA__WIRE_HELLO_LEN + MSGA__AUTH_REQ_LEN];
	int ret = msga__conn_setup(c);

	if (!ret && c->ring && !c->ring_buf)
		ret = msga__ring_rx_setup(c);
	if (ret)
		return ret;
	msga__conn_hello(c, &mine, 2);
	msga__wire_hello_put(buf, &mine);
	param.private_data = buf;
	param.private_data_len = (uint8_t)msga__rc_auth_connect(c, buf);
	if (rdma_connect(c->cm, &param))
		return errno == EADDRINUSE ? connect_again(c) :
					     msga__neg_errno(ECONNREFUSED);
	c->state = MSGA__C_CONNECTING;
	return 0;
}

/*
 * soft-iWARP (siw, Linux 6.1) can leave the first message we send unread:
 * the passive side sends its MPA reply before it hands the TCP socket to
 * the QP, and data that lands in between stays in the socket until more
 * arrives (siw_accept(); seen in the test VM, where a publisher never
 * learned of a subscriber whose SUBSCRIBE sat there, and neither side
 * ever sent again). So a publisher answers every SUBSCRIBE at once (topic
 * names or a CREDIT), and until a subscriber hears from it, it sends a
 * CREDIT every NUDGE_NS: the next data to arrive makes siw read it all.
 * Harmless elsewhere: the answer comes long before the first nudge.
 */
#define NUDGE_NS 20000000ull

/* Established: learn the publisher's ring, then send first: SUBSCRIBE. */
static int on_established(struct msga__conn *c, const struct rdma_cm_event *ev)
{
	struct msga__wire_hdr h = { .type = MSGA__W_SUBSCRIBE };
	struct msga__wire_hello peer;
	int ret = msga__wire_hello_get(ev->param.conn.private_data,
				       ev->param.conn.private_data_len, &peer);

	c->established = 1;
	if (ret || peer.role != 1)
		return -EPROTO;
	ret = msga__rc_auth_established(c, ev->param.conn.private_data,
					ev->param.conn.private_data_len);
	if (ret)
		return ret;
	/* A publisher that did not echo the ring's size will SEND. */
	if (c->ring && peer.ring_size != msga__ring_offer(c->rr.mem.size))
		msga__ring_refused(c);
	c->eng.silent = c->ring;
	msga__credit_init(&c->cr, c->rx_depth, peer.recv_depth);
	ret = msga__rc_auth_send_proof(c);
	if (ret)
		return ret;
	h.len = (uint32_t)strlen(c->sub->pattern);
	memcpy(msga__conn_ctl_payload(c), c->sub->pattern, h.len);
	ret = msga__conn_send(c, &h, h.len, NULL, 0, 0, MSGA__TAG_NONE, 1);
	if (ret)
		return ret;
	c->state = MSGA__C_READY;
	c->nudge_at = msga__now_ns() + NUDGE_NS;
	/*
	 * An authenticated publisher may refuse the pattern (REFUSE): we
	 * are connected when it answers otherwise (msga__sub_on_recv).
	 */
	if (!c->key) {
		c->was_ready = 1;
		msga__conn_emit(c, MSGA_EVENT_CONNECTED, 0);
	}
	return 0;
}

/*
 * Whether the publisher has sent us anything: any SEND counts a receive,
 * any ring record advances the reader (no cost on the data path).
 */
static int conn_heard(const struct msga__conn *c)
{
	return c->cr.rx_count || c->rr.nrec;
}

uint64_t msga__sub_nudge(struct msga__conn *c, uint64_t now)
{
	if (c->state != MSGA__C_READY || conn_heard(c))
		return UINT64_MAX;
	if (now >= c->nudge_at) {
		/* (no room: the publisher owes us credit, and will send it;
		 * try again meanwhile) */
		msga__conn_send_credit(c);
		c->nudge_at = now + NUDGE_NS;
	}
	return c->nudge_at;
}

void msga__sub_on_cm(struct msga__conn *c, const struct rdma_cm_event *ev)
{
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (c->cm->verbs != c->ctx->verbs)
			ret = -ENODEV;
		else if (rdma_resolve_route(c->cm, 2000))
			ret = msga__neg_errno(EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = on_route(c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = on_established(c, ev);
		break;
	default:
		break;
	}
	if (ret)
		msga__conn_kill(c, ret, 1);
}

/* ---------------------------------------------------- messages */

/*
 * Hand a whole message to the callback, in place. Every path ends here
 * (the ring's fast path directly); a topic must be named before its first
 * message, or it is a bad peer.
 */
int msga__sub_deliver_whole(struct msga__conn *c, struct msga__rxslot *slot,
			    uint32_t topic, uint64_t seq, const void *data,
			    uint32_t len, uint64_t now_ns)
{
	struct msga_msg msg = {
		.data = data, .len = len, .topic_id = topic,
		.conn_id = c->id, .seq = seq, .priv_ = slot,
	};

	if (topic >= MSGA_PUB_TOPICS_MAX || !c->names[topic][0])
		return -EPROTO;
	msg.topic = c->names[topic];
	/* (a stamp of its own: it names this delivery to hold, release) */
	msg.rx_time_ns = msga__rx_clock_unique(&c->ctx->rx_clock, now_ns);
	c->cur = slot;
	c->cur_stamp = msg.rx_time_ns;
	c->sub->on_msg(&msg, c->sub->user);
	c->cur = NULL;
	return 0;
}

static struct msga__rsbuf *rsbuf_get(struct msga__conn *c)
{
	struct msga__rsbuf *rs;

	if (!msga__list_empty(&c->rs_idle)) {
		rs = msga__container_of(c->rs_idle.next, struct msga__rsbuf,
					node);
		msga__list_del(&rs->node);
		return rs;
	}
	/* (the alignment its type declares: malloc's 16 bytes are short of
	 * data's 64, and msg->data must be at least 8-byte aligned) */
	rs = aligned_alloc(_Alignof(struct msga__rsbuf),
			   sizeof(*rs) + MSGA_MSG_MAX);
	if (rs)
		rs->slot = (struct msga__rxslot){ .conn = c,
						  .idx = MSGA__SLOT_REASM };
	return rs;
}

/* Fragments of one message arrive in order and back to back. */
static int reassemble(struct msga__conn *c, const struct msga__wire_hdr *h,
		      const char *payload, uint32_t plen, uint64_t now_ns)
{
	if (h->flags & MSGA__WF_FIRST) {
		if (c->rs_active)
			return -EPROTO;
		if (!c->rs && !(c->rs = rsbuf_get(c)))
			return -ENOMEM;
		c->rs_active = 1;
		c->rs_len = h->len;
		c->rs_off = 0;
		c->rs_topic = h->topic;
		c->rs_seq = h->seq;
	} else if (!c->rs_active || h->topic != c->rs_topic ||
		   h->seq != c->rs_seq || h->len != c->rs_len ||
		   h->off != c->rs_off) {
		return -EPROTO;
	}
	memcpy(c->rs->data + h->off, payload, plen);
	c->rs_off += plen;
	if (h->flags & MSGA__WF_LAST) {
		c->rs_active = 0;
		return msga__sub_deliver_whole(c, &c->rs->slot, h->topic,
					       h->seq, c->rs->data, c->rs_len,
					       now_ns);
	}
	return 0;
}

void msga__rs_free_all(struct msga__conn *c)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &c->rs_held)
		free(msga__container_of(pos, struct msga__rsbuf, node));
	msga__list_for_each_safe(pos, tmp, &c->rs_idle)
		free(msga__container_of(pos, struct msga__rsbuf, node));
	free(c->rs);
	c->rs = NULL;
}

/* Every record of a BATCH is a whole message in this receive buffer. */
static int unbatch(struct msga__conn *c, struct msga__rxslot *slot,
		   const char *payload, uint32_t plen, uint64_t now_ns)
{
	struct msga__wire_hdr h;
	size_t off = 0;
	int ret;

	while ((ret = msga__wire_batch_next(payload, plen, &off, &h)) > 0) {
		const char *rec = payload + off - MSGA__WIRE_ALIGN(
					MSGA__WIRE_HDR_LEN + h.len);

		ret = msga__sub_deliver_whole(c, slot, h.topic, h.seq,
					      rec + MSGA__WIRE_HDR_LEN, h.len,
					      now_ns);
		if (ret)
			return ret;
		if (c->state == MSGA__C_DEAD)
			return 0;
	}
	return ret;
}

int msga__sub_on_recv(struct msga__conn *c, struct msga__rxslot *slot,
		      const struct msga__wire_hdr *h, const char *payload,
		      uint32_t plen, uint64_t now_ns)
{
	if (h->type == MSGA__W_REFUSE)
		return msga__ctx_fail(c->ctx, -(int)h->seq, "connection %u to "
				      "%s: the publisher refused pattern "
				      "'%s'", c->id, c->peer, c->sub->pattern);
	if (!c->was_ready) { /* (authenticated: its first answer) */
		c->was_ready = 1;
		msga__conn_emit(c, MSGA_EVENT_CONNECTED, 0);
		if (c->state == MSGA__C_DEAD)
			return 0;
	}
	switch (h->type) {
	case MSGA__W_TOPIC: {
		/* A name the API would refuse never reaches msg->topic. */
		char name[MSGA_TOPIC_MAX + 1];

		if (h->topic >= MSGA_PUB_TOPICS_MAX || h->len > MSGA_TOPIC_MAX)
			return -EPROTO;
		memcpy(name, payload, h->len);
		name[h->len] = '\0';
		/* (an embedded NUL would leave a valid-looking prefix) */
		if (strlen(name) != h->len || msga__topic_check(name))
			return -EPROTO;
		memcpy(c->names[h->topic], name, h->len + 1);
		return 0;
	}
	case MSGA__W_CREDIT:
		return 0;
	case MSGA__W_DATA:
		if (h->flags == (MSGA__WF_FIRST | MSGA__WF_LAST))
			return msga__sub_deliver_whole(c, slot, h->topic,
						       h->seq, payload, plen,
						       now_ns);
		if (h->topic >= MSGA_PUB_TOPICS_MAX || !c->names[h->topic][0])
			return -EPROTO;
		return reassemble(c, h, payload, plen, now_ns);
	case MSGA__W_BATCH:
		return unbatch(c, slot, payload, plen, now_ns);
	default:
		return -EPROTO;
	}
}

/*
 * Holding keeps the receive buffer from being re-posted, so it also holds
 * back one credit: hold briefly, or the publisher stalls. A buffer may
 * carry several messages (a BATCH); which are held is kept in the slot
 * (hold.h), by each delivery's stamp, never in the buffer, whose bytes
 * are the publisher's once it is re-posted. Ring messages are held by the
 * ring's reader, in its own memory (ring.c), and keep the ring from being
 * freed past them. A reassembled message owns its whole buffer, which the
 * hold takes over. Only the message being delivered may be held: its
 * slot is c->cur and its stamp c->cur_stamp; a copy of an earlier one is
 * refused, and releasing it does nothing.
 */
static int is_current(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	return slot->conn->cur == slot &&
	       msg->rx_time_ns == slot->conn->cur_stamp;
}

/* A ring message: only the one being delivered, by the reader's count. */
static int hold_ring(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	struct msga__ring_reader *rr = &slot->conn->rr;
	int ret;

	/* (held: -EALREADY wherever it is asked, as on every other path) */
	if (msga__ring_is_held(rr, msg->data, msg->rx_time_ns))
		return -EALREADY;
	if (!is_current(msg, slot))
		return -EINVAL; /* only inside the message's callback */
	ret = msga__ring_hold(rr, msg->data, msg->rx_time_ns);
	if (ret)
		return ret;
	slot->conn->holds++;
	return 0;
}

static struct msga__rsbuf *rsbuf_of(struct msga__rxslot *slot)
{
	return msga__container_of(slot, struct msga__rsbuf, slot);
}

/* A buffer's message, or a reassembled one: by the slot's holds. */
static int hold_in_slot(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	struct msga__conn *c = slot->conn;
	int ret;

	if (msga__holds_has(&slot->holds, msg->rx_time_ns))
		return -EALREADY;
	if (!is_current(msg, slot))
		return -EINVAL; /* only inside the message's callback */
	ret = msga__holds_take(&slot->holds, msg->rx_time_ns);
	if (ret)
		return ret;
	c->holds++;
	if (slot->idx == MSGA__SLOT_REASM) {
		msga__list_add_tail(&c->rs_held, &rsbuf_of(slot)->node);
		c->rs = NULL; /* the next large message gets a new buffer */
	}
	return 0;
}

static void release_reassembled(struct msga__rxslot *slot)
{
	struct msga__conn *c = slot->conn;

	msga__list_del(&rsbuf_of(slot)->node);
	msga__list_add_tail(&c->rs_idle, &rsbuf_of(slot)->node);
	if (--c->holds == 0 && c->state == MSGA__C_DEAD)
		msga__ctx_reap_soon(c->ctx);
}

/* The RC part of msga_msg_hold(): slot is an RC connection's. */
int msga__rc_hold(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	if (slot->idx == MSGA__SLOT_RING)
		return hold_ring(msg, slot);
	return hold_in_slot(msg, slot);
}

/* The RC part of msga_msg_release(): slot is an RC connection's. */
void msga__rc_release(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	struct msga__conn *c = slot->conn;

	if (slot->idx == MSGA__SLOT_RING) {
		if (!msga__ring_release(&c->rr, msg->data, msg->rx_time_ns))
			return;
	} else if (!msga__holds_give(&slot->holds, msg->rx_time_ns)) {
		return; /* not held: released already, or a stale copy */
	}
	if (slot->idx == MSGA__SLOT_REASM) {
		release_reassembled(slot);
		return;
	}
	c->holds--;
	/* An SRQ buffer goes back even if its connection died meanwhile. */
	if (c->srq && !slot->holds.n && msga__srq_repost(c, slot->idx) &&
	    c->state != MSGA__C_DEAD)
		msga__conn_kill(c, -ECONNRESET, 1);
	if (c->state == MSGA__C_DEAD) {
		if (!c->holds)
			msga__ctx_reap_soon(c->ctx);
		return;
	}
	if (slot->idx == MSGA__SLOT_RING) {
		msga__ring_released(c);
		return;
	}
	if (slot->holds.n || c->srq)
		return;
	if (!msga__conn_post_recv(c, slot->idx))
		msga__credit_on_repost(&c->cr);
	else
		msga__conn_kill(c, -ECONNRESET, 1);
}
