/* SPDX-License-Identifier: MIT */
/*
 * mcast_repair.c - a multicast subscriber's side of loss recovery, for
 * the streams of MSGA_PUB_RELIABLE publishers (their datagrams say so),
 * unless the subscriber chose MSGA_SUB_NO_RECOVERY.
 *
 * Such a stream is delivered through repair.h: in order, exactly once.
 * A number that is missing (seen from a later message, or a heartbeat's)
 * is asked for again with a NAK to the publisher's queue pair, every gap
 * known at once, after a random wait so that subscribers missing the same
 * datagram do not all ask (one resend to the group serves them all), then
 * again every MSGA__UD_NAK_RETRY_NS, unless READ is still to look for it
 * (mcast_read.c). The NAKs due in one round are shared between the
 * streams that have them, oldest numbers first, within a window paced by
 * how much of what was asked came back (nak_allowance): a large loss on
 * many streams is repaired on all of them at once, not one stream after
 * another, and no faster than our receive ring takes the resends. Later messages wait, copied, until the gap is filled; when
 * the publisher answers LOST, or the stream has repaired nothing for
 * msga_sub_attr.recovery_ms (with MSGA_SUB_RECOVERY_BOUND: the gap is
 * recovery_ms old), or the held copies pass recovery_bytes, the range is
 * given up: MSGA_EVENT_LOSS names it exactly, and delivery goes on. The
 * publisher's address comes from its datagrams' work completions (the
 * source QP and GRH), one address handle per publisher.
 */
#include <string.h>

#include "mcast.h"
#include "pubsub.h"

int msga__mrep_init(struct msga_sub *sub)
{
	struct msga__repair_cfg cfg = {
		.max_bytes = sub->ud.recovery_bytes,
		.max_streams = MSGA__UD_STREAMS_ALL,
		.max_gaps = MSGA__UD_REPAIR_GAPS,
		/*
		 * Given up for no progress, not for age (issue 35): a long
		 * outage repaired at a steady pace is not lost while the
		 * publisher still has it. The age bound only on request.
		 */
		.stall_ns = sub->ud.recovery_ns,
		.give_up_ns = (sub->flags & MSGA_SUB_RECOVERY_BOUND) ?
			      sub->ud.recovery_ns : UINT64_MAX,
		.nak_delay_ns = MSGA__UD_NAK_DELAY_NS,
		.nak_retry_ns = MSGA__UD_NAK_RETRY_NS,
		.seed = (uint32_t)msga__now_ns() ^ (uint32_t)(uintptr_t)sub,
		.out_of_order = (sub->flags & MSGA_SUB_OUT_OF_ORDER) != 0,
	};
	int ret;

	if (sub->ud.repair_on)
		return 0;
	if (cfg.out_of_order)
		cfg.max_bytes = 64; /* nothing is held: no pool (repair.h) */
	sub->ud.nakdst = calloc(MSGA__UD_NAKDST_MAX, sizeof(*sub->ud.nakdst));
	sub->ud.nak_due = calloc(MSGA__UD_NAK_ROUND_MAX,
				 sizeof(*sub->ud.nak_due));
	if (!sub->ud.nakdst || !sub->ud.nak_due) {
		free(sub->ud.nakdst);
		free(sub->ud.nak_due);
		sub->ud.nakdst = NULL;
		sub->ud.nak_due = NULL;
		return -ENOMEM;
	}
	ret = msga__repair_init(&sub->ud.repair, &cfg);
	if (!ret)
		ret = msga__mread_init(sub); /* repair by READ (mcast_read.c) */
	if (ret) {
		msga__mread_fini(sub);
		if (sub->ud.repair.streams)
			msga__repair_fini(&sub->ud.repair);
		free(sub->ud.nakdst);
		free(sub->ud.nak_due);
		sub->ud.nakdst = NULL;
		sub->ud.nak_due = NULL;
		return ret;
	}
	sub->ud.repair_on = 1;
	return 0;
}

