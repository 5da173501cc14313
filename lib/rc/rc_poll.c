/* SPDX-License-Identifier: MIT */
/*
 * rc_poll.c - what an RC connection of either side does for the engine:
 * its completions (receives handed to its owner's on_recv, sends retired
 * through its owner's on_tag_done), the rdma_cm events every connection
 * shares (its owner's handshake's to on_cm), arming its CQ for event
 * mode, and being freed once dead and unheld. rc_pub_ep.c and
 * rc_sub_ep.c put these behind each side's ops table; the owner's
 * callbacks (rc.h) are the only way up, one indirect call per received
 * message, retired buffer or event.
 */
#include "cq_drain.h"
#include "rc.h"
#include "srq.h"

#define POLL_BATCH 32

static void conn_tx_done(struct msga__conn *c, uint64_t wr_seq)
{
	for (; c->tx_done <= wr_seq && c->tx_done < c->tx_seq; c->tx_done++) {
		int32_t tag = c->tx_tag[msga__sq_slot(c, c->tx_done)];

		c->tx_tag[msga__sq_slot(c, c->tx_done)] = MSGA__TAG_NONE;
		if (tag != MSGA__TAG_NONE)
			c->owner->on_tag_done(c, tag);
	}
}

/*
 * The receive buffer of a completion: the connection's own, or one the
 * SRQ lends it until it is re-posted (a held message must know it).
 */
static struct msga__rxslot *conn_rx_slot(struct msga__conn *c,
					 const struct ibv_wc *wc,
					 const char **buf)
{
	struct msga__rxslot *slot;

	if (!c->srq) {
		slot = &c->rx_slots[wc->wr_id];
		*buf = c->rx_buf + (size_t)slot->idx * c->rx_slot;
		return slot;
	}
	slot = msga__srq_slot(c->srq, wc->wr_id);
	slot->conn = c;
	*buf = msga__srq_buf(c->srq, slot->idx);
	return slot;
}

static int conn_rx_msg(struct msga__conn *c, struct msga__rxslot *slot,
		       const char *buf, const struct ibv_wc *wc,
		       uint64_t now_ns)
{
	struct msga__wire_hdr h;
	int ret = msga__wire_hdr_get(buf, wc->byte_len, &h);

	if (ret)
		return ret;
	if (c->ring == MSGA__C_RING_WRITER) {
		/* The ring's reader reports freed bytes, not receives. */
		ret = msga__ring_on_report(&c->rw, h.credit);
		if (ret)
			return ret;
		msga__credit_on_recv(&c->cr, c->cr.peer_freed);
	} else {
		msga__credit_on_recv(&c->cr, h.credit);
	}
	return c->owner->on_recv(c, slot, &h, buf + MSGA__WIRE_HDR_LEN,
				 wc->byte_len - MSGA__WIRE_HDR_LEN, now_ns);
}

static int conn_rx(struct msga__conn *c, const struct ibv_wc *wc,
		   uint64_t now_ns)
{
	const char *buf;
	struct msga__rxslot *slot = conn_rx_slot(c, wc, &buf);
	int ret = conn_rx_msg(c, slot, buf, wc, now_ns), posted;

	if (slot->holds.n)
		return ret;
	if (c->srq) {
		/* Shared: it goes back even when this connection dies. */
		posted = msga__srq_repost(c, slot->idx);
		return ret ? ret : posted;
	}
	if (ret || c->state == MSGA__C_DEAD)
		return ret;
	ret = msga__conn_post_recv(c, slot->idx);
	if (!ret)
		msga__credit_on_repost(&c->cr);
	return ret;
}

/*
 * An SRQ receive this connection took: counted, and back on the SRQ
 * unread when drop says it will not be read (a dead, failing or leaving
 * connection's): the SRQ outlives the connection.
 */
static void conn_srq_wc(struct msga__conn *c, const struct ibv_wc *wc,
			int drop)
{
	if (!c->srq || !msga__srq_wr(wc->wr_id))
		return;
	msga__srq_taken(c->srq);
	if (drop)
		msga__srq_repost(c, msga__srq_slot(c->srq, wc->wr_id)->idx);
}

static int conn_wc(struct msga__conn *c, const struct ibv_wc *wc,
		   uint64_t now_ns)
{
	int ret;

	conn_srq_wc(c, wc, c->state == MSGA__C_DEAD ||
			   wc->status != IBV_WC_SUCCESS);
	if (c->state == MSGA__C_DEAD)
		return 0; /* flushed work of a dead connection */
	if (wc->status != IBV_WC_SUCCESS) {
		/*
		 * A subscriber's connect that fails flushes its receives,
		 * and on siw the flush can come before the rdma_cm event
		 * that says why (a reject and its reason: -EACCES): that
		 * event reports it, and the setup deadline backs it up.
		 */
		if (c->sub && !c->established)
			return 0;
		msga__conn_kill(c, -ECONNRESET, 1);
		return 0;
	}
	if (wc->opcode & IBV_WC_RECV) {
		ret = conn_rx(c, wc, now_ns);
		if (ret)
			msga__conn_kill(c, ret, 1);
	} else {
		conn_tx_done(c, wc->wr_id);
	}
	return 0;
}

