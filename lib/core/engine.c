/* SPDX-License-Identifier: MIT */
/*
 * engine.c - the progress engine behind msga_ctx_poll(): connection
 * manager events from a non-blocking channel, handed to the endpoint whose
 * id they concern; completions, polled endpoint by endpoint; timers, on a
 * tick; deferred work; and freeing what died once no caller up the stack
 * can hold it. It drives everything through struct msga__ep_ops
 * (endpoint.h) and names no transport. Single-threaded by contract, so no
 * locks.
 */
#include <string.h>
#include <unistd.h>

#include "endpoint.h"
#include "resolver.h"
#include "stat_file.h"

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

void msga__ep_init(struct msga_ctx *ctx, struct msga__ep *ep,
		   const struct msga__ep_ops *ops)
{
	ep->ops = ops;
	ep->ctx = ctx;
	ep->silent = 0;
	msga__list_init(&ep->node);
}

void msga__ep_add(struct msga_ctx *ctx, struct msga__ep *ep,
		  const struct msga__ep_ops *ops, int polled)
{
	msga__ep_init(ctx, ep, ops);
	msga__list_add_tail(polled ? &ctx->eps : &ctx->objs, &ep->node);
}

void msga__ep_del(struct msga__ep *ep)
{
	msga__list_del(&ep->node);
}

/*
 * Copy what we need and ack before acting: rdma_destroy_id() waits for
 * the ack of every event it handed out, and acting may destroy the id.
 * A connection request goes to its listening id's endpoint (the new id
 * inherits that context); a multicast join's private_data is our own
 * pointer, not the peer's bytes, and is passed as it is.
 */
static int cm_one(struct msga_ctx *ctx)
{
	struct rdma_cm_event *ev, copy;
	char pdata[CM_PDATA_MAX];
	size_t plen = 0;
	struct msga__ep *ep;

	if (rdma_get_cm_event(ctx->cm_ch, &ev))
		return 0;
	/*
	 * More of this exchange is likely, unless this is its end: a
	 * connection made needs no more frequent look (a busy window per
	 * connection is a system call per tick for 100 ms, which a
	 * subscriber opening its READ connection at the first message of
	 * a stream put on that stream's first 100 ms).
	 */
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED)
		msga__ctx_cm_soon(ctx);
	copy = *ev;
	if ((ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	     ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	     ev->event == RDMA_CM_EVENT_REJECTED) &&
	    ev->param.conn.private_data) {
		plen = ev->param.conn.private_data_len;
		if (plen > sizeof(pdata))
			plen = sizeof(pdata);
		memcpy(pdata, ev->param.conn.private_data, plen);
	}
	if (ev->event != RDMA_CM_EVENT_MULTICAST_JOIN &&
	    ev->event != RDMA_CM_EVENT_MULTICAST_ERROR) {
		copy.param.conn.private_data = plen ? pdata : NULL;
		copy.param.conn.private_data_len = (uint8_t)plen;
	}
	rdma_ack_cm_event(ev);

	ep = copy.event == RDMA_CM_EVENT_CONNECT_REQUEST ?
		     copy.listen_id->context : copy.id->context;
	if (ep && ep->ops->on_cm) {
		ep->ops->on_cm(ep, &copy);
	} else if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		rdma_reject(copy.id, NULL, 0);
		rdma_destroy_id(copy.id);
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

/*
 * A tick's work is out of line: a poll that is not a tick passes it by
 * with one test, and bench/scripts/icount_budget.sh names these functions
 * (tick_clock, poll_cm, run_timers) to callgrind, so that a message's
 * instructions can be counted without the time-driven work, which
 * callgrind's slowness multiplies (every poll becomes a tick).
 */
#define OUT_OF_LINE __attribute__((noinline))

/* A tick's clock, and the stride to the next one. */
static OUT_OF_LINE uint64_t tick_clock(struct msga_ctx *ctx)
{
	uint64_t now = msga__now_ns(), gap = now - ctx->tick_ns;

	if (gap > TICK_NS && ctx->tick_stride > 1)
		ctx->tick_stride /= 2;
	else if (gap < TICK_NS / 4 && ctx->tick_stride < TICK_STRIDE_MAX)
		ctx->tick_stride *= 2;
	ctx->tick_countdown = ctx->tick_stride;
	ctx->tick_ns = now;
	return now;
}

