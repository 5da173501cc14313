/* SPDX-License-Identifier: MIT */
/*
 * subscriber.c - msga_sub_* and msga_msg_hold/release: the subscriber
 * object, its life (a destroy inside a callback is deferred: endpoint.h),
 * and which transport's table (struct msga__sub_ops, pubsub.h) a
 * connection or a held message goes to: RC (lib/rc/rc_sub_ops.c), or
 * unicast UD and multicast (lib/ud/mcast_sub_ops.c).
 */
#include <stdlib.h>
#include <string.h>

#include "pubsub.h"
#include "stat_export.h"
#include "topic.h"

#define SUB_ATTR_MIN_SIZE \
	(offsetof(struct msga_sub_attr, user) + sizeof(void *))

static void sub_free(struct msga_sub *sub);
static const struct msga__ep_ops sub_ep_ops;

/* Every transport a subscriber may hold connections of, in free order. */
static const struct msga__sub_ops *const sub_transports[] = {
	&msga__byname_sub_ops, /* (its watch first: nothing found after) */
	&msga__rc_sub_ops, /* (its SRQ before the memberships, as ever) */
	&msga__ud_sub_ops,
};
#define SUB_NTRANSPORTS (sizeof(sub_transports) / sizeof(sub_transports[0]))

/* A 0.6 field, which a caller built against 0.5 does not have: 0 if so. */
#define SUB_ATTR_GET(attr, field) \
	((attr)->size >= offsetof(struct msga_sub_attr, field) + \
			 sizeof((attr)->field) ? (attr)->field : 0)

/* recovery_ms and recovery_bytes, or their defaults; -EINVAL if wrong. */
static int recovery_limits(struct msga_ctx *ctx,
			   const struct msga_sub_attr *attr, uint32_t *ms,
			   uint32_t *bytes)
{
	*ms = SUB_ATTR_GET(attr, recovery_ms);
	*bytes = SUB_ATTR_GET(attr, recovery_bytes);
	if (*ms > MSGA_RECOVERY_MAX_MS)
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "recovery_ms %u is above %u", *ms,
				      MSGA_RECOVERY_MAX_MS);
	if (*bytes && *bytes < MSGA_RECOVERY_MIN_BYTES)
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "recovery_bytes %u is below %u", *bytes,
				      MSGA_RECOVERY_MIN_BYTES);
	*ms = *ms ? *ms : MSGA_RECOVERY_DEFAULT_MS;
	*bytes = *bytes ? *bytes : MSGA_RECOVERY_DEFAULT_BYTES;
	return 0;
}

/*
 * rx_depth, or its default; -EINVAL outside its bounds. The device's own
 * bounds: a membership's completion queue holds its receives and a small
 * send queue (at most MSGA_SUB_RX_DEPTH_MIN), so max_cqe less that.
 */
static int rx_depth_of(struct msga_ctx *ctx, const struct msga_sub_attr *attr,
		       uint32_t *depth)
{
	uint32_t want = SUB_ATTR_GET(attr, rx_depth);
	uint32_t max = MSGA_SUB_RX_DEPTH_MAX;
	const struct ibv_device_attr *da = &ctx->dev_attr;

	*depth = 0;
	if (SUB_ATTR_GET(attr, reserved_rx))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "reserved_rx is not 0");
	if ((uint32_t)da->max_qp_wr < max)
		max = (uint32_t)da->max_qp_wr;
	if ((uint32_t)da->max_cqe - MSGA_SUB_RX_DEPTH_MIN < max)
		max = (uint32_t)da->max_cqe - MSGA_SUB_RX_DEPTH_MIN;
	*depth = want ? want : MSGA_SUB_RX_DEPTH_DEFAULT;
	if (*depth < MSGA_SUB_RX_DEPTH_MIN || *depth > max)
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: rx_depth "
				      "%u is outside %u..%u", want,
				      MSGA_SUB_RX_DEPTH_MIN, max);
	return 0;
}

MSGA_API int msga_sub_create(struct msga_ctx *ctx,
			     const struct msga_sub_attr *attr,
			     struct msga_sub **subp)
{
	uint32_t ms, bytes, rx_depth;
	struct msga_sub *sub;
	int ret;

