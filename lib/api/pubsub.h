/* SPDX-License-Identifier: MIT */
/*
 * pubsub.h - the layout of the public objects, struct msga_pub and struct
 * msga_sub, shared by lib/api (which owns them) and the transports, which
 * fill in their own parts: lib/rc (rc.h; the publisher's part is
 * struct msga__pub_rc, rc_pub.h) and lib/ud (mcast.h). Transports include
 * this for the fields; they call nothing in lib/api. A publisher reaches
 * its transport through one table, struct msga__pub_ops, and a
 * subscriber through struct msga__sub_ops, which the transports fill
 * (lib/rc/rc_pub_ops.c, rc_sub_ops.c; lib/ud/mcast_pub_ops.c,
 * mcast_sub_ops.c) and lib/api picks by the uri's scheme. The progress
 * engine (lib/core/engine.c) drives all of them through their struct
 * msga__ep_ops (endpoint.h).
 */
#ifndef MSGA_PUBSUB_H
#define MSGA_PUBSUB_H

#include "internal.h"
#include "doorbell.h"
#include "endpoint.h"
#include "hold.h"
#include "last_value.h"
#include "list.h"
#include "mcast_map.h"
#include "reasm.h"
#include "reject_limit.h"
#include "rc_pub.h"
#include "ud_obj.h"
#include "repair.h"
#include "retain.h"
#include "topic.h"
#include "tres_wire.h"
#include "ud_stream.h"
#include "wire.h"
#include "wr_batch.h"

#define MSGA__PUB_TX_SLOTS 128u  /* publisher's shared send buffers */
/* One send (and RC receive) buffer: an RC header and a whole fragment. */
#define MSGA__DATA_SLOT (MSGA__WIRE_HDR_LEN + MSGA_FRAG_MAX) /* 4096 */

/* Tags for what a send work request still references. */
#define MSGA__TAG_NONE (-1)
#define MSGA__TAG_BIG (-2)
#define MSGA__TAG_BATCH (-3)

/* A claim's send buffer when it is not one of the tx slots. */
#define MSGA__SLOT_BIG UINT32_MAX          /* big_buf: fragmented */
#define MSGA__SLOT_INLINE (UINT32_MAX - 1) /* none: the caller's, inline */

/*
 * The 0.4 and later fields of struct msga_pub_attr, which a caller built
 * against 0.3 does not have (its smaller .size says so): absent or 0 is
 * the default.
 */
#define MSGA__PUB_ATTR_HAS(attr, field) \
	((attr)->size >= offsetof(struct msga_pub_attr, field) + \
			 sizeof((attr)->field) && (attr)->field)

struct msga__conn;
struct msga__udep;
struct msga__srq;
struct msga_pub;

/*
 * One receive buffer; a held message keeps it from being re-posted. Which
 * of its messages are held is ours (hold.h), never a byte of the buffer,
 * which is the peer's once re-posted. (The RDMA WRITE ring's messages
 * share one slot; its reader keeps their holds: ring.h.)
 */
struct msga__rxslot {
	struct msga__conn *conn;       /* of an RC connection, or ... */
	struct msga__udep *ud;         /* ... of a multicast membership */
	uint32_t idx;
	struct msga__holds holds;
};
/* Every message a receive buffer can carry has a bit in its holds. */
_Static_assert((MSGA__DATA_SLOT - MSGA__WIRE_HDR_LEN) / MSGA__WIRE_HDR_LEN <
		       MSGA__HOLD_RECS_MAX,
	       "a BATCH buffer carries more records than hold.h tracks");

struct msga__topic {
	char name[MSGA_TOPIC_MAX + 1];
	uint64_t seq;                  /* last sequence committed */
	uint32_t group;                /* multicast: index in mc->groups */
	uint32_t group_b;              /* ... and on the B line, if any */
	uint8_t name_len;
	/* UD heartbeats (mcast_pub.c): seq at the last look, when the
	 * next heartbeat is due, and the interval after it */
	uint64_t hb_seq;
	uint64_t hb_due_ns;
	uint64_t hb_gap_ns;
	/* reliable: the range last resent, and when (mcast_retx.c) */
	uint64_t retx_lo, retx_hi, retx_at_ns;
};

/*
 * The outstanding claim as msga_pub_claim() made it. The caller's struct
 * msga_claim is the caller's memory: commit and abort check it against
 * this and use this, so a changed claim is refused, not followed.
 */
struct msga__claim_rec {
	char *data;                    /* in tx_buf or big_buf */
	uint32_t slot;                 /* tx slot, or MSGA__SLOT_BIG */
	uint32_t topic;
	uint32_t len;                  /* the most commit may send */
	uint32_t gen;                  /* tells this claim from earlier ones */
};

