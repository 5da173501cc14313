/* SPDX-License-Identifier: MIT */
/*
 * cm_conn.c - see cm_conn.h. The channel is non-blocking so that one wait
 * loop serves both kinds of caller: those that sleep in poll() until the
 * event or the bound, and those that must keep other work going (idle).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cm_conn.h"

static int cm_fail(struct cm_conn *c, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int cm_fail(struct cm_conn *c, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, c->errlen, fmt, ap);
	va_end(ap);
	return ret;
}

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cm_conn_open(struct cm_conn *c, char *err, size_t errlen)
{
	int fl;

	c->err = err;
	c->errlen = errlen;
	c->ch = rdma_create_event_channel();
	if (!c->ch)
		return cm_fail(c, neg_errno(), "rdma_create_event_channel: %s",
			       strerror(errno));
	fl = fcntl(c->ch->fd, F_GETFL);
	if (fl < 0 || fcntl(c->ch->fd, F_SETFL, fl | O_NONBLOCK))
		return cm_fail(c, neg_errno(), "fcntl: %s", strerror(errno));
	return 0;
}

void cm_conn_close(struct cm_conn *c)
{
	if (c->ch)
		rdma_destroy_event_channel(c->ch);
	c->ch = NULL;
}

int cm_numeric_addr(const char *addr, uint16_t port,
		    struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST };
	struct addrinfo *ai;

	if (!addr || getaddrinfo(addr, NULL, &hints, &ai))
		return -EINVAL;
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
	return 0;
}

int cm_conn_next(struct cm_conn *c, int timeout_ms,
		 struct rdma_cm_event **evp)
{
	int64_t end = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);

	for (;;) {
		struct pollfd pfd = { .fd = c->ch->fd, .events = POLLIN };
		int64_t left;

		if (!rdma_get_cm_event(c->ch, evp))
			return 0;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return cm_fail(c, neg_errno(), "rdma_get_cm_event: %s",
				       strerror(errno));
		left = end - mono_ms();
		if (left <= 0)
			return cm_fail(c, -ETIMEDOUT,
				       "no rdma_cm event within %d ms",
				       timeout_ms);
		if (c->idle) {
			c->idle(c->idle_arg);
			left = 1;
		}
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return cm_fail(c, neg_errno(), "poll: %s",
				       strerror(errno));
	}
}

int cm_conn_expect(struct cm_conn *c, enum rdma_cm_event_type want,
		   int timeout_ms, struct rdma_cm_event **evp)
{
	struct rdma_cm_event *ev;
	int ret = cm_conn_next(c, timeout_ms, &ev);

	if (ret == -ETIMEDOUT)
		return cm_fail(c, ret, "no rdma_cm %s event within %d ms",
			       rdma_event_str(want), timeout_ms);
	if (ret)
		return ret;
	if (ev->event != want) {
		enum rdma_cm_event_type got = ev->event;
		int st = ev->status;

		rdma_ack_cm_event(ev);
		return cm_fail(c, -ECONNREFUSED,
			       "rdma_cm: expected %s, got %s (status %d)",
			       rdma_event_str(want), rdma_event_str(got), st);
	}
	if (evp)
		*evp = ev;
	else
		rdma_ack_cm_event(ev);
	return 0;
}

int cm_conn_resolve(struct cm_conn *c, struct rdma_cm_id *id,
		    struct sockaddr *src, struct sockaddr *dst, int route,
		    int timeout_ms)
{
	int ret;

	if (rdma_resolve_addr(id, src, dst, CM_RESOLVE_MS))
		return cm_fail(c, neg_errno(), "rdma_resolve_addr: %s",
			       strerror(errno));
	ret = cm_conn_expect(c, RDMA_CM_EVENT_ADDR_RESOLVED, timeout_ms, NULL);
	if (ret || !route)
		return ret;
	if (rdma_resolve_route(id, CM_RESOLVE_MS))
		return cm_fail(c, neg_errno(), "rdma_resolve_route: %s",
			       strerror(errno));
	return cm_conn_expect(c, RDMA_CM_EVENT_ROUTE_RESOLVED, timeout_ms,
			      NULL);
}

int cm_conn_listen(struct cm_conn *c, struct rdma_cm_id **idp,
		   struct sockaddr *sa, void *ctx)
{
	if (rdma_create_id(c->ch, idp, ctx, RDMA_PS_TCP))
		return cm_fail(c, neg_errno(), "rdma_create_id: %s",
			       strerror(errno));
	if (rdma_bind_addr(*idp, sa) || rdma_listen(*idp, 1))
		return cm_fail(c, neg_errno(), "listen: %s", strerror(errno));
	return 0;
}
