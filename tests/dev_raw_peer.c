/* SPDX-License-Identifier: MIT */
/* dev_raw_peer.c - the hostile peer of dev_raw_peer.h. */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "dev_raw_peer.h"
#include "wire.h"

void raw_turn(struct raw_peer *p, struct msga_ctx *ctx)
{
	struct rdma_cm_event *ev;

	if (ctx)
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	if (!p->ch || rdma_get_cm_event(p->ch, &ev))
		return;
	p->last = ev->event;
	p->established += ev->event == RDMA_CM_EVENT_ESTABLISHED;
	p->disconnected += ev->event == RDMA_CM_EVENT_DISCONNECTED;
	p->rejected += ev->event == RDMA_CM_EVENT_REJECTED;
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		p->req = ev->id;
		p->req_plen = ev->param.conn.private_data_len;
		memcpy(p->req_pdata, ev->param.conn.private_data,
		       p->req_plen);
	}
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED &&
	    ev->param.conn.private_data) {
		p->est_plen = ev->param.conn.private_data_len;
		memcpy(p->est_pdata, ev->param.conn.private_data,
		       p->est_plen);
	}
	/* a join's, or a UD id's SIDR reply: the peer's QP and address */
	if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN ||
	    (ev->event == RDMA_CM_EVENT_ESTABLISHED &&
	     ev->id->ps == RDMA_PS_UDP))
		p->ud = ev->param.ud;
	rdma_ack_cm_event(ev);
}

enum rdma_cm_event_type raw_wait(struct raw_peer *p, struct msga_ctx *ctx)
{
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	enum rdma_cm_event_type none = (enum rdma_cm_event_type)-1;

	p->last = none;
	while (p->last == none) {
		cr_assert_lt(dp_now_ms(), end, "raw peer: no cm event");
		raw_turn(p, ctx);
	}
	return p->last;
}

void raw_open(struct raw_peer *p, enum rdma_port_space ps)
{
	int fl;

	memset(p, 0, sizeof(*p));
	p->ch = rdma_create_event_channel();
	cr_assert(p->ch);
	fl = fcntl(p->ch->fd, F_GETFL);
	cr_assert_eq(fcntl(p->ch->fd, F_SETFL, fl | O_NONBLOCK), 0);
	cr_assert_eq(rdma_create_id(p->ch, &p->id, NULL, ps), 0);
}

void raw_bind(struct raw_peer *p, enum rdma_port_space ps)
{
	raw_bind_at(p, ps, devtest_env()->addr);
}

void raw_bind_at(struct raw_peer *p, enum rdma_port_space ps, const char *addr)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP,
				       .ai_flags = RAI_PASSIVE }, *ai;

	raw_open(p, ps);
	cr_assert_eq(rdma_getaddrinfo(addr, "0", &hints, &ai), 0);
	cr_assert_eq(rdma_bind_addr(p->id, ai->ai_src_addr), 0);
	rdma_freeaddrinfo(ai);
}

uint16_t raw_listen(struct raw_peer *p)
{
	raw_bind(p, RDMA_PS_TCP);
	cr_assert_eq(rdma_listen(p->id, 4), 0);
	return ntohs(rdma_get_src_port(p->id));
}

enum rdma_cm_event_type raw_connect(struct raw_peer *p, uint16_t port,
				    struct msga_ctx *ctx)
{
	struct msga__wire_hello hello = {
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = 2, .recv_depth = 4, .slot_size = 4096,
	};
	uint8_t pdata[MSGA__WIRE_HELLO_LEN];
	struct rdma_conn_param param = { .private_data = pdata,
					 .private_data_len = sizeof(pdata),
					 .retry_count = 7 };

	msga__wire_hello_put(pdata, &hello);
	return raw_connect_with(p, port, &param, ctx);
}

enum rdma_cm_event_type raw_connect_with(struct raw_peer *p, uint16_t port,
					 const struct rdma_conn_param *param,
					 struct msga_ctx *ctx)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	char service[8];

	snprintf(service, sizeof(service), "%u", port);
	cr_assert_eq(rdma_getaddrinfo(devtest_env()->addr, service, &hints,
				      &ai), 0);
	raw_open(p, RDMA_PS_TCP);
	cr_assert_eq(rdma_resolve_addr(p->id, NULL, ai->ai_dst_addr, 2000), 0);
	rdma_freeaddrinfo(ai);
	cr_assert_eq(raw_wait(p, ctx), RDMA_CM_EVENT_ADDR_RESOLVED);
	cr_assert_eq(rdma_resolve_route(p->id, 2000), 0);
	cr_assert_eq(raw_wait(p, ctx), RDMA_CM_EVENT_ROUTE_RESOLVED);
	cr_assert_eq(rdma_create_qp(p->id, NULL, &qia), 0);
	cr_assert_eq(rdma_connect(p->id, (struct rdma_conn_param *)param), 0);
	return raw_wait(p, ctx);
}

