/* SPDX-License-Identifier: MIT */
/*
 * own_addr.c - an IP address of the context's own device port: the one
 * it was opened by (local_addr, route_to), else the first of the host's
 * addresses that rdma_cm maps to this device and port. Any transport:
 * on iWARP the GID table holds no IP at all, so asking rdma_cm is the one
 * way that needs no knowledge of a provider. The iWARP probe connects to
 * it (zero_based.c); topic resolution advertises it and sends its
 * datagrams from it (resolver.c).
 */
#include <ifaddrs.h>
#include <string.h>

#include "internal.h"

/* Whether sa is an address of this context's device (a bind says). */
static int addr_is_ours(struct msga_ctx *ctx, const struct sockaddr *sa)
{
	struct rdma_cm_id *id;
	int ours;

	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return 0;
	ours = !rdma_bind_addr(id, (struct sockaddr *)sa) &&
	       id->verbs == ctx->verbs && id->port_num == ctx->port;
	rdma_destroy_id(id);
	return ours;
}

int msga__ctx_own_addr(struct msga_ctx *ctx, int family,
		       struct sockaddr_storage *ss)
{
	struct ifaddrs *all, *ifa;
	int ret = -EADDRNOTAVAIL;

	if (ctx->has_local && (family == AF_UNSPEC ||
			       ctx->local_ss.ss_family == family)) {
		*ss = ctx->local_ss;
		return 0;
	}
	if (getifaddrs(&all))
		return msga__neg_errno(ENOMEM);
	for (ifa = all; ifa && ret; ifa = ifa->ifa_next) {
		int f = ifa->ifa_addr ? ifa->ifa_addr->sa_family : AF_UNSPEC;

		if ((f != AF_INET && f != AF_INET6) ||
		    (family != AF_UNSPEC && f != family) ||
		    !addr_is_ours(ctx, ifa->ifa_addr))
			continue;
		memset(ss, 0, sizeof(*ss));
		memcpy(ss, ifa->ifa_addr, f == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		ret = 0;
	}
	freeifaddrs(all);
	return ret;
}
