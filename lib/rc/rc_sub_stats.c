/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_stats.c - an rdma:// subscriber's counters (0.10): each
 * connection's, counted where it delivers (rc_sub_rx.c), read here for
 * msga_sub_line_stats and the live counters; and the subscriber's, the
 * live connections' summed with what the gone ones left
 * (msga__rc_sub_count_gone, from rc_sub.c's on_gone), for msga_sub_stats.
 * Read at the caller's pace, never on the message path.
 */
#include <stdio.h>

#include "rc.h"

/* Connected now: its publisher answered, and it has not gone. */
static int conn_up(const struct msga__conn *c)
{
	return c->was_ready && c->state != MSGA__C_DEAD;
}

static void line_fill(const struct msga__conn *c, struct msga_line_stats *st)
{
	st->conn_id = c->id;
	st->msgs = c->rx_msgs;
	st->bytes = c->rx_bytes;
	st->topics = c->rx_topics;
	st->up = conn_up(c);
	snprintf(st->peer, sizeof(st->peer), "%s", c->peer);
}

int msga__rc_sub_line(const struct msga_sub *sub, uint32_t conn_id,
		      struct msga_line_stats *st)
{
	struct msga__list *pos;

	msga__list_for_each(pos, &sub->rc.conns) {
		const struct msga__conn *c = msga__own_conn(pos);

		if (c->id == conn_id && c->state != MSGA__C_DEAD) {
			line_fill(c, st);
			return 0;
		}
	}
	return -ENOENT;
}

/* (list order: a connection made again goes to the end) */
int msga__rc_sub_line_at(const struct msga_sub *sub, uint32_t idx,
			 struct msga_line_stats *st)
{
	struct msga__list *pos;
	uint32_t i = 0;

	msga__list_for_each(pos, &sub->rc.conns) {
		const struct msga__conn *c = msga__own_conn(pos);

		if (c->state == MSGA__C_DEAD || i++ != idx)
			continue;
		line_fill(c, st);
		return 0;
	}
	return -ENOENT;
}

void msga__rc_sub_stats(const struct msga_sub *sub, struct msga_sub_stats *st)
{
	const struct msga__sub_rc *rc = &sub->rc;
	struct msga__list *pos;

	st->rc_msgs = rc->gone_msgs;
	st->rc_bytes = rc->gone_bytes;
	st->rc_conns = 0;
	msga__list_for_each(pos, &rc->conns) {
		const struct msga__conn *c = msga__own_conn(pos);

		if (c->state == MSGA__C_DEAD)
			continue; /* (counted in gone_*) */
		st->rc_msgs += c->rx_msgs;
		st->rc_bytes += c->rx_bytes;
		st->rc_conns += conn_up(c);
		st->unmatched += conn_up(c) && !c->rx_topics;
	}
	st->rc_gone_clean = rc->gone_clean;
	st->rc_gone_reset = rc->gone_reset;
	st->rc_gone_timeout = rc->gone_timeout;
	st->rc_gone_other = rc->gone_other;
	st->rc_retries = rc->retries_made;
}

/*
 * c is gone: what it delivered stays in the totals; a DISCONNECTED event
 * (it had connected, and the subscriber did not end it) counts by status.
 */
void msga__rc_sub_count_gone(struct msga__conn *c, int status, int notify)
{
	struct msga__sub_rc *rc = &c->sub->rc;

	rc->gone_msgs += c->rx_msgs;
	rc->gone_bytes += c->rx_bytes;
	c->rx_msgs = c->rx_bytes = 0; /* (killed once, but to be sure) */
	if (!c->was_ready || !notify)
		return;
	if (!status)
		rc->gone_clean++;
	else if (status == -ECONNRESET)
		rc->gone_reset++;
	else if (status == -ETIMEDOUT)
		rc->gone_timeout++;
	else
		rc->gone_other++;
}
