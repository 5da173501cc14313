/* SPDX-License-Identifier: MIT */
/*
 * mcast_pub_ops.c - the tables of the two datagram publishers (struct
 * msga__pub_ops, pubsub.h): mcast:// (mcast_pub.c: groups, fragments,
 * heartbeats) and ud://, which sends the same datagrams to each
 * subscriber that asked (ud_unicast.c). Both keep what NAKs may ask for
 * when reliable (mcast_retx.c) and share one UD endpoint (udep.c).
 */
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

static int mpub_open(struct msga_pub *pub, const struct msga__pub_args *a)
{
	int ret = mpub_reliable(pub, a);

	return ret ? ret : msga__mpub_create(pub, a->uri, a->uri_b);
}

/* A datagram publisher always has work: its pump, its heartbeats. */
static int mpub_progress(struct msga_pub *pub)
{
	msga__mpub_progress(pub);
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
	msga__mpub_retx_fini(pub);
}

const struct msga__pub_ops msga__mcast_pub_ops = {
	.check = mpub_check,
	.open = mpub_open,
	.ready = msga__mpub_ready,
	.commit = msga__mpub_commit,
	.topic_added = msga__mpub_topic_added,
	.progress = mpub_progress,
	.port = mpub_port,
	.subscribers = mpub_subscribers,
	.close = msga__mpub_close, /* each stream's END */
	.bury = mpub_bury,
	.free = mpub_free,
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
	int ret = mpub_reliable(pub, a);

	return ret ? ret : msga__upub_create(pub, a->uri);
}

static int upub_port(const struct msga_pub *pub)
{
	if (!pub->ud.ep)
		return -EINVAL;
	return ntohs(rdma_get_src_port(pub->ud.ep->cm));
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
	.topic_added = msga__mpub_topic_added,
	.progress = mpub_progress,
	.port = upub_port,
	.subscribers = upub_subscribers,
	.close = msga__mpub_close,
	.bury = mpub_bury,
	.free = mpub_free,
};