void msga__mrep_fini(struct msga_sub *sub)
{
	msga__mread_fini(sub); /* its QPs before the address handles */
	for (uint32_t i = 0; sub->ud.nakdst && i < MSGA__UD_NAKDST_MAX; i++)
		if (sub->ud.nakdst[i].g.ah)
			ibv_destroy_ah(sub->ud.nakdst[i].g.ah);
	free(sub->ud.nakdst);
	free(sub->ud.nak_due);
	sub->ud.nakdst = NULL;
	sub->ud.nak_due = NULL;
	if (sub->ud.repair_on)
		msga__repair_fini(&sub->ud.repair);
	sub->ud.repair_on = 0;
}

static struct msga__nakdst *nakdst_of(struct msga_sub *sub, uint64_t origin)
{
	for (uint32_t i = 0; i < MSGA__UD_NAKDST_MAX; i++)
		if (sub->ud.nakdst[i].origin == origin)
			return &sub->ud.nakdst[i];
	return NULL;
}

/*
 * A free entry, or the least recently used one whose address handle no
 * queued NAK uses (it is retired once they are done, udep.c); NULL when
 * every one is busy.
 */
static struct msga__nakdst *nakdst_free(struct msga_sub *sub)
{
	struct msga__nakdst *pick = NULL;

	for (uint32_t i = 0; i < MSGA__UD_NAKDST_MAX; i++) {
		struct msga__nakdst *d = &sub->ud.nakdst[i];

		if (!d->origin && !d->g.retiring)
			return d;
		if (d->origin && !d->g.inflight &&
		    (!pick || d->used_ns < pick->used_ns))
			pick = d;
	}
	if (pick && pick->g.ah) {
		ibv_destroy_ah(pick->g.ah);
		pick->g.ah = NULL;
	}
	return pick;
}

/*
 * The publisher's QP, learned from one of its datagrams: its QPN from the
 * completion, its GID from the datagram's header. The rest of the address
 * is the group join's (our port and GID index, hop limit): the header's
 * destination is the group, which ibv_init_ah_from_wc refuses to map to a
 * local GID index.
 */
static void learn_publisher(struct msga__udep *ep, uint64_t origin,
			    const struct ibv_wc *wc, const void *grh)
{
	struct msga_sub *sub = ep->sub;
	struct msga__nakdst *d;
	struct ibv_ah_attr attr;

	if (ep->unicast || nakdst_of(sub, origin) || !ep->ngroups ||
	    !(wc->wc_flags & IBV_WC_GRH))
		return; /* (ud:// knows its publisher: ep->peer) */
	d = nakdst_free(sub);
	if (!d)
		return; /* no NAKs to it: its gaps are given up in time */
	attr = ep->groups[0].join_attr;
	attr.is_global = 1;
	msga__ud_sender_gid(grh, &attr.grh.dgid);
	attr.dlid = wc->slid;
	attr.sl = wc->sl;
	attr.src_path_bits = 0;
	attr.port_num = ep->ctx->port;
	memset(d, 0, sizeof(*d));
	d->g.ah = ibv_create_ah(ep->ctx->pd, &attr);
	if (!d->g.ah)
		return;
	d->origin = origin;
	d->g.qpn = wc->src_qp;
	d->g.qkey = msga__ud_remote_qkey(ep, RDMA_UDP_QKEY);
	d->g.state = MSGA__G_READY;
	d->g.counted = 1;
	d->used_ns = msga__now_ns();
}

/*
 * Stream s, new or not, of a publisher whose datagram h says it keeps its
 * messages: from now on it is delivered in order through repair.h, the
 * next number being the one after what the tracker has seen.
 */