/* What msga_pub_create() checked and hands to the transport's open. */
struct msga__pub_args {
	const char *uri;
	const char *uri_b;             /* msga_pub_attr.uri_b, or NULL */
	uint64_t retransmit_bytes;     /* MSGA_PUB_RELIABLE: what to keep */
};

/* msga__pub_ops.send and .commit: go the general way instead. */
#define MSGA__PUB_CLAIM (-1)   /* send: claim a buffer, then commit */
#define MSGA__PUB_INLINE (-2)  /* send: wait for room, commit inline */
#define MSGA__PUB_AS_SEND (-3) /* commit: send it as msga_pub_send() */

/*
 * What a transport does for a publisher. lib/api keeps the argument
 * checks, the claim, the topics, the send buffers and the object's life,
 * and reaches the transport only through this table (nng's
 * nni_sp_pipe_ops, libfabric's fid_ep ops). Ops marked "may be NULL" are
 * skipped when the transport has nothing to do there.
 */
struct msga__pub_ops {
	/* msga_pub_create's checks of attr for this transport, before
	 * anything is allocated: 0 or -EINVAL (the last error says why) */
	int (*check)(struct msga_ctx *ctx, const struct msga_pub_attr *attr);
	/* listen, or join: the publisher's fields are set up already */
	int (*open)(struct msga_pub *pub, const struct msga__pub_args *a);
	/* room for a message of len bytes on topic_id now: 0, -EAGAIN or
	 * why never (the big message and send buffers are lib/api's) */
	int (*ready)(struct msga_pub *pub, uint32_t topic_id, size_t len);
	/* after a -EAGAIN: mark who holds the stream up (may be NULL) */
	void (*held_up)(struct msga_pub *pub);
	/* the claim's trip to the wire: claim->data is in send buffer slot
	 * (or big_buf: big). Subscribers reached, -errno, or
	 * MSGA__PUB_AS_SEND */
	int (*commit)(struct msga_pub *pub, const struct msga_claim *claim,
		      uint32_t slot, int big);
	/* msga_pub_send's own way, before any claim: subscribers reached,
	 * or MSGA__PUB_CLAIM or MSGA__PUB_INLINE; never -errno (may be
	 * NULL: always claim) */
	int (*send)(struct msga_pub *pub, uint32_t topic_id, const void *data,
		    size_t len);
	/* topic_id is new (counted already): 0, or -errno to take it back */
	int (*topic_added)(struct msga_pub *pub, uint32_t topic_id);
	/* the work no completion starts; 1 if some remains (msga__pub_work) */
	int (*progress)(struct msga_pub *pub);
	/* an rdma_cm event on the publisher's own id (may be NULL) */
	void (*on_cm)(struct msga_pub *pub, const struct rdma_cm_event *ev);
	int (*port)(const struct msga_pub *pub);
	int (*subscribers)(const struct msga_pub *pub);
	/* msga_pub_destroy: say goodbye while the queue pair works (may be
	 * NULL) */
	void (*close)(struct msga_pub *pub);
	/* destroyed in a callback: stop all that could call the user */
	void (*bury)(struct msga_pub *pub);
	/* free the transport's part (also of a half-made publisher) */
	void (*free)(struct msga_pub *pub);
	/* msga_pub_stats: the figures read where the transport keeps them
	 * (conn_slots, subscribers, unmatched, ...), into st */
	void (*stats)(const struct msga_pub *pub, struct msga_pub_stats *st);
	/* msga_pub_conn_stats: slot idx into st (its size is ours): 0,
	 * -ENOENT or -EOPNOTSUPP */
	int (*conn_stats)(const struct msga_pub *pub, uint32_t idx,
			  struct msga_pub_conn_stats *st);
	/* msga_pub_flush: has every committed message reached every
	 * current subscriber? 1 yes, 0 not yet (it may post what makes
	 * progress visible), or -errno (never will). first: the flush's
	 * first look */
	int (*flushed)(struct msga_pub *pub, int first);
	/* post what its send queues hold back (doorbell.h): 0, or the
	 * first -errno of a queue that died at it */
	int (*doorbell)(struct msga_pub *pub);
	/* (0.11) topic resolution: what a subscriber needs to reach
	 * topic_id, into a (kind, flags, port, addr, origin; the caller
	 * sets the topic). An unspecified address: the context's own.
	 * line: 0, or (0.12) 1 for a multicast publisher's line B (uri_b),
	 * whose record carries MSGA__TRW_F_LINE_B. 1 if a was filled, 0 if
	 * the publisher has no such line. */
	int (*advert)(const struct msga_pub *pub, uint32_t topic_id,
		      uint32_t line, struct msga__trw_advert *a);
};

