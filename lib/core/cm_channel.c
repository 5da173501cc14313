/* SPDX-License-Identifier: MIT */
/*
 * cm_channel.c - the context's one rdma_cm event channel, non-blocking,
 * made on first use: every id of the context reports on it, the engine
 * reads it (engine.c) and event mode waits on it (event_fd.c); how an
 * id's peer is named in events and messages, and how a connect request
 * is refused with a reason.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>

#include "endpoint.h"
#include "auth_wire.h"

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

void msga__cm_peer_name(struct rdma_cm_id *id, char *buf, size_t n)
{
	struct sockaddr *sa = rdma_get_peer_addr(id);
	char ip[INET6_ADDRSTRLEN] = "?";
	const void *a = NULL;

	if (sa->sa_family == AF_INET)
		a = &((struct sockaddr_in *)sa)->sin_addr;
	else if (sa->sa_family == AF_INET6)
		a = &((struct sockaddr_in6 *)sa)->sin6_addr;
	if (a)
		inet_ntop(sa->sa_family, a, ip, sizeof(ip));
	snprintf(buf, n, "%s:%u", ip, ntohs(rdma_get_dst_port(id)));
}

void msga__cm_reject(struct rdma_cm_id *id, int reason, char *peer, size_t n)
{
	uint8_t rej[MSGA__AUTH_REJ_LEN];

	msga__cm_peer_name(id, peer, n); /* (the id goes below) */
	msga__auth_rej_put(rej, reason);
	rdma_reject(id, rej, sizeof(rej));
	rdma_destroy_id(id);
}
