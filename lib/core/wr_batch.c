/* SPDX-License-Identifier: MIT */
/*
 * wr_batch.c - hold send work requests back and post them as one chain
 * (wr_batch.h).
 */
#include <stdlib.h>
#include <string.h>

#include "doorbell.h"
#include "wr_batch.h"

static int wrb_alloc(struct msga__wrb *b)
{
	if (b->ent)
		return 0;
	b->ent = calloc(MSGA__DB_HOLD_MAX, sizeof(*b->ent));
	b->inl = malloc(MSGA__WRB_INL_BYTES);
	if (b->ent && b->inl)
		return 0;
	msga__wrb_free(b);
	return -1;
}

static uint32_t wr_bytes(const struct ibv_send_wr *wr)
{
	uint32_t n = 0;

	for (int i = 0; i < wr->num_sge; i++)
		n += wr->sg_list[i].length;
	return n;
}

/* An inline request's bytes, gathered into one held copy. */
static void hold_inline(struct msga__wrb *b, struct msga__wrb_ent *e,
			uint32_t bytes)
{
	char *to = b->inl + b->inl_used;

	for (int i = 0; i < e->wr.num_sge; i++) {
		memcpy(to, (const void *)(uintptr_t)e->wr.sg_list[i].addr,
		       e->wr.sg_list[i].length);
		to += e->wr.sg_list[i].length;
	}
	e->sge[0] = (struct ibv_sge){ (uintptr_t)(b->inl + b->inl_used),
				      bytes, 0 };
	e->wr.num_sge = bytes ? 1 : 0;
	b->inl_used += bytes;
}

/* Copy wr in: 0, or -1 when it does not fit (full, or no memory). */
static int wrb_add(struct msga__wrb *b, const struct ibv_send_wr *wr)
{
	struct msga__wrb_ent *e;
	uint32_t bytes = wr_bytes(wr);
	int inl = (wr->send_flags & IBV_SEND_INLINE) != 0;

	if (b->n >= MSGA__DB_HOLD_MAX || wr->num_sge > (int)MSGA__WRB_SGE ||
	    (inl && b->inl_used + bytes > MSGA__WRB_INL_BYTES) ||
	    wrb_alloc(b))
		return -1;
	e = &b->ent[b->n];
	e->wr = *wr;
	e->wr.next = NULL;
	e->wr.sg_list = e->sge;
	for (int i = 0; i < wr->num_sge; i++)
		e->sge[i] = wr->sg_list[i];
	if (inl)
		hold_inline(b, e, bytes);
	if (b->n)
		b->ent[b->n - 1].wr.next = &e->wr;
	b->n++;
	return 0;
}

int msga__wrb_ring(struct msga__wrb *b, struct ibv_qp *qp)
{
	struct ibv_send_wr *bad;
	int ret;

	if (!b->n)
		return 0;
	ret = ibv_post_send(qp, &b->ent[0].wr, &bad);
	msga__wrb_drop(b);
	return ret;
}

/* msga__wrb_post when something waits or is to wait. */
int msga__wrb_post_held(struct msga__wrb *b, struct ibv_qp *qp,
			struct ibv_send_wr *wr, int hold)
{
	struct ibv_send_wr *bad;
	int ret;

	if (wr->next) { /* (a chain goes as it is, after what waits) */
		ret = msga__wrb_ring(b, qp);
		return ret ? ret : ibv_post_send(qp, wr, &bad);
	}
	if (hold || b->n) {
		if (!wrb_add(b, wr))
			return hold ? 0 : msga__wrb_ring(b, qp);
		ret = msga__wrb_ring(b, qp); /* (full: what waits goes first) */
		if (ret)
			return ret;
		if (hold && !wrb_add(b, wr))
			return 0;
	}
	return ibv_post_send(qp, wr, &bad);
}

void msga__wrb_drop(struct msga__wrb *b)
{
	b->n = 0;
	b->inl_used = 0;
}

void msga__wrb_free(struct msga__wrb *b)
{
	free(b->ent);
	free(b->inl);
	b->ent = NULL;
	b->inl = NULL;
	msga__wrb_drop(b);
}