/* The tables msga_pub_create() picks from, by the uri's scheme. */
extern const struct msga__pub_ops msga__rc_pub_ops;    /* rc_pub_ops.c */
extern const struct msga__pub_ops msga__mcast_pub_ops; /* mcast_pub_ops.c */
extern const struct msga__pub_ops msga__ud_pub_ops;    /* mcast_pub_ops.c */

struct msga_pub {
	struct msga__ep eng;           /* the engine's: listen->context */
	const struct msga__pub_ops *ops; /* the transport's (uri scheme) */
	struct msga_ctx *ctx;
	uint32_t flags;
	msga_event_cb on_event;
	void *user;
	struct msga__pub_rc rc;        /* rdma:// (lib/rc/rc_pub.h) */
	struct msga__reject_limit rejects; /* MSGA_EVENT_REJECTED */
	uint64_t slow_ns;              /* msga_pub_attr.slow_consumer_ms */
	uint32_t linger_ms;            /* msga_pub_attr.linger_ms */
	char label[96];                /* its uri, for msga_stat -p (cut) */
	struct msga__export *exp;      /* live counters (stat_export.c) */
	struct msga__topic *topics;
	uint32_t ntopics;
	/* MSGA_PUB_LAST_VALUE (0.12): each topic's last message, or NULL */
	struct msga__lv_store *lv;
	/* topic resolution (lib/core/resolver.h): each topic's adverts,
	 * [2 * topic_id + line] (line B: a multicast uri_b's), NULL when
	 * its context does not advertise */
	struct msga__tres_adv **adverts;

	/* shared send buffers, one per claimed message (free stack) */
	char *tx_buf;
	struct ibv_mr *tx_mr;
	uint16_t *tx_ref;
	uint32_t *tx_free;
	uint32_t tx_nfree;
	int claimed;                   /* a claim is outstanding: ... */
	struct msga__claim_rec claim;  /* ... what it was given */

	/* one message larger than a fragment at a time */
	char *big_buf;
	struct ibv_mr *big_mr;
	int big_busy;
	uint32_t big_len;
	uint16_t big_topic;
	uint64_t big_seq;

	struct msga__pub_ud ud;        /* mcast://, ud:// (lib/ud/ud_obj.h) */
	/*
	 * Doorbells (lib/proto/doorbell.h), read by the send queues:
	 * db_more: the commit in progress has MSGA_COMMIT_MORE; db_coalesce:
	 * hold back while busy (no MSGA_PUB_NO_COALESCE); db_held: some
	 * queue holds sends back, db_held_more: some of them under MORE
	 * (the next plain commit rings those).
	 */
	uint8_t db_more, db_coalesce, db_held, db_held_more;
	int dead;                       /* destroyed in a callback (engine.c) */
	/*
	 * Counters (msga_pub_stats): plain single-writer increments where
	 * the code touches the publisher anyway; the fields read at the
	 * call (subscribers, retained_bytes, ...) stay 0 here. One struct,
	 * so that it can move to shared memory whole.
	 */
	struct msga_pub_stats st;
};

/*
 * What a transport does for a subscriber, which may hold connections of
 * every transport at once: msga_sub_connect() picks the table by the
 * uri's scheme, the rest of lib/api/subscriber.c asks each transport in
 * turn (msga__sub_transports), and a held message's slot names its own
 * (slot->ud).
 */
struct msga__sub_ops {
	/* a connection or membership to uri: 0 with *id set, or -errno */
	int (*connect)(struct msga_sub *sub, const char *uri, uint32_t *id);
	/* 0, or -ENOENT when conn_id is none of this transport's */
	int (*disconnect)(struct msga_sub *sub, uint32_t conn_id);
	/* its timers: when next due (may be NULL) */
	uint64_t (*tick)(struct msga_sub *sub, uint64_t now);
	/* destroyed in a callback: stop all that could call the user */
	void (*bury)(struct msga_sub *sub);
	/* free the transport's part */
	void (*free)(struct msga_sub *sub);
	/* msga_msg_hold / msga_msg_release of a message of slot */
	int (*hold)(const struct msga_msg *msg, struct msga__rxslot *slot);
	void (*release)(const struct msga_msg *msg,
			struct msga__rxslot *slot);
	/* msga_sub_line_stats: its fields into st (whole struct, zeroed by
	 * the caller), 0, or -ENOENT when conn_id is none of this
	 * transport's lines (NULL: the transport has no lines) */
	int (*line)(const struct msga_sub *sub, uint32_t conn_id,
		    struct msga_line_stats *st);
	/* (0.10) the same for its connection at idx, 0 up, in any order
	 * but stable between calls that change nothing: the live counters
	 * list them; -ENOENT past the last (NULL: none to list) */
	int (*line_at)(const struct msga_sub *sub, uint32_t idx,
		       struct msga_line_stats *st);
	/* (0.10) its own fields of msga_sub_stats into st (NULL: none) */
	void (*stats)(const struct msga_sub *sub, struct msga_sub_stats *st);
};