	if (subp)
		*subp = NULL;
	if (!ctx || !attr || !subp || attr->size < SUB_ATTR_MIN_SIZE ||
	    (attr->flags & ~(uint32_t)(MSGA_SUB_NO_LOCAL |
					MSGA_SUB_STOP_ON_GAP |
					MSGA_SUB_NO_RING |
					MSGA_SUB_NO_RECOVERY |
					MSGA_SUB_AB_LINES |
					MSGA_SUB_REPAIR_BY_NAK |
					MSGA_SUB_OUT_OF_ORDER |
					MSGA_SUB_REQUIRE_MAC |
					MSGA_SUB_RECOVERY_BOUND |
					MSGA_SUB_NO_RECONNECT |
					MSGA_SUB_LAST_VALUE)) ||
	    !attr->on_msg || msga__pattern_check(attr->pattern))
		return -EINVAL;
	if ((attr->flags & MSGA_SUB_REQUIRE_MAC) && !ctx->keys)
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "MSGA_SUB_REQUIRE_MAC needs a context "
				      "with keys");
	/* out of order is a way to deliver repairs: with none, it means nothing */
	if ((attr->flags & MSGA_SUB_OUT_OF_ORDER) &&
	    (attr->flags & MSGA_SUB_NO_RECOVERY))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "MSGA_SUB_OUT_OF_ORDER needs recovery, "
				      "not MSGA_SUB_NO_RECOVERY");
	/* two ways to say where history starts: which? */
	if (SUB_ATTR_GET(attr, history) && SUB_ATTR_GET(attr, history_from))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: history "
				      "and history_from are both set");
	/* and a third (0.12): the last value is history's one message */
	if ((attr->flags & MSGA_SUB_LAST_VALUE) &&
	    (SUB_ATTR_GET(attr, history) || SUB_ATTR_GET(attr, history_from)))
		return msga__ctx_fail(ctx, -EINVAL, "msga_sub_create: "
				      "MSGA_SUB_LAST_VALUE and history or "
				      "history_from are both set");
	ret = recovery_limits(ctx, attr, &ms, &bytes);
	if (!ret)
		ret = rx_depth_of(ctx, attr, &rx_depth);
	if (ret)
		return ret;
	ret = msga__ctx_cm_channel(ctx);
	if (ret)
		return ret;
	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	sub->ctx = ctx;
	strcpy(sub->pattern, attr->pattern);
	sub->on_msg = attr->on_msg;
	sub->on_event = attr->on_event;
	sub->user = attr->user;
	sub->flags = attr->flags;
	sub->ud.recovery_ns = (uint64_t)ms * 1000000u;
	sub->ud.recovery_bytes = bytes;
	sub->ud.history = SUB_ATTR_GET(attr, history);
	/* (datagrams: the last value is a history of one, flagged) */
	if (attr->flags & MSGA_SUB_LAST_VALUE)
		sub->ud.history = 1;
	sub->ud.history_from = SUB_ATTR_GET(attr, history_from);
	sub->ud.rx_depth = rx_depth;
	msga__list_init(&sub->rc.conns);
	msga__retries_init(&sub->rc.retries);
	msga__list_init(&sub->ud.mships);
	msga__retries_init(&sub->ud.retries);
	msga__ep_add(ctx, &sub->eng, &sub_ep_ops, 0);
	*subp = sub;
	return 0;
}

/*
 * Destroyed from a callback: stop everything that could call the user
 * again (connections, memberships), stay on every list so that walks in
 * progress go on safely, and wait for the reap (endpoint.h).
 */
static void sub_bury(struct msga_sub *sub)
{
	sub->dead = 1;
	msga__ctx_reap_soon(sub->ctx);
	for (size_t i = 0; i < SUB_NTRANSPORTS; i++)
		sub_transports[i]->bury(sub);
}

MSGA_API void msga_sub_destroy(struct msga_sub *sub)
{
	if (!sub || sub->dead)
		return;
	if (sub->ctx->busy)
		sub_bury(sub); /* from a callback: freed later */
	else
		sub_free(sub);
}

static void sub_free(struct msga_sub *sub)
{
	msga__sub_export_free(sub);
	for (size_t i = 0; i < SUB_NTRANSPORTS; i++)
		sub_transports[i]->free(sub);
	msga__ep_del(&sub->eng);
	free(sub);
}

static struct msga_sub *sub_of(struct msga__ep *ep)
{
	return msga__container_of(ep, struct msga_sub, eng);
}