void msga__mrep_begin(struct msga__udep *ep, struct msga__ustream *s,
		      const struct msga__udw_hdr *h, const struct ibv_wc *wc,
		      const void *grh)
{
	struct msga_sub *sub = ep->sub;
	uint64_t next;
	int ab = (sub->flags & MSGA_SUB_AB_LINES) != 0;

	/* A/B lines arbitrate through repair.h, asking or not */
	if (s->repaired || (!ab && (!h->retains ||
				    (sub->flags & MSGA_SUB_NO_RECOVERY))) ||
	    msga__mrep_init(sub))
		return;
	s->nak_ok = h->retains && !(sub->flags & MSGA_SUB_NO_RECOVERY);
	if (s->nak_ok)
		learn_publisher(ep, h->origin, wc, grh);
	if (s->seq.last == 0) { /* new: a heartbeat places it, data starts it */
		next = h->type == MSGA__UDW_DATA ? h->seq : h->seq + 1;
		/* a late joiner's history: asked for as if lost (from a
		 * publisher that can be asked) */
		if (s->nak_ok && sub->ud.history_from)
			next = next < sub->ud.history_from ? next :
							  sub->ud.history_from;
		else if (s->nak_ok) {
			uint64_t live = next;

			next = next > sub->ud.history ? next - sub->ud.history : 1;
			/* (history 1: the message before the live stream) */
			if ((sub->flags & MSGA_SUB_LAST_VALUE) && next < live)
				s->lv_seq = next;
		}
	} else {
		next = s->seq.last + 1;
	}
	if (!next)
		return; /* past the last number there is nothing to repair */
	msga__repair_start(&sub->ud.repair, msga__ustreams_pos(&sub->ud.streams, s),
			   next);
	/*
	 * From here repair.h orders the stream and the counters follow what
	 * it hands out: delivered, and lost (gaps, missing) for each LOSS.
	 */
	if (!s->seq.first)
		s->seq.first = next;
	s->repaired = 1;
}

/* Hand what repair.h has ready for stream s, in order. */
static void drain(struct msga__udep *ep, struct msga__ustream *s,
		  uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	uint32_t idx = msga__ustreams_pos(&sub->ud.streams, s);
	struct msga__repair_item it;

	while (!msga__udep_dead(ep) && s->used && s->repaired &&
	       msga__repair_pop(&sub->ud.repair, idx, &it)) {
		if (!it.loss) {
			s->seq.c.delivered++;
			sub->ud.up->hand(ep, s, NULL, it.seq, it.data, it.len,
					 0, now_ns);
			continue;
		}
		s->seq.c.gaps++;
		s->seq.c.missing += it.count;
		s->unrecoverable += it.count;
		sub->ud.st.unrecoverable += it.count;
		sub->ud.up->stream_event(ep, s, MSGA_EVENT_LOSS, it.seq,
					it.count);
		if (!msga__udep_dead(ep) &&
		    (sub->flags & MSGA_SUB_STOP_ON_GAP)) {
			sub->ud.up->stop(ep, -EPIPE);
			return;
		}
	}
}

/*
 * A message of a repaired stream: the next is delivered in place, a later
 * one held back, one already delivered or given up dropped. With
 * MSGA_SUB_OUT_OF_ORDER nothing is held: each is delivered in place as it
 * comes, a repaired one after a higher number flagged (LATE). A resend
 * (retx: a RETX datagram, or a READ of the publisher's ring) counts as
 * recovered.
 */
