/* SPDX-License-Identifier: MIT */
/*
 * context.c - msga_ctx_open/close/query: one device port, its protection
 * domain, its completion channel, and what the device can do.
 */
#include <endian.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "internal.h"
#include "stat_file.h"
#include "endpoint.h"
#include "resolver.h"

/* The part of struct msga_ctx_attr that version 0.1 callers must pass. */
#define CTX_ATTR_MIN_SIZE (offsetof(struct msga_ctx_attr, port) + 1)
#define DEV_INFO_MIN_SIZE (offsetof(struct msga_dev_info, node_guid) + 8)

MSGA_API const char *msga_transport_name(uint32_t t)
{
	switch (t) {
	case MSGA_TRANSPORT_IB:
		return "InfiniBand";
	case MSGA_TRANSPORT_ROCE:
		return "RoCE";
	case MSGA_TRANSPORT_IWARP:
		return "iWARP";
	default:
		return "unknown";
	}
}

/* The inline limit a QP created asking for want gets, or 0: refused. */
static uint32_t inline_granted(struct msga_ctx *ctx, struct ibv_cq *cq,
			       uint32_t want)
{
	struct ibv_qp_init_attr qia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = want },
	};
	struct ibv_qp *qp = ibv_create_qp(ctx->pd, &qia);

	if (!qp)
		return 0;
	ibv_destroy_qp(qp);
	return qia.cap.max_inline_data;
}

/*
 * Verbs has no device attribute for the inline limit: a provider tells it
 * only by accepting (and possibly raising) cap.max_inline_data when a QP is
 * created. Probe once here so the fast path never guesses: halve from
 * 1 KiB to a size that is granted, then narrow the gap above it to 4
 * bytes, because limits need not be powers of two (soft-iWARP's is 80,
 * and a 64-byte message's ring record is 76).
 */
static uint32_t probe_max_inline(struct msga_ctx *ctx)
{
	struct ibv_cq *cq = ibv_create_cq(ctx->verbs, 1, NULL, NULL, 0);
	uint32_t lo = 0, hi = 1024 + 4, got; /* (no more than 1 KiB is asked) */

	if (!cq)
		return 0;
	for (uint32_t want = 1024; want >= 32 && !lo; want /= 2) {
		lo = inline_granted(ctx, cq, want);
		if (!lo)
			hi = want;
	}
	/* lo is granted (0: none is), hi is refused */
	while (lo && hi - lo > 4) {
		uint32_t mid = lo + (hi - lo) / 2;

		got = inline_granted(ctx, cq, mid);
		if (got >= mid)
			lo = got;
		else
			hi = mid;
	}
	ibv_destroy_cq(cq);
	return lo;
}

static int ctx_query_device(struct msga_ctx *ctx)
{
	int ret = ibv_query_device(ctx->verbs, &ctx->dev_attr);

	if (ret)
		return msga__open_fail(-ret, "ibv_query_device(%s)", ctx->dev_name);
	ret = ibv_query_port(ctx->verbs, ctx->port, &ctx->port_attr);
	if (ret)
		return msga__open_fail(-ret, "ibv_query_port(%s, %u)",
				       ctx->dev_name, ctx->port);
	ctx->transport = msga__transport_of(ctx->verbs, &ctx->port_attr);
	return 0;
}

static int ctx_alloc_resources(struct msga_ctx *ctx)
{
	ctx->pd = ibv_alloc_pd(ctx->verbs);
	if (!ctx->pd)
		return msga__open_fail(msga__neg_errno(ENOMEM), "ibv_alloc_pd(%s)",
				       ctx->dev_name);
	if (!(ctx->flags & MSGA_CTX_NO_EVENTS)) {
		ctx->comp_channel = ibv_create_comp_channel(ctx->verbs);
		if (!ctx->comp_channel)
			return msga__open_fail(msga__neg_errno(ENOMEM),
					       "ibv_create_comp_channel(%s)",
					       ctx->dev_name);
	}
	ctx->max_inline = probe_max_inline(ctx);
	/* asked once here, so the ring offer and the READ endpoint never
	 * wait for it (zero_based.c) */
	ctx->zero_based = msga__zero_based_probe(ctx);
	return 0;
}

/*
 * msga_ctx_attr.peer_timeout_ms, which 0.2 callers' smaller struct does
 * not have (size tells): 0 or absent is the default.
 */
static int peer_timeout_of(const struct msga_ctx_attr *attr, uint32_t *ms)
{
	*ms = MSGA_PEER_TIMEOUT_DEFAULT_MS;
	if (attr->size < offsetof(struct msga_ctx_attr, peer_timeout_ms) +
			 sizeof(attr->peer_timeout_ms) ||
	    !attr->peer_timeout_ms)
		return 0;
	if (attr->peer_timeout_ms < MSGA_PEER_TIMEOUT_MIN_MS ||
	    attr->peer_timeout_ms > MSGA_PEER_TIMEOUT_MAX_MS)
		return msga__open_fail(-EINVAL,
				       "msga_ctx_open: peer_timeout_ms %u is outside %u..%u",
				       attr->peer_timeout_ms,
				       MSGA_PEER_TIMEOUT_MIN_MS,
				       MSGA_PEER_TIMEOUT_MAX_MS);
	*ms = attr->peer_timeout_ms;
	return 0;
}

/*
 * Since 0.10, reserved fields must be 0 (within the caller's size): a
 * later library may give them a meaning, and a caller's garbage there
 * must not take one on by accident.
 */
static int ctx_reserved_zero(const struct msga_ctx_attr *attr)
{
	size_t i;

	if (attr->size >= offsetof(struct msga_ctx_attr, reserved) +
			  sizeof(attr->reserved))
		for (i = 0; i < sizeof(attr->reserved); i++)
			if (attr->reserved[i])
				return 0;
	return attr->size < offsetof(struct msga_ctx_attr, reserved2) +
			    sizeof(attr->reserved2) || !attr->reserved2;
}

