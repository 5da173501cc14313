/* SPDX-License-Identifier: MIT */
/*
 * perf_conn.c - see perf_conn.h. The two connection paths share everything
 * but the queue pair state changes: with the TCP exchange we drive
 * INIT/RTR/RTS ourselves from the peer's QPN, PSN, LID and GID; with
 * rdma_cm the library does it (and picks the GID). Receives are always
 * posted before the peer may send, because iWARP has no RNR retry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "cm_conn.h"
#include "perf_conn.h"
#include "perf_dev.h"
#include "perf_mcast.h"
#include "perf_res.h"

#define CTRL_TIMEOUT_MS 10000

/* ---------------------------------------------------------- wire form */

static void params_to_msg(const struct perf_params *p, struct perf_msg *m)
{
	memset(m, 0, sizeof(*m));
	m->type = PERF_MSG_HELLO;
	m->v[0] = (uint64_t)p->tool | (uint64_t)p->conn << 8 |
		  (uint64_t)p->verb << 16 | (uint64_t)p->use_cm << 24 |
		  (uint64_t)p->bidir << 25 | (uint64_t)p->events << 26;
	m->v[1] = (uint32_t)p->inline_size | (uint64_t)p->tx_depth << 32;
	m->v[2] = p->rx_depth | (uint64_t)p->cq_mod << 32;
	m->v[3] = p->post_list | (uint64_t)p->max_size << 32;
	m->v[4] = p->rate;
	m->v[5] = p->sample;
	m->v[6] = 0x4d534741; /* "MSGA": not some other protocol on the port */
	m->v[7] = p->mcast_group;
}

static int msg_to_params(const struct perf_msg *m, struct perf_params *p)
{
	if (m->v[6] != 0x4d534741)
		return -EPROTO;
	p->tool = m->v[0] & 0xff;
	p->conn = (m->v[0] >> 8) & 0xff;
	p->verb = (m->v[0] >> 16) & 0xff;
	p->use_cm = (m->v[0] >> 24) & 1;
	p->bidir = (m->v[0] >> 25) & 1;
	p->events = (m->v[0] >> 26) & 1;
	p->inline_size = (int)(uint32_t)m->v[1];
	p->tx_depth = (uint32_t)(m->v[1] >> 32);
	p->rx_depth = (uint32_t)m->v[2];
	p->cq_mod = (uint32_t)(m->v[2] >> 32);
	p->post_list = (uint32_t)m->v[3];
	p->max_size = (uint32_t)(m->v[3] >> 32);
	p->rate = m->v[4];
	p->sample = (uint32_t)m->v[5];
	p->mcast_group = (uint32_t)m->v[7];
	if (p->mcast_group && (p->conn != PERF_UD ||
			       !IN_MULTICAST(ntohl(p->mcast_group))))
		return -EPROTO;
	if (p->tool > PERF_TOOL_BW || p->conn > PERF_UD ||
	    p->verb > PERF_WRITE_IMM || !p->tx_depth || p->tx_depth > 8192 ||
	    !p->rx_depth || p->rx_depth > 8192 || !p->cq_mod ||
	    p->cq_mod > p->tx_depth || !p->post_list ||
	    p->post_list > p->tx_depth || !p->max_size ||
	    p->max_size > PERF_MAX_SIZE || (p->rate && !p->sample))
		return -EPROTO;
	return 0;
}

/* ---------------------------------------------------------- TCP exchange */

static int qp_init(struct perf_ep *ep)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = ep->port,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (ep->prm.conn == PERF_UD) {
		a.qkey = PERF_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    (ep->prm.conn == PERF_RC ?
				     IBV_ACCESS_REMOTE_READ : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(ep->qp, &a, mask) ?
	       perf_fail(ep, perf_neg_errno(), "queue pair to INIT failed: %s",
		    strerror(errno)) : 0;
}

static void fill_ah(struct perf_ep *ep, struct ibv_ah_attr *ah,
		    const struct perf_msg *peer)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = (uint16_t)peer->v[2];
	ah->port_num = ep->port;
	if (ep->transport == PERF_TR_ROCE || ep->lid == 0) {
		ah->is_global = 1;
		memcpy(ah->grh.dgid.raw, peer->gid, 16);
		ah->grh.sgid_index = (uint8_t)ep->gid_idx;
		ah->grh.hop_limit = 64;
	}
}

