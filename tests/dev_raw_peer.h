/* SPDX-License-Identifier: MIT */
/*
 * dev_raw_peer.h - a hostile peer for device tests: a raw rdma_cm id on
 * the device under test, in this process, that speaks msgaccel's wire
 * format only as far as a test wants it to. Its event channel never
 * blocks, so a test turns it and a context in one loop (raw_turn).
 */
#ifndef MSGA_DEV_RAW_PEER_H
#define MSGA_DEV_RAW_PEER_H

#include <stdint.h>

#include <netinet/in.h>
#include <rdma/rdma_cma.h>

#include "msgaccel.h"
#include "wire.h"

struct raw_peer {
	struct rdma_event_channel *ch;
	struct rdma_cm_id *id;        /* ours: connecting, listening, UD */
	struct rdma_cm_id *req;       /* a listener's last CONNECT_REQUEST */
	uint8_t req_pdata[256];       /* and its private data */
	uint8_t req_plen;
	uint8_t est_pdata[256];       /* the accept's private data */
	uint8_t est_plen;
	struct rdma_ud_param ud;      /* the last MULTICAST_JOIN's (or UD
				 * ESTABLISHED's) */
	enum rdma_cm_event_type last;
	int established, disconnected, rejected;
};

/* Every context and raw peer gets a turn; a raw peer's events counted. */
void raw_turn(struct raw_peer *p, struct msga_ctx *ctx);
/* Wait (polling ctx) until the peer's next event; returns its type. */
enum rdma_cm_event_type raw_wait(struct raw_peer *p, struct msga_ctx *ctx);
/* A channel that never blocks and an id in port space ps on it. */
void raw_open(struct raw_peer *p, enum rdma_port_space ps);
/* raw_open, bound to the test address (any port). */
void raw_bind(struct raw_peer *p, enum rdma_port_space ps);
/* The same at addr (another address of the device under test). */
void raw_bind_at(struct raw_peer *p, enum rdma_port_space ps, const char *addr);
/* A listener on the test address (RC); returns its port. */
uint16_t raw_listen(struct raw_peer *p);
/*
 * Connect to port with a subscriber's hello, as msgaccel's own subscriber
 * would (SEND/RECV, no ring), and then never send SUBSCRIBE. Returns the
 * cm event that ended the connect (ESTABLISHED or REJECTED).
 */
enum rdma_cm_event_type raw_connect(struct raw_peer *p, uint16_t port,
				    struct msga_ctx *ctx);
/* The same with the connect's private data given (a hello and more). */
enum rdma_cm_event_type raw_connect_pdata(struct raw_peer *p, uint16_t port,
					  struct msga_ctx *ctx,
					  const void *pdata, uint8_t plen);
/* The same with the caller's parameters (private data, READ depth). */
enum rdma_cm_event_type raw_connect_with(struct raw_peer *p, uint16_t port,
					 const struct rdma_conn_param *param,
					 struct msga_ctx *ctx);
/* One signalled READ of len bytes at (rkey, off) into buf: its status. */
enum ibv_wc_status raw_read(struct raw_peer *p, struct ibv_mr *mr, void *buf,
			    uint64_t off, uint32_t len, uint32_t rkey,
			    struct msga_ctx *ctx);
/*
 * A raw UD sender: its own rdma_cm id, UD QP and CQ, and one registered
 * buffer: buf for what it sends, rx for receive slots (wr_id = slot).
 * Joined to a multicast group as a full member (raw_ud_join), or
 * resolved to a ud:// publisher's port by SIDR as a subscriber does
 * (raw_ud_resolve, its receives posted).
 */
#define RAW_UD_SLOT 512
#define RAW_UD_RX 7
#define RAW_UD_SEND_ID (1u << 20) /* a send's wr_id: not a slot */

struct raw_ud {
	struct raw_peer cm;
	struct ibv_cq *cq;
	struct ibv_mr *mr;            /* over buf and rx */
	struct ibv_ah *ah;
	struct sockaddr_in group;     /* sin_family 0: never joined */
	uint8_t buf[RAW_UD_SLOT];
	uint8_t rx[RAW_UD_RX][RAW_UD_SLOT];
};

/* Join IPv4 group on the device under test (polling ctx meanwhile). */
void raw_ud_join(struct raw_ud *u, struct msga_ctx *ctx, const char *group);
/* The same from the local address from: its datagrams' source. */
void raw_ud_join_from(struct raw_ud *u, struct msga_ctx *ctx,
		      const char *group, const char *from);
/* SIDR to port on the test address: the publisher's QP and Q_Key. */
void raw_ud_resolve(struct raw_ud *u, struct msga_ctx *ctx, uint16_t port);
/* (Re)post receive slot i. */
void raw_ud_post_recv(struct raw_ud *u, uint32_t i);
/*
 * Send buf[0, len) to the peer (group or publisher) with qkey, and wait
 * for its completion; receives completing meanwhile are posted again.
 */
void raw_ud_post(struct raw_ud *u, uint32_t len, uint32_t qkey);
/* Leave the group (if joined) and free what raw_ud_join/resolve made. */
void raw_ud_close(struct raw_ud *u);

/*
 * A raw RC publisher (after raw_listen): accepts one subscriber with a
 * publisher's hello that takes whatever ring the subscriber offers, and
 * RAW_PUB_RECVS receives posted. buf: the receive slots, then
 * RAW_PUB_SENDS slots that are the caller's to send or write from.
 */
#define RAW_PUB_SLOT 4096
#define RAW_PUB_RECVS 8
#define RAW_PUB_SENDS 4

struct raw_pub {
	struct raw_peer cm;
	struct msga__wire_hello hello;  /* what the subscriber offered */
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint32_t sends;                 /* the caller's count */
	int heard;                      /* the caller's count */
	char buf[RAW_PUB_RECVS + RAW_PUB_SENDS][RAW_PUB_SLOT];
};

/*
 * Wait (polling ctx) for the next CONNECT_REQUEST and accept it. Returns
 * once accepted: what "connected" means is the caller's to wait for.
 */
void raw_pub_accept(struct raw_pub *rp, struct msga_ctx *ctx);
/* (Re)post receive slot i. */
void raw_pub_post_recv(struct raw_pub *rp, uint32_t i);
void raw_pub_close(struct raw_pub *rp);

/* What a test made for id, in the order verbs wants it gone (any NULL). */
void raw_free_verbs(struct rdma_cm_id *id, struct ibv_mr *mr,
		    struct ibv_cq *cq);
/* Destroys the ids (and their QPs) and the channel. */
void raw_close(struct raw_peer *p);

#endif
