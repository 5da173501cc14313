/* SPDX-License-Identifier: MIT */
/*
 * cm_channel.c - the context's one rdma_cm event channel, non-blocking,
 * made on first use: every id of the context reports on it, the engine
 * reads it (engine.c) and event mode waits on it (event_fd.c).
 */
#include <fcntl.h>

#include "endpoint.h"

int msga__ctx_cm_channel(struct msga_ctx *ctx)
{
	int fl;

	if (ctx->cm_ch)
		return 0;
	ctx->cm_ch = rdma_create_event_channel();
	if (!ctx->cm_ch)
		return msga__ctx_fail(ctx, msga__neg_errno(ENOMEM),
				      "rdma_create_event_channel");
	/* msga_ctx_poll() must never block on the connection manager. */
	fl = fcntl(ctx->cm_ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ctx->cm_ch->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return msga__ctx_fail(ctx, msga__neg_errno(EIO),
				      "O_NONBLOCK on the rdma_cm channel");
	return 0;
}
