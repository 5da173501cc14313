/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_rx.c - what arrives on a subscriber's RC connection: topic
 * names, whole, fragmented and batched messages, decoded into the
 * subscriber's callback in place, from a SEND's receive buffer (the CQ's
 * receives come here through the connection's on_recv) or from the RDMA
 * WRITE ring, read here so that a feed's steady state delivers with
 * direct calls only; and holding a message past its callback.
 */
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "srq.h"
#include "topic.h"

/*
 * Hand a whole message to the callback, in place. Every path ends here
 * (the ring's fast path directly, which is why the ring's reader loop is
 * in this file: a record's delivery is a call the compiler sees); a
 * topic must be named before its first message, or it is a bad peer.
 */
static int deliver_flagged(struct msga__conn *c, struct msga__rxslot *slot,
			   uint32_t topic, uint64_t seq, const void *data,
			   uint32_t len, uint64_t now_ns, uint32_t flags)
{
	struct msga_msg msg = {
		.size = sizeof(msg), .flags = flags,
		.data = data, .len = len, .topic_id = topic,
		.conn_id = c->id, .seq = seq, .priv_ = slot,
	};

	if (topic >= MSGA_PUB_TOPICS_MAX || !c->names[topic][0])
		return -EPROTO;
	/* (0.12) a last value only before the topic's data: a late one is a
	 * replay (last_value.h). Flags 0, the live path: the test folds. */
	if (!msga__lv_gate_pass(&c->lv_gate, topic,
				(flags & MSGA_MSG_LAST_VALUE) != 0))
		return -EPROTO;
	msg.topic = c->names[topic];
	/* (a stamp of its own: it names this delivery to hold, release) */
	msg.rx_time_ns = msga__rx_clock_unique(&c->ctx->rx_clock, now_ns);
	c->cur = slot;
	c->cur_stamp = msg.rx_time_ns;
	c->rx_msgs++;
	c->rx_bytes += len;
	c->sub->on_msg(&msg, c->sub->user);
	c->cur = NULL;
	return 0;
}

static int deliver_whole(struct msga__conn *c, struct msga__rxslot *slot,
			 uint32_t topic, uint64_t seq, const void *data,
			 uint32_t len, uint64_t now_ns)
{
	return deliver_flagged(c, slot, topic, seq, data, len, now_ns, 0);
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
		return deliver_whole(c, &c->rs->slot, h->topic, h->seq,
				     c->rs->data, c->rs_len, now_ns);
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

		ret = deliver_whole(c, slot, h.topic, h.seq,
				    rec + MSGA__WIRE_HDR_LEN, h.len, now_ns);
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
	if (h->type == MSGA__W_BYE) {
		/* The publisher ended cleanly: status 0 (before it answered
		 * us, it refused us as a reset would). */
		msga__conn_kill(c, c->was_ready ? 0 : -ECONNRESET, 1);
		return 0;
	}
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
		c->rx_topics += !c->names[h->topic][0];
		memcpy(c->names[h->topic], name, h->len + 1);
		return 0;
	}
	case MSGA__W_CREDIT:
		return 0;
	case MSGA__W_DATA:
		if (h->flags == (MSGA__WF_FIRST | MSGA__WF_LAST))
			return deliver_whole(c, slot, h->topic, h->seq,
					     payload, plen, now_ns);
		if (h->topic >= MSGA_PUB_TOPICS_MAX || !c->names[h->topic][0])
			return -EPROTO;
		return reassemble(c, h, payload, plen, now_ns);
	case MSGA__W_BATCH:
		return unbatch(c, slot, payload, plen, now_ns);
	case MSGA__W_LAST_VALUE:
		/* (0.12) only when asked for (WANT_LV, rc_sub_cm.c); the
		 * publisher sends it before the topic's live stream, once
		 * (deliver_flagged refuses a late one) */
		if (!(c->sub->flags & MSGA_SUB_LAST_VALUE))
			return -EPROTO;
		return deliver_flagged(c, slot, h->topic, h->seq, payload,
				       plen, now_ns, MSGA_MSG_LAST_VALUE);
	default:
		return -EPROTO;
	}
}

/* ---------------------------------------------------- the ring */

/*
 * One record of any kind, the general way: 1 if one was read, 0 if none
 * had arrived, -1 if it killed the connection.
 */
static int ring_poll_one(struct msga__conn *c, uint64_t *now)
{
	struct msga__ring_rec rec;
	struct msga__wire_hdr h;
	const char *payload;
	uint32_t plen;
	int ret = msga__ring_peek(&c->rr, &rec);

	if (!ret)
		return 0;
	if (ret > 0)
		ret = msga__ring_head_get(&c->rr, &rec, &h, &payload, &plen);
	if (!ret && !*now)
		*now = msga__rx_clock_now(&c->ctx->rx_clock);
	if (!ret && h.type == MSGA__W_CREDIT)
		msga__credit_on_recv(&c->cr, h.credit);
	if (!ret)
		ret = msga__sub_on_recv(c, &c->ring_slot, &h, payload, plen,
					*now);
	if (ret) {
		msga__conn_kill(c, ret, 1);
		return -1;
	}
	msga__ring_consume(&c->rr, rec.len);
	return 1;
}

/*
 * Short records (whole messages, the topic's next seq: a feed's steady
 * state) are read and delivered here inline; anything else goes through
 * ring_poll_one. The record is consumed after its callback, and freed
 * unless the callback held it.
 */
int msga__sub_ring_poll(struct msga__conn *c, int budget)
{
	uint64_t now = 0;
	int done = 0;

	while (done < budget && c->state != MSGA__C_DEAD) {
		struct msga__ring_short s;
		uint32_t rec_len = msga__ring_take_short(&c->rr, &s);

		if (!rec_len)
			break; /* the next short record is on its way */
		if (rec_len != MSGA__RING_TAKE_OTHER) {
			if (!now)
				now = msga__rx_clock_now(&c->ctx->rx_clock);
			if (deliver_whole(c, &c->ring_slot, s.topic, s.seq,
					  s.payload, s.len, now)) {
				msga__conn_kill(c, -EPROTO, 1);
				break;
			}
			msga__ring_consume(&c->rr, rec_len);
		} else if (!msga__ring_may_read(&c->rr) ||
			   ring_poll_one(c, &now) <= 0) {
			break;
		}
		msga__ring_free(&c->rr);
		done++;
	}
	/* Only reading frees (besides a release): an idle poll stays cheap. */
	if ((done || c->ring_report_due) && c->state != MSGA__C_DEAD)
		msga__ring_report(c);
	return done;
}

/* ---------------------------------------------------- holds */

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
