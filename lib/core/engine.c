/* SPDX-License-Identifier: MIT */
/*
 * poll.c - the progress engine behind msga_ctx_poll(): connection manager
 * events from a non-blocking channel, completions of every connection's
 * CQ, deferred credit updates and publisher work, and freeing connections
 * that died. Single-threaded by contract, so no locks.
 */
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcast.h"
#include "pubsub.h"
#include "srq.h"

#define POLL_BATCH 32
#define CM_PDATA_MAX 256
/*
 * Reading the rdma_cm channel is a system call even when it is empty, so
 * busy-polling looks at it at most every CM_PERIOD_NS while a connection
 * is being set up (for CM_BUSY_NS after we start an exchange or get any
 * event), and every CM_IDLE_PERIOD_NS otherwise; event mode always looks
 * (its wake-up may be for the channel). At 100 us, a ping-pong in the
 * test VM paid that system call in every third round trip on each side;
 * at 2 ms a vanished peer is still reported within milliseconds.
 */
#define CM_PERIOD_NS 100000u
#define CM_IDLE_PERIOD_NS 2000000u
#define CM_BUSY_NS 100000000u

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

/* "SCHEME://IPv4:PORT" or "SCHEME://[IPv6]:PORT", numeric only. */
int msga__parse_uri_as(const char *uri, const char *scheme,
		       struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	size_t slen = scheme ? strlen(scheme) : 0;
	char host[128];
	const char *h, *colon;
	struct addrinfo *ai;
	size_t hl;

	if (!uri || !slen || strncmp(uri, scheme, slen))
		return -EINVAL;
	h = uri + slen;
	colon = strrchr(h, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") !=
	    strlen(colon + 1) || strlen(colon + 1) > 5 ||
	    atoi(colon + 1) > 65535)
		return -EINVAL;
	hl = (size_t)(colon - h);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

static void conn_tx_done(struct msga__conn *c, uint64_t wr_seq)
{
	for (; c->tx_done <= wr_seq && c->tx_done < c->tx_seq; c->tx_done++) {
		int32_t tag = c->tx_tag[msga__sq_slot(c, c->tx_done)];

		c->tx_tag[msga__sq_slot(c, c->tx_done)] = MSGA__TAG_NONE;
		if (c->pub && tag != MSGA__TAG_NONE)
			msga__pub_tag_done(c, tag);
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
	if (c->ring && c->pub) {
		/* The ring's reader reports freed bytes, not receives. */
		ret = msga__ring_on_report(&c->rw, h.credit);
		if (ret)
			return ret;
		msga__credit_on_recv(&c->cr, c->cr.peer_freed);
	} else {
		msga__credit_on_recv(&c->cr, h.credit);
	}
	if (c->pub)
		ret = msga__pub_on_recv(c, &h, buf + MSGA__WIRE_HDR_LEN);
	else
		ret = msga__sub_on_recv(c, slot, &h, buf + MSGA__WIRE_HDR_LEN,
					wc->byte_len - MSGA__WIRE_HDR_LEN,
					now_ns);
	return ret;
}

static int conn_rx(struct msga__conn *c, const struct ibv_wc *wc,
		   uint64_t now_ns)
{
	const char *buf;
	struct msga__rxslot *slot = conn_rx_slot(c, wc, &buf);
	int ret = conn_rx_msg(c, slot, buf, wc, now_ns), posted;

	if (slot->held)
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

static int conn_wc(struct msga__conn *c, const struct ibv_wc *wc,
		   uint64_t now_ns)
{
	int ret;

	/* An SRQ receive that a dead or failing connection took goes back
	 * unread: the SRQ outlives the connection. */
	if (c->srq && msga__srq_wr(wc->wr_id)) {
		msga__srq_taken(c->srq);
		if (c->state == MSGA__C_DEAD || wc->status != IBV_WC_SUCCESS)
			msga__srq_repost(c, msga__srq_slot(c->srq,
							   wc->wr_id)->idx);
	}
	if (c->state == MSGA__C_DEAD)
		return 0; /* flushed work of a dead connection */
	if (wc->status != IBV_WC_SUCCESS) {
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

/*
 * A ring subscriber's data is in memory; its CQ only has our own sends'
 * completions (a failure also comes as a CM event), so it is looked at
 * every 16th msga_ctx_poll(), or when the send queue fills.
 */
static int ring_cq_due(const struct msga__conn *c)
{
	return !(c->ctx->polls & 15) ||
	       c->tx_seq - c->tx_done >= c->sq_depth / 2;
}

/* Drain up to budget completions; arm the CQ once it is empty. */
int msga__conn_poll(struct msga__conn *c, int budget)
{
	struct ibv_wc wc[POLL_BATCH];
	int done = 0, n, i;

	if (c->ring && c->sub && c->state == MSGA__C_READY) {
		done = msga__ring_poll(c, budget);
		if (!ring_cq_due(c))
			return done;
	}
	while (c->cq && done < budget && c->state != MSGA__C_DEAD) {
		int want = budget - done < POLL_BATCH ? budget - done :
							POLL_BATCH;

		n = ibv_poll_cq(c->cq, want, wc);
		if (n < 0) {
			msga__conn_kill(c, -EIO, 1);
			break;
		}
		if (n == 0) {
			if (!c->ctx->evmode || c->armed)
				break;
			/* Arm, then look again: a completion may have slipped
			 * in before the arm and would raise no event. */
			if (ibv_req_notify_cq(c->cq, 0))
				break;
			c->armed = 1;
			continue;
		}
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

static int cm_error_status(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
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

static void cm_conn_event(struct msga__conn *c, const struct rdma_cm_event *ev)
{
	if (c->state == MSGA__C_DEAD)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
	case RDMA_CM_EVENT_ADDR_RESOLVED:
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (c->sub)
			msga__sub_on_cm(c, ev);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* Deliver what already arrived before saying it is gone. */
		msga__conn_poll(c, 1 << 30);
		msga__conn_kill(c, -ECONNRESET, 1);
		return;
	default:
		msga__conn_kill(c, cm_error_status(ev), 1);
		return;
	}
}

/*
 * Copy what we need and ack before acting: rdma_destroy_id() waits for
 * the ack of every event it handed out, and acting may destroy the id.
 */
static int cm_one(struct msga_ctx *ctx)
{
	struct rdma_cm_event *ev, copy;
	char pdata[CM_PDATA_MAX];
	size_t plen = 0;
	int *kind;

	if (rdma_get_cm_event(ctx->cm_ch, &ev))
		return 0;
	msga__ctx_cm_soon(ctx); /* more of this exchange is likely */
	copy = *ev;
	if ((ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	     ev->event == RDMA_CM_EVENT_ESTABLISHED) &&
	    ev->param.conn.private_data) {
		plen = ev->param.conn.private_data_len;
		if (plen > sizeof(pdata))
			plen = sizeof(pdata);
		memcpy(pdata, ev->param.conn.private_data, plen);
	}
	if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN &&
	    ev->event != RDMA_CM_EVENT_MULTICAST_ERROR) {
		/* (a join's private_data is our own context pointer) */
		copy.param.conn.private_data = plen ? pdata : NULL;
		copy.param.conn.private_data_len = (uint8_t)plen;
	}
	rdma_ack_cm_event(ev);

	kind = copy.id->context;
	if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
	    *(int *)copy.listen_id->context == MSGA__K_UD) {
		msga__upub_on_request(copy.listen_id->context, copy.id);
	} else if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST &&
		   ((struct msga_pub *)copy.listen_id->context)->dead) {
		rdma_reject(copy.id, NULL, 0);
		rdma_destroy_id(copy.id);
	} else if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		msga__pub_on_connect_request(copy.listen_id->context, copy.id,
					     copy.param.conn.private_data,
					     plen);
	} else if (kind && *kind == MSGA__K_CONN) {
		cm_conn_event((struct msga__conn *)kind, &copy);
	} else if (kind && *kind == MSGA__K_UD) {
		msga__udep_on_cm((struct msga__udep *)kind, &copy);
	}
	return 1;
}

/*
 * Ticks. Busy-pollers call msga_ctx_poll() millions of times a second, and
 * a clock read costs ~20 ns on a TSC clocksource but over 1 us on a VM's
 * emulated HPET (measured in the test VM), on both sides of every message.
 * So the clock is read, rdma_cm looked at and the timers run only on one
 * poll in tick_stride. The stride adapts to keep ticks about TICK_NS
 * apart: a tight busy loop ticks on one poll in TICK_STRIDE_MAX, and a
 * program that polls now and then ticks on every poll, so that its
 * keepalives leave on time and connection events reach it within a poll
 * (with a fixed stride, one poll every 100 ms would tick every 6.4 s).
 * Event mode polls only when woken, and ticks every time.
 */
#define TICK_NS 1000000u
#define TICK_STRIDE_MAX 64u

/* The clock if this poll ticks, else 0. */
static uint64_t tick_now(struct msga_ctx *ctx)
{
	uint64_t now, gap;

	if (ctx->evmode)
		return msga__now_ns();
	if (ctx->tick_countdown > 1) {
		ctx->tick_countdown--;
		return 0;
	}
	now = msga__now_ns();
	gap = now - ctx->tick_ns;
	if (gap > TICK_NS && ctx->tick_stride > 1)
		ctx->tick_stride /= 2;
	else if (gap < TICK_NS / 4 && ctx->tick_stride < TICK_STRIDE_MAX)
		ctx->tick_stride *= 2;
	ctx->tick_countdown = ctx->tick_stride;
	ctx->tick_ns = now;
	return now;
}

/*
 * Whether to read the rdma_cm channel on this poll: now is the tick's
 * clock (0: not a tick). A busy-poller sees connection events within about
 * CM_PERIOD_NS of a tick.
 */
static int cm_due(struct msga_ctx *ctx, uint64_t now)
{
	if (ctx->evmode)
		return 1;
	if (!now || now < ctx->cm_next_ns)
		return 0;
	ctx->cm_next_ns = now + (now < ctx->cm_busy_until ? CM_PERIOD_NS :
							   CM_IDLE_PERIOD_NS);
	return 1;
}

void msga__ctx_cm_soon(struct msga_ctx *ctx)
{
	ctx->cm_busy_until = msga__now_ns() + CM_BUSY_NS;
	ctx->cm_next_ns = 0;
}

/*
 * Free what died, once no caller up the stack can hold it: publishers and
 * subscribers destroyed from a callback (with their connections), then
 * dead connections and memberships that hold no message of the user's.
 */
/*
 * A dead connection on an SRQ waits, without blocking, for its QP's
 * LAST_WQE_REACHED (srq.c): the next leave looks again, and in event mode
 * the timer wakes the program for the deadline.
 */
static void srq_wait(struct msga_ctx *ctx, struct msga__conn *c, uint64_t now)
{
	ctx->reap = 1;
	if (ctx->evmode)
		msga__ctx_timer_arm(ctx, now, c->srq_quiet_by - now);
}

void msga__ctx_reap(struct msga_ctx *ctx)
{
	struct msga__list *pos, *tmp;
	uint64_t now = msga__now_ns();

	ctx->reap = 0;
	msga__list_for_each_safe(pos, tmp, &ctx->subs) {
		struct msga_sub *sub =
			msga__container_of(pos, struct msga_sub, ctx_node);

		if (sub->dead)
			msga__sub_free(sub);
	}
	msga__list_for_each_safe(pos, tmp, &ctx->pubs) {
		struct msga_pub *pub =
			msga__container_of(pos, struct msga_pub, ctx_node);

		if (pub->dead)
			msga__pub_free(pub);
	}
	msga__list_for_each_safe(pos, tmp, &ctx->conns) {
		struct msga__conn *c =
			msga__container_of(pos, struct msga__conn, ctx_node);

		if (c->state != MSGA__C_DEAD || c->holds)
			continue;
		if (msga__srq_quiet(c, now))
			msga__conn_free(c);
		else
			srq_wait(ctx, c, now);
	}
	/* A publisher's endpoint lives as long as the publisher. */
	msga__list_for_each_safe(pos, tmp, &ctx->udeps) {
		struct msga__udep *ep =
			msga__container_of(pos, struct msga__udep, ctx_node);

		if (ep->dead && ep->sub && !ep->holds)
			msga__udep_free(ep);
	}
}

/*
 * Destroyed from a callback: stop everything that could call the user
 * again (connections, memberships, the endpoint), stay on every list so
 * that walks in progress go on safely, and wait for msga__ctx_reap().
 */
static void kill_own_conns(struct msga_ctx *ctx, struct msga__list *conns)
{
	struct msga__list *pos, *tmp;

	ctx->reap = 1;
	msga__list_for_each_safe(pos, tmp, conns)
		msga__conn_kill(msga__container_of(pos, struct msga__conn,
						   own_node), 0, 0);
}

void msga__ctx_bury_sub(struct msga_sub *sub)
{
	struct msga__list *pos, *tmp;

	sub->dead = 1;
	kill_own_conns(sub->ctx, &sub->conns);
	msga__list_for_each_safe(pos, tmp, &sub->ctx->udeps) {
		struct msga__udep *ep =
			msga__container_of(pos, struct msga__udep, ctx_node);

		if (ep->sub == sub)
			msga__udep_kill(ep, 0, 0);
	}
}

void msga__ctx_bury_pub(struct msga_pub *pub)
{
	pub->dead = 1;
	kill_own_conns(pub->ctx, &pub->conns);
	if (pub->mc)
		msga__udep_kill(pub->mc, 0, 0);
}

static void drain_comp_channel(struct msga_ctx *ctx)
{
	struct ibv_cq *cq;
	void *cq_ctx;

	while (!ibv_get_cq_event(ctx->comp_channel, &cq, &cq_ctx)) {
		ibv_ack_cq_events(cq, 1);
		*(int *)cq_ctx = 0; /* every CQ's context is its armed flag */
	}
}

/* Multicast and unicast UD endpoints: their completions. */
static int poll_udeps(struct msga_ctx *ctx, int budget, uint64_t *now)
{
	struct msga__list *pos, *tmp;
	int done = 0;

	msga__list_for_each_safe(pos, tmp, &ctx->udeps)
		done += msga__udep_poll(msga__container_of(pos,
				struct msga__udep, ctx_node), budget, now);
	return done;
}

/*
 * The timers, on a tick: RC liveness (keepalives, a silent peer), unicast
 * UD's (the same, and a SUBSCRIBE resend) and reassembly's. In event mode
 * every poll ticks, and the context's timer is armed for the earliest one
 * due: a program asleep on msga_ctx_fd() must still see a vanished peer,
 * since nothing arrives to wake it, and should wake for nothing else (an
 * idle connection: once per keepalive interval, a second by default).
 */
static void run_timers(struct msga_ctx *ctx, uint64_t now)
{
	struct msga__list *pos, *tmp;
	uint64_t next = UINT64_MAX, due;

	msga__list_for_each_safe(pos, tmp, &ctx->conns) {
		struct msga__conn *c = msga__container_of(pos,
					struct msga__conn, ctx_node);

		due = msga__conn_tick(c, now); /* (any state: pubsub.h) */
		next = due < next ? due : next;
	}
	msga__list_for_each_safe(pos, tmp, &ctx->udeps) {
		struct msga__udep *ep = msga__container_of(pos,
					struct msga__udep, ctx_node);

		due = msga__udep_tick(ep, now); /* (unicast, rejoins) */
		next = due < next ? due : next;
	}
	msga__list_for_each_safe(pos, tmp, &ctx->subs) {
		struct msga_sub *sub = msga__container_of(pos, struct msga_sub,
							  ctx_node);

		if (!sub->dead && sub->reasm.slots &&
		    msga__reasm_pending(&sub->reasm)) {
			due = msga__msub_expire(sub, now);
			next = due < next ? due : next;
		}
	}
	if (ctx->evmode && next != UINT64_MAX)
		msga__ctx_timer_arm(ctx, now, (int64_t)(next - now) > 0 ?
						      next - now : 0);
}

/*
 * A publisher's CQ holds only its own sends' completions and its
 * subscriber's control messages (SUBSCRIBE, credit reports): no data
 * waits there. A busy-poller looks at it every 4th poll, which takes the
 * provider's CQ lock off three of four idle loops of a latency-bound
 * program, and at once when its send queue fills or in event mode.
 */
static int pub_cq_can_wait(const struct msga_ctx *ctx,
			   const struct msga__conn *c)
{
	return !ctx->evmode && (ctx->polls & 3) &&
	       c->state == MSGA__C_READY &&
	       c->tx_seq - c->tx_done < c->sq_depth / 4;
}

/*
 * A ring subscriber's connection, polled in memory: when its next record
 * has not arrived and its CQ is not due (msga__conn_poll's rule), an idle
 * poll looks at the ring here, inline, instead of calling down to
 * msga__ring_peek: in a ping-pong the time to notice a record is half an
 * idle poll, and a call chain per connection was most of one.
 */
static int ring_can_wait(const struct msga__conn *c)
{
	return c->ring && c->state == MSGA__C_READY && !ring_cq_due(c) &&
	       !c->ring_report_due && !msga__ring_may_read(&c->rr);
}

int msga__parse_uri(const char *uri, struct sockaddr_storage *ss)
{
	return msga__parse_uri_as(uri, "rdma://", ss);
}

static int ctx_poll(struct msga_ctx *ctx, int budget)
{
	struct msga__list *pos, *tmp;
	uint64_t now = tick_now(ctx);
	int tick = now != 0, done = 0;

	/* (first: what runs below may want it again) */
	if (ctx->evmode)
		msga__ctx_timer_ack(ctx);
	if (ctx->cm_ch && cm_due(ctx, now)) {
		while (cm_one(ctx))
			done++;
		/* (a busy-poller looks as often as at rdma_cm) */
		if (ctx->unheard)
			msga__sub_nudge(ctx);
	}
	if (ctx->evmode)
		drain_comp_channel(ctx);
	ctx->polls++;
	msga__list_for_each_safe(pos, tmp, &ctx->conns) {
		struct msga__conn *c = msga__container_of(pos,
					struct msga__conn, ctx_node);

		if (c->pub ? pub_cq_can_wait(ctx, c) : ring_can_wait(c))
			continue;
		done += msga__conn_poll(c, budget);
	}
	if (!msga__list_empty(&ctx->udeps))
		done += poll_udeps(ctx, budget, &now);
	if (tick)
		run_timers(ctx, now);
	if (ctx->pub_work) {
		ctx->pub_work = 0;
		msga__list_for_each_safe(pos, tmp, &ctx->pubs) {
			struct msga_pub *pub = msga__container_of(pos,
						struct msga_pub, ctx_node);

			if (!pub->dead)
				ctx->pub_work |= msga__pub_progress(pub);
		}
	}
	return done; /* (the dead are freed by msga__ctx_leave) */
}

/*
 * A callback may publish, but not poll its own context: a nested poll
 * would deliver the records after the one whose callback is running, and
 * the outer poll would then consume them a second time. It may destroy
 * any publisher or subscriber and disconnect any connection: those are
 * freed when the outermost call returns (msga__ctx_enter).
 */
MSGA_API int msga_ctx_poll(struct msga_ctx *ctx, int budget)
{
	int done;

	if (!ctx || budget <= 0)
		return -EINVAL;
	if (ctx->polling)
		return -EDEADLK;
	ctx->polling = 1;
	msga__ctx_enter(ctx);
	done = ctx_poll(ctx, budget);
	ctx->polling = 0;
	msga__ctx_leave(ctx);
	return done;
}

void msga__ctx_pubsub_close(struct msga_ctx *ctx)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &ctx->subs)
		msga_sub_destroy(msga__container_of(pos, struct msga_sub,
						    ctx_node));
	msga__list_for_each_safe(pos, tmp, &ctx->pubs)
		msga_pub_destroy(msga__container_of(pos, struct msga_pub,
						    ctx_node));
	msga__list_for_each_safe(pos, tmp, &ctx->conns)
		msga__conn_free(msga__container_of(pos, struct msga__conn,
						   ctx_node));
	msga__list_for_each_safe(pos, tmp, &ctx->udeps)
		msga__udep_free(msga__container_of(pos, struct msga__udep,
						   ctx_node));
	if (ctx->evmode) {
		close(ctx->timerfd);
		close(ctx->epfd);
	}
	ctx->evmode = 0;
	if (ctx->cm_ch)
		rdma_destroy_event_channel(ctx->cm_ch);
	ctx->cm_ch = NULL;
}
