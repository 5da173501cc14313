/* SPDX-License-Identifier: MIT */
/*
 * rc.h - the RC transport (lib/rc): one connection per subscriber and
 * publisher pair, struct msga__conn, and what its files offer each other
 * and lib/api.
 *
 * Data path: an RDMA WRITE ring (ring.h, rc_ring.c), or SEND/RECV with
 * credits (credit.h). The subscriber is the rdma_connect side and sends
 * first (its SUBSCRIBE), as iWARP requires, and every side posts all its
 * receives before connect/accept.
 */
#ifndef MSGA_RC_H
#define MSGA_RC_H

#include "pubsub.h"
#include "credit.h"
#include "liveness.h"
#include "wire.h"
#include "auth_wire.h"
#include "ring.h"
#include "slow_consumer.h"
#include "wr_batch.h"

/* Receive and send geometry, per connection (MSGA__DATA_SLOT: pubsub.h). */
/*
 * Registered memory is pinned, and siw counts it against RLIMIT_MEMLOCK
 * (8 MiB by default) even for root: keep a publisher and a subscriber
 * connection near 0.5 MiB each.
 */
#define MSGA__SUB_RX_DEPTH 128u  /* subscriber receives (data) */
#define MSGA__SUB_SQ_DEPTH 64u
#define MSGA__SUB_SIG_EVERY 16u
#define MSGA__PUB_RX_DEPTH 32u   /* publisher receives (credits) */
#define MSGA__PUB_RX_SLOT 128u
#define MSGA__PUB_SQ_DEPTH 512u
#define MSGA__PUB_SIG_EVERY 32u
#define MSGA__CTL_SLOT 256u      /* header (+ name) per send queue slot */
/*
 * A ring record's pieces in its send slot (rc_ring.c): the head at 0, a
 * control payload after it, then zero padding (under 16 bytes, and never
 * written) and the trailer, and a PAD (16 bytes) when the record wraps.
 */
#define MSGA__CTL_RING_TRAILER 216u
#define MSGA__CTL_RING_PAD 224u
_Static_assert(MSGA__RING_HEAD + MSGA_TOPIC_MAX + 16 <=
	       MSGA__CTL_RING_TRAILER &&
	       MSGA__CTL_RING_PAD + MSGA__RING_PAD_LEN <= MSGA__CTL_SLOT,
	       "a ring record's pieces fit their send slot");
/* The subscriber's RDMA WRITE ring, and its receives (control only). */
#define MSGA__SUB_RING_SIZE (256u * 1024u)
#define MSGA__SUB_RING_RX_DEPTH 4u
#define MSGA__BATCH_BUFS 16u     /* per subscriber: coalescing buffers */
#define MSGA__BATCH_REC_MAX 512u /* larger messages are never coalesced */

_Static_assert(!(MSGA__SUB_SQ_DEPTH & (MSGA__SUB_SQ_DEPTH - 1)) &&
	       !(MSGA__PUB_SQ_DEPTH & (MSGA__PUB_SQ_DEPTH - 1)),
	       "send queue slots are found by masking");


/* struct msga__conn's ring: none (SEND/RECV), or which end of it. */
enum msga__conn_ring {
	MSGA__C_RING_NONE = 0,
	MSGA__C_RING_WRITER,   /* a publisher's */
	MSGA__C_RING_READER,   /* a subscriber's */
};

enum msga__conn_state {
	MSGA__C_RESOLVING = 1, /* sub: address/route resolution */
	MSGA__C_CONNECTING,    /* sub: rdma_connect sent; pub: accepted */
	MSGA__C_READY,         /* subscription known on both sides */
	MSGA__C_DEAD,          /* torn down, waiting to be freed */
};


/*
 * A reassembly buffer. Holding its message hands the whole buffer to the
 * user (the next large message gets another one), so slot.idx says which
 * kind of slot a held message points at. Released buffers are kept for
 * reuse until the connection is freed, so releasing twice stays harmless.
 */
