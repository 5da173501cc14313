/* SPDX-License-Identifier: MIT */
/*
 * rc_fanout.c - an RC publisher's data path: each message fanned out to
 * every matching subscriber's queue pair (struct msga__pub_ops ready,
 * held_up, commit, send and progress; the table is rc_pub_ops.c's).
 *
 * A claimed message lives in one registered send buffer shared by all the
 * SENDs of its fan-out (each SEND has its own header in a second SGE), so a
 * publish never copies per subscriber. A message back-pressures (-EAGAIN)
 * unless every matching subscriber has credit: slow subscribers slow the
 * publisher down, they never lose messages. One that holds the stream up
 * for the slow-consumer time is dropped instead (slow_consumer.h).
 */
#include "rc.h"
#include "rc_batch.h"
#include "rc_ring_fast.h"

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
	pub->st.stalls += !c->slow.blocking;
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
int msga__rc_pub_ready(struct msga_pub *pub, uint32_t topic_id, size_t len)
{
	struct msga__list *pos, *tmp;
	uint64_t now = 0;
	int blocked = 0;

	(void)len;
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
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
void msga__rc_pub_held_up(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	uint64_t now = 0;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
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

/*
 * Send a whole message to every matching subscriber. slot is the send
 * buffer data is in, or MSGA__SLOT_INLINE for msga_pub_send()'s own buffer
 * when every connection will post it inline (the provider copies it at
 * once).
 */
static int commit_small(struct msga_pub *pub, uint32_t slot,
			uint32_t topic_id, const void *data, size_t len)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
		.topic = (uint16_t)topic_id, .len = (uint32_t)len,
		.seq = ++pub->topics[topic_id].seq,
	};
	/* (the buffer's key is read where a send goes out, as it was) */
	struct msga__send_desc m = {
		.hdr = &h, .ext = data, .ext_len = (uint32_t)len,
		.tag = (int32_t)slot,
	};
	struct msga__list *pos, *tmp;
	int sent = 0;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
		struct msga__conn *c = msga__own_conn(pos);

		/* A subscriber that joined after the claim starts later. */
		if (c->state != MSGA__C_READY || c->ann <= topic_id ||
		    !msga__topic_bit(c, topic_id))
			continue;
		if (msga__bat_fits(c, len)) {
			msga__bat_append(c, &h, data, len);
			sent++;
			c->tx_msgs++;
			c->tx_bytes += len;
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
			c->tx_msgs++;
			c->tx_bytes += len;
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
		m.ext_lkey = pub->tx_mr->lkey;
		if (msga__conn_send(c, &m))
			continue;
		/* The record's own size decided it (rc_conn.c), not ours. */
		if (!c->last_inline)
			pub->tx_ref[slot]++;
		sent++;
		c->tx_msgs++;
		c->tx_bytes += len;
	}
	if (slot != MSGA__SLOT_INLINE && !pub->tx_ref[slot])
		msga__pub_slot_put(pub, slot);
	return sent;
}

/* Push fragments of the big message to every connection that has room. */
static void big_pump(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	int busy = 0;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
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

			struct msga__send_desc m = {
				.hdr = &h, .ext = pub->big_buf + off,
				.ext_len = n, .ext_lkey = pub->big_mr->lkey,
				.tag = MSGA__TAG_BIG, .signal = n == left,
			};

			if (msga__conn_send(c, &m))
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
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->state != MSGA__C_READY || c->ann <= claim->topic_id ||
		    !msga__topic_bit(c, claim->topic_id))
			continue;
		c->big_active = 1;
		c->big_off = 0;
		c->big_inflight = 0;
		sent++;
		c->tx_msgs++;
		c->tx_bytes += claim->len;
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
static MSGA__HOT_INLINE int solo_send(struct msga_pub *pub,
				      uint32_t topic_id, const void *data,
				      size_t len)
{
	struct msga__conn *c = pub->rc.solo;
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
	if (ret > 0) {
		c->tx_msgs++;
		c->tx_bytes += len;
	}
	return ret > 0;
}

int msga__rc_pub_commit(struct msga_pub *pub, const struct msga_claim *claim,
			uint32_t slot, int big)
{
	int ret;

	if (big && !claim->len)
		/*
		 * Shrunk to nothing: no fragment would carry it, yet its
		 * sequence number would be spent. An empty message is a small
		 * one; the claim's room check covered its credit.
		 */
		return MSGA__PUB_AS_SEND;
	if (big)
		return commit_big(pub, claim);
	if (slot == MSGA__SLOT_INLINE)
		return commit_small(pub, slot, claim->topic_id, claim->data,
				    claim->len);
	ret = solo_send(pub, claim->topic_id, claim->data, claim->len);
	if (ret >= 0) {
		msga__pub_slot_put(pub, slot); /* (copied: the post was inline) */
		return ret;
	}
	return commit_small(pub, slot, claim->topic_id, claim->data,
			    claim->len);
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
 * msga_pub_send: the solo ring's short record, or else a small message
 * goes from the caller's buffer straight into the provider's inline copy
 * (MSGA__PUB_INLINE): no send buffer is claimed and nothing is copied
 * twice.
 */
int msga__rc_pub_send(struct msga_pub *pub, uint32_t topic_id,
		      const void *data, size_t len)
{
	int ret = solo_send(pub, topic_id, data, len);

	if (ret >= 0)
		return ret;
	return always_inline(pub, len) ? MSGA__PUB_INLINE : MSGA__PUB_CLAIM;
}

/*
 * Send buffers are freed by signalled completions only. When they run
 * short, ask each connection that still holds some unsignalled for a
 * signalled CREDIT, so an idle subscriber cannot pin them forever.
 */
static void flush_unsignalled(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
		struct msga__conn *c = msga__own_conn(pos);
		struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };
		/* signalled: it retires the tagged sends before it */
		struct msga__send_desc m = { .hdr = &h, .tag = MSGA__TAG_NONE,
					     .signal = 1 };

		if (c->state == MSGA__C_READY && c->unsig_tagged &&
		    msga__conn_can_ctl(c))
			msga__conn_send(c, &m);
	}
}

/*
 * The publisher's work that no completion starts: big fragments to pump,
 * open batches to flush, topic names to announce, send buffers to win
 * back. 1 if some remains, so the next poll comes back (the engine skips
 * this while no publisher has any: see msga__pub_work).
 */
int msga__rc_pub_progress(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;
	int more = 0;

	if (pub->big_busy)
		big_pump(pub);
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
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

/*
 * msga_pub_flush: every committed message of every ready subscriber is
 * out and its send completed: the RC acknowledgement says the peer's
 * device has it. No open batch, no big message going out, and every
 * posted work request completed; unsignalled ones are made visible by
 * one signalled CREDIT behind them, as flush_unsignalled does.
 */
int msga__rc_pub_flushed(struct msga_pub *pub, int first)
{
	struct msga__list *pos, *tmp;
	int done = !pub->big_busy;

	(void)first;
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
		struct msga__conn *c = msga__own_conn(pos);
		struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };
		struct msga__send_desc m = { .hdr = &h, .tag = MSGA__TAG_NONE,
					     .signal = 1 };

		if (c->state != MSGA__C_READY)
			continue; /* gone: it no longer counts */
		if (c->bat_open || c->big_active) {
			done = 0;
			msga__pub_work(pub);
			continue;
		}
		if (c->tx_done == c->tx_seq)
			continue;
		done = 0;
		if (c->unsig && msga__conn_can_ctl(c))
			msga__conn_send(c, &m);
	}
	return done;
}
