/* SPDX-License-Identifier: MIT */
/*
 * perf_ctrl.h - the TCP control channel between an rdma_lat/rdma_bw client
 * and server: test parameters, queue pair addresses, per-size start/stop
 * and results. Fixed-size messages, integers big-endian on the wire. It also
 * tells a server that its client vanished: the kernel closes the socket of
 * a dead process, and the server sees end-of-file.
 */
#ifndef MSGA_PERF_CTRL_H
#define MSGA_PERF_CTRL_H

#include <stddef.h>
#include <stdint.h>

enum perf_msg_type {
	PERF_MSG_HELLO = 1, /* client -> server: parameters */
	PERF_MSG_WELCOME,   /* server -> client: status, rdma_cm port */
	PERF_MSG_QPINFO,    /* both: queue pair and buffer address */
	PERF_MSG_RUN,       /* client -> server: size, iterations */
	PERF_MSG_READY,     /* server -> client */
	PERF_MSG_STOP,      /* client -> server: count sent */
	PERF_MSG_DONE,      /* server -> client: count, results */
	PERF_MSG_BYE,       /* client -> server: no more sizes */
};

#define PERF_MSG_NV 8

struct perf_msg {
	uint32_t type;
	int32_t status;            /* 0 or a negative errno */
	uint64_t v[PERF_MSG_NV];
	uint8_t gid[16];
	char text[96];
};

struct perf_ctrl {
	int fd;
	size_t have;               /* bytes of a partial message in buf */
	uint8_t buf[sizeof(struct perf_msg)];
};

/* Server: listen on addr (NULL = any) port. Returns a socket or -errno. */
int perf_ctrl_listen(const char *addr, uint16_t port);
/* Server: wait for a client; *peer gets its numeric address. */
int perf_ctrl_accept(int lfd, struct perf_ctrl *c, char *peer, size_t len);
/* Client: connect, retrying for up to timeout_ms while nobody listens. */
int perf_ctrl_connect(struct perf_ctrl *c, const char *addr, uint16_t port,
		      int timeout_ms);
void perf_ctrl_close(struct perf_ctrl *c);

int perf_ctrl_send(struct perf_ctrl *c, const struct perf_msg *m);
/*
 * Receive one message. timeout_ms < 0 waits forever, 0 only looks.
 * Returns 1 with *m filled, 0 when none arrived in time, -ECONNRESET when
 * the peer closed, another -errno on error.
 */
int perf_ctrl_recv(struct perf_ctrl *c, struct perf_msg *m, int timeout_ms);
/* Receive a message of one type; anything else is -EPROTO. */
int perf_ctrl_expect(struct perf_ctrl *c, uint32_t type, struct perf_msg *m,
		     int timeout_ms);

/* Doubles travel as their bit pattern. */
uint64_t perf_dbl_bits(double d);
double perf_bits_dbl(uint64_t u);

#endif
