/* SPDX-License-Identifier: MIT */
/*
 * ud_join.c - a UD endpoint's multicast groups: joining (send-only where
 * the fabric allows), the rejoin with backoff after the fabric drops a
 * group (udep_policy.h), the address handles a rejoin replaces while
 * sends queued before may still use them (parked), and the events an
 * endpoint raises to its owner's user.
 *
 * Apart from udep.c so that the queue pair's life (udep.c) and the
 * groups' reads on their own; below it: nothing here calls udep.c. A
 * failure that must end the endpoint is returned (msga__ud_join_event),
 * and udep.c ends it. The owner hears of its groups through its
 * callbacks (struct msga__udep_cb), never by name.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "mcast.h"
#include "pubsub.h"
#include "udep_policy.h"

static int join(struct msga__mgroup *g, int sendonly)
{
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
			     RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = sendonly ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER :
					 RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = (struct sockaddr *)&g->addr,
	};

	/* The context is the group's index + 1: ep->groups may move. */
	void *tag = (void *)(uintptr_t)(g - g->ep->groups + 1);

	g->sendonly = sendonly;
	g->state = MSGA__G_JOINING;
	msga__ctx_cm_soon(g->ep->ctx);
	if (rdma_join_multicast_ex(g->ep->cm, &attr, tag))
		return msga__neg_errno(EINVAL);
	g->joined = 1;
	return 0;
}

static void group_name(struct msga__mgroup *g)
{
	const void *a = g->addr.ss_family == AF_INET6 ?
		(const void *)&((struct sockaddr_in6 *)&g->addr)->sin6_addr :
		(const void *)&((struct sockaddr_in *)&g->addr)->sin_addr;

	inet_ntop(g->addr.ss_family, a, g->name, sizeof(g->name));
}

/*
 * Start joining group addr. Send-only where the device supports it (a
 * publisher need not receive), else as a full member.
 */