#define MSGA__SLOT_RING UINT32_MAX
#define MSGA__SLOT_REASM (UINT32_MAX - 1)
struct msga__rsbuf {
	struct msga__rxslot slot;
	struct msga__list node;        /* conn->rs_held or rs_idle */
	_Alignas(64) char data[];      /* MSGA_MSG_MAX bytes */
};
/* A connection's part in an authenticated handshake (rc_auth.c). */
struct msga__rc_auth {
	uint8_t nonce[MSGA__AUTH_NONCE_LEN]; /* sub: our challenge */
	uint8_t hello[MSGA__WIRE_HELLO_LEN]; /* sub: our hello, as sent */
	uint8_t tag[MSGA__AUTH_TAG_LEN];     /* sub: the proof we send;
					      * pub: the one we expect */
	int proven;                          /* pub: it came, and matched */
	int refused;                         /* pub: REFUSE sent */
};

struct msga__conn_owner_ops;

struct msga__conn {
	struct msga__ep eng;           /* the engine's: cm_id->context */
	struct msga__list own_node;    /* pub->conns or sub->rc.conns */
	struct msga_ctx *ctx;
	const struct msga__conn_owner_ops *owner; /* its owner's callbacks */
	struct msga_pub *pub;          /* passive side: owner */
	struct msga_sub *sub;          /* active side: owner */
	uint32_t id;
	int state;
	int was_ready;
	int gone_status;               /* msga__conn_kill's, for its owner */
	const char *setup_step;        /* where msga__conn_setup failed */
	int established;               /* sub: rdma_cm said so */
	int armed;                     /* CQ armed for one event */
	struct rdma_cm_id *cm;
	uint32_t connect_tries;        /* new ids after EADDRINUSE (iWARP) */
	uint64_t nudge_at;             /* subscriber: next nudge if not */
	/* subscriber (0.10): its reconnection's record (rc_sub_retry.c),
	 * and whether it is a retry whose failure was told already */
	struct msga__retry *retry;
	int quiet_fail;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	/* The PD of qp and of every MR its work requests name: a ring
	 * subscriber's own (its ring's rkey opens it to this QP only),
	 * else ctx->pd, which holds no remote access (internal.h). */
	struct ibv_pd *pd;
	char peer[64];

	uint32_t rx_depth, rx_slot;
	char *rx_buf;
	struct ibv_mr *rx_mr;
	struct msga__rxslot *rx_slots;
	struct msga__srq *srq;         /* receives from here instead (srq.h) */
	uint64_t srq_quiet_by;         /* dying: LAST_WQE_REACHED deadline */
	int srq_last_wqe;              /* ... or it came */
	uint32_t holds;
	struct msga__rxslot *cur;      /* slot being delivered, for hold */
	uint64_t cur_stamp;            /* ... and its msg.rx_time_ns */

	uint32_t sq_depth, sig_every, unsig, unsig_tagged;
	uint32_t sq_mask;              /* sq_depth - 1: a power of two */
	int last_inline;               /* the last post copied its buffers */
	uint64_t tx_seq, tx_done;      /* posted / known complete */
	struct msga__wrb wrb;          /* posted but held back (doorbell.h) */
	int32_t *tx_tag;               /* per send queue slot */
	char *ctl_buf;                 /* per send queue slot headers */
	struct ibv_mr *ctl_mr;
	struct msga__credit cr;
	struct msga__liveness live;    /* keepalives, peer timeout */
	/* not ready by its deadline: dropped (a publisher's runs from the
	 * request, msga__conn_hs_start) */
	struct msga__setup_clock setup;
	/* authentication (rc_auth.c): the key it proves; NULL = none */
	const struct msga__key *key;
	struct msga__rc_auth auth;

