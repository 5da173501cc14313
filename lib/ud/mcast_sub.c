/* SPDX-License-Identifier: MIT */
/*
 * mcast_sub.c - the multicast side of a subscriber: one UD endpoint per
 * membership (group), datagrams checked and filtered (format, self-
 * delivery, topic pattern), then per-stream sequence tracking that turns
 * every loss, duplicate and reordering into an event and a counter, and
 * reassembly of fragmented messages in bounded memory. One-datagram
 * messages are delivered in place from the receive ring.
 */
#include <string.h>
#include <time.h>

#include "mcast.h"
#include "pubsub.h"
#include "topic.h"
#include "uri_opts.h"

static struct msga__udep *mship(struct msga__list *pos)
{
	return msga__container_of(pos, struct msga__udep, own_node);
}

static int pattern_is_prefix(const char *pattern)
{
	size_t n = strlen(pattern);

	return n && pattern[n - 1] == '*';
}

static void on_reasm_drop(void *arg, uint64_t stream)
{
	struct msga_sub *sub = arg;

	stream %= MSGA__UD_STREAMS_ALL; /* (a resend's slot: reassemble) */
	if (stream < sub->ud.streams.top && sub->ud.streams.streams[stream].used)
		sub->ud.streams.streams[stream].reasm_drops++;
}

/* A forgotten stream's index will name another: its reassembly goes. */
static void on_stream_evict(void *arg, uint32_t idx)
{
	struct msga_sub *sub = arg;

	msga__reasm_forget(&sub->ud.reasm, idx);
	msga__reasm_forget(&sub->ud.reasm, idx + MSGA__UD_STREAMS_ALL);
	msga__reasm_forget(&sub->ud.preasm, idx);
	msga__reasm_forget(&sub->ud.preasm, idx + MSGA__UD_STREAMS_ALL);
	msga__mrep_forget(sub, idx);
}

int msga__msub_init(struct msga_sub *sub)
{
	int ret;

	if (sub->ud.streams.streams)
		return 0;
	ret = msga__ustreams_init(&sub->ud.streams, MSGA_SUB_STREAMS_MAX,
				  MSGA__UD_PROBATION_MAX);
	if (ret)
		return ret;
	sub->ud.streams.idle_ns = MSGA__UD_STREAM_IDLE_PEER_TIMEOUTS *
			       sub->ctx->peer_timeout_ns;
	sub->ud.streams.on_evict = on_stream_evict;
	sub->ud.streams.evict_arg = sub;
	/*
	 * One message in reassembly per stream (a stream's index in the
	 * table is its index there), and one resend (its index plus
	 * MSGA__UD_STREAMS_ALL: a repair must not cut the live message
	 * short), all within the default byte budget.
	 */
	ret = msga__reasm_init(&sub->ud.reasm, 2 * MSGA__UD_STREAMS_ALL,
			       MSGA_MSG_MAX,
			       MSGA__UD_MIN_FRAG, MSGA__UD_REASM_TIMEOUT_NS);
	/*
	 * Streams on probation reassemble apart, in a budget of their own:
	 * forged fragments evict only each other's messages, never a
	 * verified stream's.
	 */
	if (!ret)
		ret = msga__reasm_init(&sub->ud.preasm, 2 * MSGA__UD_STREAMS_ALL,
				       MSGA_MSG_MAX, MSGA__UD_MIN_FRAG,
				       MSGA__UD_REASM_TIMEOUT_NS);
	if (ret) {
		msga__reasm_fini(&sub->ud.reasm);
		msga__ustreams_fini(&sub->ud.streams);
		return ret;
	}
	sub->ud.preasm.budget = MSGA__UD_PROBATION_REASM_BYTES;
	sub->ud.reasm.on_drop = sub->ud.preasm.on_drop = on_reasm_drop;
	sub->ud.reasm.drop_arg = sub->ud.preasm.drop_arg = sub;
	return 0;
}

/* What the endpoint tells a membership of a group (struct msga__udep_cb). */
static const struct msga__udep_cb msub_cb = {
	.on_recv = msga__msub_on_recv,
	.on_group = msga__msub_on_group,
};

