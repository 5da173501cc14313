/* SPDX-License-Identifier: MIT */
/*
 * mcast_pub.c - the multicast side of a publisher: one UD endpoint, a
 * group per topic (the range mapping) or one group for all, datagrams
 * that name their stream, and fragmentation of messages larger than a
 * datagram. Claimed buffers are the same registered send slots as over
 * RC, so claim/commit stays zero-copy. There is no receiver flow control
 * on UD: the only back-pressure is a full send queue.
 */
#include <string.h>

#include "mcast.h"
#include "pubsub.h"
#include "udep_policy.h"
#include "uri_opts.h"

/* What the endpoint tells a multicast publisher (struct msga__udep_cb). */
static const struct msga__udep_cb mpub_cb = {
	.on_recv = msga__mpub_on_recv,       /* NAKs (mcast_retx.c) */
	.on_tag_done = msga__mpub_tag_done,
	.on_group = msga__mpub_on_group,
	.on_death = msga__mpub_on_death,
	.tick = msga__mpub_tick,
};

/* Forgetting silent subscribers, then the data path's heartbeats. */
static uint64_t upub_ep_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t next = msga__upub_tick(ep->pub, now_ns);
	uint64_t hb = msga__mpub_tick(ep, now_ns);

	return hb < next ? hb : next;
}

/* ... and a ud:// publisher: its handshake's parts are ud_unicast.c's. */
const struct msga__udep_cb msga__upub_cb = {
	.on_recv = msga__upub_on_recv,
	.on_tag_done = msga__mpub_tag_done,
	.on_death = msga__mpub_on_death,
	.on_cm = msga__upub_on_cm,
	.tick = upub_ep_tick,
};

/* The endpoint's datagram geometry, and this publisher's origin id. */
int msga__mpub_setup(struct msga_pub *pub)
{
	pub->ud.ep->pub = pub;
	pub->ud.origin = msga__new_origin();
	/* rdma_cm reports no group MTU (struct rdma_ud_param has none); on
	 * RoCE the kernel gives groups the netdev's, the port's MTU. */
	pub->ud.ep->max_dgram = msga__dgram_size(pub->ud.ep->max_dgram, 0,
					      pub->ud.max_datagram) -
			      msga__dgram_auth_room(pub); /* MSGA_PUB_MAC */
	pub->ud.frag = (pub->ud.ep->max_dgram - MSGA__UDW_HDR_MAX) & ~63u;
	if (pub->ud.frag < MSGA__UD_MIN_FRAG)
		return msga__ctx_fail(pub->ctx, -EMSGSIZE,
				      "path MTU %u too small",
				      pub->ud.ep->max_dgram);
	return 0;
}