	/* publisher side */
	char pattern[MSGA_TOPIC_MAX + 2];
	uint32_t ann;                  /* topics [0, ann) announced/skipped */
	/* last value (0.12): the SUBSCRIBE asked for it (and the publisher
	 * keeps them); topic ann is named, its value still to go */
	uint8_t want_lv, ann_named;
	uint64_t match[MSGA_PUB_TOPICS_MAX / 64];
	uint32_t big_off, big_inflight;
	int big_active;
	char *bat_buf;                 /* MSGA__BATCH_BUFS coalescing buffers */
	struct ibv_mr *bat_mr;
	uint32_t bat_head, bat_tail;   /* buffers sent / known complete */
	uint32_t bat_len;              /* bytes in the open batch */
	uint32_t bat_open;             /* 1: open batch holds one credit */
	struct msga__slow_consumer slow; /* holding up the stream? */
	uint64_t tx_msgs, tx_bytes;    /* messages to it (msga_pub_conn_stats) */

	/* subscriber side */
	char (*names)[MSGA_TOPIC_MAX + 1];
	uint32_t rx_topics;            /* names announced (rc_sub_stats.c) */
	struct msga__lv_gate lv_gate;  /* (0.12) late last values refused */
	uint64_t rx_msgs, rx_bytes;    /* delivered */
	struct msga__rsbuf *rs;        /* reassembly of fragmented messages */
	struct msga__list rs_held;     /* held reassembled messages */
	struct msga__list rs_idle;     /* released ones, for reuse */
	uint32_t rs_len, rs_off;
	uint16_t rs_topic;
	uint64_t rs_seq;
	int rs_active;

	/* RDMA WRITE ring (ring.h, rc_ring.c): publisher writes, subscriber
	 * polls. 0 = this connection's data goes by SEND/RECV. Which end of
	 * it this connection is says its role too, so the data path tests
	 * one field, not the ring and then the owner. */
	enum msga__conn_ring ring;
	struct msga__ring_writer rw;   /* publisher side */
	struct ibv_send_wr ring_wr[2]; /* its WRITEs: [0] a PAD, [1] a record */
	struct ibv_sge ring_sge[4];    /* [0] the PAD's, [1..3] the record's */
	struct msga__ring_reader rr;   /* subscriber side: reads the ring */
	void *ring_buf;                /* the ring's allocation: free only */
	struct ibv_mr *ring_mr;
	struct msga__rxslot ring_slot; /* what held ring messages point at */
	int ring_report_due;           /* a report that could not go yet */
};


/*
 * The send queue slot of work request number seq: a mask, not %, because
 * a division is a slow helper call under emulation and this is per message.
 */
static inline uint32_t msga__sq_slot(const struct msga__conn *c, uint64_t seq)
{
	return (uint32_t)seq & c->sq_mask;
}

/*
 * What a connection asks of the side that owns it (the publisher's
 * rc_pub.c, the subscriber's rc_sub.c), set when the owner creates it:
 * the connection's files (rc_conn.c, rc_setup.c, rc_poll.c, ...) reach
 * their owner only through these, never by name, so lib/rc has no call
 * loop. Besides on_recv (once per received message, in place of the role
 * test that picked the decoder) each runs once per event, completion
 * batch or connection.
 */
struct msga__conn_owner_ops {
	/* A received message: 0, or the negative errno that kills c. */
	int (*on_recv)(struct msga__conn *c, struct msga__rxslot *slot,
		       const struct msga__wire_hdr *h, const char *payload,
		       uint32_t plen, uint64_t now_ns);
	/* What a send tagged (pubsub.h) is free again: required of an owner
	 * that tags its sends. */
	void (*on_tag_done)(struct msga__conn *c, int32_t tag);
	/* c died (msga__conn_kill: its status, and whether it notifies),
	 * before its event is raised. */
	void (*on_gone)(struct msga__conn *c, int status, int notify);
	/* The rdma_cm events of its handshake (address, route, established:
	 * the subscriber's), c not dead; NULL: ignored. */
	void (*on_cm)(struct msga__conn *c, const struct rdma_cm_event *ev);
	/* Take what already arrived, up to budget (a DISCONNECTED event
	 * delivers it before saying c is gone). */
	int (*drain)(struct msga__conn *c, int budget);
	/* c is being freed: what the owner keeps in it; NULL: nothing. */
	void (*on_free)(struct msga__conn *c);
};

