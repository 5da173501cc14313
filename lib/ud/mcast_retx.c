/* SPDX-License-Identifier: MIT */
/*
 * mcast_retx.c - a reliable multicast publisher's side of loss recovery
 * (MSGA_PUB_RELIABLE). It keeps copies of its recent messages (retain.h:
 * the last retransmit_bytes, all topics together) and answers a
 * subscriber's NAK, a unicast datagram to its queue pair, by sending the
 * messages again to the topic's group, flagged RETX, or, for numbers it
 * no longer keeps, a LOST that names them, so the subscriber gives them
 * up at once instead of at its time limit.
 *
 * Answers go to the group, not to the one who asked: every subscriber
 * that missed the same datagrams takes the one resend, and those whose
 * NAK was still waiting (randomly delayed, repair.h) never send it. A
 * topic's range resent within MSGA__UD_RETX_HOLDOFF_NS is not resent for
 * another NAK. The work NAKs can cause is bounded: MSGA__UD_RETX_BUDGET
 * datagrams per MSGA__UD_RETX_WINDOW_NS, and resends use at most half the
 * send buffers; a NAK that finds no room is dropped, and its sender asks
 * again. None of this delays the live stream beyond sharing the queue.
 *
 * A resend is copied from the ring into a send buffer first: the ring
 * goes on taking new messages while the resend is queued, and may reuse
 * those very bytes. So a message up to MSGA_FRAG_MAX is resent; a larger
 * one is answered LOST.
 */
#include <string.h>

#include "mcast.h"
#include "pubsub.h"

int msga__mpub_retx_init(struct msga_pub *pub, uint64_t bytes)
{
	pub->ud.reliable = 1;
	return msga__retain_init(&pub->ud.retain, (size_t)bytes,
				 MSGA_PUB_TOPICS_MAX);
}

void msga__mpub_retx_fini(struct msga_pub *pub)
{
	if (pub->ud.reliable)
		msga__retain_fini(&pub->ud.retain);
	pub->ud.reliable = 0;
}

/* The topic a NAK names, or -1. */
static int topic_named(const struct msga_pub *pub, const char *name,
		       uint32_t len)
{
	for (uint32_t i = 0; i < pub->ntopics; i++)
		if (pub->topics[i].name_len == len &&
		    !memcmp(pub->topics[i].name, name, len))
			return (int)i;
	return -1;
}

/* Room in this window's budget for n more datagrams? */
static int budget_take(struct msga_pub *pub, uint32_t n, uint64_t now_ns)
{
	if (msga__time_reached(now_ns, pub->ud.retx_window_ns +
				       MSGA__UD_RETX_WINDOW_NS)) {
		pub->ud.retx_window_ns = now_ns;
		pub->ud.retx_sent = 0;
	}
	if (pub->ud.retx_sent + n > MSGA__UD_RETX_BUDGET)
		return 0;
	pub->ud.retx_sent += n;
	return 1;
}

/*
 * Is this window's budget spent? Nothing, resend or LOST, can go before
 * the next window then. Read only: budget_take starts the next window.
 */
static int budget_spent(const struct msga_pub *pub, uint64_t now_ns)
{
	return !msga__time_reached(now_ns, pub->ud.retx_window_ns +
					   MSGA__UD_RETX_WINDOW_NS) &&
	       pub->ud.retx_sent >= MSGA__UD_RETX_BUDGET;
}

/* Every datagram of resend m, to one target. */
static int post_message(struct msga_pub *pub, struct msga__mgroup *to,
			const struct msga__mpub_msg *m, uint32_t frags)
{
	uint32_t n;
	int ret;

	for (uint32_t off = 0; off < m->len || (!m->len && !off); off += n) {
		n = m->len - off < pub->ud.frag ? m->len - off : pub->ud.frag;
		if (frags == 1)
			n = m->len;
		ret = pub->ud.up->post_piece(pub, to, m, off, n);
		if (ret < 0)
			return ret;
		pub->tx_ref[m->tag] += (uint16_t)ret;
		if (!m->len)
			break;
	}
	return 0;
}

/*
 * Send message seq of topic_id again: to `to`, or (NULL) to the topic's
 * group on each line. 0; -EAGAIN when there is no room (queue, buffers,
 * budget) now; -ENOENT when it is not kept, or too large to resend.
 */
