/* SPDX-License-Identifier: MIT */
/*
 * perf_dev.c - which device and port an endpoint uses, what it is (IB,
 * RoCE, iWARP), its GID and MTU, and whether it can run the requested test.
 * The address decides when -d does not: rdma_cm knows which device an IP
 * address lives on or leads to, for RoCE, iWARP and IPoIB alike.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "perf_dev.h"

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return 128u << m;
}

static int is_v4_mapped(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

/*
 * perftest's "best GID" idea: prefer a RoCE v2 GID that maps the local
 * IPv4 address, then any RoCE v2 IPv4 GID, then any RoCE v2, then index 0.
 */
static int auto_gid(struct perf_ep *ep, int tbl_len, const uint8_t *ip4)
{
	int best = 0, best_score = -1;

	for (int i = 0; i < tbl_len; i++) {
		struct ibv_gid_entry e;
		int score = 0;

		if (ibv_query_gid_ex(ep->verbs, ep->port, i, &e, 0))
			continue;
		if (e.gid_type == IBV_GID_TYPE_ROCE_V2)
			score += 4;
		if (is_v4_mapped((union ibv_gid *)e.gid.raw)) {
			score += 2;
			if (ip4 && !memcmp(e.gid.raw + 12, ip4, 4))
				score += 1;
		}
		if (score > best_score) {
			best_score = score;
			best = i;
		}
	}
	return best;
}

int perf_dev_query(struct perf_ep *ep, const uint8_t *ip4)
{
	struct ibv_port_attr pa;
	struct ibv_device_attr da;

	if (ibv_query_device(ep->verbs, &da))
		return perf_fail(ep, perf_neg_errno(), "ibv_query_device(%s) failed",
			    ep->dev_name);
	if (ep->port < 1 || ep->port > da.phys_port_cnt)
		return perf_fail(ep, -EINVAL, "%s has no port %u", ep->dev_name,
			    ep->port);
	if (ibv_query_port(ep->verbs, ep->port, &pa))
		return perf_fail(ep, perf_neg_errno(), "ibv_query_port(%s, %u) failed",
			    ep->dev_name, ep->port);
	if (pa.state != IBV_PORT_ACTIVE)
		return perf_fail(ep, -ENETDOWN, "%s port %u is not active",
			    ep->dev_name, ep->port);
	ep->rd_atom = da.max_qp_rd_atom < da.max_qp_init_rd_atom ?
		      da.max_qp_rd_atom : da.max_qp_init_rd_atom;
	if (ep->rd_atom > 16)
		ep->rd_atom = 16;
	if (ep->verbs->device->transport_type == IBV_TRANSPORT_IWARP)
		ep->transport = PERF_TR_IWARP;
	else if (pa.link_layer == IBV_LINK_LAYER_ETHERNET)
		ep->transport = PERF_TR_ROCE;
	else
		ep->transport = PERF_TR_IB;
	ep->mtu = pa.active_mtu;
	ep->mtu_bytes = mtu_bytes(pa.active_mtu);
	ep->lid = pa.lid;
	if (ep->opts->gid_index >= 0 && ep->opts->gid_index >= pa.gid_tbl_len)
		return perf_fail(ep, -EINVAL, "-x %d: %s port %u has %d GIDs",
			    ep->opts->gid_index, ep->dev_name, ep->port,
			    pa.gid_tbl_len);
	ep->gid_idx = ep->opts->gid_index >= 0 ? ep->opts->gid_index :
		      ep->transport == PERF_TR_ROCE ?
		      auto_gid(ep, pa.gid_tbl_len, ip4) : 0;
	if (ep->transport != PERF_TR_IWARP &&
	    ibv_query_gid(ep->verbs, ep->port, ep->gid_idx, &ep->gid))
		return perf_fail(ep, perf_neg_errno(), "ibv_query_gid(%s, %d) failed",
			    ep->dev_name, ep->gid_idx);
	return 0;
}

static int first_active(struct perf_ep *ep)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int ret = -ENODEV;

	for (int i = 0; list && list[i] && ret; i++) {
		struct ibv_context *v = ibv_open_device(list[i]);
		struct ibv_port_attr pa;

		if (!v)
			continue;
		if (!ibv_query_port(v, 1, &pa) && pa.state == IBV_PORT_ACTIVE) {
			snprintf(ep->dev_name, sizeof(ep->dev_name), "%s",
				 ibv_get_device_name(list[i]));
			ep->port = 1;
			ret = 0;
		}
		ibv_close_device(v);
	}
	if (list)
		ibv_free_device_list(list);
	return ret ? perf_fail(ep, ret, "no RDMA device with an active port") : 0;
}

