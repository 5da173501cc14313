/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_ops.c - the rdma:// subscriber's table (struct msga__sub_ops,
 * pubsub.h): its connections (rc_sub.c) and their shared receive queue
 * (srq.c), from connect to free, their reconnections' tries (0.10,
 * rc_sub_retry.c), and the holds of their messages.
 */
#include "rc.h"
#include "srq.h"

static int rc_sub_connect(struct msga_sub *sub, const char *uri,
			  uint32_t *id)
{
	struct sockaddr_storage ss;

	if (msga__parse_uri(uri, &ss))
		return -EINVAL;
	return msga__rc_sub_connect(sub, uri, &ss, id);
}

static int rc_sub_disconnect(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.conns) {
		struct msga__conn *c = msga__own_conn(pos);

		if (c->id != conn_id || c->state == MSGA__C_DEAD)
			continue;
		msga__conn_goodbye(c, msga__now_ns() + MSGA__BYE_WAIT_NS);
		msga__conn_kill(c, 0, 0);
		return 0;
	}
	return msga__retry_cancel(&sub->rc.retries, conn_id); /* (waiting: 0.10) */
}

/* The reconnections due (rc_sub_retry.c); when the next one is. */
static uint64_t rc_sub_tick(struct msga_sub *sub, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	struct msga__retry *r;

	while ((r = msga__retry_due(&sub->rc.retries, now, &next)))
		if (msga__rc_sub_retry(sub, r))
			msga__retry_wait(&sub->rc.retries, r, 0, now);
	/* (one put back is due later: the walk that ends the loop saw it,
	 * and every other, for next) */
	return next;
}

/* Every publisher hears a goodbye (a clean end: rc.h), in one wait. */
static void rc_sub_goodbye(struct msga_sub *sub)
{
	uint64_t until = msga__now_ns() + MSGA__BYE_WAIT_NS;
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.conns)
		msga__conn_goodbye(msga__own_conn(pos), until);
}

static void rc_sub_bury(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	rc_sub_goodbye(sub);
	msga__list_for_each_safe(pos, tmp, &sub->rc.conns)
		msga__conn_kill(msga__own_conn(pos), 0, 0);
}

static void rc_sub_free(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	rc_sub_goodbye(sub);
	if (sub->rc.srq)
		sub->rc.srq->closing = 1; /* it goes too: no receive to save */
	msga__list_for_each_safe(pos, tmp, &sub->rc.conns) {
		msga__conn_kill(msga__own_conn(pos), 0, 0);
		msga__conn_free(msga__own_conn(pos));
	}
	/* after every QP attached to it is gone */
	msga__srq_destroy(sub->rc.srq);
	msga__retry_free_all(&sub->rc.retries);
}

const struct msga__sub_ops msga__rc_sub_ops = {
	.connect = rc_sub_connect,
	.disconnect = rc_sub_disconnect,
	.tick = rc_sub_tick,
	.bury = rc_sub_bury,
	.free = rc_sub_free,
	.hold = msga__rc_hold,
	.release = msga__rc_release,
	.line = msga__rc_sub_line,
	.line_at = msga__rc_sub_line_at,
	.stats = msga__rc_sub_stats,
};
