/* SPDX-License-Identifier: MIT */
/*
 * device_select.c - pick the device and port a context opens: by name, by a
 * local IP address (resolved by rdma_cm, so RoCE, iWARP and IPoIB addresses
 * all work), by the route to a peer's address, or the first active port.
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

/*
 * id's device and port become the context's, and at its local address
 * (multicast binds there): the end of a choice by address or by route.
 */
static int adopt_id(struct msga_ctx *ctx, struct rdma_cm_id *id, int ndev,
		    const char *what)
{
	for (int i = 0; id->verbs && i < ndev; i++) {
		if (ctx->cm_devices[i] != id->verbs)
			continue;
		ctx->verbs = id->verbs;
		ctx->port = id->port_num;
		memcpy(&ctx->local_ss, rdma_get_local_addr(id),
		       sizeof(ctx->local_ss));
		/* the address, not the port rdma_cm gave the id */
		((struct sockaddr_in *)&ctx->local_ss)->sin_port = 0;
		ctx->has_local = 1;
		return 0;
	}
	if (!id->verbs)
		return msga__open_fail(-ENODEV, "%s is not on an RDMA device",
				       what);
	return msga__open_fail(-ENODEV, "device of %s not in rdma_get_devices()",
			       what);
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
	if (rdma_bind_addr(id, (struct sockaddr *)&ss))
		ret = msga__open_fail(msga__neg_errno(EADDRNOTAVAIL),
				      "rdma_bind_addr(%s)", addr);
	else
		ret = adopt_id(ctx, id, ndev, addr);
	rdma_destroy_id(id);
	return ret;
}

/*
 * What a failed resolve means to the caller: no route (-ENETUNREACH), a
 * neighbour that never answered within the deadline (-EHOSTUNREACH), a
 * route out of a netdev with no RDMA device (-ENODEV), or rdma-core's own.
 */
static int route_errno(int err)
{
	if (err == ETIMEDOUT)
		return -EHOSTUNREACH;
	if (err == EADDRNOTAVAIL)
		return -ENODEV;
	return err > 0 ? -err : -EHOSTUNREACH;
}

/*
 * The device and port the kernel's route to addr leaves by: rdma_cm
 * resolves it on a synchronous id (the call waits for its own event,
 * MSGA_ROUTE_RESOLVE_MS at most: the kernel ends every resolve by then).
 */
static int select_by_route(struct msga_ctx *ctx, const char *addr, int ndev)
{
	struct sockaddr_storage ss;
	struct rdma_cm_id *id;
	int ret = parse_numeric_addr(addr, &ss);

	if (ret)
		return ret;
	if (rdma_create_id(NULL, &id, NULL, RDMA_PS_TCP))
		return msga__open_fail(msga__neg_errno(ENOMEM), "rdma_create_id");
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&ss,
			      MSGA_ROUTE_RESOLVE_MS))
		ret = msga__open_fail(route_errno(errno),
				      "route_to %s: rdma_resolve_addr", addr);
	else
		ret = adopt_id(ctx, id, ndev, addr);
	if (!ret)
		ret = choose_port(ctx->verbs, ctx->port, &ctx->port);
	rdma_destroy_id(id);
	return ret;
}

/* dev_name and port must agree with what local_addr or route_to chose. */
static int check_chosen(struct msga_ctx *ctx, const struct msga_ctx_attr *attr,
			const char *by)
{
	if (attr->dev_name &&
	    strcmp(attr->dev_name, verbs_name(ctx->verbs)) != 0)
		return msga__open_fail(-EINVAL, "%s is on %s, not on %s", by,
				       verbs_name(ctx->verbs), attr->dev_name);
	if (attr->port && attr->port != ctx->port)
		return msga__open_fail(-EINVAL, "%s is on port %u, not %u", by,
				       ctx->port, attr->port);
	return 0;
}

/* msga_ctx_attr.route_to, which callers before 0.10 do not have. */
static const char *route_to_of(const struct msga_ctx_attr *attr)
{
	if (attr->size < offsetof(struct msga_ctx_attr, route_to) +
			 sizeof(attr->route_to))
		return NULL;
	return attr->route_to;
}

int msga__select_device(struct msga_ctx *ctx, const struct msga_ctx_attr *attr)
{
	const char *route_to;
	int ndev = 0, ret;

	ctx->cm_devices = rdma_get_devices(&ndev);
	if (!ctx->cm_devices || ndev == 0)
		return msga__open_fail(-ENODEV,
				       "no RDMA devices (no driver loaded? see 'rdma link')");
	route_to = route_to_of(attr);
	if (route_to && (attr->dev_name || attr->local_addr))
		return msga__open_fail(-EINVAL, "msga_ctx_open: route_to "
				       "chooses the device and address: not "
				       "with dev_name or local_addr");
	if (route_to) {
		ret = select_by_route(ctx, route_to, ndev);
		return ret ? ret : check_chosen(ctx, attr, route_to);
	}
	if (attr->local_addr) {
		ret = select_by_addr(ctx, attr->local_addr, ndev);
		return ret ? ret : check_chosen(ctx, attr, attr->local_addr);
	}
	if (attr->dev_name)
		return select_by_name(ctx, attr->dev_name, ndev, attr->port);
	return select_first_active(ctx, ndev, attr->port);
}