/* ... or a ud:// membership, whose handshake is ud_unicast.c's. */
const struct msga__udep_cb msga__usub_cb = {
	.on_recv = msga__msub_on_recv,
	.on_cm = msga__usub_on_cm,
	.tick = msga__usub_tick,
	.on_end = msga__usub_on_end, /* (0.10: reconnection) */
};

int msga__msub_connect(struct msga_sub *sub, const char *uri, uint32_t *id)
{
	struct msga_ctx *ctx = sub->ctx;
	struct msga__mcast_range range;
	struct sockaddr_storage group;
	struct msga__uri_opts opts;
	char base[MSGA__URI_MAX + 1];
	struct msga__mgroup *g;
	struct msga__udep *ep;
	int ret;

	if (msga__uri_opts_split(uri, MSGA__URI_OPT_BIND | MSGA__URI_OPT_SOURCE,
				 base, sizeof(base), &opts) ||
	    msga__parse_mcast_uri(base, &range))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_connect: bad "
				      "multicast uri '%s'", uri);
	if (range.host_bits && pattern_is_prefix(sub->pattern))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_connect: a "
				      "prefix pattern needs one group, not "
				      "the range %s", uri);
	msga__mcast_group_of(&range, sub->pattern, &group);
	ret = msga__msub_init(sub);
	if (ret)
		return ret;
	/* (a send queue for NAKs: mcast_repair.c) */
	ret = msga__udep_new(ctx, &msub_cb, sub->ud.rx_depth,
			     MSGA__UD_SUB_SQ_DEPTH,
			     opts.has_bind ? &opts.bind : NULL, &ep);
	if (ret)
		return ret;
	msga__src_filter_set(ep, &opts);
	ep->sub = sub;
	ep->id = sub->next_id++;
	msga__list_add_tail(&sub->ud.mships, &ep->own_node);
	ret = msga__udep_join(ep, &group, 0, &g);
	if (ret) {
		msga__udep_free(ep);
		return ret;
	}
	*id = ep->id;
	return 0;
}

void msga__msub_on_group(struct msga__mgroup *g, int status)
{
	if (!status) {
		msga__udep_emit(g->ep, g, MSGA_EVENT_CONNECTED, 0);
		return;
	}
	msga__udep_emit(g->ep, g, MSGA_EVENT_CONNECT_FAILED, status);
	msga__udep_kill(g->ep, status, 0);
}

static void topic_event(struct msga__udep *ep, const char *topic,
			uint64_t origin, enum msga_event_type type,
			uint64_t seq, uint64_t count)
{
	struct msga_sub *sub = ep->sub;
	struct msga_event ev = {
		.size = sizeof(ev),
		.type = type, .conn_id = ep->id, .sub = sub,
		.peer = ep->ngroups ? ep->groups[0].name : "",
		.topic = topic, .origin = origin, .seq = seq, .count = count,
	};

	if (sub->on_event)
		sub->on_event(&ev, sub->user);
}

void msga__msub_stream_event(struct msga__udep *ep,
			     const struct msga__ustream *s,
			     enum msga_event_type type, uint64_t seq,
			     uint64_t count)
{
	topic_event(ep, s->topic, s->origin, type, seq, count);
}

/*
 * One stream is over, the membership goes on: DISCONNECTED naming it,
 * status 0 for an END from its publisher, -ETIMEDOUT for silence, and
 * seq the stream's last number known.
 */
static void stream_gone(struct msga__udep *ep, const struct msga__ustream *s,
			int status, uint64_t seq)
{
	struct msga_sub *sub = ep->sub;
	struct msga_event ev = {
		.size = sizeof(ev),
		.type = MSGA_EVENT_DISCONNECTED, .status = status,
		.conn_id = ep->id, .sub = sub,
		.peer = ep->ngroups ? ep->groups[0].name : ep->peer.name,
		.topic = s->topic, .origin = s->origin, .seq = seq,
	};

	if (sub->on_event)
		sub->on_event(&ev, sub->user);
}