static int same_addr(const struct sockaddr_storage *a,
		     const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/*
 * A reliable publisher also serves READs of its retention ring when the
 * device lets it (mcast_serve.c); without, its subscribers NAK.
 */
static void serve_reads(struct msga_pub *pub)
{
	int ret = msga__mpub_serve_init(pub);

	if (ret && ret != -EOPNOTSUPP)
		msga__ctx_fail(pub->ctx, ret, "msga_pub_create: no READ "
			       "endpoint (subscribers repair by NAK)");
}

/* uri's group range and ?bind= address (has_bind 0: none). */
static int parse_pub_uri(const char *uri, struct msga__mcast_range *r,
			 struct msga__uri_opts *o)
{
	char base[MSGA__URI_MAX + 1];

	if (msga__uri_opts_split(uri, MSGA__URI_OPT_BIND, base, sizeof(base),
				 o))
		return -EINVAL;
	return msga__parse_mcast_uri(base, r);
}

/*
 * Line B's ?bind= may only repeat line A's: both lines' groups are
 * joined by one queue pair, bound to one address.
 */
static int same_bind(const struct msga__uri_opts *a,
		     const struct msga__uri_opts *b)
{
	return !b->has_bind || (a->has_bind && same_addr(&a->bind, &b->bind));
}

int msga__mpub_create(struct msga_pub *pub, const char *uri,
		      const char *uri_b)
{
	struct msga_ctx *ctx = pub->ctx;
	struct msga__uri_opts opts, opts_b;
	struct msga__mgroup *g;
	int ret;

	if (parse_pub_uri(uri, &pub->ud.mc_range, &opts))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: bad "
				      "multicast uri '%s'", uri);
	if (uri_b && (parse_pub_uri(uri_b, &pub->ud.mc_range_b, &opts_b) ||
		      !same_bind(&opts, &opts_b) ||
		      pub->ud.mc_range_b.host_bits != pub->ud.mc_range.host_bits ||
		      pub->ud.mc_range_b.base.ss_family !=
		      pub->ud.mc_range.base.ss_family ||
		      same_addr(&pub->ud.mc_range_b.base, &pub->ud.mc_range.base)))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: uri_b "
				      "'%s' is not a multicast uri of the "
				      "shape of '%s'", uri_b, uri);
	pub->ud.line_b = uri_b != NULL;
	/* a reliable publisher takes NAKs on its queue pair */
	ret = msga__udep_new(ctx, &mpub_cb,
			     pub->ud.reliable ? MSGA__UD_PUB_NAK_DEPTH : 0,
			     MSGA__UD_PUB_SQ_DEPTH,
			     opts.has_bind ? &opts.bind : NULL, &pub->ud.ep);
	if (!ret)
		ret = msga__mpub_setup(pub);
	if (ret)
		return ret;
	if (pub->ud.reliable)
		serve_reads(pub);
	if (pub->ud.mc_range.host_bits)
		return 0; /* a range: groups are joined per topic */
	ret = msga__udep_join(pub->ud.ep, &pub->ud.mc_range.base, 1, &g);
	if (!ret && pub->ud.line_b)
		ret = msga__udep_join(pub->ud.ep, &pub->ud.mc_range_b.base, 1, &g);
	return ret;
}


/* The index of the group name maps to in range, joined if new. */
static int group_for(struct msga_pub *pub, const struct msga__mcast_range *r,
		     const char *name, uint32_t *idx)
{
	struct msga__udep *ep = pub->ud.ep;
	struct sockaddr_storage addr;
	struct msga__mgroup *g;
	uint32_t i;
	int ret;

	msga__mcast_group_of(r, name, &addr);
	for (i = 0; i < ep->ngroups; i++)
		if (same_addr(&ep->groups[i].addr, &addr))
			break;
	if (i == ep->ngroups) {
		ret = msga__udep_join(ep, &addr, 1, &g);
		if (ret)
			return ret;
	}
	*idx = i;
	return 0;
}

/* A new topic: find or join the group its name maps to (on each line). */
int msga__mpub_topic_added(struct msga_pub *pub, uint32_t topic_id)
{
	struct msga__topic *t = &pub->topics[topic_id];
	int ret;

	t->name_len = (uint8_t)strlen(t->name);
	if (pub->ud.unicast)
		return 0; /* subscribers match it as they come (ud_unicast.c) */
	ret = group_for(pub, &pub->ud.mc_range, t->name, &t->group);
	if (!ret && pub->ud.line_b)
		ret = group_for(pub, &pub->ud.mc_range_b, t->name, &t->group_b);
	return ret;
}

uint32_t msga__mpub_single_max(const struct msga_pub *pub, uint32_t topic_id)
{
	return pub->ud.ep->max_dgram -
	       msga__udw_hdr_len(pub->topics[topic_id].name_len, pub->ud.rpos_flag);
}

static uint32_t frags_of(const struct msga_pub *pub, size_t len)
{
	return (uint32_t)((len + pub->ud.frag - 1) / pub->ud.frag);
}

/*
 * Where a message on topic_id goes: its multicast group (bit 0) and, with
 * a B line, its group there (bit 1), each while joined; or each unicast
 * subscriber whose pattern matches (bit = its slot).
 */
