/* SPDX-License-Identifier: MIT */
/*
 * mcast_pub_ops.c - the tables of the two datagram publishers (struct
 * msga__pub_ops, pubsub.h): mcast:// (mcast_pub.c: groups, fragments,
 * heartbeats) and ud://, which sends the same datagrams to each
 * subscriber that asked (ud_unicast.c). Both keep what NAKs may ask for
 * when reliable (mcast_retx.c) and share one UD endpoint (udep.c).
 */
#include <stdio.h>
#include <string.h>

#include "mcast.h"
#include "pubsub.h"
#include "udep_policy.h"

/* msga_pub_attr.max_datagram, of both. */
static int mpub_check(struct msga_ctx *ctx, const struct msga_pub_attr *attr)
{
	if (attr->size >= offsetof(struct msga_pub_attr, max_datagram) +
			  sizeof(attr->max_datagram) &&
	    msga__dgram_check(attr->max_datagram))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: "
				      "max_datagram %u is below %u",
				      attr->max_datagram, MSGA_DATAGRAM_MIN);
	return 0;
}

/* MSGA_PUB_RELIABLE: keep what NAKs may ask for (mcast_retx.c). */
static int mpub_reliable(struct msga_pub *pub, const struct msga__pub_args *a)
{
	if (!(pub->flags & MSGA_PUB_RELIABLE))
		return 0;
	return msga__mpub_retx_init(pub, a->retransmit_bytes);
}

/* What the lower files call their owners through (mcast.h). */
static const struct msga__pub_up ud_pub_up = {
	.setup = msga__mpub_setup,
	.nak = msga__mpub_on_nak,
	.targets = msga__mpub_targets,
	.target = msga__mpub_target,
	.single_max = msga__mpub_single_max,
	.post_ctl = msga__mpub_post_ctl,
	.post_piece = msga__mpub_post_piece,
};

static int mpub_open(struct msga_pub *pub, const struct msga__pub_args *a)
{
	int ret;

	pub->ud.up = &ud_pub_up; /* before the endpoint exists */
	ret = mpub_reliable(pub, a);

	return ret ? ret : msga__mpub_create(pub, a->uri, a->uri_b);
}

/* A datagram publisher always has work: its pump, its heartbeats. */
static int mpub_progress(struct msga_pub *pub)
{
	msga__mpub_progress(pub);
	return 1;
}

/*
 * A topic's group on line A, or on line B (uri_b), a record of its own
 * flagged LINE_B: a subscriber by name joins line A, and line B too
 * when it arbitrates lines (MSGA_SUB_AB_LINES).
 */
static int mpub_advert(const struct msga_pub *pub, uint32_t topic_id,
		       uint32_t line, struct msga__trw_advert *a)
{
	const struct msga__udep *ep = pub->ud.ep;
	const struct msga__topic *t = &pub->topics[topic_id];

	if (line && !pub->ud.line_b)
		return 0;
	a->kind = MSGA__TRW_MCAST;
	a->flags = (pub->flags & MSGA_PUB_RELIABLE ? MSGA__TRW_F_RELIABLE : 0) |
		   (pub->flags & MSGA_PUB_MAC ? MSGA__TRW_F_KEYS : 0) |
		   (line ? MSGA__TRW_F_LINE_B : 0);
	a->port = 0;
	msga__trw_addr_of(a->addr, (const struct sockaddr *)
			  &ep->groups[line ? t->group_b : t->group].addr);
	a->origin = pub->ud.origin;
	return 1;
}

static int mpub_port(const struct msga_pub *pub)
{
	return -EOPNOTSUPP; /* a group has no port */
}

static int mpub_subscribers(const struct msga_pub *pub)
{
	return -EOPNOTSUPP; /* a sender never learns who joined */
}

static void mpub_bury(struct msga_pub *pub)
{
	if (pub->ud.ep)
		msga__udep_kill(pub->ud.ep, 0, 0);
}

static void mpub_free(struct msga_pub *pub)
{
	if (pub->ud.ep)
		msga__udep_free(pub->ud.ep); /* its QP first: it uses tx_mr */
	msga__upub_fini(pub);
	msga__mpub_serve_fini(pub); /* its registration before the ring */
	msga__mpub_retx_fini(pub);
}

