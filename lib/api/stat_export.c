/* SPDX-License-Identifier: MIT */
/*
 * stat_export.c - publishers' and subscribers' counters into their
 * context's live-counters file (lib/core/stat_file.h), for msga_stat -p:
 * on the object's timer tick, at most every MSGA__STAT_INTERVAL_NS, never
 * on the message path. What goes out is what the public stats calls
 * return, the structs as they are (msga_sub_stats(3) and, one slot each,
 * msga_sub_stream_stats(3); msga_pub_stats(3) and msga_pub_conn_stats(3)):
 * a reader needs no other layout.
 */
#include <stdlib.h>
#include <string.h>

#include "pubsub.h"
#include "stat_export.h"
#include "stat_file.h"

/* Slots for one subscriber's rdma:// connections, at most. */
#define MSGA__STAT_SUB_CONNS 64u

/* Every record fits a slot (stat_file.c would show it empty). */
_Static_assert(sizeof(struct msga_sub_stats) <= MSGA__SHM_PAYLOAD_MAX &&
	       sizeof(struct msga_stream_stats) <= MSGA__SHM_PAYLOAD_MAX &&
	       sizeof(struct msga_pub_stats) <= MSGA__SHM_PAYLOAD_MAX &&
	       sizeof(struct msga_pub_conn_stats) <= MSGA__SHM_PAYLOAD_MAX &&
	       sizeof(struct msga_line_stats) <= MSGA__SHM_PAYLOAD_MAX,
	       "a stats struct outgrew a live-counters slot");

/* An object's slot, and one for each of its children (streams, conns). */
struct msga__export {
	uint64_t next_ns;
	uint32_t id;
	uint32_t nchild;
	uint32_t hi;            /* children [hi, nchild) have no slot */
	struct msga__shm_slot *slot;
	struct msga__shm_slot *child[];
};

/* A child's record into rec (a size-first struct); its name; 0 if live. */
typedef int (*child_get_fn)(const void *obj, uint32_t idx, void *rec,
			    const char **name);

static struct msga__export *export_get(struct msga_ctx *ctx,
				       struct msga__export **xp,
				       uint32_t nchild, uint64_t now)
{
	struct msga__export *x = *xp;

	if (!ctx->stat_file || (x && now < x->next_ns))
		return NULL;
	if (!x) {
		x = calloc(1, sizeof(*x) + nchild * sizeof(x->child[0]));
		if (!x)
			return NULL;
		x->nchild = nchild;
		x->id = ++ctx->stat_ids;
		*xp = x;
	}
	x->next_ns = now + MSGA__STAT_INTERVAL_NS;
	return x;
}

static void export_children(struct msga_ctx *ctx, struct msga__export *x,
			    uint32_t kind, uint32_t owner, uint32_t n,
			    const void *obj, child_get_fn get)
{
	uint64_t rec[MSGA__SHM_PAYLOAD_MAX / 8];

	uint32_t hi = 0;

	/* (up to the children there are, and those that had a slot) */
	for (uint32_t i = 0; i < x->nchild && (i < n || i < x->hi); i++) {
		const char *name = NULL;
		int live = i < n && !get(obj, i, rec, &name);

		if (!live) {
			msga__stat_slot_put(ctx, x->child[i]);
			x->child[i] = NULL;
			continue;
		}
		/* (an index taken by another object: a slot of its own) */
		if (x->child[i] && strncmp(x->child[i]->name, name ? name : "",
					   sizeof(x->child[i]->name) - 1)) {
			msga__stat_slot_put(ctx, x->child[i]);
			x->child[i] = NULL;
		}
		if (!x->child[i])
			x->child[i] = msga__stat_slot_get(ctx, kind,
							  ++ctx->stat_ids,
							  owner, name);
		if (x->child[i]) {
			uint32_t size;

			memcpy(&size, rec, sizeof(size)); /* (size-first) */
			msga__stat_slot_set(x->child[i], rec, size);
			hi = i + 1;
		}
	}
	x->hi = hi;
}