/* Drain up to budget completions; arm the CQ once it is empty
 * (event mode: msga__cq_drain). */
int msga__conn_poll(struct msga__conn *c, int budget)
{
	struct ibv_wc wc[POLL_BATCH];
	int done = 0, n, i;

	while (c->cq && done < budget && c->state != MSGA__C_DEAD) {
		int want = budget - done < POLL_BATCH ? budget - done :
							POLL_BATCH;

		n = msga__cq_drain(c->cq, &c->armed, c->ctx->evmode, wc,
				   want);
		if (n < 0) {
			msga__conn_kill(c, n, 1);
			break;
		}
		if (n == 0)
			break;
		{
			uint64_t t = msga__rx_clock_now(&c->ctx->rx_clock);

			for (i = 0; i < n; i++)
				conn_wc(c, &wc[i], t);
		}
		done += n;
	}
	if (c->state != MSGA__C_DEAD && msga__credit_need_update(&c->cr))
		msga__conn_send_credit(c);
	return done;
}

/*
 * Whether the BYE (work request bye) has left: its completion, or a
 * failure, among n completions; what else arrived is dropped as a
 * leaving connection's (sends retired, SRQ receives back, the rest unread).
 */
static int bye_done(struct msga__conn *c, const struct ibv_wc *wc, int n,
		    uint64_t bye)
{
	int done = 0;

	for (int i = 0; i < n; i++) {
		conn_srq_wc(c, &wc[i], 1);
		if (wc[i].status != IBV_WC_SUCCESS)
			done = 1; /* (the queue pair broke: no more will come) */
		else if (!(wc[i].opcode & IBV_WC_RECV))
			conn_tx_done(c, wc[i].wr_id);
		if (wc[i].status == IBV_WC_SUCCESS &&
		    !(wc[i].opcode & IBV_WC_RECV) && wc[i].wr_id == bye)
			done = 1;
	}
	return done;
}

/*
 * A clean end (0.10): a BYE, the last message, so that the peer reports
 * status 0 and not a reset, and a wait until `until` at the latest for it
 * to be acknowledged, because a disconnect before that would flush it
 * unsent. Nothing arriving meanwhile reaches the owner. A connection
 * not ready, with no room for a control message, or whose BYE is not
 * out in time ends as before: the peer sees a reset (rc.h).
 */
void msga__conn_goodbye(struct msga__conn *c, uint64_t until)
{
	struct msga__wire_hdr h = { .type = MSGA__W_BYE };
	struct ibv_wc wc[POLL_BATCH];
	uint64_t bye;
	int n = 0;

	if (c->state != MSGA__C_READY || !c->qp || !msga__conn_can_ctl(c))
		return;
	if (msga__conn_send(c, &(const struct msga__send_desc){
		    .hdr = &h, .tag = MSGA__TAG_NONE, .signal = 1 }))
		return; /* (killed, and said so) */
	bye = c->tx_seq - 1; /* (the last, signalled, of what it posted) */
	while (n >= 0 && !msga__time_reached(msga__now_ns(), until)) {
		n = msga__cq_drain(c->cq, &c->armed, c->ctx->evmode, wc,
				   POLL_BATCH);
		if (n > 0 && bye_done(c, wc, n, bye))
			return;
	}
}

static int cm_error_status(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return msga__rc_reject_status(ev);
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status == -ETIMEDOUT ? -ETIMEDOUT : -EHOSTUNREACH;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return ev->status == -ECONNREFUSED ? -ECONNREFUSED :
						     -ETIMEDOUT;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return -ECONNRESET;
	}
}

void msga__conn_on_cm(struct msga__ep *ep, const struct rdma_cm_event *ev)
{
	struct msga__conn *c = msga__conn_of(ep);

	if (c->state == MSGA__C_DEAD)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (c->owner->on_cm)
			c->owner->on_cm(c, ev);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* Deliver what already arrived before saying it is gone. */
		c->owner->drain(c, 1 << 30);
		msga__conn_kill(c, -ECONNRESET, 1);
		return;
	default:
		msga__conn_kill(c, cm_error_status(ev), 1);
		return;
	}
}

void msga__conn_arm(struct msga__ep *ep)
{
	struct msga__conn *c = msga__conn_of(ep);

	msga__cq_arm(c->cq, &c->armed);
}

/*
 * A dead connection is freed once the user holds none of its messages.
 * On an SRQ it also waits, without blocking, for its QP's
 * LAST_WQE_REACHED (srq.c) or that wait's deadline.
 */
int msga__conn_reap(struct msga__ep *ep, uint64_t now)
{
	struct msga__conn *c = msga__conn_of(ep);

	if (c->state != MSGA__C_DEAD || c->holds)
		return 0;
	if (!msga__srq_quiet(c, now)) {
		msga__ctx_reap_later(c->ctx, now, c->srq_quiet_by);
		return 0;
	}
	msga__conn_free(c);
	return 1;
}

void msga__conn_destroy(struct msga__ep *ep)
{
	msga__conn_free(msga__conn_of(ep));
}
