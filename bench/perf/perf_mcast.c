/* SPDX-License-Identifier: MIT */
/* perf_mcast.c - see perf_mcast.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "cm_conn.h"
#include "perf_mcast.h"
#include "perf_res.h"

static void sin_of(struct sockaddr_in *sin, uint32_t addr)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = addr;
}

/* This side's groups, network order; 0 = none. */
static void groups(const struct perf_ep *ep, uint32_t *send, uint32_t *recv)
{
	uint32_t g = ep->prm.mcast_group;
	uint32_t reply = htonl(ntohl(g) + 1);
	int lat = ep->prm.tool == PERF_TOOL_LAT;

	*send = ep->is_server ? (lat ? reply : 0) : g;
	*recv = ep->is_server ? g : (lat ? reply : 0);
}

/*
 * The address to bind to: the server's --bind, else the local end of the
 * control connection, which the route to the peer put on the device.
 */
static int local_addr(struct perf_ep *ep, struct sockaddr_in *src)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (ep->is_server && ep->opts->bind_addr &&
	    inet_pton(AF_INET, ep->opts->bind_addr, &src->sin_addr) == 1) {
		sin_of(src, src->sin_addr.s_addr);
		return 0;
	}
	if (getsockname(ep->ctrl.fd, (struct sockaddr *)&ss, &sl))
		return perf_fail(ep, perf_neg_errno(), "getsockname failed: %s",
				 strerror(errno));
	if (ss.ss_family == AF_INET) {
		sin_of(src, ((struct sockaddr_in *)&ss)->sin_addr.s_addr);
		return 0;
	}
	if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;
		uint32_t v4;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(&v4, a->s6_addr + 12, 4);
			sin_of(src, v4);
			return 0;
		}
	}
	return perf_fail(ep, -EINVAL, "-M needs an IPv4 control connection (the multicast source address)");
}

/* Join group: full member to receive, send-only member to send. */
static int join(struct perf_ep *ep, uint32_t group, int send)
{
	struct sockaddr_in sin;
	struct rdma_cm_join_mc_attr_ex attr = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS |
			     RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = send ? RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER :
			      RDMA_MC_JOIN_FLAG_FULLMEMBER,
		.addr = (struct sockaddr *)&sin,
	};
	struct rdma_cm_event *ev;
	char name[INET_ADDRSTRLEN];
	int ret;

	sin_of(&sin, group);
	inet_ntop(AF_INET, &group, name, sizeof(name));
	if (rdma_join_multicast_ex(ep->cm_id, &attr, NULL))
		return perf_fail(ep, perf_neg_errno(), "joining multicast group %s failed: %s",
				 name, strerror(errno));
	*(send ? &ep->mc_send : &ep->mc_recv) = group;
	ret = cm_conn_expect(&ep->cm, RDMA_CM_EVENT_MULTICAST_JOIN,
			     PERF_CM_TIMEOUT_MS, &ev);
	if (ret) {
		char why[sizeof(ep->err)];

		memcpy(why, ep->err, sizeof(why));
		return perf_fail(ep, ret, "multicast group %s: %s", name, why);
	}
	if (send) {
		ep->ah = ibv_create_ah(ep->pd, &ev->param.ud.ah_attr);
		ep->rqpn = PERF_MC_QPN;
		ep->rqkey = ev->param.ud.qkey;
	}
	rdma_ack_cm_event(ev);
	if (send && !ep->ah)
		return perf_fail(ep, perf_neg_errno(), "address handle for group %s failed: %s",
				 name, strerror(errno));
	return 0;
}

static int bind_device(struct perf_ep *ep, uint32_t first_group)
{
	struct sockaddr_in src, dst;
	char local[INET_ADDRSTRLEN];
	int ret = local_addr(ep, &src);

	if (ret)
		return ret;
	sin_of(&dst, first_group);
	ret = cm_conn_open(&ep->cm, ep->err, sizeof(ep->err));
	if (ret)
		return ret;
	if (rdma_create_id(ep->cm.ch, &ep->cm_id, ep, RDMA_PS_UDP))
		return perf_fail(ep, perf_neg_errno(), "rdma_cm setup failed");
	inet_ntop(AF_INET, &src.sin_addr, local, sizeof(local));
	ret = cm_conn_resolve(&ep->cm, ep->cm_id, (struct sockaddr *)&src,
			      (struct sockaddr *)&dst, 0, PERF_CM_TIMEOUT_MS);
	return ret ? ret : perf_cm_resources(ep, ep->cm_id, local);
}

int perf_mcast_open(struct perf_ep *ep)
{
	uint32_t send, recv;
	int ret;

	groups(ep, &send, &recv);
	ret = bind_device(ep, send ? send : recv);
	/* Receives are posted (perf_cm_resources) before we join. */
	if (!ret && recv)
		ret = join(ep, recv, 0);
	if (!ret && send)
		ret = join(ep, send, 1);
	return ret;
}

static void leave(struct perf_ep *ep, uint32_t *group)
{
	struct sockaddr_in sin;

	if (!*group || !ep->cm_id)
		return;
	sin_of(&sin, *group);
	rdma_leave_multicast(ep->cm_id, (struct sockaddr *)&sin);
	*group = 0;
}

void perf_mcast_leave(struct perf_ep *ep)
{
	leave(ep, &ep->mc_send);
	leave(ep, &ep->mc_recv);
}