/*
 * One message to send (after libfabric's struct fi_msg): the header, then
 * ctl_len bytes of control payload the caller put in this send slot
 * (msga__conn_ctl_payload), then ext_len bytes of registered ext. tag
 * says what ext is until a signalled completion retires it
 * (MSGA__TAG_NONE: nothing to retire); signal asks for that completion
 * now. The header's credit is filled in on the way.
 */
struct msga__send_desc {
	struct msga__wire_hdr *hdr;
	uint32_t ctl_len;
	uint32_t ext_len;
	const void *ext;
	uint32_t ext_lkey;
	int32_t tag;
	int signal;
};

/* rc_setup.c: a connection made (in ops' and owner's hands) and freed */
struct msga__conn_geom {
	uint32_t rx_depth, rx_slot, sq_depth, sig_every;
};
/* ops: msga__rc_pub_conn_ops or msga__rc_sub_conn_ops */
struct msga__conn *msga__conn_new(struct msga_ctx *ctx,
				  const struct msga__conn_geom *g,
				  const struct msga__ep_ops *ops,
				  const struct msga__conn_owner_ops *owner);
int msga__conn_setup(struct msga__conn *c);
void msga__conn_drop_qp(struct msga__conn *c);
void msga__conn_free(struct msga__conn *c);

/* rc_conn.c: a connection at work */
int msga__conn_post_recv(struct msga__conn *c, uint32_t idx);
int msga__conn_send_recv(struct msga__conn *c, const struct msga__send_desc *m);
char *msga__conn_ctl_payload(struct msga__conn *c);
/*
 * Room for one more data message (besides an open batch's reservation),
 * or for one control message. A SEND needs a credit (two for data, so the
 * last is kept for a CREDIT message); a ring record needs ring space; a
 * record may bring a PAD, so it needs two send queue slots. (Inline: a
 * publish asks it of every subscriber twice.)
 */
static inline int msga__conn_can_data(const struct msga__conn *c)
{
	if (c->ring == MSGA__C_RING_WRITER)
		return msga__ring_can_place(&c->rw, MSGA__RING_REC_MAX) &&
		       c->tx_seq + 2 - c->tx_done <= c->sq_depth;
	return msga__credit_avail(&c->cr) >= 2 + c->bat_open &&
	       c->tx_seq + c->bat_open - c->tx_done < c->sq_depth;
}
/*
 * Room the peer has made for us so far, in messages: ring bytes it freed
 * (counted in the largest records), or credits it returned. The
 * slow-consumer rule (slow_consumer.h) counts any change as progress, so
 * a peer that frees a byte at a time makes none until it has freed room
 * for a whole message. (Slow path only: the division is fine here.)
 */
static inline uint64_t msga__conn_room_made(const struct msga__conn *c)
{
	if (c->ring == MSGA__C_RING_WRITER)
		return c->rw.head / MSGA__RING_REC_MAX;
	return c->cr.peer_freed;
}
int msga__conn_can_ctl(const struct msga__conn *c);
/*
 * Post nwr chained work requests (bytes in the last); the last one carries
 * tag, which says what its buffers are until a later signalled completion
 * (none when inline: the provider copied them). Selective signalling: one
 * completion every sig_every posts, or when the caller needs it. 0, or
 * -ECONNRESET when the post failed and killed the connection.
 */
int msga__conn_post(struct msga__conn *c, struct ibv_send_wr *wr,
		    uint32_t nwr, uint32_t bytes, int32_t tag,
		    int force_signal);
/* A post failed with errno err (positive): the connection dies. */
void msga__conn_post_failed(struct msga__conn *c, struct ibv_send_wr *last,
			    int err);
/*
 * msga__conn_post's body, inline where the fast path posts (rc_ring.c's
 * short record: one request, inline, no tag), so that its loops and tests
 * fold away there; msga__conn_post is this, out of line.
 */