/*
 * A membership that stopped: its streams go, a new one starts afresh;
 * but the lines of MSGA_SUB_AB_LINES carry the same streams, which the
 * other line takes over with their state (stream_of).
 */
static void stop_mship(struct msga__udep *ep, int status, int notify)
{
	msga__udep_kill(ep, status, notify);
	if (!(ep->sub->flags & MSGA_SUB_AB_LINES))
		msga__ustreams_evict_conn(&ep->sub->ud.streams, ep->id);
}

/* A loss ended the membership (MSGA_SUB_STOP_ON_GAP). */
void msga__msub_stop(struct msga__udep *ep, int status)
{
	stop_mship(ep, status, 1);
}

/*
 * Message seq of stream s to the user's callback: in place from the
 * receive ring (slot, which msga_msg_hold() may keep), or from memory of
 * ours (slot NULL: reassembled, or held back for order); flags are
 * msg->flags (MSGA_MSG_OUT_OF_ORDER: mcast_repair.c; MSGA_MSG_LAST_VALUE
 * here, for a late joiner's history of one).
 */
void msga__msub_hand(struct msga__udep *ep, struct msga__ustream *s,
		     struct msga__rxslot *slot, uint64_t seq, const void *data,
		     uint32_t len, uint32_t flags, uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	struct msga_msg msg = {
		.size = sizeof(msg),
		.data = data, .len = len, .topic = s->topic,
		.topic_id = msga__ustreams_pos(&sub->ud.streams, s),
		.conn_id = s->conn_id, .seq = seq, .rx_time_ns = now_ns,
		.priv_ = slot, .origin = s->origin, .flags = flags,
	};

	/* (0.12) the last value, if it comes first: a LOSS of it leaves
	 * the live stream unflagged */
	if (s->lv_seq) {
		if (seq == s->lv_seq)
			msg.flags |= MSGA_MSG_LAST_VALUE;
		s->lv_seq = 0;
	}
	/* (the stream's membership: with A/B lines, not the line's) */
	s->bytes += len;
	if (seq > s->last_seq)
		s->last_seq = seq;
	/* (one that may be held: a stamp of its own names the delivery) */
	if (slot)
		msg.rx_time_ns = msga__rx_clock_unique(&ep->ctx->rx_clock,
						       now_ns);
	ep->cur = slot;
	ep->cur_stamp = msg.rx_time_ns;
	sub->on_msg(&msg, sub->user);
	ep->cur = NULL;
}

/* Sequence check, events, then the user's callback. */
static void deliver(struct msga__udep *ep, struct msga__ustream *s,
		    struct msga__rxslot *slot, const struct msga__udw_hdr *h,
		    const void *data, uint32_t len, uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	uint64_t missing = 0;

	if (s->repaired) { /* in order, lost ones asked for (mcast_repair.c) */
		msga__mrep_deliver(ep, s, slot, h, data, len, now_ns);
		return;
	}
	switch (msga__seq_accept(&s->seq, h->seq, &missing)) {
	case MSGA__SEQ_NEXT:
		break;
	case MSGA__SEQ_GAP:
		msga__msub_stream_event(ep, s, MSGA_EVENT_GAP,
					h->seq - missing, missing);
		if (sub->flags & MSGA_SUB_STOP_ON_GAP) {
			s->seq.c.delivered--; /* it is not */
			stop_mship(ep, -EPIPE, 1);
			return;
		}
		break;
	case MSGA__SEQ_LATE:
		msga__msub_stream_event(ep, s, MSGA_EVENT_REORDER, h->seq, 1);
		break;
	case MSGA__SEQ_DUP:
		ep->line_behind++;
		/* a resend another subscriber asked for is no news here */
		if (!(h->flags & MSGA__UDW_RETX))
			msga__msub_stream_event(ep, s, MSGA_EVENT_DUPLICATE,
						h->seq, 1);
		return;
	default: /* from before we joined: not ours to report */
		return;
	}
	ep->line_first++;
	if (msga__udep_dead(ep))
		return;
	msga__msub_hand(ep, s, slot, h->seq, data, len, 0, now_ns);
}