static void export_free(struct msga_ctx *ctx, struct msga__export **xp)
{
	struct msga__export *x = *xp;

	if (!x)
		return;
	for (uint32_t i = 0; i < x->nchild; i++)
		msga__stat_slot_put(ctx, x->child[i]);
	msga__stat_slot_put(ctx, x->slot);
	free(x);
	*xp = NULL;
}

static int stream_get(const void *obj, uint32_t idx, void *rec,
		      const char **name)
{
	struct msga_stream_stats *ss = rec;

	ss->size = sizeof(*ss);
	*name = ss->topic;
	return msga_sub_stream_stats(obj, idx, ss);
}

static int line_get(const void *obj, uint32_t idx, void *rec,
		    const char **name)
{
	struct msga_line_stats *ls = rec;

	memset(ls, 0, sizeof(*ls));
	ls->size = sizeof(*ls);
	*name = ls->peer;
	return msga__sub_line_at(obj, idx, ls);
}

/*
 * The subscriber's rdma:// connections, one slot each, owned by its slot
 * (owner): up to MSGA__STAT_SUB_CONNS (more are in its totals only).
 */
static void sub_conns_export(struct msga_sub *sub, uint32_t owner,
			     uint64_t now)
{
	struct msga__export *x = export_get(sub->ctx, &sub->exp_conns,
					    MSGA__STAT_SUB_CONNS, now);
	struct msga_line_stats ls = { .size = sizeof(ls) };
	uint32_t n = 0;

	while (n < MSGA__STAT_SUB_CONNS && !msga__sub_line_at(sub, n, &ls))
		n++;
	if (x)
		export_children(sub->ctx, x, MSGA__SHM_SUB_CONN, owner, n, sub,
				line_get);
}

/* Not due (the object's tick runs far more often): nothing to build. */
static int export_due(const struct msga_ctx *ctx,
		      const struct msga__export *x, uint64_t now)
{
	return ctx->stat_file && (!x || now >= x->next_ns);
}

static void sub_export_now(struct msga_sub *sub, uint64_t now)
{
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga__export *x = export_get(sub->ctx, &sub->exp,
					    MSGA_SUB_STREAMS_MAX, now);

	if (!x)
		return;
	if (!x->slot)
		x->slot = msga__stat_slot_get(sub->ctx, MSGA__SHM_SUB, x->id, 0,
					      sub->pattern);
	if (!x->slot || msga_sub_stats(sub, &st))
		return;
	msga__stat_slot_set(x->slot, &st, sizeof(st));
	export_children(sub->ctx, x, MSGA__SHM_STREAM, x->id, st.streams, sub,
			stream_get);
	sub_conns_export(sub, x->id, now);
}

void msga__sub_export(struct msga_sub *sub, uint64_t now)
{
	if (export_due(sub->ctx, sub->exp, now))
		sub_export_now(sub, now);
}

void msga__sub_export_free(struct msga_sub *sub)
{
	export_free(sub->ctx, &sub->exp_conns);
	export_free(sub->ctx, &sub->exp);
}

static int conn_get(const void *obj, uint32_t idx, void *rec,
		    const char **name)
{
	struct msga_pub_conn_stats *cs = rec;

	cs->size = sizeof(*cs);
	*name = cs->peer;
	return msga_pub_conn_stats(obj, idx, cs);
}

static void pub_export_now(struct msga_pub *pub, uint64_t now)
{
	struct msga_pub_stats st = { .size = sizeof(st) };
	struct msga__export *x = export_get(pub->ctx, &pub->exp,
					    MSGA_PUB_CONNS_MAX, now);

	if (!x)
		return;
	if (!x->slot)
		x->slot = msga__stat_slot_get(pub->ctx, MSGA__SHM_PUB, x->id, 0,
					      pub->label);
	if (!x->slot || msga_pub_stats(pub, &st))
		return;
	msga__stat_slot_set(x->slot, &st, sizeof(st));
	export_children(pub->ctx, x, MSGA__SHM_PUB_CONN, x->id, st.conn_slots,
			pub, conn_get);
}

void msga__pub_export(struct msga_pub *pub, uint64_t now)
{
	if (export_due(pub->ctx, pub->exp, now))
		pub_export_now(pub, now);
}

void msga__pub_export_free(struct msga_pub *pub)
{
	export_free(pub->ctx, &pub->exp);
}