int msga__udep_join(struct msga__udep *ep, const struct sockaddr_storage *addr,
		    int sendonly, struct msga__mgroup **gp)
{
	struct msga__mgroup *g, *grown;
	int ret;

	grown = realloc(ep->groups, (ep->ngroups + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ep->groups = grown;
	g = &ep->groups[ep->ngroups];
	memset(g, 0, sizeof(*g));
	g->ep = ep;
	g->addr = *addr;
	group_name(g);
	ret = join(g, sendonly);
	if (ret && sendonly)
		ret = join(g, 0);
	if (ret) {
		g->state = MSGA__G_FAILED;
		g->status = ret;
		return msga__ctx_fail(ep->ctx, ret, "rdma_join_multicast(%s)",
				      g->name);
	}
	ep->ngroups++;
	*gp = g;
	return 0;
}

void msga__udep_emit(struct msga__udep *ep, const struct msga__mgroup *g,
		     enum msga_event_type type, int status)
{
	struct msga_event ev = {
		.size = sizeof(ev),
		.type = type, .status = status, .conn_id = ep->id,
		.pub = ep->pub, .sub = ep->sub, .peer = g ? g->name : "",
	};
	msga_event_cb cb = ep->pub ? ep->pub->on_event :
				     ep->sub ? ep->sub->on_event : NULL;
	void *user = ep->pub ? ep->pub->user : ep->sub ? ep->sub->user : NULL;

	if (ep->pub && g)
		ev.conn_id = (uint32_t)(g - ep->groups);
	if (cb)
		cb(&ev, user);
}

/*
 * A rejoined group's old AH: sends queued before may still use it, so it
 * is freed when they are done (unpark), or now when none is queued. The
 * list only grows while no send completes and groups keep rejoining; past
 * MSGA__PARKED_AH_MAX the endpoint is stuck, and -ENOBUFS ends it.
 */
static int park_ah(struct msga__udep *ep, struct ibv_ah *ah)
{
	struct msga__parked_ah *grown;

	if (ep->tx_done == ep->tx_seq) {
		ibv_destroy_ah(ah);
		return 0;
	}
	if (ep->nparked >= MSGA__PARKED_AH_MAX)
		return -ENOBUFS;
	grown = realloc(ep->parked, (ep->nparked + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	ep->parked = grown;
	ep->parked[ep->nparked++] = (struct msga__parked_ah){
		.ah = ah, .until_seq = ep->tx_seq };
	return 0;
}

/* Free the replaced group AHs no queued send can use any more. */
void msga__ud_unpark(struct msga__udep *ep, int all)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < ep->nparked; i++) {
		struct msga__parked_ah *p = &ep->parked[i];

		if (all || ep->tx_done >= p->until_seq)
			ibv_destroy_ah(p->ah);
		else
			ep->parked[kept++] = *p;
	}
	ep->nparked = kept;
}

/* 0, or -errno when the endpoint must end (its AHs could not be parked). */
static int on_join(struct msga__mgroup *g, const struct rdma_cm_event *ev)
{
	const struct rdma_ud_param *ud = &ev->param.ud;
	struct msga__udep *ep = g->ep;
	int ret;

	if (ep->pub) { /* a sender: an address handle for the group */
		struct ibv_ah_attr ah_attr = ud->ah_attr;
		struct ibv_ah *old = g->ah;

		g->ah = ibv_create_ah(ep->ctx->pd, &ah_attr);
		if (!g->ah) {
			g->ah = old;
			g->state = MSGA__G_FAILED;
			g->status = msga__neg_errno(ENOMEM);
			ep->cb->on_group(g, g->status);
			return 0;
		}
		ret = old ? park_ah(ep, old) : 0;
		if (ret) {
			ibv_destroy_ah(g->ah); /* nothing used it yet */
			g->ah = old;
			return ret;
		}
		g->qpn = ud->qp_num;
		g->qkey = msga__ud_remote_qkey(ep, ud->qkey);
	}
	g->join_attr = ud->ah_attr;
	g->state = MSGA__G_READY;
	g->was_ready = 1;
	g->rejoin_attempt = 0;
	ep->cb->on_group(g, 0);
	return 0;
}

/* Schedule the next rejoin, or give the group up for good. */
static void rejoin_later(struct msga__mgroup *g, int status)
{
	uint64_t wait = msga__rejoin_delay_ns(g->rejoin_attempt);

	if (wait == UINT64_MAX) {
		g->state = MSGA__G_FAILED;
		g->status = status;
		/* (a membership ends there) */
		g->ep->cb->on_group(g, status);
		return;
	}
	g->state = MSGA__G_REJOINING;
	g->status = status;
	g->rejoin_at_ns = msga__now_ns() + wait;
	g->rejoin_attempt++;
}

/*
 * The fabric dropped a group we had joined (an SM restart, a client
 * reregister, a port that went away): say so, leave what is left of the
 * join, and join again with backoff (udep_policy.h).
 */
static void group_lost(struct msga__mgroup *g, int status)
{
	struct msga__udep *ep = g->ep;

	if (g->joined && !rdma_leave_multicast(ep->cm,
					       (struct sockaddr *)&g->addr))
		g->joined = 0;
	if (g->state == MSGA__G_READY)
		msga__udep_emit(ep, g, MSGA_EVENT_DISCONNECTED, status);
	rejoin_later(g, status);
}

/* Rejoins due; when the next is (UINT64_MAX: none), for the timer. */
uint64_t msga__ud_rejoin_tick(struct msga__udep *ep, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; i < ep->ngroups && !msga__udep_dead(ep); i++) {
		struct msga__mgroup *g = &ep->groups[i];
		int ret;

		if (g->state != MSGA__G_REJOINING)
			continue;
		if (!msga__time_reached(now_ns, g->rejoin_at_ns)) {
			next = g->rejoin_at_ns < next ? g->rejoin_at_ns : next;
			continue;
		}
		ret = join(g, g->sendonly);
		if (ret)
			rejoin_later(g, ret);
		if (g->state == MSGA__G_REJOINING && g->rejoin_at_ns < next)
			next = g->rejoin_at_ns;
	}
	return next;
}

static void on_join_error(struct msga__mgroup *g,
			  const struct rdma_cm_event *ev)
{
	struct msga__udep *ep = g->ep;

	/* A send-only join the fabric refused: try as a full member. */
	if (!g->was_ready && g->sendonly && !rdma_leave_multicast(ep->cm,
						 (struct sockaddr *)&g->addr)) {
		g->joined = 0;
		if (!join(g, 0))
			return;
	}
	g->status = ev->status < 0 ? ev->status : -ENETUNREACH;
	if (g->was_ready) {
		group_lost(g, g->status);
		return;
	}
	g->state = MSGA__G_FAILED;
	ep->cb->on_group(g, g->status);
}

/*
 * RDMA_CM_EVENT_MULTICAST_JOIN or _ERROR of a live endpoint. 0, or -errno
 * when the endpoint must end.
 */
int msga__ud_join_event(struct msga__udep *ep, const struct rdma_cm_event *ev)
{
	uintptr_t idx = (uintptr_t)ev->param.ud.private_data;
	struct msga__mgroup *g = idx && idx <= ep->ngroups ?
				 &ep->groups[idx - 1] : NULL;

	if (!g)
		return 0;
	if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN)
		return on_join(g, ev);
	on_join_error(g, ev);
	return 0;
}

/* Leave every group (the endpoint dies). */
void msga__ud_leave_all(struct msga__udep *ep)
{
	for (uint32_t i = 0; i < ep->ngroups; i++) {
		struct msga__mgroup *g = &ep->groups[i];

		if (g->joined && ep->cm)
			rdma_leave_multicast(ep->cm, (struct sockaddr *)&g->addr);
		g->joined = 0;
	}
}

/* The groups' address handles, the parked ones and the table. */
void msga__ud_groups_free(struct msga__udep *ep)
{
	for (uint32_t i = 0; i < ep->ngroups; i++)
		if (ep->groups[i].ah)
			ibv_destroy_ah(ep->groups[i].ah);
	free(ep->groups);
}