uint64_t msga__mpub_targets(struct msga_pub *pub, uint32_t topic_id,
			    uint32_t *count)
{
	const struct msga__topic *t = &pub->topics[topic_id];
	const struct msga__mgroup *g = pub->ud.ep->groups;
	uint64_t mask;

	if (pub->ud.unicast)
		return msga__upub_targets(pub, topic_id, count);
	if (!pub->ud.line_b) {
		*count = 1;
		return 1;
	}
	mask = (g[t->group].state == MSGA__G_READY ? 1u : 0u) |
	       (g[t->group_b].state == MSGA__G_READY ? 2u : 0u);
	/* (two bits: no popcount, a libgcc call without -mpopcnt) */
	*count = (uint32_t)(mask & 1) + (uint32_t)(mask >> 1);
	return mask;
}

struct msga__mgroup *msga__mpub_target(struct msga_pub *pub,
				       uint32_t topic_id, uint32_t bit)
{
	const struct msga__topic *t = &pub->topics[topic_id];

	if (pub->ud.unicast)
		return &pub->ud.dests[bit].g;
	return &pub->ud.ep->groups[bit ? t->group_b : t->group];
}

/* Can a message of len bytes on topic_id go out now? 0 or -errno. */
int msga__mpub_ready(struct msga_pub *pub, uint32_t topic_id, size_t len)
{
	uint32_t n;

	if (msga__udep_dead(pub->ud.ep))
		return -ENETDOWN;
	if (pub->ud.ep->state == MSGA__UDEP_RESTARTING)
		return -EAGAIN; /* a send failed: the QP restarts (udep.c) */
	if (!pub->ud.unicast && !(pub->ud.line_b &&
			       msga__mpub_targets(pub, topic_id, &n))) {
		/* (with a B line, either line joined will do) */
		const struct msga__topic *t = &pub->topics[topic_id];
		const struct msga__mgroup *g = &pub->ud.ep->groups[t->group];

		if (pub->ud.line_b &&
		    pub->ud.ep->groups[t->group_b].state != MSGA__G_FAILED)
			g = &pub->ud.ep->groups[t->group_b]; /* B may still come */

		if (g->state == MSGA__G_FAILED)
			return g->status;
		if (g->state == MSGA__G_REJOINING)
			return -ENOTCONN; /* lost; rejoining (udep_policy.h) */
		if (g->state != MSGA__G_READY)
			return -EAGAIN;
	}
	if (pub->ud.pumping)
		return -EAGAIN;
	msga__mpub_targets(pub, topic_id, &n);
	/* A message up to MSGA_FRAG_MAX goes out whole at commit. */
	if (len <= msga__mpub_single_max(pub, topic_id))
		return msga__udep_sq_room(pub->ud.ep) >= (int)n ? 0 : -EAGAIN;
	if (len <= MSGA_FRAG_MAX)
		return msga__udep_sq_room(pub->ud.ep) >=
		       (int)(n * frags_of(pub, len)) ? 0 : -EAGAIN;
	return pub->ud.big_inflight ? -EAGAIN : 0;
}

int msga__mpub_post_piece(struct msga_pub *pub, struct msga__mgroup *g,
			  const struct msga__mpub_msg *m, uint32_t off,
			  uint32_t n)
{
	const struct msga__topic *t = &pub->topics[m->topic_id];
	struct msga__udep *ep = pub->ud.ep;
	int last = off + n == m->len;
	struct msga__udw_hdr h = {
		.flags = (uint8_t)(m->flags | (off ? 0 : MSGA__UDW_FIRST) |
				   (last ? MSGA__UDW_LAST : 0)),
		.topic_len = t->name_len,
		.frag_size = (uint16_t)pub->ud.frag, .msg_len = m->len,
		.off = off, .origin = pub->ud.origin, .seq = m->seq,
		.hb_ms = pub->ud.hb_cap_ms, .retains = pub->ud.reliable,
		.rpos = m->rpos, .topic_id = m->topic_id,
		.read_port = pub->ud.serve ? pub->ud.serve->port : 0,
	};
	uint32_t hl = msga__udw_put(msga__udep_hdr_slot(ep), &h, t->name);
	int inl = hl + n <= ep->max_inline;
	/*
	 * The big buffer comes back only through completions: signal the
	 * last datagram of a big message so it cannot wait for later traffic.
	 */
	int last_big = last && m->tag == MSGA__TAG_BIG;
	struct msga__ud_msg dg = { .to = g, .hdr_len = hl,
				   .data = m->data + off, .len = n,
				   .lkey = m->lkey, .tag = m->tag,
				   .signal = last_big };
	int ret = msga__udep_sendmsg(ep, &dg);

	if (ret)
		return ret;
	return !inl;
}

