/* SPDX-License-Identifier: MIT */
/*
 * msgaccel_ev.h - drive a msgaccel context from a libev loop. Header only,
 * like hiredis' adapters/libev.h: include it after <ev.h>, link -lev.
 *
 *	struct msga_ev ev;
 *	msga_ev_attach(&ev, EV_DEFAULT, ctx);   // ... ev_run(loop, 0);
 *	msga_ev_detach(&ev);                     // before msga_ctx_close()
 *
 * An ev_io watcher waits on msga_ctx_fd(); when it fires, msga_ctx_poll()
 * runs. While polls still find work, an ev_idle watcher keeps polling (so
 * a busy context neither starves the loop nor stalls); once a poll finds
 * nothing every CQ is armed again and the idle watcher stops.
 */
#ifndef MSGACCEL_EV_H
#define MSGACCEL_EV_H

#include <ev.h>

#include "msgaccel.h"

#ifndef MSGA_EV_BUDGET
#define MSGA_EV_BUDGET 64
#endif

struct msga_ev {
	struct ev_loop *loop;
	struct msga_ctx *ctx;
	ev_io io;
	ev_idle idle;
	int last_error;  /* a negative errno from msga_ctx_poll(), or 0 */
};

static void msga_ev__poll(struct msga_ev *me)
{
	int n = msga_ctx_poll(me->ctx, MSGA_EV_BUDGET);

	if (n < 0)
		me->last_error = n;
	if (n > 0)
		ev_idle_start(me->loop, &me->idle);
	else
		ev_idle_stop(me->loop, &me->idle);
}

static void msga_ev__io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
	(void)loop;
	(void)revents;
	msga_ev__poll((struct msga_ev *)w->data);
}

static void msga_ev__idle_cb(struct ev_loop *loop, ev_idle *w, int revents)
{
	(void)loop;
	(void)revents;
	msga_ev__poll((struct msga_ev *)w->data);
}

/* Start driving ctx from loop. 0, or a negative errno from msga_ctx_fd(). */
static inline int msga_ev_attach(struct msga_ev *me, struct ev_loop *loop,
				 struct msga_ctx *ctx)
{
	int fd = msga_ctx_fd(ctx);

	if (fd < 0)
		return fd;
	me->loop = loop;
	me->ctx = ctx;
	me->last_error = 0;
	ev_io_init(&me->io, msga_ev__io_cb, fd, EV_READ);
	me->io.data = me;
	ev_idle_init(&me->idle, msga_ev__idle_cb);
	me->idle.data = me;
	ev_io_start(loop, &me->io);
	/* Arm the CQs now: events only flow after a first poll. */
	ev_idle_start(loop, &me->idle);
	return 0;
}

static inline void msga_ev_detach(struct msga_ev *me)
{
	ev_io_stop(me->loop, &me->io);
	ev_idle_stop(me->loop, &me->idle);
}

#endif /* MSGACCEL_EV_H */
