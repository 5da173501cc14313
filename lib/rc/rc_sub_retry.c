/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_retry.c - a subscriber's reconnection (0.10): a connection that
 * ends, or never started, for a reason that may pass (its publisher not
 * up yet, restarted, unreachable for a while) is tried again on the same
 * conn_id after a backoff, until it connects, the subscriber gives it up
 * (msga_sub_disconnect) or a final refusal ends it. One record per
 * conn_id, made with the connection (so a death never allocates), kept
 * on sub->rc.retries while it waits and by the connection while it
 * tries. The subscriber's tick (rc_sub_ops.c) makes the connection of
 * what is due (rc_sub.c), and rc_sub.c hands back the record of one that
 * died: this file calls neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"

/* The backoff: 10 ms, doubling up to 1 s, each wait drawn from its
 * upper half so that subscribers of one restarted publisher spread out. */
#define RETRY_MIN_NS 10000000ull
#define RETRY_MAX_NS 1000000000ull

/*
 * Refusals that another try would only repeat: the publisher's key or
 * allow list (-EACCES, -EPERM, its REFUSE's errno among them), an
 * address on another device than the context's (-ENODEV), a bad
 * argument (-EINVAL).
 */
static int final_status(int status)
{
	return status == -EACCES || status == -EPERM || status == -ENODEV ||
	       status == -EINVAL;
}

struct msga__rc_retry *msga__rc_retry_new(const char *peer,
					  const struct sockaddr_storage *ss)
{
	struct msga__rc_retry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	snprintf(r->peer, sizeof(r->peer), "%s", peer);
	r->ss = *ss;
	return r;
}

/* xorshift64: the jitter needs no quality, only spread. */
static uint64_t jitter(struct msga_sub *sub, uint64_t range)
{
	uint64_t x = sub->rc.rand;

	if (!x)
		x = msga__now_ns() ^ (uintptr_t)sub ^ 0x9e3779b97f4a7c15ull;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	sub->rc.rand = x;
	return range ? x % range : 0;
}

static void schedule(struct msga_sub *sub, struct msga__rc_retry *r,
		     uint64_t now)
{
	r->due = now + r->backoff / 2 + jitter(sub, r->backoff / 2 + 1);
	msga__list_add_tail(&sub->rc.retries, &r->node);
}

/*
 * c is gone (msga__conn_kill, from its on_gone): its record waits for the
 * next try, unless the subscriber closed it (notify 0) or the status is
 * final. A connection that had been ready starts the backoff over.
 */
void msga__rc_retry_gone(struct msga__conn *c, int status, int notify)
{
	struct msga__rc_retry *r = c->retry;

	if (!r || !notify || final_status(status) ||
	    (c->sub->flags & MSGA_SUB_NO_RECONNECT) || c->sub->dead)
		return;
	c->retry = NULL;
	r->id = c->id;
	r->backoff = c->was_ready || !r->backoff ? RETRY_MIN_NS :
		     r->backoff * 2 > RETRY_MAX_NS ? RETRY_MAX_NS :
						     r->backoff * 2;
	schedule(c->sub, r, msga__now_ns());
}

/*
 * The first record due at now, taken off the list (its try is the
 * caller's: rc_sub_ops.c), or NULL with *next lowered to when the next
 * one is due.
 */
struct msga__rc_retry *msga__rc_retry_due(struct msga_sub *sub, uint64_t now,
					  uint64_t *next)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.retries) {
		struct msga__rc_retry *r =
			msga__container_of(pos, struct msga__rc_retry, node);

		if (msga__time_reached(now, r->due)) {
			msga__list_del(&r->node);
			return r;
		}
		if (r->due < *next)
			*next = r->due;
	}
	return NULL;
}

/* A try that could not even start (no address, no memory): wait more. */
void msga__rc_retry_again(struct msga_sub *sub, struct msga__rc_retry *r,
			  uint64_t now)
{
	r->backoff = r->backoff * 2 > RETRY_MAX_NS ? RETRY_MAX_NS :
						     r->backoff * 2;
	schedule(sub, r, now);
}

/* msga_sub_disconnect of a waiting conn_id: 0, or -ENOENT. */
int msga__rc_retry_cancel(struct msga_sub *sub, uint32_t conn_id)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.retries) {
		struct msga__rc_retry *r =
			msga__container_of(pos, struct msga__rc_retry, node);

		if (r->id != conn_id)
			continue;
		msga__list_del(&r->node);
		free(r);
		return 0;
	}
	return -ENOENT;
}

void msga__rc_retry_free_all(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &sub->rc.retries) {
		msga__list_del(pos);
		free(msga__container_of(pos, struct msga__rc_retry, node));
	}
}
