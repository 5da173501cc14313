/* SPDX-License-Identifier: MIT */
/*
 * rc_conn.c - one RC queue pair at work: its receives, its send queue
 * (per-send-slot header buffers, selective signalling, the SEND path),
 * room for a control message, its hello and events, and its death in any
 * state. The bottom of lib/rc: it calls no other file here, and reaches
 * its owner only through c->owner (rc.h).
 */
#include <stdio.h>
#include <string.h>

#include "rc.h"

int msga__conn_post_recv(struct msga__conn *c, uint32_t idx)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(c->rx_buf + (size_t)idx * c->rx_slot),
		.length = c->rx_slot,
		.lkey = c->rx_mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = idx, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return -ibv_post_recv(c->qp, &wr, &bad);
}

char *msga__conn_ctl_payload(struct msga__conn *c)
{
	return c->ctl_buf + msga__sq_slot(c, c->tx_seq) * MSGA__CTL_SLOT +
	       (c->ring == MSGA__C_RING_WRITER ? MSGA__RING_HEAD :
						 MSGA__WIRE_HDR_LEN);
}

/* What a publisher's connection held back (msga__pub_post) goes now. */
int msga__conn_ring(struct msga__conn *c)
{
	int ret;

	if (!c->wrb.n)
		return 0;
	if (c->state == MSGA__C_DEAD) {
		msga__wrb_drop(&c->wrb); /* (its tags go with the rest) */
		return -ECONNRESET;
	}
	ret = msga__wrb_ring(&c->wrb, c->qp);
	if (!ret)
		return 0;
	msga__conn_kill(c, -ret, 1);
	return -ECONNRESET;
}

int msga__conn_post(struct msga__conn *c, struct ibv_send_wr *wr,
		    uint32_t nwr, uint32_t bytes, int32_t tag,
		    int force_signal)
{
	return msga__conn_post_inl(c, wr, nwr, bytes, tag, force_signal);
}

void msga__conn_post_failed(struct msga__conn *c, struct ibv_send_wr *last,
			    int err)
{
	c->tx_tag[msga__sq_slot(c, last->wr_id)] = MSGA__TAG_NONE;
	msga__conn_kill(c, -err, 1);
}

/*
 * A SEND of the header (and ctl_len bytes after it) from this send slot's
 * header buffer, then ext_len bytes of ext: every message of a SEND/RECV
 * connection, and a ring subscriber's control messages (its credit
 * reports among them), which go to its publisher by SEND.
 */
int msga__conn_send_recv(struct msga__conn *c, const struct msga__send_desc *m)
{
	char *hb = c->ctl_buf + msga__sq_slot(c, c->tx_seq) * MSGA__CTL_SLOT;
	struct ibv_sge sge[2] = {
		{ (uintptr_t)hb, MSGA__WIRE_HDR_LEN + m->ctl_len,
		  c->ctl_mr->lkey },
		{ (uintptr_t)m->ext, m->ext_len, m->ext_lkey },
	};
	struct ibv_send_wr wr = {
		.sg_list = sge, .num_sge = m->ext_len ? 2 : 1,
		.opcode = IBV_WR_SEND,
	};
	struct msga__wire_hdr *h = m->hdr;

	h->credit = msga__credit_on_send(&c->cr);
	if (c->ring) {
		/* A ring's reader reports freed bytes, not receives. */
		h->credit = (uint32_t)c->rr.freed;
		c->rr.reported = c->rr.freed;
	}
	msga__wire_hdr_put(hb, h);
	return msga__conn_post(c, &wr, 1, sge[0].length + m->ext_len, m->tag,
			       m->signal);
}

/*
 * A claimed message was promised room on every matching connection
 * (msga__rc_pub_ready), and a poll between claim and commit must not
 * spend it: while the publisher holds a claim, a control message also
 * leaves room for one data message after it (ring: the record may bring a
 * PAD, so two of the largest records; a SEND: two credits and a send
 * slot).
 */
int msga__conn_can_ctl(const struct msga__conn *c)
{
	int claim = c->pub && c->pub->claimed;

	if (c->ring == MSGA__C_RING_WRITER)
		return msga__ring_can_place(&c->rw, claim ?
					    3u * MSGA__RING_REC_MAX : 0) &&
		       c->tx_seq + (claim ? 4 : 2) - c->tx_done <= c->sq_depth;
	/* An open batch has its credit and send slot set aside. */
	return msga__credit_avail(&c->cr) >= 1u + c->bat_open +
					      (claim ? 2u : 0u) &&
	       c->tx_seq + c->bat_open + (claim ? 1 : 0) - c->tx_done <
		       c->sq_depth;
}

void msga__conn_hello(struct msga__conn *c, struct msga__wire_hello *h,
		      uint16_t role)
{
	*h = (struct msga__wire_hello){
		.magic = MSGA__WIRE_MAGIC, .version = MSGA__WIRE_VERSION,
		.role = role, .recv_depth = c->rx_depth,
		.slot_size = c->rx_slot,
	};
	if (c->ring == MSGA__C_RING_READER) {
		h->ring_addr = 0; /* an offset: the ring is zero-based */
		h->ring_rkey = c->ring_mr->rkey;
		h->ring_size = msga__ring_offer(c->rr.mem.size);
	} else if (c->ring) {
		h->ring_size = msga__ring_offer(c->rw.size); /* accepted */
	}
}

void msga__conn_peer_name(struct msga__conn *c)
{
	msga__cm_peer_name(c->cm, c->peer, sizeof(c->peer));
}

void msga__conn_emit(struct msga__conn *c, enum msga_event_type type,
		     int status)
{
	struct msga_event ev = {
		.size = sizeof(ev),
		.type = type, .status = status, .conn_id = c->id,
		.pub = c->pub, .sub = c->sub, .peer = c->peer,
	};
	msga_event_cb cb = c->pub ? c->pub->on_event : c->sub->on_event;
	void *user = c->pub ? c->pub->user : c->sub->user;

	if (cb)
		cb(&ev, user);
}

/*
 * Stop using a connection: the QP goes to error (flushing its work), the
 * owner hears about it once, and the memory is freed later by the reaper
 * (or at once by a destroy), because we may be inside a completion loop or
 * a user callback that still holds a message of it.
 */
void msga__conn_kill(struct msga__conn *c, int status, int notify)
{
	int was = c->state;

	if (was == MSGA__C_DEAD)
		return;
	c->state = MSGA__C_DEAD;
	c->gone_status = status;
	c->eng.silent = 0;
	msga__ctx_reap_soon(c->ctx);
	if (status < 0 && notify)
		msga__ctx_fail(c->ctx, status, "connection %u to %s closed",
			       c->id, c->peer);
	if (c->cm && c->qp)
		rdma_disconnect(c->cm); /* (the QP goes to the error state) */
	/* (the subscriber's voids its ring's key and leaves the SRQ; the
	 * publisher's counts it out) */
	c->owner->on_gone(c, status, notify);
	if (!notify)
		return;
	if (c->was_ready)
		msga__conn_emit(c, MSGA_EVENT_DISCONNECTED, status);
	else if (c->sub && !c->quiet_fail) /* (a retry's: told once) */
		msga__conn_emit(c, MSGA_EVENT_CONNECT_FAILED, status);
}