enum ibv_wc_status raw_read(struct raw_peer *p, struct ibv_mr *mr, void *buf,
			    uint64_t off, uint32_t len, uint32_t rkey,
			    struct msga_ctx *ctx)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = off, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	uint64_t end = dp_now_ms() + 10000;

	cr_assert_eq(ibv_post_send(p->id->qp, &wr, &bad), 0);
	while (ibv_poll_cq(p->id->send_cq, 1, &wc) < 1) {
		cr_assert_lt(dp_now_ms(), end, "the READ never completed");
		msga_ctx_poll(ctx, 16);
	}
	return wc.status;
}

enum rdma_cm_event_type raw_connect_pdata(struct raw_peer *p, uint16_t port,
					  struct msga_ctx *ctx,
					  const void *pdata, uint8_t plen)
{
	struct rdma_conn_param param = { .private_data = pdata,
					 .private_data_len = plen,
					 .retry_count = 7 };

	return raw_connect_with(p, port, &param, ctx);
}

/* The QP, CQ and buffer of a raw UD sender, on u->cm.id's device. */
static void raw_ud_qp(struct raw_ud *u)
{
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 8, .max_recv_wr = RAW_UD_RX,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	/* one registration for both: rx follows buf with no padding */
	_Static_assert(offsetof(struct raw_ud, rx) ==
		       offsetof(struct raw_ud, buf) + RAW_UD_SLOT,
		       "buf and rx are one registered range");
	u->cq = ibv_create_cq(u->cm.id->verbs, 32, NULL, NULL, 0);
	cr_assert(u->cq);
	qia.send_cq = qia.recv_cq = u->cq;
	cr_assert_eq(rdma_create_qp(u->cm.id, NULL, &qia), 0);
	u->mr = ibv_reg_mr(u->cm.id->pd, u->buf,
			   sizeof(u->buf) + sizeof(u->rx),
			   IBV_ACCESS_LOCAL_WRITE);
	cr_assert(u->mr);
}

void raw_ud_post_recv(struct raw_ud *u, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)u->rx[i],
			       .length = RAW_UD_SLOT, .lkey = u->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	cr_assert_lt(i, RAW_UD_RX);
	cr_assert_eq(ibv_post_recv(u->cm.id->qp, &wr, &bad), 0);
}

void raw_ud_join(struct raw_ud *u, struct msga_ctx *ctx, const char *group)
{
	raw_ud_join_from(u, ctx, group, devtest_env()->addr);
}

void raw_ud_join_from(struct raw_ud *u, struct msga_ctx *ctx,
		      const char *group, const char *from)
{
	memset(u, 0, sizeof(*u));
	raw_bind_at(&u->cm, RDMA_PS_UDP, from);
	raw_ud_qp(u);
	u->group.sin_family = AF_INET;
	cr_assert_eq(inet_pton(AF_INET, group, &u->group.sin_addr), 1);
	cr_assert_eq(rdma_join_multicast(u->cm.id,
					 (struct sockaddr *)&u->group, NULL),
		     0);
	cr_assert_eq(raw_wait(&u->cm, ctx), RDMA_CM_EVENT_MULTICAST_JOIN);
	u->ah = ibv_create_ah(u->cm.id->pd, &u->cm.ud.ah_attr);
	cr_assert(u->ah);
}

void raw_ud_resolve(struct raw_ud *u, struct msga_ctx *ctx, uint16_t port)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_UDP }, *ai;
	char ps[8];

	memset(u, 0, sizeof(*u));
	raw_open(&u->cm, RDMA_PS_UDP);
	snprintf(ps, sizeof(ps), "%u", port);
	cr_assert_eq(rdma_getaddrinfo(devtest_env()->addr, ps, &hints, &ai),
		     0);
	cr_assert_eq(rdma_resolve_addr(u->cm.id, NULL, ai->ai_dst_addr, 2000),
		     0);
	rdma_freeaddrinfo(ai);
	cr_assert_eq(raw_wait(&u->cm, ctx), RDMA_CM_EVENT_ADDR_RESOLVED);
	cr_assert_eq(rdma_resolve_route(u->cm.id, 2000), 0);
	cr_assert_eq(raw_wait(&u->cm, ctx), RDMA_CM_EVENT_ROUTE_RESOLVED);
	raw_ud_qp(u);
	for (uint32_t i = 0; i < RAW_UD_RX; i++)
		raw_ud_post_recv(u, i);
	cr_assert_eq(rdma_connect(u->cm.id, &(struct rdma_conn_param){ 0 }),
		     0);
	cr_assert_eq(raw_wait(&u->cm, ctx), RDMA_CM_EVENT_ESTABLISHED);
	u->ah = ibv_create_ah(u->cm.id->pd, &u->cm.ud.ah_attr);
	cr_assert(u->ah);
}

