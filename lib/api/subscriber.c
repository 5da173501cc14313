/* SPDX-License-Identifier: MIT */
/*
 * subscriber.c - msga_sub_* and msga_msg_hold/release: the subscriber
 * object, its life (a destroy inside a callback is deferred: endpoint.h),
 * and which transport a connection or a held message belongs to: RC
 * (lib/rc/rc_sub.c), unicast UD or multicast (lib/ud/).
 */
#include <stdlib.h>
#include <string.h>

#include "mcast.h"
#include "rc.h"
#include "srq.h"
#include "topic.h"

#define SUB_ATTR_MIN_SIZE \
	(offsetof(struct msga_sub_attr, user) + sizeof(void *))

static void sub_free(struct msga_sub *sub);
static const struct msga__ep_ops sub_ops;

static struct msga__conn *own_conn(struct msga__list *pos)
{
	return msga__container_of(pos, struct msga__conn, own_node);
}

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

MSGA_API int msga_sub_create(struct msga_ctx *ctx,
			     const struct msga_sub_attr *attr,
			     struct msga_sub **subp)
{
	uint32_t ms, bytes;
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
					MSGA_SUB_REQUIRE_MAC)) ||
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
	ret = recovery_limits(ctx, attr, &ms, &bytes);
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
	sub->recovery_ns = (uint64_t)ms * 1000000u;
	sub->recovery_bytes = bytes;
	sub->history = SUB_ATTR_GET(attr, history);
	sub->history_from = SUB_ATTR_GET(attr, history_from);
	msga__list_init(&sub->conns);
	msga__list_init(&sub->mships);
	msga__ep_add(ctx, &sub->eng, &sub_ops, 0);
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
	struct msga__list *pos, *tmp;

	sub->dead = 1;
	msga__ctx_reap_soon(sub->ctx);
	msga__list_for_each_safe(pos, tmp, &sub->conns)
		msga__conn_kill(own_conn(pos), 0, 0);
	msga__msub_kill_all(sub);
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
	struct msga__list *pos, *tmp;

	if (sub->srq)
		sub->srq->closing = 1; /* it goes too: no receive to save */
	msga__list_for_each_safe(pos, tmp, &sub->conns) {
		msga__conn_kill(own_conn(pos), 0, 0);
		msga__conn_free(own_conn(pos));
	}
	/* after every QP attached to it is gone */
	msga__srq_destroy(sub->srq);
	msga__msub_fini(sub);
	msga__ep_del(&sub->eng);
	free(sub);
}

static struct msga_sub *sub_of(struct msga__ep *ep)
{
	return msga__container_of(ep, struct msga_sub, eng);
}

/* UD streams' timers: reassembly's, and streams gone silent. */
static uint64_t sub_tick(struct msga__ep *ep, uint64_t now)
{
	struct msga_sub *sub = sub_of(ep);

	if (sub->dead)
		return UINT64_MAX;
	return msga__msub_tick(sub, now);
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

static const struct msga__ep_ops sub_ops = {
	.tick = sub_tick,
	.reap = sub_reap,
	.destroy = sub_destroy,
};

MSGA_API int msga_sub_connect(struct msga_sub *sub, const char *uri)
{
	struct sockaddr_storage ss;

	if (sub && uri && !strncmp(uri, "mcast://", 8))
		return msga__msub_connect(sub, uri);
	if (sub && uri && !strncmp(uri, "ud://", 5))
		return msga__usub_connect(sub, uri);
	if (!sub || msga__parse_uri(uri, &ss))
		return -EINVAL;
	return msga__rc_sub_connect(sub, uri, &ss);
}


MSGA_API int msga_sub_disconnect(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	if (!sub)
		return -EINVAL;
	msga__list_for_each_safe(pos, tmp, &sub->conns) {
		struct msga__conn *c = own_conn(pos);

		if (c->id != conn_id || c->state == MSGA__C_DEAD)
			continue;
		msga__conn_kill(c, 0, 0);
		return 0;
	}
	return msga__msub_disconnect(sub, conn_id);
}

MSGA_API int msga_msg_hold(const struct msga_msg *msg)
{
	struct msga__rxslot *slot;

	if (!msg)
		return -EINVAL;
	slot = msg->priv_;
	if (!slot)
		return -EOPNOTSUPP;
	if (slot->ud)
		return msga__msub_hold(msg, slot);
	return msga__rc_hold(msg, slot);
}

MSGA_API void msga_msg_release(const struct msga_msg *msg)
{
	struct msga__rxslot *slot = msg ? msg->priv_ : NULL;

	if (slot && slot->ud)
		msga__msub_release(msg, slot);
	else if (slot)
		msga__rc_release(msg, slot);
}