static void arrive(struct msga__udep *ep, struct msga__ustream *s,
		   struct msga__rxslot *slot, uint64_t seq, const void *data,
		   uint32_t len, int retx, uint64_t now_ns)
{
	struct msga_sub *sub = ep->sub;
	uint32_t idx = msga__ustreams_pos(&sub->ud.streams, s);
	enum msga__repair_verdict v;

	v = msga__repair_arrive(&sub->ud.repair, idx, seq, data, len, now_ns);
	if (v == MSGA__REPAIR_DROP) {
		ep->line_behind++; /* had (from another line), or given up */
		return; /* (or no room to hold: asked again) */
	}
	ep->line_first++;
	if (v == MSGA__REPAIR_HELD && s->nak_ok && ep->rx_wc &&
	    !nakdst_of(sub, s->origin))
		/* a gap to ask for, and its address was given to another */
		learn_publisher(ep, s->origin, ep->rx_wc, ep->rx_grh);
	if (retx) {
		s->recovered++;
		sub->ud.st.recovered++;
	}
	if (v == MSGA__REPAIR_LATE) {
		s->seq.c.delivered++;
		sub->ud.st.out_of_order++;
		sub->ud.up->hand(ep, s, slot, seq, data, len,
				 MSGA_MSG_OUT_OF_ORDER, now_ns);
	} else if (v == MSGA__REPAIR_DELIVER) {
		s->seq.c.delivered++;
		sub->ud.up->hand(ep, s, slot, seq, data, len, 0, now_ns);
	}
	drain(ep, s, now_ns);
}

/* A datagram's message (whole: reassembled if it came in pieces). */
void msga__mrep_deliver(struct msga__udep *ep, struct msga__ustream *s,
			struct msga__rxslot *slot,
			const struct msga__udw_hdr *h, const void *data,
			uint32_t len, uint64_t now_ns)
{
	arrive(ep, s, slot, h->seq, data, len,
	       (h->flags & MSGA__UDW_RETX) != 0, now_ns);
}

/*
 * Number seq of stream s, read from its publisher's ring (mcast_read.c):
 * a resend that came by READ instead of by datagram, so it has no
 * receive slot to hold and no datagram header.
 */
void msga__mrep_repaired(struct msga__udep *ep, struct msga__ustream *s,
			 uint64_t seq, const void *data, uint32_t len,
			 uint64_t now_ns)
{
	arrive(ep, s, NULL, seq, data, len, 1, now_ns);
}

/* A heartbeat or END of a repaired stream: a lost tail is a gap too. */
void msga__mrep_sent(struct msga__udep *ep, struct msga__ustream *s,
		     uint64_t last, uint64_t now_ns)
{
	/*
	 * Where to NAK is learned from a datagram; a late joiner that has
	 * heard only heartbeats has nothing else to learn it from, so each
	 * one tries again if the first try found no room or no handle.
	 */
	if (s->nak_ok && ep->rx_wc && !nakdst_of(ep->sub, s->origin))
		learn_publisher(ep, s->origin, ep->rx_wc, ep->rx_grh);
	msga__repair_sent(&ep->sub->ud.repair,
			  msga__ustreams_pos(&ep->sub->ud.streams, s), last,
			  now_ns);
	drain(ep, s, now_ns);
}

/* The publisher no longer has [seq, seq + count): give it up now. */
void msga__mrep_lost(struct msga__udep *ep, const struct msga__udw_hdr *h)
{
	struct msga_sub *sub = ep->sub;
	struct msga__ustream *s;
	struct msga__udep *owner;

	s = msga__ustreams_find(&sub->ud.streams, h->origin, h->topic,
				h->topic_len);
	if (!s || !s->repaired)
		return;
	owner = sub->ud.up->mship(sub, s->conn_id);
	if (!owner)
		return;
	msga__repair_gone(&sub->ud.repair, msga__ustreams_pos(&sub->ud.streams, s),
			  h->seq, h->msg_len);
	drain(owner, s, msga__now_ns());
}

void msga__mrep_forget(struct msga_sub *sub, uint32_t idx)
{
	if (sub->ud.repair_on && idx < sub->ud.streams.top &&
	    sub->ud.streams.streams[idx].repaired) {
		msga__repair_forget(&sub->ud.repair, idx);
		sub->ud.streams.streams[idx].repaired = 0;
	}
	msga__mread_forget(sub, idx);
}