static MSGA__HOT_INLINE int msga__conn_post_inl(struct msga__conn *c,
						struct ibv_send_wr *wr,
						uint32_t nwr, uint32_t bytes,
						int32_t tag, int force_signal)
{
	struct ibv_send_wr *last = &wr[nwr - 1];
	int ret;

	for (uint32_t i = 0; i < nwr; i++) {
		wr[i].wr_id = c->tx_seq + i;
		c->tx_tag[msga__sq_slot(c, c->tx_seq + i)] = MSGA__TAG_NONE;
	}
	c->last_inline = bytes <= c->ctx->max_inline;
	if (c->last_inline) {
		for (uint32_t i = 0; i < nwr; i++)
			wr[i].send_flags |= IBV_SEND_INLINE;
		tag = MSGA__TAG_NONE;
	}
	if (tag != MSGA__TAG_NONE)
		c->unsig_tagged++;
	if (force_signal || ++c->unsig >= c->sig_every) {
		last->send_flags |= IBV_SEND_SIGNALED;
		c->unsig = 0;
		c->unsig_tagged = 0;
	}
	if (tag != MSGA__TAG_NONE)
		c->tx_tag[msga__sq_slot(c, last->wr_id)] = tag;
	/* (a publisher's may be held back for one doorbell with later ones) */
	ret = msga__pub_post(c->pub, &c->wrb, c->qp, wr, c->tx_seq - c->tx_done,
			     c->sq_depth, c->sig_every);
	if (msga__unlikely(ret)) {
		msga__conn_post_failed(c, last, ret);
		return -ECONNRESET;
	}
	c->tx_seq += nwr;
	return 0;
}
void msga__conn_peer_name(struct msga__conn *c);

/*
 * Access control (rc_auth.c). Subscriber: put the request after the hello
 * in connect private data pdata (returns its length), check the
 * publisher's proof when established (0 or -EACCES), send its own proof
 * first (0 with no key); the status of a REJECTED event.
 */
size_t msga__rc_auth_connect(struct msga__conn *c, uint8_t *pdata);
int msga__rc_auth_established(struct msga__conn *c, const void *pdata,
			      size_t plen);
int msga__rc_auth_send_proof(struct msga__conn *c);
int msga__rc_reject_status(const struct rdma_cm_event *ev);
/*
 * Publisher: a connect request's key (0 with *key set, NULL when neither
 * side has keys; or -EACCES, the request rejected and reported); the
 * accept's private data in buf, the hello already there (returns its
 * length); the subscriber's AUTH and SUBSCRIBE (0, or the negative errno
 * to refuse it with, reported); report a refusal (MSGA_EVENT_REJECTED,
 * rate limited; the reject itself is msga__cm_reject, endpoint.h) and
 * the tick that reports what the limit held back; an allow-list entry's
 * check (0 or -EINVAL).
 */
struct msga__key;
int msga__rc_auth_request(struct msga_pub *pub, struct rdma_cm_id *id,
			  const void *pdata, size_t plen,
			  const struct msga__key **key,
			  struct msga__auth_req *req);
int msga__rc_auth_accept(struct msga__conn *c, const struct msga__key *key,
			 const struct msga__auth_req *req, const void *pdata,
			 uint8_t *buf);
int msga__rc_auth_on_proof(struct msga__conn *c, const char *payload);
int msga__rc_authorize(struct msga__conn *c);
void msga__pub_rejected(struct msga_pub *pub, int status, const char *peer);
/* rc_conn.c */
void msga__conn_kill(struct msga__conn *c, int status, int notify);
/* Post what c holds back (doorbell.h): 0, or -ECONNRESET (c died). */
int msga__conn_ring(struct msga__conn *c);
/*
 * rc_poll.c: what both sides' connections do for the engine: drain up to
 * budget completions of the CQ (receives to the owner's on_recv), take an
 * rdma_cm event, arm the CQ, be reaped. (A ring subscriber reads its
 * ring first: msga__sub_ring_poll.)
 */
int msga__conn_poll(struct msga__conn *c, int budget);
/*
 * A clean end (0.10): a BYE on a ready connection, and a wait for it to
 * leave until `until` (msga__now_ns() based) at the latest, before the
 * caller kills c. Its peer reports status 0; without room, or past the
 * wait, it sees a reset. The wait for all of an owner's connections
 * together stays within MSGA__BYE_WAIT_NS: a dead peer delays a
 * disconnect or destroy by that much, never more.
 */