static int qp_rtr_rts(struct perf_ep *ep, const struct perf_msg *peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE, ret;
	enum ibv_mtu pm = (enum ibv_mtu)peer->v[5];

	if (ep->prm.conn != PERF_UD) {
		a.path_mtu = pm < ep->mtu ? pm : ep->mtu;
		a.dest_qp_num = (uint32_t)peer->v[0];
		a.rq_psn = (uint32_t)peer->v[1];
		fill_ah(ep, &a.ah_attr, peer);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (ep->prm.conn == PERF_RC) {
			a.max_dest_rd_atomic = (uint8_t)ep->rd_atom;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(ep->qp, &a, mask))
		return perf_fail(ep, perf_neg_errno(), "queue pair to RTR failed: %s",
			    strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = ep->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (ep->prm.conn == PERF_RC) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = (uint8_t)ep->rd_atom;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	ret = ibv_modify_qp(ep->qp, &a, mask);
	return ret ? perf_fail(ep, -ret, "queue pair to RTS failed: %s",
			  strerror(ret)) : 0;
}

static int make_ah(struct perf_ep *ep, const struct perf_msg *peer)
{
	struct ibv_ah_attr aa;

	if (ep->prm.conn != PERF_UD)
		return 0;
	fill_ah(ep, &aa, peer);
	ep->ah = ibv_create_ah(ep->pd, &aa);
	return ep->ah ? 0 : perf_fail(ep, perf_neg_errno(), "ibv_create_ah failed: %s",
				 strerror(errno));
}

/* Both sides send their QPINFO, then read the peer's. */
static int exchange_qpinfo(struct perf_ep *ep, struct perf_msg *peer)
{
	struct perf_msg m = { .type = PERF_MSG_QPINFO };
	int ret;

	m.v[0] = ep->qp->qp_num;
	m.v[1] = ep->psn;
	m.v[2] = ep->lid;
	m.v[3] = (uintptr_t)ep->buf;
	m.v[4] = ep->mr->rkey;
	m.v[5] = ep->mtu;
	m.v[6] = ep->buf_len;
	m.v[7] = ep->credit_off;
	memcpy(m.gid, ep->gid.raw, 16);
	ret = perf_ctrl_send(&ep->ctrl, &m);
	if (!ret)
		ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_QPINFO, peer,
				       CTRL_TIMEOUT_MS);
	if (ret)
		return perf_fail(ep, ret, "queue pair exchange with the peer failed: %s",
			    strerror(-ret));
	ep->rqpn = (uint32_t)peer->v[0];
	ep->raddr = peer->v[3];
	ep->rkey = (uint32_t)peer->v[4];
	ep->rcredit = peer->v[3] + peer->v[7];
	return 0;
}

static int connect_tcp(struct perf_ep *ep)
{
	struct perf_msg peer;
	int ret = qp_init(ep);

	if (!ret)
		ret = perf_res_post_recvs(ep);
	if (!ret)
		ret = exchange_qpinfo(ep, &peer);
	if (!ret)
		ret = qp_rtr_rts(ep, &peer);
	if (!ret)
		ret = make_ah(ep, &peer);
	return ret;
}

/* ---------------------------------------------------------- rdma_cm */

static void cm_param(struct perf_ep *ep, struct rdma_conn_param *cp)
{
	memset(cp, 0, sizeof(*cp));
	cp->responder_resources = (uint8_t)ep->rd_atom;
	cp->initiator_depth = (uint8_t)ep->rd_atom;
	cp->retry_count = 7;
	cp->rnr_retry_count = 7;
}

/* Resources on the device rdma_cm chose for id. */

static void cm_client_drop(struct perf_ep *ep)
{
	perf_res_release(ep);
	rdma_destroy_id(ep->cm_id);
	ep->cm_id = NULL, ep->verbs = NULL;
}

/* 1: rdma_connect() said EADDRINUSE, worth a new id; else 0 or -errno. */
static int cm_client_try(struct perf_ep *ep, struct sockaddr_storage *ss)
{
	struct rdma_conn_param cp;
	struct rdma_cm_id *id;
	int ret;

	if (rdma_create_id(ep->cm.ch, &id, ep, RDMA_PS_TCP))
		return perf_fail(ep, perf_neg_errno(), "rdma_cm setup failed");
	ep->cm_id = id;
	ret = cm_conn_resolve(&ep->cm, id, NULL, (struct sockaddr *)ss, 1,
			      PERF_CM_TIMEOUT_MS);
	if (!ret)
		ret = perf_cm_resources(ep, id, NULL);
	if (ret)
		return ret;
	cm_param(ep, &cp);
	if (!rdma_connect(id, &cp))
		return 0;
	if (errno == EADDRINUSE)
		return 1;
	return perf_fail(ep, perf_neg_errno(), "rdma_connect failed: %s",
			 strerror(errno));
}

/*
 * iWARP connects over TCP from the port rdma_cm bound for the id, and a
 * TCP connection from an earlier run on that port to the same server port
 * may still be in TIME_WAIT: the connect fails with EADDRINUSE (seen with
 * back-to-back runs on siw). A new id gets a new port, so try again.
 */
static int cm_client(struct perf_ep *ep, const char *addr, uint16_t port)
{
	struct sockaddr_storage ss;
	int ret = perf_numeric_addr(ep, addr, port, &ss), tries = 0;

	if (!ret)
		ret = cm_conn_open(&ep->cm, ep->err, sizeof(ep->err));
	if (ret)
		return ret;
	while ((ret = cm_client_try(ep, &ss)) == 1 && ++tries < 4)
		cm_client_drop(ep);
	if (ret == 1)
		return perf_fail(ep, -EADDRINUSE, "rdma_connect failed: %s",
				 strerror(EADDRINUSE));
	return ret ? ret : cm_conn_expect(&ep->cm, RDMA_CM_EVENT_ESTABLISHED,
					  PERF_CM_TIMEOUT_MS, NULL);
}

static int cm_listen(struct perf_ep *ep, uint16_t *port)
{
	struct sockaddr_storage ss;
	const char *bind = ep->opts->bind_addr ? ep->opts->bind_addr : "0.0.0.0";
	int ret = perf_numeric_addr(ep, bind, 0, &ss);

	if (!ret)
		ret = cm_conn_open(&ep->cm, ep->err, sizeof(ep->err));
	if (!ret)
		ret = cm_conn_listen(&ep->cm, &ep->cm_listen,
				     (struct sockaddr *)&ss, ep);
	if (ret)
		return perf_fail(ep, ret, "rdma_cm listen on %s failed: %s",
				 bind, strerror(-ret));
	*port = ntohs(rdma_get_src_port(ep->cm_listen));
	return 0;
}

static int cm_accept(struct perf_ep *ep)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	uint8_t init_depth;
	int ret = cm_conn_expect(&ep->cm, RDMA_CM_EVENT_CONNECT_REQUEST,
				 PERF_CM_TIMEOUT_MS, &ev);

	if (ret)
		return ret;
	init_depth = ev->param.conn.initiator_depth;
	ret = perf_cm_resources(ep, ev->id, ep->opts->bind_addr);
	rdma_ack_cm_event(ev);
	if (ret)
		return ret;
	cm_param(ep, &cp);
	if (cp.responder_resources > init_depth)
		cp.responder_resources = init_depth;
	if (rdma_accept(ep->cm_id, &cp))
		return perf_fail(ep, perf_neg_errno(), "rdma_accept failed: %s",
				 strerror(errno));
	return cm_conn_expect(&ep->cm, RDMA_CM_EVENT_ESTABLISHED,
			      PERF_CM_TIMEOUT_MS, NULL);
}