/* Ask each transport for conn_id's line (subscriber.c): 0 or -ENOENT. */
int msga__sub_line(const struct msga_sub *sub, uint32_t conn_id,
		   struct msga_line_stats *st);
/* Line idx of every transport's listable lines together: 0 or -ENOENT. */
int msga__sub_line_at(const struct msga_sub *sub, uint32_t idx,
		      struct msga_line_stats *st);
/* Every transport's own fields of msga_sub_stats into st. */
void msga__sub_stats_more(const struct msga_sub *sub,
			  struct msga_sub_stats *st);

/* The subscriber's tables: rdma:// (rc_sub_ops.c), mcast:// and ud://
 * (mcast_sub_ops.c), topic:// (lib/api/sub_byname.c). */
extern const struct msga__sub_ops msga__rc_sub_ops;
extern const struct msga__sub_ops msga__ud_sub_ops;
extern const struct msga__sub_ops msga__byname_sub_ops;

/* A connection of the uri's transport, as msga_sub_connect() makes it:
 * 0 with *id set, or -errno (subscriber.c; topic:// makes its own so). */
int msga__sub_connect_uri(struct msga_sub *sub, const char *uri, uint32_t *id);

/* One publisher a subscription by name connected to (sub_byname.c). */
struct msga__byname_conn {
	uint64_t origin;
	uint32_t conn_id;
	int used;
	char uri[80];
};

struct msga__sub_byname {
	uint32_t id;                   /* its own conn_id */
	uint32_t watch;                /* the resolver's watch slot */
	uint64_t conns, refused;       /* msga_sub_stats.byname_* */
	struct msga__byname_conn conn[MSGA_SUB_BYNAME_MAX];
};

struct msga_sub {
	struct msga__ep eng;           /* the engine's: timers, reaping */
	struct msga_ctx *ctx;
	char pattern[MSGA_TOPIC_MAX + 2];
	msga_msg_cb on_msg;
	msga_event_cb on_event;
	void *user;
	uint32_t next_id;              /* connection ids, every transport's */
	struct msga__sub_rc rc;        /* rdma:// (lib/rc/rc_pub.h) */

	uint32_t flags;
	struct msga__sub_ud ud;        /* mcast://, ud:// (lib/ud/ud_obj.h) */
	struct msga__export *exp;      /* live counters (stat_export.c) */
	struct msga__export *exp_conns; /* ... its rdma:// connections' */
	struct msga__sub_byname *byname; /* topic:// (sub_byname.c) */
	int dead;                      /* destroyed in a callback (engine.c) */
};


/* pub has work for its work op (msga__pub_progress): the next polls. */
static inline void msga__pub_work(struct msga_pub *pub)
{
	msga__ctx_want_work(pub->ctx);
}

/*
 * Post wr on a send queue of pub (NULL: a subscriber's, never held back)
 * that has outstanding requests not known complete: held back while
 * lib/proto/doorbell.h says so, to go at pub's doorbell (the next poll
 * at the latest). 0 or ibv_post_send's positive errno (wr_batch.h).
 */
static inline int msga__pub_post(struct msga_pub *pub, struct msga__wrb *b,
				 struct ibv_qp *qp, struct ibv_send_wr *wr,
				 uint64_t outstanding, uint32_t sq_depth,
				 uint32_t sig_every)
{
	int hold = pub && msga__db_hold(pub->db_more, pub->db_coalesce,
					outstanding, b->n, sq_depth,
					sig_every);
	int ret = msga__wrb_post(b, qp, wr, hold);

	if (!ret && b->n) {
		pub->db_held = 1;
		pub->db_held_more |= pub->db_more;
		msga__ctx_want_work(pub->ctx); /* (the poll rings it) */
	}
	return ret;
}

/* How many of pub's topics pattern matches (msga_pub_conn_stats). */
static inline uint32_t msga__pub_topics_matched(const struct msga_pub *pub,
						const char *pattern)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < pub->ntopics; i++)
		n += msga__topic_match(pattern, pub->topics[i].name) != 0;
	return n;
}

/* A subscriber of pub went away with status (its DISCONNECTED event). */
static inline void msga__pub_count_gone(struct msga_pub *pub, int status)
{
	if (!status)
		pub->st.gone_clean++;
	else if (status == -ECONNRESET)
		pub->st.gone_reset++;
	else if (status == -ETIMEDOUT)
		pub->st.gone_timeout++;
	else if (status == -ENOBUFS)
		pub->st.gone_slow++;
	else
		pub->st.gone_other++;
}

/* A send buffer back on the publisher's free stack (every transport). */
static inline void msga__pub_slot_put(struct msga_pub *pub, uint32_t slot)
{
	pub->tx_free[pub->tx_nfree++] = slot;
}


#endif