static void held_by_send(struct msga_pub *pub)
{
	if (pub->ud.pump_tag == MSGA__TAG_NONE)
		return; /* (inline by msga__mpub_send's rule: never here) */
	if (pub->ud.pump_tag == MSGA__TAG_BIG)
		pub->ud.big_inflight++;
	else
		pub->tx_ref[pub->ud.pump_tag]++;
}

/* Tests' random loss (pubsub.h): 1 if this datagram is to be dropped. */
static int fault_drop_random(struct msga_pub *pub)
{
	uint32_t x = pub->ud.fault_rng ? pub->ud.fault_rng : 1; /* 0 stays 0 */

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	pub->ud.fault_rng = x;
	if (x % 1000000u >= pub->ud.fault_drop_ppm)
		return 0;
	pub->ud.fault_dropped++;
	return 1;
}

/*
 * One datagram (off, n) of the message in pub->pump_* to every target;
 * the caller checked the room.
 */
static int post_to_all(struct msga_pub *pub, uint32_t off, uint32_t n)
{
	const struct msga__mpub_msg msg = {
		.data = pub->ud.pump_data, .len = pub->big_len,
		.lkey = pub->ud.pump_lkey, .tag = pub->ud.pump_tag,
		.topic_id = pub->big_topic, .seq = pub->big_seq,
		.flags = (uint8_t)pub->ud.rpos_flag, .rpos = pub->ud.big_rpos,
	};
	int sent = 0;

	for (uint64_t m = pub->ud.pump_mask; m; m &= m - 1) {
		uint32_t bit = (uint32_t)__builtin_ctzll(m);
		int ret;

		if (pub->ud.unicast && !pub->ud.dests[bit].used)
			continue; /* it left while the message was going out */
		if (pub->ud.fault_drop_every && !pub->ud.unicast &&
		    bit == pub->ud.fault_drop_line &&
		    ++pub->ud.fault_count % pub->ud.fault_drop_every == 0)
			continue; /* (tests: loss on one line, pubsub.h) */
		if (pub->ud.fault_drop_ppm && fault_drop_random(pub))
			continue; /* (tests: random loss, pubsub.h) */
		ret = msga__mpub_post_piece(pub, msga__mpub_target(pub,
					    pub->big_topic, bit), &msg, off, n);
		if (ret < 0)
			return ret;
		if (ret)
			held_by_send(pub);
		sent++;
	}
	return sent;
}

/* Fragments of the current message while the send queue has room. */
static void pump(struct msga_pub *pub)
{
	uint32_t batch = 0, n_targets = (uint32_t)__builtin_popcountll(
						pub->ud.pump_mask);

	while (pub->ud.pumping &&
	       msga__udep_sq_room(pub->ud.ep) >= (int)n_targets &&
	       batch++ < MSGA__UD_PUMP_BATCH) {
		uint32_t off = pub->ud.pump_off, left = pub->big_len - off;
		uint32_t n = left < pub->ud.frag ? left : pub->ud.frag;
		int ret = post_to_all(pub, off, n);

		if (ret < 0) {
			msga__udep_kill(pub->ud.ep, ret, 1);
			pub->ud.pumping = 0;
			break;
		}
		pub->ud.pump_off += n;
		if (pub->ud.pump_off == pub->big_len)
			pub->ud.pumping = 0;
	}
}

/* ud://: the message is each target's (msga_pub_conn_stats). */
static void count_dests(struct msga_pub *pub, uint32_t len)
{
	for (uint64_t m = pub->ud.pump_mask; m; m &= m - 1) {
		struct msga__udest *d = &pub->ud.dests[__builtin_ctzll(m)];

		d->msgs++;
		d->bytes += len;
	}
}