/* ---------------------------------------------------------- sessions */

/* Open the device by name and check it can run the test. */
static int open_checked(struct perf_ep *ep, const char *addr, int resolve)
{
	uint8_t ip4[4];
	const uint8_t *p4;
	int ret;

	perf_local_ip4(resolve ? NULL : addr, ip4, &p4);
	ret = perf_dev_open(ep);
	if (!ret)
		ret = perf_dev_query(ep, p4);
	if (!ret)
		ret = perf_dev_check(ep);
	return ret;
}

static int open_tcp_mode(struct perf_ep *ep, const char *addr, int resolve)
{
	int ret = open_checked(ep, addr, resolve);

	return ret ? ret : perf_res_create(ep);
}

static void init_ep(struct perf_ep *ep, const struct perf_opts *o,
		    int is_server)
{
	memset(ep, 0, sizeof(*ep));
	ep->opts = o;
	ep->is_server = is_server;
	ep->ctrl.fd = -1;
	ep->psn = (uint32_t)(perf_mono_ns() & 0xffffff);
	ep->rqkey = PERF_QKEY;
}

static int client_hello(struct perf_ep *ep, struct perf_msg *welcome)
{
	const struct perf_opts *o = ep->opts;
	struct perf_msg m;
	int ret = perf_ctrl_connect(&ep->ctrl, o->server, o->tcp_port, 5000);

	if (ret)
		return perf_fail(ep, ret, "cannot reach a server at %s port %u: %s",
			    o->server, o->tcp_port, strerror(-ret));
	params_to_msg(&ep->prm, &m);
	ret = perf_ctrl_send(&ep->ctrl, &m);
	if (ret)
		return perf_fail(ep, ret, "sending parameters failed: %s",
			    strerror(-ret));
	ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_WELCOME, welcome,
			       CTRL_TIMEOUT_MS);
	if (ret == -EPROTO || welcome->status)
		return perf_fail(ep, -ECONNREFUSED, "server refused: %s",
			    welcome->text[0] ? welcome->text : strerror(-ret));
	return ret ? perf_fail(ep, ret, "no welcome from the server: %s",
			  strerror(-ret)) : 0;
}

