/* SPDX-License-Identifier: MIT */
/*
 * rc_pub_ops.c - the rdma:// publisher's table (struct msga__pub_ops,
 * pubsub.h): its listening id, its subscribers' connections from accept
 * to free, and the fan-out of rc_fanout.c.
 */
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "rc.h"

static int rc_pub_check(struct msga_ctx *ctx, const struct msga_pub_attr *attr)
{
	struct sockaddr_storage ss;

	if (MSGA__PUB_ATTR_HAS(attr, uri_b))
		return msga__ctx_fail(ctx, -EINVAL, "msga_pub_create: uri_b "
				      "is for mcast:// publishers");
	if (msga__parse_uri(attr->uri, &ss))
		return msga__ctx_fail(ctx, -EINVAL,
				      "msga_pub_create: bad uri '%s'",
				      attr->uri ? attr->uri : "(null)");
	return 0;
}

static int rc_pub_open(struct msga_pub *pub, const struct msga__pub_args *a)
{
	struct msga_ctx *ctx = pub->ctx;
	struct sockaddr_storage ss;
	int ret;

	if (msga__parse_uri(a->uri, &ss)) /* (checked: rc_pub_check) */
		return -EINVAL;
	msga__auth_random(&pub->rc.origin, sizeof(pub->rc.origin));
	ret = msga__ctx_cm_channel(ctx);
	if (ret)
		return ret;
	if (rdma_create_id(ctx->cm_ch, &pub->rc.listen, &pub->eng, RDMA_PS_TCP))
		return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
				      "rdma_create_id");
	if (rdma_bind_addr(pub->rc.listen, (struct sockaddr *)&ss))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRNOTAVAIL),
				      "msga_pub_create: rdma_bind_addr");
	if (pub->rc.listen->verbs && pub->rc.listen->verbs != ctx->verbs)
		return msga__ctx_fail(ctx, -ENODEV,
				      "msga_pub_create: address is not on %s",
				      ctx->dev_name);
	if (rdma_listen(pub->rc.listen, 64))
		return msga__ctx_fail(ctx, msga__neg_errno(EADDRINUSE),
				      "msga_pub_create: rdma_listen");
	return 0;
}

/* The listening id's events: connection requests. */
static void rc_pub_on_cm(struct msga_pub *pub, const struct rdma_cm_event *ev)
{
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return;
	msga__rc_pub_on_request(pub, ev);
}

/* Ready subscribers hear the new topic's name (if they match it). */
static int rc_pub_topic_added(struct msga_pub *pub, uint32_t topic_id)
{
	struct msga__list *pos, *tmp;

	(void)topic_id;
	msga__list_for_each_safe(pos, tmp, &pub->rc.conns)
		if (msga__own_conn(pos)->state == MSGA__C_READY)
			msga__conn_announce(pub, msga__own_conn(pos));
	return 0;
}

static int rc_pub_port(const struct msga_pub *pub)
{
	if (!pub->rc.listen)
		return -EINVAL;
	return ntohs(rdma_get_src_port(pub->rc.listen));
}

/* Reached at the listening address (unspecified: the context's own). */
static int rc_pub_advert(const struct msga_pub *pub, uint32_t topic_id,
			 uint32_t line, struct msga__trw_advert *a)
{
	(void)topic_id;
	if (line)
		return 0; /* (one line: multicast's A/B alone has two) */
	a->kind = MSGA__TRW_RC;
	a->flags = pub->ctx->keys ? MSGA__TRW_F_KEYS : 0;
	a->port = (uint16_t)rc_pub_port(pub);
	msga__trw_addr_of(a->addr, rdma_get_local_addr(pub->rc.listen));
	a->origin = pub->rc.origin;
	return 1;
}

static int rc_pub_subscribers(const struct msga_pub *pub)
{
	return pub->rc.nready;
}

/* msga_pub_destroy: every subscriber hears a goodbye (a clean end:
 * rc.h), in one wait. */
static void rc_pub_close(struct msga_pub *pub)
{
	uint64_t until = msga__now_ns() + MSGA__BYE_WAIT_NS;
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns)
		msga__conn_goodbye(msga__own_conn(pos), until);
}

static void rc_pub_bury(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns)
		msga__conn_kill(msga__own_conn(pos), 0, 0);
}

static void rc_pub_free(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns) {
		msga__conn_kill(msga__own_conn(pos), 0, 0);
		msga__conn_free(msga__own_conn(pos));
	}
	if (pub->rc.listen)
		rdma_destroy_id(pub->rc.listen);
}

/* Subscribed now, and how many of them match none of the topics. */
static void rc_pub_stats(const struct msga_pub *pub, struct msga_pub_stats *st)
{
	struct msga__list *conns = (struct msga__list *)&pub->rc.conns;
	struct msga__list *pos, *tmp;

	st->subscribers = pub->rc.nready;
	msga__list_for_each_safe(pos, tmp, conns) {
		const struct msga__conn *c = msga__own_conn(pos);

		st->conn_slots++;
		if (c->state == MSGA__C_READY)
			st->unmatched += !msga__pub_topics_matched(pub,
								   c->pattern);
	}
}

/* Slot idx: the idx-th connection on the list (a walk: stats only). */
static int rc_pub_conn_stats(const struct msga_pub *pub, uint32_t idx,
			     struct msga_pub_conn_stats *st)
{
	struct msga__list *conns = (struct msga__list *)&pub->rc.conns;
	const struct msga__conn *c = NULL;
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, conns)
		if (!idx--) {
			c = msga__own_conn(pos);
			break;
		}
	if (!c || c->state != MSGA__C_READY)
		return -ENOENT;
	st->conn_id = c->id;
	snprintf(st->peer, sizeof(st->peer), "%s", c->peer);
	if (c->key)
		snprintf(st->identity, sizeof(st->identity), "%s",
			 c->key->name);
	snprintf(st->pattern, sizeof(st->pattern), "%s", c->pattern);
	st->topics = msga__pub_topics_matched(pub, c->pattern);
	st->msgs = c->tx_msgs;
	st->bytes = c->tx_bytes;
	st->stalls = c->slow.stalls;
	st->held_ns = c->slow.held_ns;
	return 0;
}

/*
 * Ring every connection that holds sends back. A connection that dies at
 * it is its subscriber's DISCONNECTED event, as at any post: the others
 * go on, so this never fails.
 */
static int rc_pub_doorbell(struct msga_pub *pub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &pub->rc.conns)
		msga__conn_ring(msga__own_conn(pos));
	return 0;
}

const struct msga__pub_ops msga__rc_pub_ops = {
	.check = rc_pub_check,
	.open = rc_pub_open,
	.ready = msga__rc_pub_ready,
	.held_up = msga__rc_pub_held_up,
	.commit = msga__rc_pub_commit,
	.send = msga__rc_pub_send,
	.topic_added = rc_pub_topic_added,
	.progress = msga__rc_pub_progress,
	.on_cm = rc_pub_on_cm,
	.port = rc_pub_port,
	.subscribers = rc_pub_subscribers,
	.close = rc_pub_close,
	.bury = rc_pub_bury,
	.free = rc_pub_free,
	.stats = rc_pub_stats,
	.conn_stats = rc_pub_conn_stats,
	.flushed = msga__rc_pub_flushed,
	.doorbell = rc_pub_doorbell,
	.advert = rc_pub_advert,
};
