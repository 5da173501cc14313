/* SPDX-License-Identifier: MIT */
/* perf_ctrl.c - see perf_ctrl.h. */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "perf_clock.h"
#include "perf_ctrl.h"

static int neg_errno(void)
{
	return errno ? -errno : -EIO;
}

static int resolve(const char *addr, uint16_t port, int passive,
		   struct addrinfo **ai)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
		.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0),
	};
	char serv[8];

	snprintf(serv, sizeof(serv), "%u", port);
	return getaddrinfo(addr, serv, &hints, ai) ? -EHOSTUNREACH : 0;
}

int perf_ctrl_listen(const char *addr, uint16_t port)
{
	struct addrinfo *ai;
	int one = 1, fd, ret = resolve(addr, port, 1, &ai);

	if (ret)
		return ret;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = neg_errno();
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 4)) {
		ret = neg_errno();
		close(fd);
		goto out;
	}
	ret = fd;
out:
	freeaddrinfo(ai);
	return ret;
}

static void ctrl_init(struct perf_ctrl *c, int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->fd = fd;
	c->have = 0;
}

int perf_ctrl_accept(int lfd, struct perf_ctrl *c, char *peer, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = accept4(lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);

	if (fd < 0)
		return neg_errno();
	if (getnameinfo((struct sockaddr *)&ss, sl, peer, len, NULL, 0,
			NI_NUMERICHOST))
		snprintf(peer, len, "?");
	ctrl_init(c, fd);
	return 0;
}

int perf_ctrl_connect(struct perf_ctrl *c, const char *addr, uint16_t port,
		      int timeout_ms)
{
	uint64_t deadline = perf_mono_ns() + (uint64_t)timeout_ms * 1000000;
	struct addrinfo *ai;
	int fd, ret = resolve(addr, port, 0, &ai);

	if (ret)
		return ret;
	for (;;) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			ret = neg_errno();
			break;
		}
		if (!connect(fd, ai->ai_addr, ai->ai_addrlen)) {
			ctrl_init(c, fd);
			ret = 0;
			break;
		}
		ret = neg_errno();
		close(fd);
		/* A server started at the same moment may not listen yet. */
		if (ret != -ECONNREFUSED || perf_mono_ns() > deadline)
			break;
		usleep(50000);
	}
	freeaddrinfo(ai);
	return ret;
}

void perf_ctrl_close(struct perf_ctrl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->have = 0;
}

static void msg_swap(struct perf_msg *m, int to_wire)
{
	m->type = to_wire ? htobe32(m->type) : be32toh(m->type);
	m->status = (int32_t)(to_wire ? htobe32((uint32_t)m->status) :
			      be32toh((uint32_t)m->status));
	for (int i = 0; i < PERF_MSG_NV; i++)
		m->v[i] = to_wire ? htobe64(m->v[i]) : be64toh(m->v[i]);
}

int perf_ctrl_send(struct perf_ctrl *c, const struct perf_msg *m)
{
	struct perf_msg w = *m;
	const uint8_t *p = (const uint8_t *)&w;
	size_t left = sizeof(w);

	w.text[sizeof(w.text) - 1] = '\0';
	msg_swap(&w, 1);
	while (left) {
		ssize_t n = send(c->fd, p, left, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno != EPIPE ? neg_errno() : -ECONNRESET;
		p += n;
		left -= (size_t)n;
	}
	return 0;
}

int perf_ctrl_recv(struct perf_ctrl *c, struct perf_msg *m, int timeout_ms)
{
	uint64_t deadline = perf_mono_ns() + (uint64_t)(timeout_ms > 0 ?
							 timeout_ms : 0) * 1000000;

	while (c->have < sizeof(c->buf)) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		int64_t left = (int64_t)(deadline - perf_mono_ns()) / 1000000;
		ssize_t n;
		int r;

		if (timeout_ms < 0)
			left = -1;
		else if (left < 0)
			left = 0;
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return neg_errno();
		if (r == 0)
			return 0;
		n = recv(c->fd, c->buf + c->have, sizeof(c->buf) - c->have,
			 MSG_DONTWAIT);
		if (n == 0)
			return -ECONNRESET;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return errno == ECONNRESET ? -ECONNRESET : neg_errno();
		c->have += (size_t)n;
	}
	memcpy(m, c->buf, sizeof(*m));
	c->have = 0;
	msg_swap(m, 0);
	m->text[sizeof(m->text) - 1] = '\0';
	return 1;
}

int perf_ctrl_expect(struct perf_ctrl *c, uint32_t type, struct perf_msg *m,
		     int timeout_ms)
{
	int ret = perf_ctrl_recv(c, m, timeout_ms);

	if (ret == 0)
		return -ETIMEDOUT;
	if (ret < 0)
		return ret;
	if (m->status)
		return m->status;
	return m->type == type ? 0 : -EPROTO;
}

uint64_t perf_dbl_bits(double d)
{
	uint64_t u;

	memcpy(&u, &d, sizeof(u));
	return u;
}

double perf_bits_dbl(uint64_t u)
{
	double d;

	memcpy(&d, &u, sizeof(d));
	return d;
}