MSGA_API int msga_ctx_open(const struct msga_ctx_attr *attr,
			   struct msga_ctx **ctxp)
{
	static const struct msga_ctx_attr defaults = { .size = sizeof(defaults) };
	struct msga_ctx *ctx;
	uint32_t timeout_ms;
	int ret;

	msga__open_error_clear();
	if (!ctxp)
		return msga__open_fail(-EINVAL, "msga_ctx_open: ctxp is NULL");
	*ctxp = NULL;
	if (!attr)
		attr = &defaults;
	if (attr->size < CTX_ATTR_MIN_SIZE)
		return msga__open_fail(-EINVAL,
				       "msga_ctx_open: attr->size %u < %zu (set it to sizeof)",
				       attr->size, (size_t)CTX_ATTR_MIN_SIZE);
	if (attr->flags & ~(uint32_t)(MSGA_CTX_NO_EVENTS | MSGA_CTX_NO_STATS))
		return msga__open_fail(-EINVAL, "msga_ctx_open: unknown flags 0x%x",
				       attr->flags);
	if (!ctx_reserved_zero(attr))
		return msga__open_fail(-EINVAL, "msga_ctx_open: a reserved "
				       "field is not 0");
	ret = peer_timeout_of(attr, &timeout_ms);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return msga__open_fail(-ENOMEM, "msga_ctx_open");
	ctx->flags = attr->flags;
	ctx->peer_timeout_ns = (uint64_t)timeout_ms * 1000000u;
	ctx->tick_stride = 1;
	msga__list_init(&ctx->eps);
	msga__list_init(&ctx->objs);
	msga__rx_clock_init(&ctx->rx_clock, msga__clocksource_is_tsc());
	ctx->qkey = RDMA_UDP_QKEY;
	ret = msga__ctx_keys_open(ctx, attr);
	if (ret)
		goto fail;
	ret = msga__select_device(ctx, attr);
	if (ret)
		goto fail;
	snprintf(ctx->dev_name, sizeof(ctx->dev_name), "%s",
		 ibv_get_device_name(ctx->verbs->device));
	ret = ctx_query_device(ctx);
	if (ret)
		goto fail;
	ret = ctx_alloc_resources(ctx);
	if (ret)
		goto fail;
	ret = msga__resolver_open(ctx, attr);
	if (ret)
		goto fail;
	/* (best effort: a context without its file still works) */
	if (!(ctx->flags & MSGA_CTX_NO_STATS))
		msga__stat_file_open(ctx);
	*ctxp = ctx;
	return 0;
fail:
	msga_ctx_close(ctx);
	return ret;
}

MSGA_API void msga_ctx_close(struct msga_ctx *ctx)
{
	if (!ctx)
		return;
	/*
	 * From a callback, the caller up the stack still uses the context:
	 * refused (msga_ctx_close(3)), and the last error says so.
	 */
	if (ctx->busy) {
		msga__ctx_fail(ctx, -EBUSY, "msga_ctx_close: called from a "
			       "callback of this context; ignored");
		return;
	}
	/* Publishers and subscribers first: their QPs and CQs use the PD.
	 * (Without their linger: a poll now could reap what the walk over
	 * them holds.) */
	ctx->closing = 1;
	msga__ctx_endpoints_close(ctx);
	msga__resolver_close(ctx); /* (after the publishers' withdrawals) */
	msga__stat_file_close(ctx);
	if (ctx->comp_channel)
		ibv_destroy_comp_channel(ctx->comp_channel);
	if (ctx->pd)
		ibv_dealloc_pd(ctx->pd);
	if (ctx->cm_devices)
		rdma_free_devices(ctx->cm_devices);
	msga__ctx_keys_close(ctx);
	free(ctx);
}

/* len zeroed bytes, page-aligned (whole pages: aligned_alloc wants so). */
void *msga__page_alloc(size_t len)
{
	void *buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);

	if (buf)
		memset(buf, 0, len);
	return buf;
}

/*
 * A zeroed, page-aligned buffer registered for local access only (in
 * pd, or the context's), for the rings and send slots of every
 * transport. NULL with errno set on failure.
 */
void *msga__reg_buf(struct msga_ctx *ctx, size_t len, struct ibv_mr **mr)
{
	return msga__reg_buf_pd(ctx->pd, len, mr);
}

void *msga__reg_buf_pd(struct ibv_pd *pd, size_t len, struct ibv_mr **mr)
{
	void *buf = msga__page_alloc(len);

	if (!buf)
		return NULL;
	*mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!*mr) {
		free(buf);
		return NULL;
	}
	return buf;
}

MSGA_API int msga_ctx_query(const struct msga_ctx *ctx,
			    struct msga_dev_info *info)
{
	if (!ctx || !info || info->size < DEV_INFO_MIN_SIZE)
		return -EINVAL;
	memset((char *)info + sizeof(info->size), 0,
	       info->size - sizeof(info->size));
	info->transport = ctx->transport;
	snprintf(info->dev_name, sizeof(info->dev_name), "%s", ctx->dev_name);
	info->port = ctx->port;
	info->active_mtu = 128u << ctx->port_attr.active_mtu;
	info->max_inline = ctx->max_inline;
	info->max_sge = ctx->dev_attr.max_sge;
	info->max_qp_wr = ctx->dev_attr.max_qp_wr;
	info->max_cqe = ctx->dev_attr.max_cqe;
	info->max_mr_size = ctx->dev_attr.max_mr_size;
	info->node_guid = be64toh(ctx->dev_attr.node_guid);
	return 0;
}