/* What the datagram publishers keep where they work. */
static void mpub_stats(const struct msga_pub *pub, struct msga_pub_stats *st)
{
	st->naks = pub->ud.naks_taken;
	st->retransmits = pub->ud.retx_msgs;
	st->lost_sent = pub->ud.lost_sent;
	st->forged = pub->ud.forged;
	if (pub->ud.reliable)
		st->retained_bytes = pub->ud.retain.used;
	if (!pub->ud.unicast)
		return;
	st->conn_slots = MSGA__UD_DESTS_MAX;
	st->subscribers = (uint64_t)pub->ud.ndests;
	for (uint32_t i = 0; pub->ud.dests && i < MSGA__UD_DESTS_MAX; i++)
		if (pub->ud.dests[i].used)
			st->unmatched += !msga__pub_topics_matched(pub,
					pub->ud.dests[i].pattern);
}

static int mpub_conn_stats(const struct msga_pub *pub, uint32_t idx,
			   struct msga_pub_conn_stats *st)
{
	(void)pub;
	(void)idx;
	(void)st;
	return -EOPNOTSUPP; /* a sender never learns who joined */
}

/* ud://: slot idx of its subscribers' table. */
static int upub_conn_stats(const struct msga_pub *pub, uint32_t idx,
			   struct msga_pub_conn_stats *st)
{
	const struct msga__udest *d;

	if (!pub->ud.dests || idx >= MSGA__UD_DESTS_MAX ||
	    !pub->ud.dests[idx].used)
		return -ENOENT;
	d = &pub->ud.dests[idx];
	st->conn_id = d->id;
	snprintf(st->peer, sizeof(st->peer), "%s", d->g.name);
	snprintf(st->pattern, sizeof(st->pattern), "%s", d->pattern);
	st->topics = msga__pub_topics_matched(pub, d->pattern);
	st->msgs = d->msgs;
	st->bytes = d->bytes;
	return 0;
}

/* One endpoint sends every line's datagrams: ring it. */
static int mpub_doorbell(struct msga_pub *pub)
{
	return pub->ud.ep ? msga__udep_ring(pub->ud.ep) : 0;
}

const struct msga__pub_ops msga__mcast_pub_ops = {
	.check = mpub_check,
	.open = mpub_open,
	.ready = msga__mpub_ready,
	.commit = msga__mpub_commit,
	.send = msga__mpub_send,
	.topic_added = msga__mpub_topic_added,
	.progress = mpub_progress,
	.port = mpub_port,
	.subscribers = mpub_subscribers,
	.close = msga__mpub_close, /* each stream's END */
	.bury = mpub_bury,
	.free = mpub_free,
	.stats = mpub_stats,
	.conn_stats = mpub_conn_stats,
	.flushed = msga__mpub_flushed,
	.doorbell = mpub_doorbell,
	.advert = mpub_advert,
};

static int upub_check(struct msga_ctx *ctx, const struct msga_pub_attr *attr)
{
	int ret = mpub_check(ctx, attr);

	if (!ret && MSGA__PUB_ATTR_HAS(attr, uri_b))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: uri_b "
				      "is for mcast:// publishers");
	return ret;
}

static int upub_open(struct msga_pub *pub, const struct msga__pub_args *a)
{
	int ret;

	pub->ud.up = &ud_pub_up;
	ret = mpub_reliable(pub, a);

	return ret ? ret : msga__upub_create(pub, a->uri, &msga__upub_cb);
}

static int upub_port(const struct msga_pub *pub)
{
	if (!pub->ud.ep)
		return -EINVAL;
	return ntohs(rdma_get_src_port(pub->ud.ep->cm));
}

/* Reached at its endpoint's address (unspecified: the context's own). */
static int upub_advert(const struct msga_pub *pub, uint32_t topic_id,
		       uint32_t line, struct msga__trw_advert *a)
{
	(void)topic_id;
	if (line)
		return 0; /* (one line: multicast's A/B alone has two) */
	a->kind = MSGA__TRW_UD;
	a->flags = pub->ctx->keys ? MSGA__TRW_F_KEYS : 0;
	a->port = (uint16_t)upub_port(pub);
	msga__trw_addr_of(a->addr, rdma_get_local_addr(pub->ud.ep->cm));
	a->origin = pub->ud.origin;
	return 1;
}

static int upub_subscribers(const struct msga_pub *pub)
{
	return pub->ud.ndests;
}

const struct msga__pub_ops msga__ud_pub_ops = {
	.check = upub_check,
	.open = upub_open,
	.ready = msga__mpub_ready,
	.commit = msga__mpub_commit,
	.send = msga__mpub_send,
	.topic_added = msga__mpub_topic_added,
	.progress = mpub_progress,
	.port = upub_port,
	.subscribers = upub_subscribers,
	.close = msga__mpub_close,
	.bury = mpub_bury,
	.free = mpub_free,
	.stats = mpub_stats,
	.conn_stats = upub_conn_stats,
	.flushed = msga__mpub_flushed,
	.doorbell = mpub_doorbell,
	.advert = upub_advert,
};
