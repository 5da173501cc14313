/* SPDX-License-Identifier: MIT */
/*
 * sub_byname.c - topic://, a subscription by name (issue 37; msgaccel(7),
 * TOPIC RESOLUTION): the subscriber's pattern, wherever it is published.
 *
 * A transport table of its own (struct msga__sub_ops) that makes no
 * connection itself: it asks the context's resolver to watch the
 * subscriber's pattern (lib/core/resolver.h), and for each publisher
 * the resolver finds, connects to it with the transport that publisher
 * advertised (rdma://, ud://, or for multicast each group its matching
 * topics are on), through the subscriber's own msga__sub_connect_uri(),
 * with the subscriber's flags. A multicast publisher with two lines
 * (msga_pub_attr.uri_b) advertises each topic's line B group as well:
 * with MSGA_SUB_AB_LINES each line's group is a membership of its own,
 * arbitrated as any A/B pair; without it line B is ignored. A publisher that withdraws its last topic,
 * or falls silent, is disconnected. Each is an event naming the
 * publisher (MSGA_EVENT_PUBLISHER_FOUND, _GONE: origin, uri, the child
 * connection's conn_id), so a message's conn_id tells its publisher.
 *
 * Bounded: at most MSGA_SUB_BYNAME_MAX connections per subscription, the
 * rest refused (an event each, status -ENOSPC), so a flood of forged
 * adverts cannot open unbounded connections; a publisher that wants keys
 * is refused (-EACCES) by a context without any.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pubsub.h"
#include "resolver.h"

#define SCHEME "topic://"

static void tell(struct msga_sub *sub, uint32_t type, int status,
		  const struct msga__byname_conn *c, const char *topic)
{
	struct msga_event ev = {
		.size = sizeof(ev), .type = type, .status = status,
		.conn_id = c->conn_id, .sub = sub, .peer = c->uri,
		.topic = topic, .origin = c->origin,
	};

	if (sub->on_event)
		sub->on_event(&ev, sub->user);
}

static struct msga__byname_conn *conn_find(struct msga__sub_byname *b,
					   uint64_t origin, const char *uri)
{
	for (uint32_t i = 0; i < MSGA_SUB_BYNAME_MAX; i++)
		if (b->conn[i].used && b->conn[i].origin == origin &&
		    !strcmp(b->conn[i].uri, uri))
			return &b->conn[i];
	return NULL;
}

static void found(void *user, const struct msga__trw_advert *a)
{
	struct msga_sub *sub = user;
	struct msga__sub_byname *b = sub->byname;
	struct msga__byname_conn *c = NULL, refused = { .origin = a->origin };
	int ret;

	if (sub->dead)
		return;
	/* an A/B publisher's line B: joined only by a subscriber that
	 * arbitrates lines, as it would be given by address */
	if ((a->flags & MSGA__TRW_F_LINE_B) &&
	    !(sub->flags & MSGA_SUB_AB_LINES))
		return;
	msga__trw_uri(a, refused.uri, sizeof(refused.uri));
	if (conn_find(b, a->origin, refused.uri))
		return; /* (another topic of a publisher it has) */
	for (uint32_t i = 0; i < MSGA_SUB_BYNAME_MAX && !c; i++)
		if (!b->conn[i].used)
			c = &b->conn[i];
	ret = !c ? -ENOSPC :
	      (a->flags & MSGA__TRW_F_KEYS) && !sub->ctx->keys ? -EACCES : 0;
	if (!ret)
		ret = msga__sub_connect_uri(sub, refused.uri, &refused.conn_id);
	if (ret) {
		b->refused++;
		tell(sub, MSGA_EVENT_PUBLISHER_FOUND, ret, &refused, a->topic);
		return;
	}
	*c = refused;
	c->used = 1;
	b->conns++;
	tell(sub, MSGA_EVENT_PUBLISHER_FOUND, 0, c, a->topic);
}

static void gone(void *user, uint64_t origin)
{
	struct msga_sub *sub = user;
	struct msga__sub_byname *b = sub->byname;

	if (sub->dead)
		return;
	for (uint32_t i = 0; i < MSGA_SUB_BYNAME_MAX; i++) {
		struct msga__byname_conn *c = &b->conn[i];

		if (!c->used || c->origin != origin)
			continue;
		msga_sub_disconnect(sub, c->conn_id);
		c->used = 0;
		b->conns--;
		tell(sub, MSGA_EVENT_PUBLISHER_GONE, 0, c, NULL);
	}
}

static const struct msga__res_watch_ops watch_ops = {
	.found = found,
	.gone = gone,
};

static int byname_connect(struct msga_sub *sub, const char *uri, uint32_t *id)
{
	struct msga__sub_byname *b;
	int ret;

	if (!uri || strcmp(uri, SCHEME))
		return msga__ctx_fail(sub->ctx, -EINVAL, "msga_sub_connect: "
				      "'%s' is not topic:// (the subscriber's "
				      "pattern names the topics)",
				      uri ? uri : "(null)");
	if (sub->byname)
		return msga__ctx_fail(sub->ctx, -EALREADY, "msga_sub_connect: "
				      "this subscriber subscribes by name "
				      "already");
	b = calloc(1, sizeof(*b));
	if (!b)
		return msga__ctx_fail(sub->ctx, -ENOMEM, "msga_sub_connect");
	sub->byname = b;
	b->id = sub->next_id++;
	*id = b->id;
	/* (it may connect at once, to the publishers heard already) */
	ret = msga__resolver_watch(sub->ctx, sub->pattern, &watch_ops, sub,
				   &b->watch);
	if (ret) {
		sub->byname = NULL;
		free(b);
		return ret;
	}
	return 0;
}

/* Every connection it made, and the watch. */
static void byname_end(struct msga_sub *sub, int disconnect)
{
	struct msga__sub_byname *b = sub->byname;

	msga__resolver_unwatch(sub->ctx, b->watch);
	for (uint32_t i = 0; disconnect && i < MSGA_SUB_BYNAME_MAX; i++)
		if (b->conn[i].used)
			msga_sub_disconnect(sub, b->conn[i].conn_id);
	sub->byname = NULL;
	free(b);
}

static int byname_disconnect(struct msga_sub *sub, uint32_t conn_id)
{
	if (!sub->byname || sub->byname->id != conn_id)
		return -ENOENT;
	byname_end(sub, 1);
	return 0;
}

/* (the other transports free the connections it made) */
static void byname_bury(struct msga_sub *sub)
{
	if (sub->byname) {
		msga__resolver_unwatch(sub->ctx, sub->byname->watch);
		sub->byname->watch = UINT32_MAX; /* (its slot may be reused) */
	}
}

static void byname_free(struct msga_sub *sub)
{
	if (sub->byname)
		byname_end(sub, 0);
}

static void byname_stats(const struct msga_sub *sub, struct msga_sub_stats *st)
{
	if (sub->byname) {
		st->byname_conns = sub->byname->conns;
		st->byname_refused = sub->byname->refused;
	}
}

const struct msga__sub_ops msga__byname_sub_ops = {
	.connect = byname_connect,
	.disconnect = byname_disconnect,
	.bury = byname_bury,
	.free = byname_free,
	.stats = byname_stats,
};