/*
 * msga_pub_send's own way: a message that goes out as one inline datagram
 * (header and payload within the queue pair's inline limit, which has
 * room for a MAC already when there is one: dgram_auth.c) is committed
 * from the caller's buffer (MSGA__PUB_INLINE: the provider copies it
 * before the post returns, and the retention copy is made at commit), so
 * no send buffer is claimed and nothing is copied twice; anything else
 * is claimed. The condition is msga__mpub_post_piece's for inline.
 */
int msga__mpub_send(struct msga_pub *pub, uint32_t topic_id, const void *data,
		    size_t len)
{
	(void)data;
	if (!pub->ud.ep || topic_id >= pub->ntopics ||
	    len > msga__mpub_single_max(pub, topic_id) ||
	    msga__udw_hdr_len(pub->topics[topic_id].name_len,
			      pub->ud.rpos_flag) + len > pub->ud.ep->max_inline)
		return MSGA__PUB_CLAIM; /* (which also refuses what is bad) */
	return MSGA__PUB_INLINE;
}

int msga__mpub_commit(struct msga_pub *pub, const struct msga_claim *claim,
		      uint32_t slot, int big)
{
	uint32_t len = (uint32_t)claim->len, n;
	int ret;

	pub->big_topic = (uint16_t)claim->topic_id;
	pub->big_len = len;
	pub->big_seq = ++pub->topics[claim->topic_id].seq;
	pub->ud.hb_active = 1; /* (heartbeats: msga__mpub_tick) */
	pub->ud.pump_data = claim->data;
	pub->ud.pump_off = 0;
	/* (msga__mpub_send's: the caller's buffer, posted inline) */
	pub->ud.pump_tag = big ? MSGA__TAG_BIG :
			   slot == MSGA__SLOT_INLINE ? MSGA__TAG_NONE :
						       (int32_t)slot;
	pub->ud.pump_lkey = big ? pub->big_mr->lkey : pub->tx_mr->lkey;
	pub->ud.pump_mask = msga__mpub_targets(pub, claim->topic_id, &n);
	if (pub->ud.unicast)
		count_dests(pub, len);
	/* where its copy will be, for READs (mcast_serve.c); a message
	 * too large to keep names the ring's tail: nothing */
	if (pub->ud.rpos_flag)
		pub->ud.big_rpos = len <= MSGA_FRAG_MAX ?
			msga__retain_next_pos(&pub->ud.retain, len) :
			pub->ud.retain.tail_pos;
	if (len <= msga__mpub_single_max(pub, claim->topic_id)) {
		ret = post_to_all(pub, 0, len);
	} else {
		ret = (int)n;
		pub->ud.pumping = n > 0;
		pump(pub);
	}
	/*
	 * A copy, for NAKs (mcast_retx.c), of what a resend can carry: after
	 * the datagram is posted, off the message's way (the send buffer is
	 * still ours until the slot is put back below). Copying first put
	 * the copy's cost on the latency of a multicast ping-pong in the
	 * test VM (README, "What loss recovery costs").
	 */
	if (pub->ud.reliable && len <= MSGA_FRAG_MAX)
		msga__retain_put(&pub->ud.retain, claim->topic_id, pub->big_seq,
				 claim->data, len);
	if (!big && slot != MSGA__SLOT_INLINE && !pub->tx_ref[slot])
		msga__pub_slot_put(pub, slot);
	if (ret < 0)
		msga__udep_kill(pub->ud.ep, ret, 1);
	pub->big_busy = pub->ud.pumping;
	return ret;
}

/*
 * A stream's control datagram, no payload, to every target of topic_id:
 * a HEARTBEAT or an END carrying the last sequence number it sent (count
 * 0), or a LOST naming [seq, seq + count). 0, or -EAGAIN when the send
 * queue has no room for all of them (none is sent then).
 */