int perf_client_open(struct perf_ep *ep, const struct perf_opts *o,
		     uint32_t max_size)
{
	struct perf_msg welcome;
	int ret;

	init_ep(ep, o, 0);
	perf_params_from_opts(&ep->prm, o, max_size);
	ret = perf_dev_choose(ep, o->server, 1);
	if (ret)
		return ret;
	/* Learn the transport first: it decides rdma_cm and what is legal. */
	ret = open_checked(ep, o->server, 1);
	if (ret)
		return ret;
	if (ep->transport == PERF_TR_IWARP)
		ep->prm.use_cm = 1;
	if (ep->prm.use_cm || ep->prm.mcast_group) {
		/* rdma_cm opens its own device context; keep the checked prm. */
		struct perf_params prm = ep->prm;

		perf_ep_close(ep);
		init_ep(ep, o, 0);
		ep->prm = prm;
	} else if ((ret = perf_res_create(ep))) {
		return ret;
	}
	ret = client_hello(ep, &welcome);
	if (ret)
		return ret;
	if (ep->prm.mcast_group)
		return perf_mcast_open(ep);
	if (ep->prm.use_cm) {
		struct perf_msg peer;

		ret = cm_client(ep, o->server, (uint16_t)welcome.v[0]);
		return ret ? ret : exchange_qpinfo(ep, &peer);
	}
	return connect_tcp(ep);
}

static int server_setup(struct perf_ep *ep)
{
	const struct perf_opts *o = ep->opts;
	struct perf_msg w = { .type = PERF_MSG_WELCOME };
	uint16_t cm_port = 0;
	int ret;

	/* Multicast: joined before the welcome, so before any client send. */
	if (ep->prm.mcast_group)
		ret = perf_mcast_open(ep);
	else if (ep->prm.use_cm)
		ret = cm_listen(ep, &cm_port);
	else if (!(ret = perf_dev_choose(ep, o->bind_addr, 0)))
		ret = open_tcp_mode(ep, o->bind_addr, 0);
	if (ret) {
		size_t l = strnlen(ep->err, sizeof(w.text) - 1);

		w.status = ret;
		memcpy(w.text, ep->err, l);
	}
	w.v[0] = cm_port;
	if (perf_ctrl_send(&ep->ctrl, &w) && !ret)
		ret = perf_fail(ep, -ECONNRESET, "client went away");
	if (ret || ep->prm.mcast_group)
		return ret;
	if (ep->prm.use_cm) {
		struct perf_msg peer;

		ret = cm_accept(ep);
		return ret ? ret : exchange_qpinfo(ep, &peer);
	}
	return connect_tcp(ep);
}

int perf_server_open(struct perf_ep *ep, const struct perf_opts *o,
		     struct perf_ctrl *ctrl)
{
	struct perf_msg m;
	int ret;

	init_ep(ep, o, 1);
	ep->ctrl = *ctrl;
	ctrl->fd = -1;
	ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_HELLO, &m, CTRL_TIMEOUT_MS);
	if (!ret)
		ret = msg_to_params(&m, &ep->prm);
	if (ret)
		return perf_fail(ep, ret, "bad or missing parameters from the client: %s",
			    strerror(-ret));
	return server_setup(ep);
}

void perf_ep_close(struct perf_ep *ep)
{
	perf_mcast_leave(ep);
	if (ep->cm_id && ep->qp && !ep->prm.mcast_group)
		rdma_disconnect(ep->cm_id);
	if (ep->ah)
		ibv_destroy_ah(ep->ah);
	perf_res_release(ep);
	if (ep->cm_id)
		rdma_destroy_id(ep->cm_id);
	else if (ep->verbs)
		ibv_close_device(ep->verbs);
	if (ep->cm_listen)
		rdma_destroy_id(ep->cm_listen);
	cm_conn_close(&ep->cm);
	perf_ctrl_close(&ep->ctrl);
	ep->cm_id = NULL;
	ep->verbs = NULL;
	ep->cm_listen = NULL;
	ep->ah = NULL;
}