/* One NAK datagram for [seq, seq + count) of stream s, to its publisher. */
void msga__mrep_nak(struct msga_sub *sub, struct msga__ustream *s,
		    uint64_t seq, uint64_t count)
{
	struct msga__udep *ep = sub->ud.up->mship(sub, s->conn_id);
	struct msga__nakdst *d = nakdst_of(sub, s->origin);
	struct msga__mgroup *to = d ? &d->g : NULL;
	struct msga__udw_hdr h = {
		.type = MSGA__UDW_NAK, .topic_len = (uint8_t)strlen(s->topic),
		.origin = s->origin, .seq = seq,
		.msg_len = count < MSGA__UDW_RANGE_MAX ? (uint32_t)count :
							 MSGA__UDW_RANGE_MAX,
	};
	uint32_t hl;

	if (ep && ep->unicast)
		to = &ep->peer; /* the publisher it subscribed to */
	if (!ep || !to || !to->ah || !ep->sq_depth ||
	    msga__udep_sq_room(ep) < 1)
		return; /* asked again at the next retry */
	hl = msga__udw_put(msga__udep_hdr_slot(ep), &h, s->topic);
	if (!msga__udep_send_hdr(ep, to, hl, 0)) {
		s->naks++;
		sub->ud.st.naks++;
		if (d)
			d->used_ns = msga__now_ns();
	}
}

/* A range's NAK is due: kept for the round's share (nak_round). */
static void on_nak_due(void *arg, uint32_t idx, uint64_t seq, uint64_t count)
{
	struct msga_sub *sub = arg;
	struct msga__ustream *s = &sub->ud.streams.streams[idx];

	if (idx >= sub->ud.streams.top || !s->used || !s->repaired ||
	    !s->nak_ok || sub->ud.nak_ndue >= MSGA__UD_NAK_ROUND_MAX)
		return; /* (more than a round holds: asked at the next) */
	sub->ud.nak_due[sub->ud.nak_ndue++] = (struct msga__nak_due){
		.idx = idx, .seq = seq, .count = count };
}

/*
 * How many numbers this subscriber may NAK now. What a NAK asks for
 * comes back as datagrams into our receive ring, beside the live stream,
 * and what the ring cannot take is lost again and asked again: so the
 * NAKs are paced by what comes back. The window (numbers per
 * MSGA__UD_NAK_RETRY_NS) halves when less than half of what was NAKed
 * in the last period was recovered, and grows by a step when most was;
 * it stays between MSGA__UD_NAK_WINDOW_MIN and the publisher's resend
 * budget for one window (more is dropped there). Tokens accrue at the
 * window's rate, at most one window's worth.
 */
static uint64_t nak_allowance(struct msga_sub *sub, uint64_t now_ns)
{
	struct msga__sub_ud *u = &sub->ud;
	uint64_t elapsed = now_ns - u->nak_refill_ns;

	if (!u->nak_window) { /* the first round */
		u->nak_window = MSGA__UD_NAK_WINDOW_MIN * 4;
		u->nak_tokens = u->nak_window;
		u->nak_period_ns = now_ns;
		u->nak_refill_ns = now_ns;
		u->nak_recovered0 = u->st.recovered;
	}
	if (msga__time_reached(now_ns, u->nak_period_ns +
				       MSGA__UD_NAK_RETRY_NS)) {
		uint64_t got = u->st.recovered - u->nak_recovered0;

		if (u->nak_asked && 2 * got < u->nak_asked)
			u->nak_window /= 2;
		else if (u->nak_asked * 2 >= u->nak_window)
			u->nak_window += MSGA__UD_NAK_WINDOW_MIN;
		if (u->nak_window < MSGA__UD_NAK_WINDOW_MIN)
			u->nak_window = MSGA__UD_NAK_WINDOW_MIN;
		if (u->nak_window > MSGA__UD_RETX_BUDGET)
			u->nak_window = MSGA__UD_RETX_BUDGET;
		u->nak_period_ns = now_ns;
		u->nak_recovered0 = u->st.recovered;
		u->nak_asked = 0;
	}
	if (elapsed > MSGA__UD_NAK_RETRY_NS)
		elapsed = MSGA__UD_NAK_RETRY_NS;
	u->nak_tokens += u->nak_window * elapsed / MSGA__UD_NAK_RETRY_NS;
	if (u->nak_tokens > u->nak_window)
		u->nak_tokens = u->nak_window;
	u->nak_refill_ns = now_ns;
	return u->nak_tokens;
}