static void reassemble(struct msga__udep *ep, struct msga__ustream *s,
		       const struct msga__udw_hdr *h, const char *payload,
		       uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	struct msga__frag f = {
		.stream = msga__ustreams_pos(&sub->ud.streams, s) +
			  (h->flags & MSGA__UDW_RETX ? MSGA__UD_STREAMS_ALL : 0),
		.msg_seq = h->seq, .total_len = h->msg_len, .offset = h->off,
		.len = h->payload, .frag_size = h->frag_size, .data = payload,
	};
	struct msga__reasm *r = &sub->ud.reasm;
	const void *msg;
	uint32_t len;

	/* on probation, and the message begun then: apart (msub_init) */
	if (!s->verified || h->seq == s->preasm_seq) {
		r = &sub->ud.preasm;
		s->preasm_seq = h->seq;
	}
	if (msga__reasm_add(r, &f, now_ns, &msg, &len) != 1)
		return;
	if (r == &sub->ud.preasm)
		s->preasm_seq = 0;
	deliver(ep, s, NULL, h, msg, len, now_ns);
	msga__reasm_release(r, msg);
}

/*
 * The far-ahead guard (seqtrack.h): 1 when datagram h may be acted on, 0
 * when it is held back and dropped. Where a gap would end the membership
 * (MSGA_SUB_STOP_ON_GAP, a stream not repaired) every gap must be
 * corroborated first; elsewhere one datagram may open a gap up to the
 * tracker's window. A stream whose datagrams agreed often enough is
 * taken off probation (ud_stream.h).
 */
static int guard_pass(struct msga_sub *sub, struct msga__ustream *s,
		      const struct msga__udw_hdr *h, uint64_t now_ns)
{
	uint64_t allowed = MSGA__SEQ_WINDOW - 1;

	if ((sub->flags & MSGA_SUB_STOP_ON_GAP) && !s->repaired)
		allowed = 0;
	if (msga__seq_guard(&s->guard, h->seq, h->type != MSGA__UDW_DATA,
			    allowed) == MSGA__GUARD_HOLD)
		return 0;
	if (!s->verified && s->guard.confirms >= MSGA__UD_CONFIRMS)
		msga__ustreams_verify(&sub->ud.streams, s, now_ns);
	return 1;
}

/*
 * The publisher says the stream sent everything up to last_sent (a
 * HEARTBEAT or an END): what has not arrived of it is a gap now, a lost
 * tail included, which no later message would have shown. 0, or -EPIPE
 * when the gap stopped the membership (MSGA_SUB_STOP_ON_GAP).
 */
static int stream_position(struct msga__udep *ep, struct msga__ustream *s,
			   uint64_t last_sent, uint64_t now_ns)
{
	uint64_t first = 0, missing;

	if (s->repaired) { /* the tail is asked for, not reported */
		msga__mrep_sent(ep, s, last_sent, now_ns);
		return msga__udep_dead(ep) ? -EPIPE : 0;
	}
	missing = msga__seq_advance(&s->seq, last_sent, &first);
	if (!missing)
		return 0;
	msga__msub_stream_event(ep, s, MSGA_EVENT_GAP, first, missing);
	if (msga__udep_dead(ep))
		return -EPIPE;
	if (ep->sub->flags & MSGA_SUB_STOP_ON_GAP) {
		stop_mship(ep, -EPIPE, 1);
		return -EPIPE;
	}
	return 0;
}

/*
 * A stream's END: its tail checked, then it is over: kept for its counters
 * until the table needs its place (msga__ustreams_retire). One we never
 * heard of says nothing, and takes no place in the table.
 */
static void stream_end(struct msga__udep *ep, const struct msga__udw_hdr *h,
		       uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	struct msga__ustream *s = msga__ustreams_find(&sub->ud.streams, h->origin,
						      h->topic, h->topic_len);

	if (!s || s->retired ||
	    (s->conn_id != ep->id && !(sub->flags & MSGA_SUB_AB_LINES)) ||
	    !guard_pass(sub, s, h, now_ns) ||
	    stream_position(ep, s, h->seq, now_ns))
		return; /* (a second copy: told already) */
	sub->ud.st.ended++;
	msga__ustreams_retire(&sub->ud.streams, s);
	stream_gone(ep, s, 0, h->seq);
}