/* The transports' timers (UD streams: reassembly's, silent streams). */
static uint64_t sub_tick(struct msga__ep *ep, uint64_t now)
{
	struct msga_sub *sub = sub_of(ep);
	uint64_t next = UINT64_MAX;

	if (sub->dead)
		return UINT64_MAX;
	for (size_t i = 0; i < SUB_NTRANSPORTS; i++) {
		uint64_t due = sub_transports[i]->tick ?
			       sub_transports[i]->tick(sub, now) : UINT64_MAX;

		if (due < next)
			next = due;
	}
	msga__sub_export(sub, now);
	return next;
}

static int sub_reap(struct msga__ep *ep, uint64_t now)
{
	(void)now;
	if (!sub_of(ep)->dead)
		return 0;
	sub_free(sub_of(ep));
	return 1;
}

static void sub_destroy(struct msga__ep *ep)
{
	msga_sub_destroy(sub_of(ep));
}

static const struct msga__ep_ops sub_ep_ops = {
	.tick = sub_tick,
	.reap = sub_reap,
	.destroy = sub_destroy,
};

/* The one place that names the transports: the uri's scheme. */
static const struct msga__sub_ops *sub_ops_for(const char *uri)
{
	if (uri && (!strncmp(uri, "mcast://", 8) || !strncmp(uri, "ud://", 5)))
		return &msga__ud_sub_ops;
	if (uri && !strncmp(uri, "topic://", 8))
		return &msga__byname_sub_ops;
	return &msga__rc_sub_ops;
}

int msga__sub_connect_uri(struct msga_sub *sub, const char *uri, uint32_t *id)
{
	return sub_ops_for(uri)->connect(sub, uri, id);
}

MSGA_API int msga_sub_connect(struct msga_sub *sub, const char *uri,
			      uint32_t *conn_id)
{
	uint32_t id;
	int ret;

	if (!sub)
		return -EINVAL;
	ret = msga__sub_connect_uri(sub, uri, &id);
	if (ret < 0)
		return ret;
	if (conn_id)
		*conn_id = id;
	return 0;
}


MSGA_API int msga_sub_disconnect(struct msga_sub *sub, uint32_t conn_id)
{
	int ret = -ENOENT;

	if (!sub)
		return -EINVAL;
	for (size_t i = 0; i < SUB_NTRANSPORTS && ret == -ENOENT; i++)
		ret = sub_transports[i]->disconnect(sub, conn_id);
	return ret;
}

int msga__sub_line(const struct msga_sub *sub, uint32_t conn_id,
		   struct msga_line_stats *st)
{
	int ret = -ENOENT;

	for (size_t i = 0; i < SUB_NTRANSPORTS && ret == -ENOENT; i++)
		if (sub_transports[i]->line)
			ret = sub_transports[i]->line(sub, conn_id, st);
	return ret;
}

/* (one transport lists its lines today: rdma://; the first with any) */
int msga__sub_line_at(const struct msga_sub *sub, uint32_t idx,
		      struct msga_line_stats *st)
{
	int ret = -ENOENT;

	for (size_t i = 0; i < SUB_NTRANSPORTS && ret == -ENOENT; i++)
		if (sub_transports[i]->line_at)
			ret = sub_transports[i]->line_at(sub, idx, st);
	return ret;
}

void msga__sub_stats_more(const struct msga_sub *sub,
			  struct msga_sub_stats *st)
{
	for (size_t i = 0; i < SUB_NTRANSPORTS; i++)
		if (sub_transports[i]->stats)
			sub_transports[i]->stats(sub, st);
}

/* The table of the transport a held message came by. */
static const struct msga__sub_ops *slot_ops(const struct msga__rxslot *slot)
{
	return slot->ud ? &msga__ud_sub_ops : &msga__rc_sub_ops;
}

MSGA_API int msga_msg_hold(const struct msga_msg *msg)
{
	struct msga__rxslot *slot;

	if (!msg)
		return -EINVAL;
	slot = msg->priv_;
	if (!slot)
		return -EOPNOTSUPP;
	return slot_ops(slot)->hold(msg, slot);
}

MSGA_API void msga_msg_release(const struct msga_msg *msg)
{
	struct msga__rxslot *slot = msg ? msg->priv_ : NULL;

	if (slot)
		slot_ops(slot)->release(msg, slot);
}
