/* SPDX-License-Identifier: MIT */
/*
 * rc_sub_cm.c - a subscriber connection's handshake: address, route, the
 * hello with our ring's offer (and a key's challenge), rdma_connect tried
 * again on a new id when iWARP's port is still in TIME_WAIT, and once
 * established the publisher's proof, SUBSCRIBE and the nudges until the
 * publisher answers. Its rdma_cm events come through the connection's
 * on_cm (rc_poll.c), its nudge from the subscriber connection's tick
 * (rc_sub_ep.c).
 */
#include <errno.h>
#include <string.h>

#include "rc.h"

/*
 * iWARP connects over TCP from the port rdma_cm bound for the cm_id, and
 * a TCP connection from that port to the same publisher may still be in
 * TIME_WAIT: rdma_connect() fails with EADDRINUSE (seen on siw when
 * subscribers reconnect quickly). rdma_cm's port space is not TCP's, so
 * it cannot avoid that port; a new id can. The new one binds its port
 * (rdma_resolve_addr) while the old still holds its own, so it gets
 * another, and the connection starts over from address resolution.
 */
#define CONNECT_TRIES 4

static int connect_again(struct msga__conn *c)
{
	struct rdma_cm_id *old = c->cm, *id;

	if (++c->connect_tries >= CONNECT_TRIES)
		return -EADDRINUSE;
	if (rdma_create_id(c->ctx->cm_ch, &id, &c->eng, RDMA_PS_TCP))
		return msga__neg_errno(ENOMEM);
	if (rdma_resolve_addr(id, NULL, rdma_get_peer_addr(old), 2000)) {
		rdma_destroy_id(id);
		return -EHOSTUNREACH;
	}
	msga__conn_drop_qp(c);
	rdma_destroy_id(old); /* (its event was acked: cm_one) */
	c->cm = id;
	msga__ctx_cm_soon(c->ctx);
	return 0;
}

static int on_route(struct msga__conn *c)
{
	struct rdma_conn_param param = { .retry_count = 7 };
	struct msga__wire_hello mine;
	uint8_t buf[MSGA__WIRE_HELLO_LEN + MSGA__AUTH_REQ_LEN];
	int ret = msga__conn_setup(c);

	if (ret)
		return msga__ctx_fail(c->ctx, ret, "subscriber: could not "
				      "connect to %s: %s", c->peer,
				      c->setup_step);
	if (c->ring && !c->ring_buf)
		ret = msga__ring_rx_setup(c);
	if (ret)
		return msga__ctx_fail(c->ctx, ret, "subscriber: could not "
				      "connect to %s: its ring", c->peer);
	msga__conn_hello(c, &mine, 2);
	msga__wire_hello_put(buf, &mine);
	param.private_data = buf;
	param.private_data_len = (uint8_t)msga__rc_auth_connect(c, buf);
	errno = 0; /* (stale: msga__conn_setup) */
	if (rdma_connect(c->cm, &param))
		return errno == EADDRINUSE ? connect_again(c) :
					     msga__neg_errno(ECONNREFUSED);
	c->state = MSGA__C_CONNECTING;
	return 0;
}

/*
 * soft-iWARP (siw, Linux 6.1) can leave the first message we send unread:
 * the passive side sends its MPA reply before it hands the TCP socket to
 * the QP, and data that lands in between stays in the socket until more
 * arrives (siw_accept(); seen in the test VM, where a publisher never
 * learned of a subscriber whose SUBSCRIBE sat there, and neither side
 * ever sent again). So a publisher answers every SUBSCRIBE at once (topic
 * names or a CREDIT), and until a subscriber hears from it, it sends a
 * CREDIT every NUDGE_NS: the next data to arrive makes siw read it all.
 * Harmless elsewhere: the answer comes long before the first nudge.
 */
#define NUDGE_NS 20000000ull

/* Established: learn the publisher's ring, then send first: SUBSCRIBE. */
static int on_established(struct msga__conn *c, const struct rdma_cm_event *ev)
{
	struct msga__wire_hdr h = { .type = MSGA__W_SUBSCRIBE };
	/* (signalled: the first send, its completion known early) */
	struct msga__send_desc m = { .hdr = &h, .tag = MSGA__TAG_NONE,
				     .signal = 1 };
	struct msga__wire_hello peer;
	int ret = msga__wire_hello_get(ev->param.conn.private_data,
				       ev->param.conn.private_data_len, &peer);

	c->established = 1;
	if (ret || peer.role != 1)
		return -EPROTO;
	ret = msga__rc_auth_established(c, ev->param.conn.private_data,
					ev->param.conn.private_data_len);
	if (ret)
		return ret;
	/* A publisher that did not echo the ring's size will SEND. */
	if (c->ring && peer.ring_size != msga__ring_offer(c->rr.mem.size))
		msga__ring_refused(c);
	c->eng.silent = c->ring != MSGA__C_RING_NONE;
	msga__credit_init(&c->cr, c->rx_depth, peer.recv_depth);
	ret = msga__rc_auth_send_proof(c);
	if (ret)
		return ret;
	h.len = (uint32_t)strlen(c->sub->pattern);
	/* (0.12: each topic's last value first; an older publisher ignores
	 * the flag, wire.h) */
	if (c->sub->flags & MSGA_SUB_LAST_VALUE)
		h.flags = MSGA__WF_WANT_LV;
	memcpy(msga__conn_ctl_payload(c), c->sub->pattern, h.len);
	m.ctl_len = h.len;
	ret = msga__conn_send(c, &m);
	if (ret)
		return ret;
	c->state = MSGA__C_READY;
	c->nudge_at = msga__now_ns() + NUDGE_NS;
	/*
	 * An authenticated publisher may refuse the pattern (REFUSE): we
	 * are connected when it answers otherwise (msga__sub_on_recv).
	 */
	if (!c->key) {
		c->was_ready = 1;
		msga__conn_emit(c, MSGA_EVENT_CONNECTED, 0);
	}
	return 0;
}

/*
 * Whether the publisher has sent us anything: any SEND counts a receive,
 * any ring record advances the reader (no cost on the data path).
 */
static int conn_heard(const struct msga__conn *c)
{
	return c->cr.rx_count || c->rr.nrec;
}

uint64_t msga__sub_nudge(struct msga__conn *c, uint64_t now)
{
	if (c->state != MSGA__C_READY || conn_heard(c))
		return UINT64_MAX;
	if (now >= c->nudge_at) {
		/* (no room: the publisher owes us credit, and will send it;
		 * try again meanwhile) */
		msga__conn_send_credit(c);
		c->nudge_at = now + NUDGE_NS;
	}
	return c->nudge_at;
}

void msga__sub_on_cm(struct msga__conn *c, const struct rdma_cm_event *ev)
{
	int ret = 0;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (c->cm->verbs != c->ctx->verbs)
			ret = -ENODEV;
		else if (rdma_resolve_route(c->cm, 2000))
			ret = msga__neg_errno(EHOSTUNREACH);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = on_route(c);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = on_established(c, ev);
		break;
	default:
		break;
	}
	if (ret)
		msga__conn_kill(c, ret, 1);
}
