/* SPDX-License-Identifier: MIT */
/*
 * write_pingpong.c - a bare RDMA WRITE ping-pong (write_pingpong.h), the
 * yardstick msga_feed --vs-write measures the library against. It does
 * per round trip what perftest's ib_write_lat does, no more and no less:
 * every WRITE signalled and its completion reaped before waiting, inline
 * when the device allows, arrival seen by the last byte of the buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <endian.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "cm_conn.h"
#include "write_pingpong.h"

struct write_pp {
	struct cm_conn cm;        /* its channel is non-blocking, idle() runs */
	struct rdma_cm_id *listen_id, *id;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;             /* [0, size): the peer writes here; then ours */
	size_t size;
	struct ibv_sge sge;
	struct ibv_send_wr wr;
	uint8_t tx_mark, rx_mark; /* the last byte of the next WRITE each way */
	int inl;
	void (*idle)(void *);
	void *arg;
	char *err;
	size_t errlen;
};

/* What each side tells the other in the connect's private data. */
struct wpp_offer {
	uint64_t addr;  /* big-endian, both */
	uint32_t rkey;
	uint32_t size;
};

static int fail(struct write_pp *wp, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(wp->err, wp->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Milliseconds left until deadline (0 once past it). */
static int ms_left(double deadline)
{
	double left = (deadline - mono_s()) * 1e3;

	return left > 0 ? (int)left + 1 : 0;
}

/* Wait for an event of type want on any id; anything else is an error. */
static int expect_event(struct write_pp *wp, double deadline,
			enum rdma_cm_event_type want,
			struct rdma_cm_event **ev)
{
	return cm_conn_expect(&wp->cm, want, ms_left(deadline), ev);
}

/* The buffer, its MR and a QP on wp->id; WRITEs inline if size fits. */
static int setup_qp(struct write_pp *wp)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1,
			 .max_inline_data = (uint32_t)wp->size },
	};
	size_t len = (2 * wp->size + 4095) & ~(size_t)4095;

	wp->pd = ibv_alloc_pd(wp->id->verbs);
	wp->cq = wp->pd ? ibv_create_cq(wp->id->verbs, 16, NULL, NULL, 0) : NULL;
	wp->buf = wp->cq ? aligned_alloc(4096, len) : NULL;
	if (!wp->buf)
		return fail(wp, -ENOMEM, "no PD, CQ or buffer");
	memset(wp->buf, 0, len);
	wp->mr = ibv_reg_mr(wp->pd, wp->buf, len, IBV_ACCESS_LOCAL_WRITE |
			    IBV_ACCESS_REMOTE_WRITE);
	if (!wp->mr)
		return fail(wp, -errno, "ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = qa.recv_cq = wp->cq;
	if (rdma_create_qp(wp->id, wp->pd, &qa)) {
		/* a device without (that much) inline: plain WRITEs */
		qa.cap.max_inline_data = 0;
		if (rdma_create_qp(wp->id, wp->pd, &qa))
			return fail(wp, -errno, "rdma_create_qp: %s",
				    strerror(errno));
	}
	wp->inl = qa.cap.max_inline_data >= wp->size;
	wp->sge = (struct ibv_sge){ (uintptr_t)(wp->buf + wp->size),
				    (uint32_t)wp->size, wp->mr->lkey };
	wp->wr = (struct ibv_send_wr){
		.sg_list = &wp->sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED | (wp->inl ? IBV_SEND_INLINE : 0),
	};
	return 0;
}

/* Connection parameters that carry our offer, o, to the peer. */
static struct rdma_conn_param offer_param(const struct write_pp *wp,
					  struct wpp_offer *o)
{
	o->addr = htobe64((uintptr_t)wp->buf);
	o->rkey = htobe32(wp->mr->rkey);
	o->size = htobe32((uint32_t)wp->size);
	return (struct rdma_conn_param){ .retry_count = 7,
					 .rnr_retry_count = 7,
					 .private_data = o,
					 .private_data_len = sizeof(*o) };
}

/* Take the peer's offer from a connect request or an established event. */
static int take_offer(struct write_pp *wp, const struct rdma_cm_event *ev)
{
	struct wpp_offer o;

	if (!ev->param.conn.private_data ||
	    ev->param.conn.private_data_len < sizeof(o))
		return fail(wp, -EPROTO, "the peer sent no buffer offer");
	memcpy(&o, ev->param.conn.private_data, sizeof(o));
	if (be32toh(o.size) != wp->size)
		return fail(wp, -EPROTO, "the peer uses %u-byte messages",
			    be32toh(o.size));
	wp->wr.wr.rdma.remote_addr = be64toh(o.addr);
	wp->wr.wr.rdma.rkey = be32toh(o.rkey);
	return 0;
}

static int open_passive(struct write_pp *wp, struct sockaddr *sa,
			double deadline)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct wpp_offer mine;
	int ret;

	ret = cm_conn_listen(&wp->cm, &wp->listen_id, sa, NULL);
	if (ret)
		return ret;
	ret = expect_event(wp, deadline, RDMA_CM_EVENT_CONNECT_REQUEST, &ev);
	if (ret)
		return ret;
	wp->id = ev->id;
	ret = setup_qp(wp);
	if (!ret)
		ret = take_offer(wp, ev);
	rdma_ack_cm_event(ev);
	if (ret)
		return ret;
	cp = offer_param(wp, &mine);
	if (rdma_accept(wp->id, &cp))
		return fail(wp, -errno, "rdma_accept: %s", strerror(errno));
	ret = expect_event(wp, deadline, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (!ret)
		rdma_ack_cm_event(ev);
	return ret;
}

