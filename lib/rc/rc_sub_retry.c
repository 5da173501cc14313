/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_retry.c - a subscriber's reconnection (0.10): a connection that
 * ends, or never started, for a reason that may pass (its publisher not
 * up yet, restarted, unreachable for a while) is tried again on the same
 * conn_id after a backoff, until it connects, the subscriber gives it up
 * (msga_sub_disconnect) or a final refusal ends it. Its record
 * (lib/core/retry.h, made with the connection, so a death never
 * allocates) waits on sub->rc.retries and is kept by the connection while
 * it tries; the backoff and which refusals are final are
 * lib/proto/backoff.h's, shared with ud://. The subscriber's tick
 * (rc_sub_ops.c) makes the connection of what is due (rc_sub.c), and
 * rc_sub.c hands back the record of one that died: this file calls
 * neither.
 */
#include "rc.h"
#include "backoff.h"

/*
 * c is gone (msga__conn_kill, from its on_gone): its record waits for the
 * next try, unless the subscriber closed it (notify 0) or the status is
 * final. A connection that had been ready starts the backoff over.
 */
void msga__rc_retry_gone(struct msga__conn *c, int status, int notify)
{
	struct msga__retry *r = c->retry;

	if (!r || !notify || msga__backoff_final(status) ||
	    (c->sub->flags & MSGA_SUB_NO_RECONNECT) || c->sub->dead)
		return;
	c->retry = NULL;
	r->id = c->id;
	msga__retry_wait(&c->sub->rc.retries, r, c->was_ready,
			 msga__now_ns());
}