/* The clock if this poll ticks, else 0. */
static uint64_t tick_now(struct msga_ctx *ctx)
{
	if (ctx->evmode)
		return msga__now_ns();
	if (ctx->tick_countdown > 1) {
		ctx->tick_countdown--;
		return 0;
	}
	return tick_clock(ctx);
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

/* The connection events waiting, each to its endpoint (on a tick). */
static OUT_OF_LINE int poll_cm(struct msga_ctx *ctx)
{
	int n = 0;

	while (cm_one(ctx))
		n++;
	return n;
}

void msga__ctx_cm_soon(struct msga_ctx *ctx)
{
	ctx->cm_busy_until = msga__now_ns() + CM_BUSY_NS;
	ctx->cm_next_ns = 0;
}

/*
 * Free what died: the objects first (a publisher or subscriber frees its
 * own endpoints), then endpoints whose reap op finds them free to go.
 */
static void reap_list(struct msga__list *list, uint64_t now)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, list) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);

		ep->ops->reap(ep, now);
	}
}

void msga__ctx_reap(struct msga_ctx *ctx)
{
	uint64_t now = msga__now_ns();

	ctx->reap = 0;
	reap_list(&ctx->objs, now);
	reap_list(&ctx->eps, now);
}

/*
 * Something dead must wait, without blocking, until deadline: the next
 * leave looks again, and in event mode the timer wakes the program then.
 */
void msga__ctx_reap_later(struct msga_ctx *ctx, uint64_t now,
			  uint64_t deadline)
{
	ctx->reap = 1;
	if (ctx->evmode)
		msga__ctx_timer_arm(ctx, now, deadline > now ? deadline - now :
							       0);
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

static uint64_t tick_list(struct msga__list *list, uint64_t now,
			  uint64_t next)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, list) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);
		uint64_t due;

		if (!ep->ops->tick)
			continue;
		due = ep->ops->tick(ep, now);
		next = due < next ? due : next;
	}
	return next;
}

/*
 * The timers, on a tick: keepalives and silent peers, handshake deadlines,
 * rejoins, reassembly's. In event mode every poll ticks, and the context's
 * timer is armed for the earliest one due: a program asleep on
 * msga_ctx_fd() must still see a vanished peer, since nothing arrives to
 * wake it, and should wake for nothing else (an idle connection: once per
 * keepalive interval, a second by default).
 */
static OUT_OF_LINE void run_timers(struct msga_ctx *ctx, uint64_t now)
{
	uint64_t next = tick_list(&ctx->eps, now, UINT64_MAX);

	next = tick_list(&ctx->objs, now, next);
	if (ctx->resolver) {
		uint64_t due = msga__resolver_tick(ctx, now);

		next = due < next ? due : next;
	}
	msga__stat_file_touch(ctx, now); /* (the file's heartbeat) */
	if (ctx->evmode && next != UINT64_MAX)
		msga__ctx_timer_arm(ctx, now, (int64_t)(next - now) > 0 ?
						      next - now : 0);
}

static void run_work(struct msga_ctx *ctx)
{
	struct msga__list *pos, *tmp;

	ctx->want_work = 0;
	msga__list_for_each_safe(pos, tmp, &ctx->objs) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);

		if (ep->ops->work)
			ctx->want_work |= ep->ops->work(ep);
	}
}

static int ctx_poll(struct msga_ctx *ctx, int budget)
{
	struct msga__list *pos, *tmp;
	uint64_t now = tick_now(ctx);
	int tick = now != 0, done = 0;

	/* (first: what runs below may want it again) */
	if (ctx->evmode)
		msga__ctx_timer_ack(ctx);
	if (ctx->cm_ch && cm_due(ctx, now))
		done += poll_cm(ctx);
	if (ctx->evmode)
		drain_comp_channel(ctx);
	ctx->polls++;
	msga__list_for_each_safe(pos, tmp, &ctx->eps) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);

		done += ep->ops->poll(ep, budget, &now);
	}
	if (tick)
		run_timers(ctx, now);
	if (ctx->want_work)
		run_work(ctx);
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

static void destroy_list(struct msga__list *list)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, list) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);

		ep->ops->destroy(ep);
	}
}

void msga__ctx_endpoints_close(struct msga_ctx *ctx)
{
	destroy_list(&ctx->objs);
	destroy_list(&ctx->eps);
	if (ctx->evmode) {
		close(ctx->timerfd);
		close(ctx->epfd);
	}
	ctx->evmode = 0;
	if (ctx->cm_ch)
		rdma_destroy_event_channel(ctx->cm_ch);
	ctx->cm_ch = NULL;
}
