/* SPDX-License-Identifier: MIT */
/* cq_drain.c - opening a CQ the engine can wait on (cq_drain.h). */
#include "cq_drain.h"
#include "internal.h"

struct ibv_cq *msga__cq_open(struct msga_ctx *ctx, int depth, int *armed)
{
	struct ibv_cq *cq = ibv_create_cq(ctx->verbs, depth, armed,
					  ctx->comp_channel, 0);

	*armed = 0;
	if (cq && ctx->evmode && !ibv_req_notify_cq(cq, 0))
		*armed = 1;
	return cq;
}