#define MSGA__BYE_WAIT_NS 100000000ull /* 100 ms */
void msga__conn_goodbye(struct msga__conn *c, uint64_t until);
/* A ring subscriber's CQ holds only its own sends: not looked at often. */
static inline int msga__ring_cq_due(const struct msga__conn *c)
{
	return !(c->ctx->polls & 15) ||
	       c->tx_seq - c->tx_done >= c->sq_depth / 2;
}
/* The ops both sides share (struct msga__ep_ops). */
void msga__conn_on_cm(struct msga__ep *ep, const struct rdma_cm_event *ev);
void msga__conn_arm(struct msga__ep *ep);
int msga__conn_reap(struct msga__ep *ep, uint64_t now);
void msga__conn_destroy(struct msga__ep *ep);
static inline struct msga__conn *msga__conn_of(struct msga__ep *ep)
{
	return msga__container_of(ep, struct msga__conn, eng);
}
/* The endpoint ops of each side's connections (rc_pub_ep.c, rc_sub_ep.c). */
extern const struct msga__ep_ops msga__rc_pub_conn_ops;
extern const struct msga__ep_ops msga__rc_sub_conn_ops;
void msga__conn_emit(struct msga__conn *c, enum msga_event_type type,
		     int status);
void msga__conn_hello(struct msga__conn *c, struct msga__wire_hello *h,
		      uint16_t role);
/*
 * A connection's timers at now, in any state. Ready: liveness (liveness.h),
 * a keepalive if nothing went out for an interval, the end of a peer
 * silent for the timeout, and on a publisher the slow-consumer rule
 * (slow_consumer.h). Not ready yet: the end of a handshake that took the
 * peer timeout. Returns when the next tick is due (UINT64_MAX: never).
 */
uint64_t msga__conn_tick(struct msga__conn *c, uint64_t now);
/* A publisher's connection, c->pub set: its handshake's clock starts. */
void msga__conn_hs_start(struct msga__conn *c, uint64_t now);

/* rc_ring.c */
int msga__ring_rx_setup(struct msga__conn *c);
void msga__ring_tx_setup(struct msga__conn *c, uint32_t rkey, uint32_t size);
void msga__ring_unregister(struct msga__conn *c);
void msga__ring_refused(struct msga__conn *c);
int msga__ring_send(struct msga__conn *c, const struct msga__send_desc *m);
/* Largest payload msga__ring_send_short (rc_ring_fast.h) takes (its
 * record is on the stack). */
#define MSGA__RING_FAST_MAX 256u
/* The reader's report of freed bytes, if due (by SEND: the reader's side
 * sends everything that way). */
void msga__ring_report(struct msga__conn *c);
void msga__ring_released(struct msga__conn *c);

/*
 * Post one message: on a ring connection's publisher side a WRITE into the
 * subscriber's ring (rc_ring.c), otherwise a SEND (rc_conn.c). The caller
 * checked msga__conn_can_data/_ctl. (Inline: the ring is tested first, so
 * the hot path builds no SEND work request it will not post, and calls
 * straight into the path that sends.)
 */
static inline int msga__conn_send(struct msga__conn *c,
				  const struct msga__send_desc *m)
{
	if (c->ring == MSGA__C_RING_WRITER)
		return msga__ring_send(c, m);
	return msga__conn_send_recv(c, m);
}
/* The short form: a control message, ctl_len bytes of payload already in
 * its send slot, no buffer to retire, no completion asked for. */
static inline int msga__conn_send_ctl(struct msga__conn *c,
				      struct msga__wire_hdr *h,
				      uint32_t ctl_len)
{
	struct msga__send_desc m = { .hdr = h, .ctl_len = ctl_len,
				     .tag = MSGA__TAG_NONE };

	return msga__conn_send(c, &m);
}
/* A CREDIT message, if there is room for it (-EAGAIN: none). */
static inline int msga__conn_send_credit(struct msga__conn *c)
{
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };

	if (!msga__conn_can_ctl(c))
		return -EAGAIN;
	return msga__conn_send_ctl(c, &h, 0);
}