/*
 * A datagram of a publisher that sends heartbeats (h->hb_ms: its longest
 * interval) makes its stream watched: silent for the peer timeout or
 * three such intervals, whichever is longer, it is reported gone.
 */
static void stream_heard(struct msga_sub *sub, struct msga__ustream *s,
			 const struct msga__udw_hdr *h, uint64_t now_ns)
{
	uint64_t three = 3000000ull * h->hb_ms;

	s->silent = s->retired; /* (an ended stream is never silent) */
	if (!h->hb_ms) {
		s->watch_ns = 0;
		return;
	}
	s->watch_ns = three > sub->ctx->peer_timeout_ns ?
		      three : sub->ctx->peer_timeout_ns;
	/* the subscriber's timer must come by this stream's limit */
	if (now_ns + s->watch_ns < sub->ud.silence_look_ns)
		sub->ud.silence_look_ns = now_ns + s->watch_ns;
}

static int is_local(const struct msga_sub *sub, uint64_t origin)
{
	return (sub->flags & MSGA_SUB_NO_LOCAL) &&
	       (uint32_t)(origin >> 32) == msga__host_id();
}

/* Whether membership conn_id is still receiving. */
static int mship_live(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships)
		if (mship(pos)->id == conn_id)
			return !msga__udep_dead(mship(pos));
	return 0;
}

/*
 * The datagram's stream. A stream left by a membership that ended (how
 * ever it ended) starts afresh on the new one: its old sequence state
 * would report everything sent in between as lost.
 */
static struct msga__ustream *stream_of(struct msga__udep *ep,
				       const struct msga__udw_hdr *h,
				       uint64_t now_ns)
{
	struct msga__ustreams *t = &ep->sub->ud.streams;
	struct msga__ustream *s;

	s = msga__ustreams_get(t, h->origin, h->topic, h->topic_len, ep->id,
			       now_ns);
	if (!s || s->conn_id == ep->id || mship_live(ep->sub, s->conn_id))
		return s;
	if (ep->sub->flags & MSGA_SUB_AB_LINES) {
		/* its line ended, another goes on: the same stream */
		s->conn_id = ep->id;
		return s;
	}
	msga__ustreams_evict(t, s);
	return msga__ustreams_get(t, h->origin, h->topic, h->topic_len, ep->id,
				  now_ns);
}