/*
 * The round's NAKs: each stream with one due gets a fair share of the
 * allowance (msga__rsched_share), spent on its ranges in order, the
 * oldest numbers first; the streams go out in an order that rotates,
 * so that when the publisher's budget or our send queue runs short it
 * is not always the same stream's NAK that is dropped. A range READ is
 * still to serve waits for it.
 */
static void nak_round(struct msga_sub *sub, uint64_t now_ns)
{
	const struct msga__nak_due *due = sub->ud.nak_due;
	uint64_t want[MSGA__UD_NAK_ROUND_MAX], grant[MSGA__UD_NAK_ROUND_MAX];
	uint32_t streams[MSGA__UD_NAK_ROUND_MAX], of[MSGA__UD_NAK_ROUND_MAX];
	uint32_t n = 0, ndue = sub->ud.nak_ndue;
	int64_t granted;

	sub->ud.nak_ndue = 0;
	for (uint32_t i = 0; i < ndue; i++) {
		const struct msga__ustream *s =
			&sub->ud.streams.streams[due[i].idx];
		uint32_t j = 0;

		of[i] = UINT32_MAX;
		if (msga__mread_covers(sub, s, due[i].idx, due[i].seq, now_ns))
			continue; /* READ is on its way there */
		while (j < n && streams[j] != due[i].idx)
			j++;
		if (j == n) {
			streams[n] = due[i].idx;
			want[n++] = 0;
		}
		want[j] += due[i].count;
		of[i] = j;
	}
	if (!n)
		return;
	granted = msga__rsched_share(n, want, nak_allowance(sub, now_ns),
				     sub->ud.nak_turn % n, grant);
	if (granted <= 0)
		return;
	sub->ud.nak_tokens -= (uint64_t)granted;
	sub->ud.nak_asked += (uint64_t)granted;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t j = (sub->ud.nak_turn + k) % n;

		for (uint32_t i = 0; i < ndue && grant[j]; i++) {
			uint64_t c;

			if (of[i] != j)
				continue;
			c = due[i].count < grant[j] ? due[i].count : grant[j];
			grant[j] -= c;
			msga__mrep_nak(sub, &sub->ud.streams.streams[due[i].idx],
				       due[i].seq, c);
		}
	}
	sub->ud.nak_turn++;
}

/*
 * The repair timers: NAKs due, gaps given up for time (then handed out
 * as losses). Returns when next due.
 */
uint64_t msga__mrep_tick(struct msga_sub *sub, uint64_t now_ns)
{
	uint32_t idx, rounds = 0;
	uint64_t next;

	if (!sub->ud.repair_on)
		return UINT64_MAX;
	sub->ud.nak_ndue = 0;
	next = msga__repair_tick(&sub->ud.repair, now_ns, on_nak_due, sub);
	nak_round(sub, now_ns);
	/* (bounded: a callback that stops a drain early must not spin us) */
	while (rounds++ < 2 * MSGA__UD_STREAMS_ALL &&
	       msga__repair_next_ready(&sub->ud.repair, &idx)) {
		struct msga__ustream *s = &sub->ud.streams.streams[idx];
		struct msga__udep *ep = sub->ud.up->mship(sub, s->conn_id);

		if (!ep || !s->used) {
			/* its membership is gone: the stream, if heard again
			 * (another line), starts afresh (mcast_sub.c) */
			msga__repair_forget(&sub->ud.repair, idx);
			if (s->used)
				s->repaired = 0;
			continue;
		}
		drain(ep, s, now_ns);
		if (sub->dead)
			break;
	}
	return next;
}