static int resend(struct msga_pub *pub, struct msga__mgroup *to,
		  uint32_t topic_id, uint64_t seq, uint64_t now_ns)
{
	struct msga__mpub_msg m = { .topic_id = topic_id, .seq = seq,
				    .flags = MSGA__UDW_RETX };
	uint32_t len, slot, frags, lines = 1;
	uint64_t mask = 1;
	const void *data;
	char *copy;
	int ret = 0;

	if (msga__retain_get(&pub->ud.retain, topic_id, seq, &data, &len) ||
	    len > MSGA_FRAG_MAX)
		return -ENOENT;
	if (!to)
		mask = pub->ud.up->targets(pub, topic_id, &lines);
	frags = len <= pub->ud.up->single_max(pub, topic_id) ? 1 :
		(len + pub->ud.frag - 1) / pub->ud.frag;
	if (!mask || pub->tx_nfree <= MSGA__PUB_TX_SLOTS / 2 ||
	    msga__udep_sq_room(pub->ud.ep) < (int)(frags * lines) ||
	    !budget_take(pub, frags * lines, now_ns))
		return -EAGAIN;
	slot = pub->tx_free[--pub->tx_nfree];
	copy = pub->tx_buf + (size_t)slot * MSGA__DATA_SLOT;
	memcpy(copy, data, len);
	m.data = copy;
	m.len = len;
	m.lkey = pub->tx_mr->lkey;
	m.tag = (int32_t)slot;
	for (; mask && !ret; mask &= mask - 1)
		ret = post_message(pub, to ? to : pub->ud.up->target(pub,
				   topic_id, (uint32_t)__builtin_ctzll(mask)),
				   &m, frags);
	if (ret < 0)
		msga__udep_kill(pub->ud.ep, ret, 1);
	if (!pub->tx_ref[slot])
		msga__pub_slot_put(pub, slot);
	pub->ud.retx_msgs++;
	return 0;
}

/* Tell the group that [seq, seq + count) of topic_id is gone. */
static void post_lost(struct msga_pub *pub, uint32_t topic_id, uint64_t seq,
		      uint64_t count, uint64_t now_ns)
{
	if (!count || !budget_take(pub, 1, now_ns))
		return;
	if (!pub->ud.up->post_ctl(pub, topic_id, MSGA__UDW_LOST, seq,
				 (uint32_t)count, 0))
		pub->ud.lost_sent++;
}

/*
 * A NAK for [seq, seq + count) of one of our topics: what is kept goes
 * again, to the group (to NULL) or, over ud://, to the subscriber that
 * asked (to); runs of what is not are named LOST, to every target of the
 * topic. Numbers never sent yet, and those resent moments ago, are passed
 * over. With the budget spent nothing could go: the NAK is dropped
 * before its topic is looked up, so a flood of them costs little.
 */
void msga__mpub_on_nak(struct msga_pub *pub, const struct msga__udw_hdr *h,
		       struct msga__mgroup *to, uint64_t now_ns)
{
	uint64_t from = h->seq, end = h->seq + h->msg_len, lost_from = 0, s;
	uint64_t oldest, newest;
	struct msga__topic *t;
	int id;

	if (budget_spent(pub, now_ns)) {
		pub->st.naks_dropped++;
		return; /* its sender asks again */
	}
	id = topic_named(pub, h->topic, h->topic_len);
	if (id < 0 || h->origin != pub->ud.origin)
		return; /* not ours, or for an earlier publisher here */
	t = &pub->topics[id];
	if (t->seq < end - 1)
		end = t->seq + 1;
	/*
	 * What is no longer kept from the NAK's start on is named in one
	 * LOST, as far as one may name, however few numbers the NAK asked
	 * for: subscribers share their NAKs out in small parts
	 * (mcast_repair.c), and a loss should reach them as one event.
	 */
	if (msga__retain_range(&pub->ud.retain, (uint32_t)id, &oldest,
			       &newest) <= 0)
		oldest = t->seq + 1;
	if (from < oldest && from <= t->seq) {
		uint64_t n = oldest - from < MSGA__UDW_RANGE_MAX ?
			     oldest - from : MSGA__UDW_RANGE_MAX;

		post_lost(pub, (uint32_t)id, from, n, now_ns);
		from += n;
	}
	if (!msga__time_reached(now_ns, t->retx_at_ns +
				MSGA__UD_RETX_HOLDOFF_NS) &&
	    from >= t->retx_lo && from < t->retx_hi)
		from = t->retx_hi; /* another's NAK for it was just served */
	for (s = from; s < end; s++) {
		int ret = resend(pub, to, (uint32_t)id, s, now_ns);

		if (ret == -ENOENT) {
			lost_from = lost_from ? lost_from : s;
			continue;
		}
		post_lost(pub, (uint32_t)id, lost_from,
			  lost_from ? s - lost_from : 0, now_ns);
		lost_from = 0;
		if (ret)
			break; /* no room: the subscriber asks again */
	}
	post_lost(pub, (uint32_t)id, lost_from, lost_from ? s - lost_from : 0,
		  now_ns);
	if (s > from) {
		t->retx_lo = from;
		t->retx_hi = s;
		t->retx_at_ns = now_ns;
	}
}

/* A datagram to the publisher's queue pair: only a NAK means anything. */
void msga__mpub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns)
{
	const char *buf = ep->rx_buf + (size_t)slot->idx * ep->rx_slot;
	struct msga__udw_hdr h;

	if (wc->byte_len >= MSGA__UD_GRH &&
	    !msga__udw_get(buf + MSGA__UD_GRH, wc->byte_len - MSGA__UD_GRH,
			   &h) &&
	    h.type == MSGA__UDW_NAK && ep->pub->ud.reliable &&
	    ep->state != MSGA__UDEP_CLOSING) {
		ep->pub->ud.naks_taken++;
		msga__mpub_on_nak(ep->pub, &h, NULL, now_ns);
	}
	if (!msga__udep_dead(ep) && msga__udep_post_recv(ep, slot->idx))
		msga__udep_kill(ep, -EIO, 1);
}