static void classify(struct msga__udep *ep, struct msga__rxslot *slot,
		     const struct ibv_wc *wc, const char *buf, uint32_t n,
		     uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	struct msga__ustream *s;
	struct msga__udw_hdr h;
	char topic[MSGA_TOPIC_MAX + 1];

	if (msga__udw_get(buf, n, &h)) {
		sub->ud.st.foreign++;
		return;
	}
	if (ep->unicast && !msga__usub_from_peer(ep, wc, buf - MSGA__UD_GRH)) {
		sub->ud.st.spoofed++; /* not from the publisher we connected to */
		return;
	}
	if (h.type != MSGA__UDW_DATA && h.type != MSGA__UDW_HEARTBEAT &&
	    h.type != MSGA__UDW_END && h.type != MSGA__UDW_LOST) {
		if (ep->unicast)
			msga__usub_on_ctl(ep, &h, now_ns);
		return;
	}
	if (ep->unicast && ep->state == MSGA__UDEP_READY)
		ep->last_heard_ns = now_ns; /* the publisher is alive */
	if (is_local(sub, h.origin)) {
		sub->ud.st.local++;
		return;
	}
	memcpy(topic, h.topic, h.topic_len);
	topic[h.topic_len] = '\0';
	if (msga__topic_check(topic)) {
		/* (a name the API would refuse never reaches msg->topic) */
		sub->ud.st.foreign++;
		return;
	}
	if (!msga__topic_match(sub->pattern, topic)) {
		sub->ud.st.filtered++;
		return;
	}
	if (h.type == MSGA__UDW_END) {
		stream_end(ep, &h, now_ns);
		return;
	}
	if (h.type == MSGA__UDW_LOST) { /* a reliable publisher's answer */
		msga__mrep_lost(ep, &h);
		return;
	}
	s = stream_of(ep, &h, now_ns);
	if (!s) {
		sub->ud.st.overflow++;
		if (msga__ustreams_refused_first(&sub->ud.streams, h.origin,
						 h.topic, h.topic_len))
			topic_event(ep, topic, h.origin,
				    MSGA_EVENT_STREAM_OVERFLOW, h.seq, 1);
		return;
	}
	if (!guard_pass(sub, s, &h, now_ns))
		return; /* far ahead of what the stream has confirmed */
	stream_heard(sub, s, &h, now_ns);
	if ((h.retains || (sub->flags & MSGA_SUB_AB_LINES)) && !s->repaired)
		msga__mrep_begin(ep, s, &h, wc, buf - MSGA__UD_GRH);
	if (s->repaired && (h.flags & MSGA__UDW_RPOS))
		msga__mread_note(ep, s, &h); /* for repair by READ */
	if (h.type == MSGA__UDW_HEARTBEAT) {
		sub->ud.st.heartbeats++;
		stream_position(ep, s, h.seq, now_ns);
		return;
	}
	if ((h.flags & ~(MSGA__UDW_RPOS | MSGA__UDW_MAC)) ==
	    (MSGA__UDW_FIRST | MSGA__UDW_LAST))
		deliver(ep, s, slot, &h, buf + h.hdr_len, h.payload, now_ns);
	else
		reassemble(ep, s, &h, buf + h.hdr_len, now_ns);
}

void msga__msub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns)
{
	const char *buf = ep->rx_buf + (size_t)slot->idx * ep->rx_slot;
	uint32_t byte_len = wc->byte_len;

	ep->rx_wc = wc;
	ep->rx_grh = buf;
	if (!msga__src_filter_pass(ep, wc, buf))
		ep->sub->ud.st.unlisted_source++;
	else if (byte_len >= MSGA__UD_GRH)
		classify(ep, slot, wc, buf + MSGA__UD_GRH,
			 byte_len - MSGA__UD_GRH, now_ns);
	else
		ep->sub->ud.st.foreign++;
	ep->rx_wc = NULL;
	if (slot->holds.n || msga__udep_dead(ep))
		return;
	if (msga__udep_post_recv(ep, slot->idx))
		msga__udep_kill(ep, -EIO, 1);
}

/*
 * One datagram, one message: holding one keeps its buffer off the ring.
 * The hold is the slot's (hold.h), by the delivery's stamp: a copy of
 * the buffer's earlier message neither holds nor releases this one.
 */
int msga__msub_hold(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	int ret;

	if (msga__holds_has(&slot->holds, msg->rx_time_ns))
		return -EALREADY;
	if (slot->ud->cur != slot || msg->rx_time_ns != slot->ud->cur_stamp)
		return -EINVAL; /* only inside the message's callback */
	ret = msga__holds_take(&slot->holds, msg->rx_time_ns);
	if (!ret)
		slot->ud->holds++;
	return ret;
}

void msga__msub_release(const struct msga_msg *msg, struct msga__rxslot *slot)
{
	struct msga__udep *ep = slot->ud;

	if (!msga__holds_give(&slot->holds, msg->rx_time_ns))
		return; /* not held: released already, or a stale copy */
	ep->holds--;
	if (msga__udep_dead(ep)) {
		msga__ctx_reap_soon(ep->ctx);
		return;
	}
	if (msga__udep_post_recv(ep, slot->idx))
		msga__udep_kill(ep, -EIO, 1);
}

/* Drop stale reassemblies; returns when the next one would be stale. */
uint64_t msga__msub_expire(struct msga_sub *sub, uint64_t now_ns)
{
	uint64_t a, b;

	msga__reasm_expire(&sub->ud.reasm, now_ns);
	msga__reasm_expire(&sub->ud.preasm, now_ns);
	a = msga__reasm_next_expiry(&sub->ud.reasm);
	b = msga__reasm_next_expiry(&sub->ud.preasm);
	return a < b ? a : b;
}