int perf_dev_open(struct perf_ep *ep)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	for (int i = 0; list && list[i] && !ep->verbs; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ep->dev_name))
			ep->verbs = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ep->verbs)
		return perf_fail(ep, -EINVAL, "no RDMA device '%s'", ep->dev_name);
	return 0;
}

int perf_numeric_addr(struct perf_ep *ep, const char *addr, uint16_t port,
		      struct sockaddr_storage *ss)
{
	if (cm_numeric_addr(addr, port, ss))
		return perf_fail(ep, -EINVAL, "'%s' is not a numeric IP address",
				 addr);
	return 0;
}

/*
 * Which device does addr live on (server: bind) or lead to (client:
 * resolve)? rdma_cm knows for RoCE, iWARP and IPoIB alike.
 */
static int device_of_addr(struct perf_ep *ep, const char *addr, int resolve)
{
	struct cm_conn cm = { 0 };
	struct rdma_cm_id *id = NULL;
	struct sockaddr_storage ss;
	int ret = perf_numeric_addr(ep, addr, 0, &ss);

	if (!ret)
		ret = cm_conn_open(&cm, ep->err, sizeof(ep->err));
	if (ret)
		goto out;
	if (rdma_create_id(cm.ch, &id, NULL, RDMA_PS_TCP)) {
		ret = perf_fail(ep, perf_neg_errno(), "rdma_create_id failed");
		goto out;
	}
	if (resolve) {
		ret = cm_conn_resolve(&cm, id, NULL, (struct sockaddr *)&ss, 0,
				      PERF_CM_TIMEOUT_MS);
		/* Not a refusal or a timeout: rdma_resolve_addr() said no. */
		if (ret && ret != -ECONNREFUSED && ret != -ETIMEDOUT)
			ret = perf_fail(ep, ret, "no RDMA device for address %s",
					addr);
	} else if (rdma_bind_addr(id, (struct sockaddr *)&ss)) {
		ret = perf_fail(ep, perf_neg_errno(), "no RDMA device for address %s", addr);
	}
	if (ret)
		goto out;
	if (!id->verbs) {
		ret = perf_fail(ep, -ENODEV, "no RDMA device for address %s", addr);
		goto out;
	}
	snprintf(ep->dev_name, sizeof(ep->dev_name), "%s",
		 ibv_get_device_name(id->verbs->device));
	ep->port = id->port_num ? id->port_num : 1;
out:
	if (id)
		rdma_destroy_id(id);
	cm_conn_close(&cm);
	return ret;
}

/* Device name and port from -d/-i, else from addr, else the first active. */
int perf_dev_choose(struct perf_ep *ep, const char *addr, int resolve)
{
	const struct perf_opts *o = ep->opts;
	int ret = 0;

	if (o->dev) {
		snprintf(ep->dev_name, sizeof(ep->dev_name), "%s", o->dev);
		ep->port = 1;
	} else if (addr) {
		ret = device_of_addr(ep, addr, resolve);
	} else {
		ret = first_active(ep);
	}
	if (o->ib_port)
		ep->port = (uint8_t)o->ib_port;
	return ret;
}

void perf_local_ip4(const char *addr, uint8_t *ip4, const uint8_t **p)
{
	*p = NULL;
	if (addr && inet_pton(AF_INET, addr, ip4) == 1)
		*p = ip4;
}

/* Device rules the option parser could not know. */
int perf_dev_check(struct perf_ep *ep)
{
	const struct perf_params *p = &ep->prm;

	if (ep->transport == PERF_TR_IWARP && p->mcast_group)
		return perf_fail(ep, -EINVAL, "-M is not supported on iWARP device %s (iWARP has no UD and no multicast)",
			    ep->dev_name);
	if (ep->transport == PERF_TR_IWARP && p->conn != PERF_RC)
		return perf_fail(ep, -EINVAL, "-c %s is not supported on iWARP device %s (iWARP has RC only)",
			    perf_conn_name(p->conn), ep->dev_name);
	if (ep->transport == PERF_TR_IWARP && p->verb == PERF_WRITE_IMM)
		return perf_fail(ep, -EINVAL, "-V write_imm is not supported on iWARP device %s",
			    ep->dev_name);
	/* -a on UD runs the sizes up to the path MTU, as perftest does. */
	if (p->conn == PERF_UD && ep->opts->all_sizes &&
	    ep->prm.max_size > ep->mtu_bytes)
		ep->prm.max_size = ep->mtu_bytes;
	if (p->conn == PERF_UD && p->max_size > ep->mtu_bytes)
		return perf_fail(ep, -EINVAL, "-s %u is larger than the UD path MTU %u of %s",
			    p->max_size, ep->mtu_bytes, ep->dev_name);
	return 0;
}
