/* SPDX-License-Identifier: MIT */
/*
 * event_fd.c - msga_ctx_fd(): one epoll fd holding the completion channel
 * and the rdma_cm channel, so any event loop can wait for msgaccel with a
 * single watcher. Once it exists, msga_ctx_poll() re-arms every CQ it
 * drains, which costs one system call per wake-up, not per message. A
 * timerfd in the same set wakes the program for what the library must do
 * later on its own: UD keepalives and timeouts (engine.c), a subscriber's
 * nudge (subscriber.c).
 */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "endpoint.h"
#include "resolver.h"

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return msga__neg_errno(EIO);
	return 0;
}

static int ep_add(int epfd, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev))
		return msga__neg_errno(EIO);
	return 0;
}

/* An endpoint whose data arrive by WRITE, raising no event. */
static int has_silent_ep(struct msga_ctx *ctx)
{
	struct msga__list *pos, *tmp;

	msga__list_for_each_safe(pos, tmp, &ctx->eps)
		if (msga__container_of(pos, struct msga__ep, node)->silent)
			return 1;
	return 0;
}

/*
 * A program may wait on the descriptor before it ever polls, so arm now
 * what a poll would have armed: every CQ that exists (one made later is
 * armed as it is made, rc_setup.c, or by the poll that made it), and the
 * timer, for the keepalives and timeouts of what exists. A completion
 * queued before the arm raises no event: the timer's first wake-up, a
 * keepalive interval away at most, polls it.
 */
static void arm_existing(struct msga_ctx *ctx)
{
	struct msga__list *pos, *tmp;
	int any = 0;

	msga__list_for_each_safe(pos, tmp, &ctx->eps) {
		struct msga__ep *ep =
			msga__container_of(pos, struct msga__ep, node);

		any = 1;
		if (ep->ops->arm)
			ep->ops->arm(ep);
	}
	if (any)
		msga__ctx_timer_arm(ctx, msga__now_ns(), msga__keepalive_ns(ctx));
}

MSGA_API int msga_ctx_fd(struct msga_ctx *ctx)
{
	int ret, epfd;

	if (!ctx)
		return -EINVAL;
	if (ctx->evmode)
		return ctx->epfd;
	if (has_silent_ep(ctx))
		return msga__ctx_fail(ctx, -EBUSY,
				      "msga_ctx_fd: a subscriber connected in "
				      "busy-poll mode reads a WRITE ring; call "
				      "msga_ctx_fd() before msga_sub_connect(), "
				      "or use MSGA_SUB_NO_RING");
	if (!ctx->comp_channel)
		return msga__ctx_fail(ctx, -ENOTSUP,
				      "msga_ctx_fd: context has "
				      "MSGA_CTX_NO_EVENTS");
	ret = msga__ctx_cm_channel(ctx);
	if (ret)
		return ret;
	ret = set_nonblock(ctx->comp_channel->fd);
	if (ret)
		return msga__ctx_fail(ctx, ret, "msga_ctx_fd: O_NONBLOCK");
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0)
		return msga__ctx_fail(ctx, msga__neg_errno(EMFILE),
				      "msga_ctx_fd: epoll_create1");
	ctx->timerfd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (ctx->timerfd < 0) {
		close(epfd);
		return msga__ctx_fail(ctx, msga__neg_errno(EMFILE),
				      "msga_ctx_fd: timerfd_create");
	}
	ret = ep_add(epfd, ctx->comp_channel->fd);
	if (!ret)
		ret = ep_add(epfd, ctx->cm_ch->fd);
	if (!ret)
		ret = ep_add(epfd, ctx->timerfd);
	if (!ret && msga__resolver_fd(ctx) >= 0)
		ret = ep_add(epfd, msga__resolver_fd(ctx));
	if (ret) {
		close(ctx->timerfd);
		close(epfd);
		return msga__ctx_fail(ctx, ret, "msga_ctx_fd: epoll_ctl");
	}
	ctx->epfd = epfd;
	ctx->evmode = 1;
	arm_existing(ctx);
	return epfd;
}

int msga__ctx_watch_fd(struct msga_ctx *ctx, int fd)
{
	return ep_add(ctx->epfd, fd);
}

/* Wake no later than delay_ns from now (an earlier wake-up stays). */
void msga__ctx_timer_arm(struct msga_ctx *ctx, uint64_t now,
			 uint64_t delay_ns)
{
	struct itimerspec its = { 0 };
	uint64_t due = now + delay_ns;

	if (ctx->timer_armed && ctx->timer_due > now && ctx->timer_due <= due)
		return;
	if (!delay_ns)
		delay_ns = 1; /* 0 would disarm it */
	its.it_value.tv_sec = (time_t)(delay_ns / 1000000000u);
	its.it_value.tv_nsec = (long)(delay_ns % 1000000000u);
	if (!timerfd_settime(ctx->timerfd, 0, &its, NULL)) {
		ctx->timer_armed = 1;
		ctx->timer_due = due;
	}
}

/*
 * Once it fired, the timer keeps the descriptor readable until read; read
 * it only then, so that polls before it is due cost no system call.
 */
void msga__ctx_timer_ack(struct msga_ctx *ctx)
{
	uint64_t expirations;

	if (!ctx->timer_armed || msga__now_ns() < ctx->timer_due)
		return;
	if (read(ctx->timerfd, &expirations, sizeof(expirations)) ==
	    (ssize_t)sizeof(expirations))
		ctx->timer_armed = 0;
}