/* The live membership conn_id, or NULL. */
struct msga__udep *msga__msub_mship(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships)
		if (mship(pos)->id == conn_id && !msga__udep_dead(mship(pos)))
			return mship(pos);
	return NULL;
}

static void on_silent(void *arg, struct msga__ustream *s)
{
	struct msga_sub *sub = arg;
	struct msga__udep *ep = msga__msub_mship(sub, s->conn_id);

	if (!ep)
		return; /* its membership ended: the stream goes with it */
	sub->ud.st.silent++;
	/* (a repaired stream's tracker stops at its start: repair.h counts) */
	stream_gone(ep, s, -ETIMEDOUT,
		    s->seq.last > s->last_seq ? s->seq.last : s->last_seq);
}

/*
 * The subscriber's UD timers: reassemblies that stopped, and streams gone
 * silent. The look for silence is due when the first watched stream could
 * reach its limit (a datagram that sets a nearer one brings it forward:
 * stream_heard), and comes MSGA__UD_SILENCE_LOOK_NS apart at most often,
 * so an event-mode program sleeps while its streams are heard. Returns
 * when it is next due, for event mode's timer.
 */
uint64_t msga__msub_tick(struct msga_sub *sub, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX, pt = sub->ctx->peer_timeout_ns, look;

	if (sub->ud.reasm.slots && (msga__reasm_pending(&sub->ud.reasm) ||
				 msga__reasm_pending(&sub->ud.preasm)))
		next = msga__msub_expire(sub, now_ns);
	look = msga__mrep_tick(sub, now_ns);
	next = look < next ? look : next;
	if (sub->dead)
		return UINT64_MAX;
	if (msga__time_reached(now_ns, sub->ud.silence_look_ns)) {
		msga__ustreams_scan_silent(&sub->ud.streams, now_ns, pt,
					   on_silent, sub);
		look = msga__ustreams_next_silence(&sub->ud.streams, pt);
		if (look != UINT64_MAX &&
		    look < now_ns + MSGA__UD_SILENCE_LOOK_NS)
			look = now_ns + MSGA__UD_SILENCE_LOOK_NS;
		sub->ud.silence_look_ns = look;
	}
	return sub->ud.silence_look_ns < next ? sub->ud.silence_look_ns : next;
}

int msga__msub_disconnect(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships) {
		struct msga__udep *ep = mship(pos);

		if (ep->id == conn_id && !msga__udep_dead(ep)) {
			if (ep->unicast)
				msga__usub_leave(ep);
			stop_mship(ep, 0, 0);
			return 0;
		}
	}
	return msga__usub_retry_cancel(sub, conn_id); /* (waiting: 0.10) */
}

/* A subscriber destroyed from a callback: every membership stops. */
void msga__msub_kill_all(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships)
		msga__udep_kill(mship(pos), 0, 0);
}

void msga__msub_fini(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships)
		msga__udep_free(mship(pos));
	msga__retry_free_all(&sub->ud.retries);
	msga__mrep_fini(sub); /* its address handles, after the QPs */
	msga__ustreams_fini(&sub->ud.streams);
	msga__reasm_fini(&sub->ud.reasm);
	msga__reasm_fini(&sub->ud.preasm);
}

/*
 * What membership conn_id brought, for msga_sub_line_stats() (sub_stats.c, through the table of mcast_sub_ops.c):
 * 0, or -ENOENT when sub has none of that id. One that ended still
 * answers until it is freed.
 */
int msga__msub_line(const struct msga_sub *sub, uint32_t conn_id,
		    struct msga_line_stats *st)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->ud.mships) {
		const struct msga__udep *ep = mship(pos);

		if (ep->id != conn_id)
			continue;
		st->first = ep->line_first;
		st->behind = ep->line_behind;
		return 0;
	}
	return -ENOENT;
}