int msga__mpub_post_ctl(struct msga_pub *pub, uint32_t topic_id, uint8_t type,
			uint64_t seq, uint32_t count, int signal)
{
	const struct msga__topic *t = &pub->topics[topic_id];
	struct msga__udep *ep = pub->ud.ep;
	struct msga__udw_hdr h = {
		.type = type, .topic_len = t->name_len, .origin = pub->ud.origin,
		.seq = seq, .msg_len = count, .hb_ms = pub->ud.hb_cap_ms,
		.retains = pub->ud.reliable,
		/* HEARTBEAT and END say where the ring ends: a lost tail
		 * lies before it */
		.flags = (uint8_t)(type == MSGA__UDW_LOST ? 0 : pub->ud.rpos_flag),
		.rpos = pub->ud.retain.tail_pos, .topic_id = topic_id,
		.read_port = pub->ud.serve ? pub->ud.serve->port : 0,
	};
	uint32_t n;
	uint64_t mask = msga__mpub_targets(pub, topic_id, &n);

	if (!pub->ud.unicast && !pub->ud.line_b &&
	    ep->groups[t->group].state != MSGA__G_READY)
		mask = 0; /* nobody to tell: its group is not there */
	if (!mask)
		return 0;
	if (msga__udep_sq_room(ep) < (int)n)
		return -EAGAIN;
	for (; mask; mask &= mask - 1) {
		uint32_t bit = (uint32_t)__builtin_ctzll(mask);
		uint32_t hl = msga__udw_put(msga__udep_hdr_slot(ep), &h,
					    t->name);
		struct msga__mgroup *to = msga__mpub_target(pub, topic_id, bit);
		int ret = msga__udep_send_hdr(ep, to, hl,
					      signal && mask == (mask & -mask));

		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Idle streams' heartbeats. A commit reads no clock: it only marks the
 * publisher active, and the topics are looked at every quarter of the
 * heartbeat interval while any is busy. A topic whose sequence number
 * moved since the last look was busy, and its first heartbeat is due an
 * interval from that look; an idle one past its due time sends one, and
 * its interval doubles up to the cap. A stream's first heartbeat so leaves
 * 1 to 1.25 intervals after its last message. While every topic is idle
 * the next look is the next heartbeat due, so an event-mode publisher
 * sleeps between them. A topic that never sent, and the one whose big
 * message is still going out, say nothing. Returns when it is next due.
 */
static uint64_t heartbeat_tick(struct msga__udep *ep, uint64_t now)
{
	struct msga_pub *pub = ep->pub;
	uint64_t cap_ns = (uint64_t)pub->ud.hb_cap_ms * 1000000u;
	uint64_t quarter = pub->ud.hb_ns / 4 ? pub->ud.hb_ns / 4 : 1;
	uint64_t next = UINT64_MAX;
	int busy = 0;

	if (pub->ud.hb_active && pub->ud.hb_look_ns > now + quarter)
		pub->ud.hb_look_ns = now; /* sent since it went to sleep */
	if (!msga__time_reached(now, pub->ud.hb_look_ns))
		return pub->ud.hb_look_ns;
	pub->ud.hb_active = 0;
	for (uint32_t i = 0; i < pub->ntopics &&
	     pub->ud.ep->state != MSGA__UDEP_RESTARTING; i++) {
		struct msga__topic *t = &pub->topics[i];

		if (!t->seq || (pub->ud.pumping && pub->big_topic == i)) {
			busy |= t->seq != 0;
			continue;
		}
		if (t->seq != t->hb_seq) {
			t->hb_seq = t->seq;
			t->hb_due_ns = now + pub->ud.hb_ns;
			t->hb_gap_ns = pub->ud.hb_ns;
			busy = 1;
		} else if (msga__time_reached(now, t->hb_due_ns)) {
			if (msga__mpub_post_ctl(pub, i, MSGA__UDW_HEARTBEAT,
						t->seq, 0, 0)) {
				busy = 1; /* the queue is full: look again soon */
				break;
			}
			pub->st.keepalives++;
			t->hb_gap_ns = t->hb_gap_ns * 2 < cap_ns ?
				       t->hb_gap_ns * 2 : cap_ns;
			t->hb_due_ns = now + t->hb_gap_ns;
		}
		if (t->hb_due_ns < next)
			next = t->hb_due_ns;
	}
	if (busy || pub->ud.ep->state == MSGA__UDEP_RESTARTING)
		next = now + quarter;
	pub->ud.hb_look_ns = next;
	return next;
}

/*
 * The publisher's timers, from its UD endpoint's tick: heartbeats, and
 * its READ endpoint's handshake deadlines (mcast_serve.c has no tick of
 * its own: it is on none of the engine's lists).
 */
uint64_t msga__mpub_tick(struct msga__udep *ep, uint64_t now)
{
	uint64_t serve = msga__mpub_serve_tick(ep->pub, now);
	uint64_t hb = heartbeat_tick(ep, now);

	return serve < hb ? serve : hb;
}

/*
 * The publisher is being destroyed: each stream that sent anything says
 * it ended, twice (a datagram can be lost; a subscriber that hears
 * neither reports the stream silent instead), and the sends are waited
 * for, a bounded time, before the queue pair goes.
 */
void msga__mpub_close(struct msga_pub *pub)
{
	struct msga__udep *ep = pub->ud.ep;
	uint64_t until = msga__now_ns() + MSGA__UD_END_WAIT_NS;

	if (!ep || msga__udep_dead(ep) || ep->state == MSGA__UDEP_RESTARTING)
		return;
	msga__udep_on(ep, MSGA__UDEP_EV_CLOSE);
	for (uint32_t i = 0; i < pub->ntopics; i++) {
		if (!pub->topics[i].seq)
			continue;
		for (int copy = 0; copy < 2; copy++) {
			while (msga__mpub_post_ctl(pub, i, MSGA__UDW_END,
						   pub->topics[i].seq, 0,
						   1) == -EAGAIN &&
			       !msga__udep_dead(ep) &&
			       msga__udep_drain(ep, until))
				;
		}
	}
	msga__udep_drain(ep, until);
}

void msga__mpub_tag_done(struct msga__udep *ep, int32_t tag)
{
	struct msga_pub *pub = ep->pub;

	if (tag == MSGA__TAG_BIG) {
		pub->ud.big_inflight--;
		return;
	}
	if (--pub->tx_ref[tag] == 0)
		msga__pub_slot_put(pub, (uint32_t)tag);
}

void msga__mpub_progress(struct msga_pub *pub)
{
	if (pub->ud.pumping)
		pump(pub);
	pub->big_busy = pub->ud.pumping;
}

/*
 * The publisher's endpoint died (a failed send or receive, a device gone):
 * every group or subscriber it served hears DISCONNECTED with the reason,
 * and msga_pub_claim()/send return -ENETDOWN from now on.
 */
void msga__mpub_on_death(struct msga__udep *ep, int status)
{
	struct msga_pub *pub = ep->pub;
	int told = 0;

	if (pub->ud.unicast)
		told = msga__upub_drop_all(pub, status);
	for (uint32_t i = 0; !pub->ud.unicast && i < ep->ngroups; i++) {
		struct msga__mgroup *g = &ep->groups[i];

		if (g->state == MSGA__G_FAILED)
			continue;
		g->state = MSGA__G_FAILED;
		g->status = status;
		msga__udep_emit(ep, g, MSGA_EVENT_DISCONNECTED, status);
		told++;
	}
	if (!told) /* nobody to name: the publisher itself is the peer */
		msga__udep_emit(ep, NULL, MSGA_EVENT_DISCONNECTED, status);
}

void msga__mpub_on_group(struct msga__mgroup *g, int status)
{
	msga__udep_emit(g->ep, g, status ? MSGA_EVENT_CONNECT_FAILED :
					   MSGA_EVENT_CONNECTED, status);
}

/*
 * msga_pub_flush of a reliable publisher: how long NAKs must have been
 * quiet. A subscriber learns of a lost tail only from a datagram that
 * names the stream's last number, a heartbeat; its NAK follows within
 * MSGA__UD_NAK_DELAY_NS and is repeated every MSGA__UD_NAK_RETRY_NS. The
 * flush announces the tail itself (announce_tail) at the start of the
 * period and then every announce_ns, so that two heartbeat intervals and
 * two retries cover several announcements and one NAK lost.
 */
static uint64_t quiet_ns(const struct msga_pub *pub)
{
	return 2 * pub->ud.hb_ns + 2 * MSGA__UD_NAK_RETRY_NS;
}

/* Half a heartbeat interval, and not more often than a NAK's retry. */
static uint64_t announce_ns(const struct msga_pub *pub)
{
	return pub->ud.hb_ns / 2 > MSGA__UD_NAK_RETRY_NS ?
	       pub->ud.hb_ns / 2 : MSGA__UD_NAK_RETRY_NS;
}

/*
 * Each stream that sent something says where it ends: a heartbeat of its
 * last number, the last one signalled so that the next look sees it
 * done. The periodic heartbeat alone is one datagram, sent behind the
 * burst whose loss it must reveal: a receiver still overrun then (under
 * load, for longer than a heartbeat interval) loses it too, and the next
 * comes only two intervals later, after the quiet period. 0, or -EAGAIN
 * when the send queue had no room: the next look goes on from the topic
 * that did not fit (more topics than the queue has room for are
 * announced over several looks, each once).
 */
static int announce_tail(struct msga_pub *pub)
{
	uint32_t last = pub->ntopics;

	for (uint32_t i = 0; i < pub->ntopics; i++)
		if (pub->topics[i].seq)
			last = i;
	for (uint32_t i = pub->ud.flush_announce_from;
	     last < pub->ntopics && i <= last; i++) {
		if (!pub->topics[i].seq)
			continue;
		if (msga__mpub_post_ctl(pub, i, MSGA__UDW_HEARTBEAT,
					pub->topics[i].seq, 0, i == last)) {
			pub->ud.flush_announce_from = i;
			return -EAGAIN;
		}
		pub->st.keepalives++;
	}
	pub->ud.flush_announce_from = 0;
	return 0;
}

/*
 * msga_pub_flush: nothing left to pump and every send completed (a UD
 * send's completion means the device sent it: UD has no acknowledgement).
 * Unsignalled sends are made visible by one signalled heartbeat behind
 * them, which tells subscribers nothing but the stream's last number.
 * Reliable: besides, no NAK, resend or LOST for quiet_ns, counted from
 * the first look that saw the publisher's work counters where they are,
 * the tail announced at its start and every announce_ns within it.
 */
int msga__mpub_flushed(struct msga_pub *pub, int first)
{
	struct msga__udep *ep = pub->ud.ep;
	uint64_t work, now;

	if (!ep || msga__udep_dead(ep))
		return -ENETDOWN;
	if (pub->ud.pumping)
		return 0;
	if (ep->tx_done != ep->tx_seq) {
		if (ep->unsig && ep->state != MSGA__UDEP_RESTARTING &&
		    pub->topics[pub->big_topic].seq)
			msga__mpub_post_ctl(pub, pub->big_topic,
					    MSGA__UDW_HEARTBEAT,
					    pub->topics[pub->big_topic].seq,
					    0, 1);
		return 0;
	}
	if (!pub->ud.reliable)
		return 1;
	now = msga__now_ns();
	work = pub->ud.naks_taken + pub->ud.retx_msgs + pub->ud.lost_sent +
	       pub->st.msgs;
	/* (not restarted by a new call: a look from a callback, timeout 0,
	 * sees the quiet grow across its calls; the counters only grow) */
	(void)first;
	if (work != pub->ud.flush_work) {
		pub->ud.flush_work = work;
		pub->ud.flush_quiet_ns = now;
		pub->ud.flush_announce_ns = now;
		pub->ud.flush_announce_from = 0;
	}
	if (now - pub->ud.flush_quiet_ns >= quiet_ns(pub))
		return 1;
	if (msga__time_reached(now, pub->ud.flush_announce_ns) &&
	    ep->state != MSGA__UDEP_RESTARTING && !announce_tail(pub))
		pub->ud.flush_announce_ns = now + announce_ns(pub);
	return 0;
}