/* Drop a failed attempt's id and everything made on it. */
static void drop_attempt(struct write_pp *wp)
{
	if (wp->id && wp->id->qp)
		rdma_destroy_qp(wp->id);
	if (wp->mr)
		ibv_dereg_mr(wp->mr);
	if (wp->cq)
		ibv_destroy_cq(wp->cq);
	if (wp->pd)
		ibv_dealloc_pd(wp->pd);
	if (wp->id)
		rdma_destroy_id(wp->id);
	free(wp->buf);
	wp->id = NULL;
	wp->mr = NULL;
	wp->cq = NULL;
	wp->pd = NULL;
	wp->buf = NULL;
}

static int connect_once(struct write_pp *wp, struct sockaddr *sa,
			double deadline)
{
	struct rdma_conn_param cp;
	struct rdma_cm_event *ev;
	struct sockaddr_storage src;
	struct wpp_offer mine;
	int ret;

	/* from the same address, any port: both ends on the one device */
	memcpy(&src, sa, sizeof(src));
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	if (rdma_create_id(wp->cm.ch, &wp->id, NULL, RDMA_PS_TCP))
		return fail(wp, -errno, "rdma_create_id: %s", strerror(errno));
	ret = cm_conn_resolve(&wp->cm, wp->id, (struct sockaddr *)&src, sa, 1,
			      ms_left(deadline));
	if (!ret)
		ret = setup_qp(wp);
	if (ret)
		return ret;
	cp = offer_param(wp, &mine);
	if (rdma_connect(wp->id, &cp))
		return fail(wp, -errno, "rdma_connect: %s", strerror(errno));
	ret = expect_event(wp, deadline, RDMA_CM_EVENT_ESTABLISHED, &ev);
	if (ret)
		return ret;
	ret = take_offer(wp, ev);
	rdma_ack_cm_event(ev);
	return ret;
}

/* Connect, and again while the peer is not listening yet. */
static int open_active(struct write_pp *wp, struct sockaddr *sa,
		       double deadline)
{
	for (;;) {
		int ret = connect_once(wp, sa, deadline);

		if (ret != -ECONNREFUSED || mono_s() > deadline)
			return ret;
		drop_attempt(wp);
		for (double t = mono_s() + 0.02; mono_s() < t;) {
			if (wp->idle)
				wp->idle(wp->arg);
			usleep(1000);
		}
	}
}

int write_pp_open(struct write_pp **out, const char *addr, int port,
		  int active, size_t size, double timeout_s,
		  void (*idle)(void *), void *arg, char *err, size_t errlen)
{
	struct write_pp *wp = malloc(sizeof(*wp));
	double deadline = mono_s() + timeout_s;
	struct sockaddr_storage ss;
	int ret;

	if (!wp)
		return -ENOMEM;
	*wp = (struct write_pp){ .size = size, .idle = idle, .arg = arg,
				 .err = err, .errlen = errlen };
	if (size < 1 || size > 1u << 20)
		ret = fail(wp, -EINVAL, "message size %zu", size);
	else if (port < 0 || port > 65535 ||
		 cm_numeric_addr(addr, (uint16_t)port, &ss))
		ret = fail(wp, -EINVAL, "%s: not a numeric address", addr);
	else
		ret = cm_conn_open(&wp->cm, err, errlen);
	wp->cm.idle = idle;
	wp->cm.idle_arg = arg;
	if (!ret)
		ret = active ? open_active(wp, (struct sockaddr *)&ss, deadline)
			     : open_passive(wp, (struct sockaddr *)&ss,
					    deadline);
	if (ret) {
		write_pp_close(wp);
		return ret;
	}
	*out = wp;
	return 0;
}

static int post_and_reap(struct write_pp *wp)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int n;

	wp->buf[2 * wp->size - 1] = ++wp->tx_mark;
	if (ibv_post_send(wp->id->qp, &wp->wr, &bad))
		return -EIO;
	while ((n = ibv_poll_cq(wp->cq, 1, &wc)) == 0)
		;
	return n < 0 || wc.status != IBV_WC_SUCCESS ? -EIO : 0;
}

/* Spin on the last byte, as perftest does; the clock only now and then. */
static int await_peer(struct write_pp *wp, int timeout_ms)
{
	volatile uint8_t *last = wp->buf + wp->size - 1;
	uint8_t want = ++wp->rx_mark;
	double end = 0;

	for (unsigned spins = 1; *last != want; spins++) {
		if (spins % 4096)
			continue;
		if (!end)
			end = mono_s() + timeout_ms / 1e3;
		else if (mono_s() > end)
			return -ETIMEDOUT;
	}
	return 0;
}

int write_pp_ping(struct write_pp *wp, int timeout_ms)
{
	int ret = post_and_reap(wp);

	return ret ? ret : await_peer(wp, timeout_ms);
}

int write_pp_pong(struct write_pp *wp, int timeout_ms)
{
	int ret = await_peer(wp, timeout_ms);

	return ret ? ret : post_and_reap(wp);
}

int write_pp_inline(const struct write_pp *wp)
{
	return wp->inl;
}

void write_pp_close(struct write_pp *wp)
{
	if (!wp)
		return;
	if (wp->id && wp->id->qp)
		rdma_disconnect(wp->id);
	drop_attempt(wp);
	if (wp->listen_id)
		rdma_destroy_id(wp->listen_id);
	cm_conn_close(&wp->cm);
	free(wp);
}