void raw_ud_post(struct raw_ud *u, uint32_t len, uint32_t qkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)u->buf, .length = len,
			       .lkey = u->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = RAW_UD_SEND_ID, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = u->ah, .remote_qpn = u->cm.ud.qp_num,
			   .remote_qkey = qkey },
	}, *bad;
	uint64_t end = dp_now_ms() + (uint64_t)devtest_wait_s(10) * 1000;
	struct ibv_wc wc;

	cr_assert_leq(len, sizeof(u->buf));
	cr_assert_eq(ibv_post_send(u->cm.id->qp, &wr, &bad), 0);
	for (;;) {
		cr_assert_lt(dp_now_ms(), end, "the datagram never went");
		if (ibv_poll_cq(u->cq, 1, &wc) < 1)
			continue;
		if (wc.wr_id == RAW_UD_SEND_ID)
			break;
		raw_ud_post_recv(u, (uint32_t)wc.wr_id); /* a receive: not now */
	}
	cr_assert_eq(wc.status, IBV_WC_SUCCESS, "%s",
		     ibv_wc_status_str(wc.status));
}

void raw_ud_close(struct raw_ud *u)
{
	if (u->group.sin_family)
		rdma_leave_multicast(u->cm.id, (struct sockaddr *)&u->group);
	if (u->ah)
		ibv_destroy_ah(u->ah);
	raw_free_verbs(u->cm.id, u->mr, u->cq);
	raw_close(&u->cm);
}

void raw_pub_post_recv(struct raw_pub *rp, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rp->buf[i],
			       .length = RAW_PUB_SLOT, .lkey = rp->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 },
			   *bad;

	cr_assert_eq(ibv_post_recv(rp->cm.req->qp, &wr, &bad), 0);
}

void raw_pub_accept(struct raw_pub *rp, struct msga_ctx *ctx)
{
	struct msga__wire_hello mine = {
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = 1, .recv_depth = RAW_PUB_RECVS,
		.slot_size = RAW_PUB_SLOT,
	};
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = RAW_PUB_SENDS,
			 .max_recv_wr = RAW_PUB_RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uint8_t pdata[MSGA__WIRE_HELLO_LEN];
	struct rdma_conn_param param = { .private_data = pdata,
					 .private_data_len = sizeof(pdata),
					 .retry_count = 7 };

	while (raw_wait(&rp->cm, ctx) != RDMA_CM_EVENT_CONNECT_REQUEST)
		;
	cr_assert_eq(msga__wire_hello_get(rp->cm.req_pdata, rp->cm.req_plen,
					  &rp->hello), 0);
	cr_assert_eq(rp->hello.role, 2);
	mine.ring_size = rp->hello.ring_size; /* accepted, as it is offered */
	rp->cq = ibv_create_cq(rp->cm.req->verbs,
			       2 * (RAW_PUB_RECVS + RAW_PUB_SENDS), NULL, NULL,
			       0);
	cr_assert(rp->cq);
	qia.send_cq = qia.recv_cq = rp->cq;
	cr_assert_eq(rdma_create_qp(rp->cm.req, NULL, &qia), 0);
	rp->mr = ibv_reg_mr(rp->cm.req->pd, rp->buf, sizeof(rp->buf),
			    IBV_ACCESS_LOCAL_WRITE);
	cr_assert(rp->mr);
	for (uint32_t i = 0; i < RAW_PUB_RECVS; i++)
		raw_pub_post_recv(rp, i);
	msga__wire_hello_put(pdata, &mine);
	cr_assert_eq(rdma_accept(rp->cm.req, &param), 0);
}

void raw_pub_close(struct raw_pub *rp)
{
	raw_free_verbs(rp->cm.req, rp->mr, rp->cq);
	raw_close(&rp->cm);
}

void raw_free_verbs(struct rdma_cm_id *id, struct ibv_mr *mr,
		    struct ibv_cq *cq)
{
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
}

static void destroy_id(struct rdma_cm_id *id)
{
	if (!id)
		return;
	if (id->qp)
		rdma_destroy_qp(id);
	rdma_destroy_id(id);
}

void raw_close(struct raw_peer *p)
{
	destroy_id(p->req);
	destroy_id(p->id);
	if (p->ch)
		rdma_destroy_event_channel(p->ch);
	memset(p, 0, sizeof(*p));
}
