/* SPDX-License-Identifier: MIT */
/*
 * rc_sub.c - a subscriber's RC connection made: which data path it takes
 * (the RDMA WRITE ring or SEND/RECV), its tables (the engine's,
 * rc_sub_ep.c, and the callbacks its connection's files call it back
 * through), and the start of its handshake (rc_sub_cm.c goes on from
 * there; rc_sub_rx.c takes what arrives). subscriber.c reaches it through
 * rc_sub_ops.c; it calls nothing above lib/rc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rc.h"
#include "srq.h"

/*
 * Dead: a ring's key dies with its connection, before a held message's
 * bytes are freed, so a dead publisher cannot write under them; and a
 * QP on the SRQ starts its wait for LAST_WQE_REACHED (freed after it,
 * srq.c).
 */
static void sub_conn_gone(struct msga__conn *c, int status, int notify)
{
	msga__ring_unregister(c);
	msga__srq_conn_error(c);
	msga__rc_sub_count_gone(c, status, notify);
	msga__rc_retry_gone(c, status, notify); /* (0.10: try again?) */
}

/* Freed: its reassembly buffers, and a record no retry took. */
static void sub_conn_free(struct msga__conn *c)
{
	msga__rs_free_all(c);
	free(c->retry);
	c->retry = NULL;
}

static const struct msga__conn_owner_ops sub_owner = {
	.on_recv = msga__sub_on_recv,
	.on_gone = sub_conn_gone,
	.on_cm = msga__sub_on_cm,
	.drain = msga__rc_sub_conn_drain,
	.on_free = sub_conn_free,
};

/*
 * A connection conn_id to the publisher at ss (peer names it in events),
 * resolving its address; r its reconnection record (NULL: none), quiet
 * if a failure of it was told already (a retry). Returns 0, or
 * -errno with nothing left behind but r, still the caller's.
 */
static int conn_start(struct msga_sub *sub, const char *peer,
		      const struct sockaddr_storage *ss, uint32_t conn_id,
		      struct msga__retry *r, int quiet)
{
	struct msga__conn_geom geom = {
		MSGA__SUB_RX_DEPTH, MSGA__DATA_SLOT, MSGA__SUB_SQ_DEPTH,
		MSGA__SUB_SIG_EVERY,
	};
	struct msga__conn *c;
	int ring, ret;

	/* The ring raises no completion here: event mode needs SEND/RECV. */
	ring = !(sub->flags & MSGA_SUB_NO_RING) && !sub->ctx->evmode &&
	       sub->ctx->zero_based; /* (probed: zero_based.c) */
	if (ring)
		geom.rx_depth = MSGA__SUB_RING_RX_DEPTH;
	c = msga__conn_new(sub->ctx, &geom, &msga__rc_sub_conn_ops,
			   &sub_owner);
	if (!c)
		return -ENOMEM;
	c->sub = sub;
	c->ring = ring ? MSGA__C_RING_READER : MSGA__C_RING_NONE;
	c->eng.silent = ring; /* (msga_ctx_fd() refuses to sleep on it) */
	c->id = conn_id;
	c->quiet_fail = quiet;
	c->state = MSGA__C_RESOLVING;
	msga__list_add_tail(&sub->rc.conns, &c->own_node);
	snprintf(c->peer, sizeof(c->peer), "%s", peer);
	c->names = calloc(MSGA_PUB_TOPICS_MAX, sizeof(*c->names));
	if (!c->names) {
		ret = -ENOMEM;
		goto fail;
	}
	if (rdma_create_id(sub->ctx->cm_ch, &c->cm, &c->eng, RDMA_PS_TCP)) {
		ret = msga__neg_errno(ENOMEM);
		goto fail;
	}
	msga__ctx_cm_soon(sub->ctx);
	if (rdma_resolve_addr(c->cm, NULL, (struct sockaddr *)ss, 2000)) {
		/* No route, no such network: one documented code for all. */
		ret = msga__neg_errno(EHOSTUNREACH);
		msga__ctx_fail(sub->ctx, ret, "msga_sub_connect(rdma://%s): "
			       "rdma_resolve_addr", peer);
		if (ret != -ENOMEM)
			ret = -EHOSTUNREACH;
		goto fail;
	}
	c->retry = r;
	return 0;
fail:
	c->state = MSGA__C_DEAD;
	msga__conn_free(c);
	return ret;
}

/*
 * The RC part of msga_sub_connect(): a connection to the publisher at ss
 * (uri names it in events), with its reconnection record unless the
 * subscriber wants none. 0 with *id its conn_id, or -errno.
 */
int msga__rc_sub_connect(struct msga_sub *sub, const char *uri,
			 const struct sockaddr_storage *ss, uint32_t *id)
{
	const char *peer = uri + strlen("rdma://");
	struct msga__retry *r = NULL;
	int ret;

	if (!(sub->flags & MSGA_SUB_NO_RECONNECT)) {
		r = msga__retry_new(peer, ss);
		if (!r)
			return -ENOMEM;
	}
	ret = conn_start(sub, peer, ss, sub->next_id, r, 0);
	if (ret < 0) {
		free(r);
		return ret;
	}
	*id = sub->next_id++;
	return 0;
}

/* A try of r's connection (0.10): its failure was told already. */
int msga__rc_sub_retry(struct msga_sub *sub, struct msga__retry *r)
{
	int ret = conn_start(sub, r->peer, &r->ss, r->id, r, 1);

	sub->rc.retries_made++;
	return ret;
}
