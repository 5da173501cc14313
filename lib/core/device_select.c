/* SPDX-License-Identifier: MIT */
/*
 * device_select.c - pick the device and port a context opens: by name, by a
 * local IP address (resolved by rdma_cm, so RoCE, iWARP and IPoIB addresses
 * all work), or the first active port.
 */
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>

#include "internal.h"

enum msga_transport msga__transport_of(struct ibv_context *verbs,
				       const struct ibv_port_attr *pattr)
{
	if (verbs->device->transport_type == IBV_TRANSPORT_IWARP)
		return MSGA_TRANSPORT_IWARP;
	if (pattr->link_layer == IBV_LINK_LAYER_ETHERNET)
		return MSGA_TRANSPORT_ROCE;
	if (pattr->link_layer == IBV_LINK_LAYER_INFINIBAND ||
	    pattr->link_layer == IBV_LINK_LAYER_UNSPECIFIED)
		return MSGA_TRANSPORT_IB;
	return MSGA_TRANSPORT_UNKNOWN;
}

static const char *verbs_name(struct ibv_context *verbs)
{
	return ibv_get_device_name(verbs->device);
}

static int port_count(struct ibv_context *verbs, int *count)
{
	struct ibv_device_attr da;
	int ret = ibv_query_device(verbs, &da);

	if (ret)
		return msga__open_fail(-ret, "ibv_query_device(%s)",
				       verbs_name(verbs));
	*count = da.phys_port_cnt;
	return 0;
}

static int port_is_active(struct ibv_context *verbs, uint8_t port)
{
	struct ibv_port_attr pa;

	if (ibv_query_port(verbs, port, &pa))
		return 0;
	return pa.state == IBV_PORT_ACTIVE;
}

/* First active port of verbs, or the requested one if it is active. */
static int choose_port(struct ibv_context *verbs, uint8_t want, uint8_t *port)
{
	int count, ret = port_count(verbs, &count);

	if (ret)
		return ret;
	if (want) {
		if (want > count)
			return msga__open_fail(-EINVAL,
					       "%s has %d port(s), port %u requested",
					       verbs_name(verbs), count, want);
		if (!port_is_active(verbs, want))
			return msga__open_fail(-ENETDOWN, "%s port %u is not active",
					       verbs_name(verbs), want);
		*port = want;
		return 0;
	}
	for (int p = 1; p <= count; p++) {
		if (port_is_active(verbs, p)) {
			*port = p;
			return 0;
		}
	}
	return msga__open_fail(-ENETDOWN, "%s has no active port",
			       verbs_name(verbs));
}

static int select_by_name(struct msga_ctx *ctx, const char *name, int ndev,
			  uint8_t want_port)
{
	for (int i = 0; i < ndev; i++) {
		if (strcmp(verbs_name(ctx->cm_devices[i]), name) == 0) {
			ctx->verbs = ctx->cm_devices[i];
			return choose_port(ctx->verbs, want_port, &ctx->port);
		}
	}
	return msga__open_fail(-ENODEV, "no RDMA device named '%s'", name);
}

static int select_first_active(struct msga_ctx *ctx, int ndev, uint8_t want_port)
{
	for (int i = 0; i < ndev; i++) {
		if (choose_port(ctx->cm_devices[i], want_port, &ctx->port) == 0) {
			ctx->verbs = ctx->cm_devices[i];
			msga__open_error_clear();
			return 0;
		}
	}
	return msga__open_fail(-ENODEV, "no RDMA device has an active port");
}

/*
 * Numeric addresses only: a name lookup could block on DNS inside a call
 * that latency-sensitive programs make at start-up, and "bad address" must
 * mean the same thing on every machine.
 */
static int parse_numeric_addr(const char *addr, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST };
	struct addrinfo *res;

	if (getaddrinfo(addr, NULL, &hints, &res))
		return msga__open_fail(-EINVAL,
				       "'%s' is not a numeric IPv4/IPv6 address",
				       addr);
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static int select_by_addr(struct msga_ctx *ctx, const char *addr, int ndev)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret = parse_numeric_addr(addr, &ss);

	if (ret)
		return ret;
	/* A synchronous id (no event channel) is enough for a bind. */
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return msga__open_fail(msga__neg_errno(ENOMEM), "rdma_create_id");
	if (rdma_bind_addr(id, (struct sockaddr *)&ss)) {
		ret = msga__open_fail(msga__neg_errno(EADDRNOTAVAIL),
				      "rdma_bind_addr(%s)", addr);
		goto out;
	}
	if (!id->verbs) {
		ret = msga__open_fail(-ENODEV, "%s is not on an RDMA device", addr);
		goto out;
	}
	ret = -ENODEV;
	for (int i = 0; i < ndev; i++) {
		if (ctx->cm_devices[i] == id->verbs) {
			ctx->verbs = id->verbs;
			ctx->port = id->port_num;
			ctx->local_ss = ss; /* multicast binds to it */
			ctx->has_local = 1;
			ret = 0;
		}
	}
	if (ret)
		msga__open_fail(ret, "device of %s not in rdma_get_devices()", addr);
out:
	rdma_destroy_id(id);
	return ret;
}

int msga__select_device(struct msga_ctx *ctx, const struct msga_ctx_attr *attr)
{
	int ndev = 0, ret;

	ctx->cm_devices = rdma_get_devices(&ndev);
	if (!ctx->cm_devices || ndev == 0)
		return msga__open_fail(-ENODEV,
				       "no RDMA devices (no driver loaded? see 'rdma link')");
	if (attr->local_addr) {
		ret = select_by_addr(ctx, attr->local_addr, ndev);
		if (ret)
			return ret;
		if (attr->dev_name &&
		    strcmp(attr->dev_name, verbs_name(ctx->verbs)) != 0)
			return msga__open_fail(-EINVAL, "%s is on %s, not on %s",
					       attr->local_addr,
					       verbs_name(ctx->verbs),
					       attr->dev_name);
		if (attr->port && attr->port != ctx->port)
			return msga__open_fail(-EINVAL, "%s is on port %u, not %u",
					       attr->local_addr, ctx->port,
					       attr->port);
		return 0;
	}
	if (attr->dev_name)
		return select_by_name(ctx, attr->dev_name, ndev, attr->port);
	return select_first_active(ctx, ndev, attr->port);
}