/* rc_pub.c: a publisher's connections, for its table (rc_pub_ops.c) and
 * rc_fanout.c */
void msga__rc_pub_on_request(struct msga_pub *pub,
			     const struct rdma_cm_event *ev);
int msga__conn_announce(struct msga_pub *pub, struct msga__conn *c);
/* rc_fanout.c: the rdma:// publisher's data path (struct msga__pub_ops) */
int msga__rc_pub_ready(struct msga_pub *pub, uint32_t topic_id, size_t len);
void msga__rc_pub_held_up(struct msga_pub *pub);
int msga__rc_pub_commit(struct msga_pub *pub, const struct msga_claim *claim,
			uint32_t slot, int big);
int msga__rc_pub_send(struct msga_pub *pub, uint32_t topic_id,
		      const void *data, size_t len);
int msga__rc_pub_progress(struct msga_pub *pub);
int msga__rc_pub_flushed(struct msga_pub *pub, int first);
/* A connection of pub->conns or sub->rc.conns, from its own_node. */
static inline struct msga__conn *msga__own_conn(struct msga__list *pos)
{
	return msga__container_of(pos, struct msga__conn, own_node);
}

/* Whether connection c's subscriber takes topic t. */
static inline int msga__topic_bit(const struct msga__conn *c, uint32_t t)
{
	return (int)((c->match[t / 64] >> (t % 64)) & 1);
}

/* rc_sub.c: a subscriber's connection made, with its owner's callbacks */
int msga__rc_sub_connect(struct msga_sub *sub, const char *uri,
			 const struct sockaddr_storage *ss, uint32_t *id);
/*
 * rc_sub_retry.c: reconnection (0.10). A connection's record
 * (lib/core/retry.h) waits on sub->rc.retries once it ended for a reason
 * that may pass. msga__rc_sub_retry (rc_sub.c) makes the try's
 * connection (its conn_id, quiet about a failure already told): 0, or
 * -errno when it could not start (the record stays the caller's).
 */
void msga__rc_retry_gone(struct msga__conn *c, int status, int notify);
int msga__rc_sub_retry(struct msga_sub *sub, struct msga__retry *r);
/*
 * rc_sub_ep.c: everything that arrived (the ring's records, then the CQ
 * when due), up to budget: the subscriber's drain.
 */
int msga__rc_sub_conn_drain(struct msga__conn *c, int budget);
/* rc_sub_cm.c: its handshake (rdma_cm events), and the nudge of a
 * publisher that has not answered it. */
void msga__sub_on_cm(struct msga__conn *c, const struct rdma_cm_event *ev);
uint64_t msga__sub_nudge(struct msga__conn *c, uint64_t now);
/*
 * rc_sub_rx.c: what arrives, decoded and delivered in place (a SEND's
 * message, or the ring's records up to budget), and held past the
 * callback; every reassembly buffer freed (held, idle, the current one).
 */
int msga__sub_on_recv(struct msga__conn *c, struct msga__rxslot *slot,
		      const struct msga__wire_hdr *h, const char *payload,
		      uint32_t plen, uint64_t now_ns);
int msga__sub_ring_poll(struct msga__conn *c, int budget);
int msga__rc_hold(const struct msga_msg *msg, struct msga__rxslot *slot);
void msga__rc_release(const struct msga_msg *msg, struct msga__rxslot *slot);
void msga__rs_free_all(struct msga__conn *c);
/*
 * rc_sub_stats.c (0.10): a subscriber's connections' counters, for
 * msga_sub_line_stats, msga_sub_stats and the live counters (the table's
 * line, line_at and stats); a connection's, kept when it goes.
 */
int msga__rc_sub_line(const struct msga_sub *sub, uint32_t conn_id,
		      struct msga_line_stats *st);
int msga__rc_sub_line_at(const struct msga_sub *sub, uint32_t idx,
			 struct msga_line_stats *st);
void msga__rc_sub_stats(const struct msga_sub *sub, struct msga_sub_stats *st);
void msga__rc_sub_count_gone(struct msga__conn *c, int status, int notify);

#endif
