/* SPDX-License-Identifier: MIT */
/*
 * mcast.h - private types of the multicast (UD) transport: a UD endpoint
 * (udep.c: one rdma_cm id bound to the context's address, its UD queue
 * pair, CQ and buffers, and the groups it joined), the publisher side
 * (mcast_pub.c) and the subscriber side (mcast_sub.c).
 *
 * A publisher has one endpoint for all its groups and joins them send-only
 * where it can. A subscriber has one endpoint per membership (group), so a
 * membership is left, stopped or freed on its own, and a message's
 * membership is known from the queue pair it arrived on.
 */
#ifndef MSGA_MCAST_H
#define MSGA_MCAST_H

#include "replay_guard.h"
#include "internal.h"
#include "wr_batch.h"
#include "endpoint.h"
#include "mcast_map.h"
#include "reasm.h"
#include "repair_sched.h"
#include "ud_stream.h"
#include "ud_wire.h"

/* Fragments one msga_ctx_poll() posts: others on the loop get a turn. */
#define MSGA__UD_PUMP_BATCH 16u
#define MSGA__UD_PUB_SQ_DEPTH 512u
#define MSGA__UD_SIG_EVERY 32u
#define MSGA__UD_GRH 40u
#define MSGA__UD_HDR_SLOT 192u       /* per send queue slot: header, MAC */
#define MSGA__UD_REASM_TIMEOUT_NS 100000000ull /* 100 ms */
#define MSGA__UD_MIN_FRAG 128u
/*
 * A stream silent this many peer timeouts (msga_ctx_attr.peer_timeout_ms)
 * may be forgotten when a new stream needs its place in the table.
 */
#define MSGA__UD_STREAM_IDLE_PEER_TIMEOUTS 3u
/*
 * Streams on probation (ud_stream.h): first heard from a datagram, not yet
 * corroborated; LRU among themselves. Their indexes follow the verified
 * streams' MSGA_SUB_STREAMS_MAX. A stream is verified after
 * MSGA__UD_CONFIRMS datagrams that agree with it (the next number, or a
 * heartbeat of its position).
 */
#define MSGA__UD_PROBATION_MAX 64u
#define MSGA__UD_STREAMS_ALL (MSGA_SUB_STREAMS_MAX + MSGA__UD_PROBATION_MAX)
#define MSGA__UD_CONFIRMS 2u
/* Their reassembly, apart from the verified streams': two messages. */
#define MSGA__UD_PROBATION_REASM_BYTES (2ull * MSGA_MSG_MAX)
#define MSGA__UD_DESTS_MAX 64u       /* unicast subscribers per publisher */
/*
 * ud:// return-routability (ud_unicast.c): subscribers one source address
 * (GID) may have at one publisher; address handles for answers to
 * sources not yet subscribed (COOKIE), reused once their send is done;
 * a cookie's time step (it is good in its step and the next).
 */
#define MSGA__UD_DESTS_PER_SOURCE 16u
#define MSGA__UD_REPLY_AHS 4u
#define MSGA__UD_COOKIE_STEP_NS (1ull << 31) /* ~2.1 s */
#define MSGA__UD_PUB_RX_DEPTH 64u    /* unicast publisher: control in */
#define MSGA__UD_SUB_SQ_DEPTH 16u    /* unicast subscriber: control out */
#define MSGA__UD_RESEND_NS 200000000ull   /* SUBSCRIBE until SUBACK */
/* A destroyed publisher waits this long at most for its streams' ENDs. */
#define MSGA__UD_END_WAIT_NS 100000000ull /* 100 ms */
/* A subscriber looks for silent streams this often at least. */
#define MSGA__UD_SILENCE_LOOK_NS 10000000ull /* 10 ms */
/* A publisher's queue pair restarts after a failed send, the n-th time in
 * a row after min(2^n, 1024) ms (udep.c). */
#define MSGA__UD_RESTART_MAX_SHIFT 10u
/*
 * A reliable publisher's answers to NAKs (mcast_retx.c): a topic's range
 * resent this recently is not resent for another NAK; at most BUDGET
 * datagrams go out for NAKs per WINDOW; and resends leave half the send
 * buffers to the live stream.
 */
#define MSGA__UD_RETX_HOLDOFF_NS 5000000ull  /* 5 ms */
#define MSGA__UD_RETX_WINDOW_NS 10000000ull  /* 10 ms */
#define MSGA__UD_RETX_BUDGET 256u
#define MSGA__UD_PUB_NAK_DEPTH 64u           /* receives for NAKs */
/*
 * A subscriber's recovery (mcast_repair.c): NAK timing (the first after a
 * random wait up to DELAY, so that subscribers missing the same datagram
 * do not all ask at once; then every RETRY), the publishers it can NAK at
 * once, and the open gaps a stream may have.
 */
#define MSGA__UD_NAK_DELAY_NS 1000000ull     /* 1 ms */
#define MSGA__UD_NAK_RETRY_NS 20000000ull    /* 20 ms */
#define MSGA__UD_NAKDST_MAX 64u
#define MSGA__UD_REPAIR_GAPS 64u
/*
 * NAKs due in one round (mcast_repair.c) are shared between the streams
 * that have them (repair_sched.h, msga__rsched_share): at most
 * NAK_ROUND_MAX ranges a round (more wait for the next), within a
 * window paced by what comes back, from NAK_WINDOW_MIN numbers per
 * NAK_RETRY up to RETX_BUDGET (what a publisher resends in one window).
 */
#define MSGA__UD_NAK_ROUND_MAX 256u
#define MSGA__UD_NAK_WINDOW_MIN 16u
/*
 * Repair by RDMA READ. Publisher (mcast_serve.c): subscribers it serves
 * at once, and how long one may take to finish connecting. Subscriber
 * (mcast_read.c): publishers it reads from at once; a READ of at most
 * READ_MAX bytes of the ring (a chunk), READ_BATCHES of them in flight
 * per publisher; READ_REGIONS separate spans of its ring waiting to be
 * read (more are merged, repair_sched.h); a connection that failed is
 * tried again after RCONN_RETRY; rdma_cm's resolve timeouts.
 */
#define MSGA__UD_READERS_MAX 64u
#define MSGA__UD_READER_HANDSHAKE_NS 2000000000ull /* 2 s */
#define MSGA__UD_RCONN_MAX 16u
#define MSGA__UD_READ_MAX (64u << 10)
#define MSGA__UD_READ_BATCHES 4u
#define MSGA__UD_READ_REGIONS 64u
#define MSGA__UD_RCONN_RETRY_NS 5000000000ull /* 5 s */
#define MSGA__UD_RCONN_RESOLVE_MS 2000

/* A receive's wr_id carries this bit, a send's is its sequence number:
 * the opcode of an error completion is undefined, the wr_id is not. */
#define MSGA__UD_WR_RECV (1ull << 63)
/* (keepalives and the silence that ends a peer: msga__keepalive_ns() and
 * ctx->peer_timeout_ns, msga_ctx_attr.peer_timeout_ms) */

enum msga__group_state {
	MSGA__G_JOINING = 1,
	MSGA__G_READY,
	MSGA__G_FAILED,
	MSGA__G_REJOINING,           /* lost after a join; retried (rejoin) */
};

struct msga__parked_ah {
	struct ibv_ah *ah;
	uint64_t until_seq;          /* sends before this one may use it */
};

/* One group an endpoint joined or is joining. */
struct msga__mgroup {
	struct msga__udep *ep;
	struct sockaddr_storage addr;
	char name[INET6_ADDRSTRLEN];
	int state;
	int status;                  /* FAILED: why */
	int sendonly;                /* this join is send-only */
	int joined;                  /* rdma_join_multicast succeeded */
	/* the join's: our port, GID index, hop limit (mcast_repair.c) */
	struct ibv_ah_attr join_attr;
	struct ibv_ah *ah;
	uint32_t qpn, qkey;
	/*
	 * Unicast destinations only (counted): sends still queued to ah. A
	 * dropped destination keeps its ah until they complete (retiring),
	 * since a send whose ah is gone fails and takes the QP with it.
	 */
	int counted, retiring;
	uint32_t inflight;
	/* rejoin after the fabric dropped a joined group (udep_policy.h) */
	int was_ready;               /* joined once: a loss is rejoined */
	uint32_t rejoin_attempt;
	uint64_t rejoin_at_ns;
};

/* One subscriber connected to a publisher's READ endpoint (mcast_serve.c). */
struct msga__rreader {
	struct rdma_cm_id *id;       /* NULL: free */
	int established;
	uint64_t since_ns;           /* the request came */
};

struct msga__rserve {
	struct msga__ep eng;         /* every id's context; on no list */
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	struct rdma_cm_id *listen;
	uint16_t port;               /* announced in every datagram (RPOS) */
	struct ibv_cq *cq;           /* the readers' QPs': never used */
	/* The readers' QPs and mr, alone: the retention key opens the block
	 * to these QPs only, not to any other connection of the context. */
	struct ibv_pd *pd;
	struct ibv_mr *mr;           /* the retention block: remote read */
	uint64_t len, cap;
	struct msga__rreader readers[MSGA__UD_READERS_MAX];
	uint32_t nreaders;
	uint64_t served, refused;
	struct msga__replay_guard replay; /* keys: requests used (read_auth.c) */
};

/* Where in a publisher's ring a run of a stream's missing numbers lies. */
/* A stream's positions in its publisher's ring (mcast_read.c). */
struct msga__rstream {
	uint64_t top;                /* highest number placed, 0: none */
	uint64_t end;                /* the position after its record */
	uint32_t topic_id;           /* the publisher's id of the topic */
	/* its last gap given to the READ schedule: numbers up to read_last,
	 * their records below read_hi */
	uint64_t read_last, read_hi;
};

/* A topic of the publisher read from, and the stream it is here. */
struct msga__rtopic {
	uint32_t topic_id;
	uint32_t idx;                /* the stream */
	struct msga__udep *ep;       /* its membership */
	int took;                    /* a record of it was taken: a READ */
};

enum msga__rconn_state {
	MSGA__R_RESOLVING = 1,       /* address, then route */
	MSGA__R_CONNECTING,
	MSGA__R_READY,
	MSGA__R_FAILED,              /* tried again after RCONN_RETRY */
};

/* A subscriber's RC connection to one publisher's READ endpoint. */
struct msga__rconn {
	struct msga__ep eng;         /* the engine's: its CQ, its id */
	struct msga_sub *sub;
	uint64_t origin;
	int state;
	int armed;                   /* CQ armed for one event */
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	char *land;                  /* READ_BATCHES x (READ_MAX + 64) */
	struct ibv_mr *land_mr;
	uint32_t rkey;
	uint64_t cap;                /* the ring's bytes */
	uint64_t since_ns;           /* state entered */
	uint64_t used_ns;
	/* what to READ, in chunks, oldest first (repair_sched.h); chunk
	 * id i lands at land + i * (READ_MAX + 64) */
	struct msga__rsched sched;
	uint64_t broke_ns;           /* READ dropped some: NAK meanwhile */
	struct msga__rtopic *topics; /* a chunk's walk: sorted by topic_id */
	uint32_t ntopics;
	uint8_t nonce[16];           /* keys: our request's (read_auth.c) */
};

/* A range whose NAK is due this round (mcast_repair.c). */
struct msga__nak_due {
	uint32_t idx;                /* the stream */
	uint64_t seq, count;
};

/* Where one reliable publisher takes NAKs: its QP, from its datagrams. */
struct msga__nakdst {
	uint64_t origin;             /* 0: free */
	struct msga__mgroup g;       /* address handle (counted), QPN, Q_Key */
	uint64_t used_ns;
};

/*
 * What an endpoint tells its owner (a publisher, a membership). The owner
 * passes its table to msga__udep_new(), the way libuv's uv_read_start()
 * takes its callbacks: udep.c and ud_join.c know the callbacks' types, not
 * the files above them, so no call goes up (lib/ud/README.md). NULL: the
 * owner has no use for it.
 */
/*
 * A UD endpoint's state, one at a time; msga__udep_on() moves it, by the
 * table in udep.c. A multicast endpoint and any publisher's start READY;
 * a ud:// subscriber's goes through its SIDR handshake first.
 */
enum msga__udep_state {
	MSGA__UDEP_RESOLVING = 1,    /* ud:// subscriber: its publisher's QP */
	MSGA__UDEP_SUBSCRIBING,      /* ... SUBSCRIBE sent, no SUBACK yet */
	MSGA__UDEP_READY,            /* sends and takes datagrams */
	MSGA__UDEP_RESTARTING,       /* publisher: QP in error, restarts */
	MSGA__UDEP_CLOSING,          /* publisher destroyed: its ENDs go out */
	MSGA__UDEP_DEAD,             /* groups left, queues flushed */
};

enum msga__udep_event {
	MSGA__UDEP_EV_RESOLVE,       /* a new ud:// subscriber resolves */
	MSGA__UDEP_EV_PEER_FOUND,    /* SIDR reply: the publisher's QP */
	MSGA__UDEP_EV_SUBACK,        /* the publisher took our SUBSCRIBE */
	MSGA__UDEP_EV_QP_FAILED,     /* publisher: a send or receive failed */
	MSGA__UDEP_EV_QP_RESTARTED,  /* ... and the QP is back at RTS */
	MSGA__UDEP_EV_CLOSE,         /* publisher destroyed */
	MSGA__UDEP_EV_KILL,          /* msga__udep_kill() */
	MSGA__UDEP_EV_COUNT
};

struct msga__rxslot;
struct msga__udep_cb {
	/* A datagram that passed the MAC check; the owner reposts slot. */
	void (*on_recv)(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns);
	/* A send that held tag (not MSGA__TAG_NONE) is done. */
	void (*on_tag_done)(struct msga__udep *ep, int32_t tag);
	/* Group g joined (0), or is given up for good (-errno). */
	void (*on_group)(struct msga__mgroup *g, int status);
	/* A publisher's endpoint died: from the poll after the death. */
	void (*on_death)(struct msga__udep *ep, int status);
	/* rdma_cm events that are not a group's (unicast: SIDR). */
	void (*on_cm)(struct msga__udep *ep, const struct rdma_cm_event *ev);
	/* The owner's timers; returns when next due (UINT64_MAX: never). */
	uint64_t (*tick)(struct msga__udep *ep, uint64_t now_ns);
	/* A membership ended (msga__udep_kill): notify as the kill's. */
	void (*on_end)(struct msga__udep *ep, int status, int notify);
};

struct msga__udep {
	struct msga__ep eng;         /* the engine's: cm_id->context */
	const struct msga__udep_cb *cb; /* its owner's */
	struct msga__list own_node;  /* sub->ud.mships */
	struct msga_ctx *ctx;
	struct msga_pub *pub;        /* owner: a publisher ... */
	struct msga_sub *sub;        /* ... or a subscriber's membership */
	uint32_t id;                 /* conn_id of a membership */
	enum msga__udep_state state; /* moved by msga__udep_on() only */
	int armed;                   /* CQ armed for one event */
	struct rdma_cm_id *cm;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint32_t max_dgram;          /* path MTU: largest datagram */
	uint32_t max_inline;
	struct msga__dgram_auth *auth; /* a context with keys (dgram_auth.c) */

	/* receive ring (memberships) */
	uint32_t rx_depth, rx_slot;
	char *rx_buf;
	struct ibv_mr *rx_mr;
	struct msga__rxslot *rx_slots;
	uint32_t holds;
	uint32_t rx_posted;          /* receives not yet completed */
	struct msga__rxslot *cur;    /* slot being delivered, for hold */
	uint64_t cur_stamp;            /* ... and its msg.rx_time_ns */
	/* a line's counts (msga_sub_line_stats) */
	uint64_t line_first, line_behind;
	/* the datagram being classified (mcast_repair.c: its sender) */
	const struct ibv_wc *rx_wc;
	const void *rx_grh;
	/* ?source= (src_filter.c): the only senders taken; 0: any */
	uint32_t nsrc;
	union ibv_gid src_gid[MSGA_SUB_SOURCES_MAX];

	/* send queue (publishers) */
	uint32_t sq_depth, unsig;
	uint64_t tx_seq, tx_done;
	struct msga__wrb wrb;        /* posted but held back (doorbell.h) */
	int32_t *tx_tag;
	struct msga__mgroup **tx_dst; /* per send slot: a counted target */
	/*
	 * Publisher: its death's status until the next poll reports it (a
	 * message, not a state: 0 once told or when nothing died).
	 */
	int death_report;
	/*
	 * Publisher, RESTARTING: a send failed (a link that went down, say),
	 * the QP is in error; once every send is back it restarts (reset to
	 * RTS) at restart_at_ns, with backoff, rather than ending the
	 * publisher. It ends when sends have failed for a peer timeout.
	 */
	uint32_t restarts_in_row;
	uint64_t restart_at_ns;
	uint64_t failing_since_ns;   /* first failure of this run */
	uint64_t wc_errors;          /* error completions (publisher) */
	uint64_t qp_restarts;
	uint16_t pkey_index;         /* the QP's, to bring it back */
	uint8_t port_num;
	uint32_t qkey;
	/* group AHs replaced by a rejoin, freed once the sends before are */
	struct msga__parked_ah *parked;
	uint32_t nparked;
	char *hdr_buf;
	struct ibv_mr *hdr_mr;

	struct msga__mgroup *groups;
	uint32_t ngroups;

	/* the address of ?bind= (has_bind): its joins, and since 0.10 its
	 * READ repair connections (mcast_read.c), go from there */
	struct sockaddr_storage bind;
	int has_bind;

	/* unicast UD (ud_unicast.c) */
	int unicast;
	struct msga__mgroup peer;    /* subscriber: the publisher's QP */
	union ibv_gid peer_gid;      /* subscriber: and its GID */
	int peer_global;             /* (peer_gid known) */
	uint64_t nonce;              /* subscriber: names our SUBSCRIBEs */
	uint64_t cookie;             /* subscriber: the publisher's, 0 none */
	uint64_t started_ns, next_tx_ns, last_heard_ns;
	/* subscriber (0.10): its reconnection record (NULL: none, or
	 * waiting on sub->ud.retries), whether it was subscribed, and
	 * whether a failure of it was told already (a retry's) */
	struct msga__retry *retry;
	int was_ready, quiet_fail;
	/* publisher: the cookies' secret, and what was refused */
	uint8_t cookie_key[16];
	uint64_t cookies_sent, cookies_bad, source_full, dests_full;
};

/* A unicast UD subscriber as its publisher knows it. */
struct msga__udest {
	struct msga__mgroup g;       /* address handle, QPN, Q_Key, name */
	int used;
	uint32_t id;
	uint32_t src_qp;
	uint64_t nonce;              /* its SUBSCRIBEs' (keepalives too) */
	union ibv_gid gid;
	uint16_t lid;
	char pattern[MSGA_TOPIC_MAX + 2];
	uint32_t ann;                /* topics [0, ann) matched below */
	uint64_t match[MSGA_PUB_TOPICS_MAX / 64];
	uint64_t last_seen_ns;
	uint64_t msgs, bytes;        /* committed to it (msga_pub_conn_stats) */
};

/*
 * One datagram to send (libfabric's struct fi_msg, for one UD send): its
 * header, already written in the send slot's header buffer
 * (msga__udep_hdr_slot), then len bytes of data registered under lkey.
 * Unless it goes inline, tag names what the send holds until it completes
 * (cb->on_tag_done); signal asks for a completion now.
 */
struct msga__ud_msg {
	struct msga__mgroup *to;
	uint32_t hdr_len;
	const void *data;            /* NULL: a control datagram, header only */
	uint32_t len, lkey;
	int32_t tag;                 /* MSGA__TAG_NONE: holds nothing */
	int signal;
};

/*
 * A message going out datagram by datagram: the live stream's (from the
 * claimed buffer, or the big one) or a resend's (from a copy in a send
 * buffer, mcast_retx.c). One datagram of it, bytes [off, off + n), to g:
 * 1 when the send holds its data (not inlined), 0, or -errno.
 */
struct msga__mpub_msg {
	const char *data;  /* the whole message, registered under lkey */
	uint32_t len, lkey;
	int32_t tag;       /* the send buffer slot, or MSGA__TAG_BIG */
	uint32_t topic_id;
	uint64_t seq;
	uint8_t flags;     /* MSGA__UDW_RETX, MSGA__UDW_RPOS (then rpos) */
	uint64_t rpos;
};
/*
 * The owners' callbacks. A datagram publisher (mcast_pub.c) owns its
 * NAK answering (mcast_retx.c), its READ endpoint (mcast_serve.c) and,
 * for ud://, its handshake (ud_unicast.c); a subscriber's memberships
 * (mcast_sub.c) own their repair (mcast_repair.c, which owns the READs
 * of mcast_read.c) and the ud:// handshake. A lower file reaches its
 * owner only through these tables, never by name, so that lib/ud has no
 * call loop: mcast_pub_ops.c and mcast_sub_ops.c, the files above both,
 * fill them and set pub->ud.up, sub->ud.up before the transport opens.
 */
struct msga__pub_up {
	/* ud_unicast.c: the endpoint's geometry and origin, once made */
	int (*setup)(struct msga_pub *pub);
	/* ud_unicast.c: a NAK from a unicast subscriber (mcast_retx.c) */
	void (*nak)(struct msga_pub *pub, const struct msga__udw_hdr *h,
		    struct msga__mgroup *to, uint64_t now_ns);
	/* mcast_retx.c: where a topic goes, and the live stream's sends */
	uint64_t (*targets)(struct msga_pub *pub, uint32_t topic_id,
			    uint32_t *count);
	struct msga__mgroup *(*target)(struct msga_pub *pub,
				       uint32_t topic_id, uint32_t bit);
	uint32_t (*single_max)(const struct msga_pub *pub, uint32_t topic_id);
	int (*post_ctl)(struct msga_pub *pub, uint32_t topic_id, uint8_t type,
			uint64_t seq, uint32_t count, int signal);
	int (*post_piece)(struct msga_pub *pub, struct msga__mgroup *g,
			  const struct msga__mpub_msg *m, uint32_t off,
			  uint32_t n);
};

struct msga__sub_up {
	/* ud_unicast.c: the subscriber's streams, before its first member */
	int (*init)(struct msga_sub *sub);
	/* mcast_repair.c, mcast_read.c: a stream's membership, or NULL */
	struct msga__udep *(*mship)(struct msga_sub *sub, uint32_t conn_id);
	/* mcast_repair.c: hand a message, report a loss, end a membership */
	void (*hand)(struct msga__udep *ep, struct msga__ustream *s,
		     struct msga__rxslot *slot, uint64_t seq, const void *data,
		     uint32_t len, uint32_t flags, uint64_t now_ns);
	void (*stream_event)(struct msga__udep *ep,
			     const struct msga__ustream *s,
			     enum msga_event_type type, uint64_t seq,
			     uint64_t count);
	void (*stop)(struct msga__udep *ep, int status);
	/* mcast_read.c: a message READ got back; numbers it could not */
	void (*repaired)(struct msga__udep *ep, struct msga__ustream *s,
			 uint64_t seq, const void *data, uint32_t len,
			 uint64_t now_ns);
	void (*nak)(struct msga_sub *sub, struct msga__ustream *s,
		    uint64_t seq, uint64_t count);
};

/* udep.c */
int msga__udep_new(struct msga_ctx *ctx, const struct msga__udep_cb *cb,
		   uint32_t rx_depth, uint32_t sq_depth,
		   const struct sockaddr_storage *at, struct msga__udep **epp);
int msga__udep_sq_room(const struct msga__udep *ep);
int msga__udep_sendmsg(struct msga__udep *ep, const struct msga__ud_msg *m);
/* The short form: a control datagram, hdr_len bytes of header only. */
int msga__udep_send_hdr(struct msga__udep *ep, struct msga__mgroup *to,
			uint32_t hdr_len, int signal);
char *msga__udep_hdr_slot(struct msga__udep *ep);
int msga__udep_post_recv(struct msga__udep *ep, uint32_t idx);
int msga__udep_drain(struct msga__udep *ep, uint64_t until_ns);
void msga__udep_kill(struct msga__udep *ep, int status, int notify);
/* Post what ep holds back (doorbell.h): 0, or -ENETDOWN (ep died). */
int msga__udep_ring(struct msga__udep *ep);
void msga__udep_on(struct msga__udep *ep, enum msga__udep_event ev);
static inline int msga__udep_dead(const struct msga__udep *ep)
{
	return ep->state == MSGA__UDEP_DEAD;
}
void msga__udep_free(struct msga__udep *ep);

/*
 * ud_join.c: an endpoint's groups (join, rejoin with backoff, the address
 * handles a rejoin replaces) and the events it raises to its owner's user.
 * Below udep.c: it calls nothing there, and says through its return
 * value when the endpoint must die.
 */
int msga__udep_join(struct msga__udep *ep, const struct sockaddr_storage *g,
		    int sendonly, struct msga__mgroup **gp);
void msga__udep_emit(struct msga__udep *ep, const struct msga__mgroup *g,
		     enum msga_event_type type, int status);
int msga__ud_join_event(struct msga__udep *ep, const struct rdma_cm_event *ev);
uint64_t msga__ud_rejoin_tick(struct msga__udep *ep, uint64_t now_ns);
void msga__ud_unpark(struct msga__udep *ep, int all);
void msga__ud_leave_all(struct msga__udep *ep);
void msga__ud_groups_free(struct msga__udep *ep);

/* mcast_pub.c */
/* the ud:// publisher's endpoint callbacks (given to msga__upub_create) */
extern const struct msga__udep_cb msga__upub_cb;
int msga__mpub_create(struct msga_pub *pub, const char *uri,
		      const char *uri_b);
uint64_t msga__mpub_targets(struct msga_pub *pub, uint32_t topic_id,
			    uint32_t *count);
struct msga__mgroup *msga__mpub_target(struct msga_pub *pub,
				       uint32_t topic_id, uint32_t bit);
int msga__mpub_setup(struct msga_pub *pub);
int msga__mpub_topic_added(struct msga_pub *pub, uint32_t topic_id);
int msga__mpub_ready(struct msga_pub *pub, uint32_t topic_id, size_t len);
int msga__mpub_commit(struct msga_pub *pub, const struct msga_claim *claim,
		      uint32_t slot, int big);
/* msga_pub_send's own way (struct msga__pub_ops send): inline or claim. */
int msga__mpub_send(struct msga_pub *pub, uint32_t topic_id, const void *data,
		    size_t len);
void msga__mpub_tag_done(struct msga__udep *ep, int32_t tag);
void msga__mpub_progress(struct msga_pub *pub);
void msga__mpub_on_group(struct msga__mgroup *g, int status);
void msga__mpub_on_death(struct msga__udep *ep, int status);
uint64_t msga__mpub_tick(struct msga__udep *ep, uint64_t now);
void msga__mpub_close(struct msga_pub *pub);
int msga__mpub_flushed(struct msga_pub *pub, int first);
uint32_t msga__mpub_single_max(const struct msga_pub *pub, uint32_t topic_id);
int msga__mpub_post_ctl(struct msga_pub *pub, uint32_t topic_id, uint8_t type,
			uint64_t seq, uint32_t count, int signal);
int msga__mpub_post_piece(struct msga_pub *pub, struct msga__mgroup *g,
			  const struct msga__mpub_msg *m, uint32_t off,
			  uint32_t n);

/* mcast_retx.c */
int msga__mpub_retx_init(struct msga_pub *pub, uint64_t bytes);
void msga__mpub_retx_fini(struct msga_pub *pub);
void msga__mpub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns);
void msga__mpub_on_nak(struct msga_pub *pub, const struct msga__udw_hdr *h,
		       struct msga__mgroup *to, uint64_t now_ns);

/* mcast_sub.c */
/* a ud:// membership's endpoint callbacks (given to msga__usub_connect) */
extern const struct msga__udep_cb msga__usub_cb;
int msga__msub_connect(struct msga_sub *sub, const char *uri, uint32_t *id);
int msga__msub_init(struct msga_sub *sub);
void msga__msub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns);
void msga__msub_on_group(struct msga__mgroup *g, int status);
int msga__msub_hold(const struct msga_msg *msg, struct msga__rxslot *slot);
void msga__msub_release(const struct msga_msg *msg, struct msga__rxslot *slot);
void msga__msub_kill_all(struct msga_sub *sub);
void msga__msub_fini(struct msga_sub *sub);
int msga__msub_disconnect(struct msga_sub *sub, uint32_t conn_id);
uint64_t msga__msub_expire(struct msga_sub *sub, uint64_t now_ns);
uint64_t msga__msub_tick(struct msga_sub *sub, uint64_t now_ns);
void msga__msub_hand(struct msga__udep *ep, struct msga__ustream *s,
		     struct msga__rxslot *slot, uint64_t seq, const void *data,
		     uint32_t len, uint32_t flags, uint64_t now_ns);
void msga__msub_stream_event(struct msga__udep *ep,
			     const struct msga__ustream *s,
			     enum msga_event_type type, uint64_t seq,
			     uint64_t count);
void msga__msub_stop(struct msga__udep *ep, int status);
struct msga__udep *msga__msub_mship(struct msga_sub *sub, uint32_t conn_id);
int msga__msub_line(const struct msga_sub *sub, uint32_t conn_id,
		    struct msga_line_stats *st);

/* mcast_repair.c */
int msga__mrep_init(struct msga_sub *sub);
void msga__mrep_fini(struct msga_sub *sub);
void msga__mrep_begin(struct msga__udep *ep, struct msga__ustream *s,
		      const struct msga__udw_hdr *h, const struct ibv_wc *wc,
		      const void *grh);
void msga__mrep_deliver(struct msga__udep *ep, struct msga__ustream *s,
			struct msga__rxslot *slot,
			const struct msga__udw_hdr *h, const void *data,
			uint32_t len, uint64_t now_ns);
void msga__mrep_sent(struct msga__udep *ep, struct msga__ustream *s,
		     uint64_t last, uint64_t now_ns);
void msga__mrep_lost(struct msga__udep *ep, const struct msga__udw_hdr *h);
uint64_t msga__mrep_tick(struct msga_sub *sub, uint64_t now_ns);
void msga__mrep_forget(struct msga_sub *sub, uint32_t idx);
void msga__mrep_nak(struct msga_sub *sub, struct msga__ustream *s,
		    uint64_t seq, uint64_t count);
void msga__mrep_repaired(struct msga__udep *ep, struct msga__ustream *s,
			 uint64_t seq, const void *data, uint32_t len,
			 uint64_t now_ns);

/* mcast_serve.c */
int msga__mpub_serve_init(struct msga_pub *pub);
void msga__mpub_serve_fini(struct msga_pub *pub);
uint64_t msga__mpub_serve_tick(struct msga_pub *pub, uint64_t now);

/* mcast_read.c */
int msga__mread_init(struct msga_sub *sub);
void msga__mread_fini(struct msga_sub *sub);
void msga__mread_note(struct msga__udep *ep, struct msga__ustream *s,
		      const struct msga__udw_hdr *h);
void msga__mread_forget(struct msga_sub *sub, uint32_t idx);
int msga__mread_covers(struct msga_sub *sub, const struct msga__ustream *s,
		       uint32_t idx, uint64_t seq, uint64_t now_ns);

/* ud_unicast.c */
int msga__upub_create(struct msga_pub *pub, const char *uri,
		      const struct msga__udep_cb *cb);
void msga__upub_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev);
void msga__upub_on_request(struct msga__udep *ep, struct rdma_cm_id *id);
void msga__upub_on_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			const struct ibv_wc *wc, uint64_t now_ns);
uint64_t msga__upub_targets(struct msga_pub *pub, uint32_t topic_id,
			    uint32_t *count);
uint64_t msga__upub_tick(struct msga_pub *pub, uint64_t now_ns);
void msga__upub_fini(struct msga_pub *pub);
int msga__upub_drop_all(struct msga_pub *pub, int status);
int msga__usub_connect(struct msga_sub *sub, const char *uri,
		       const struct msga__udep_cb *cb, uint32_t *id);
void msga__usub_on_cm(struct msga__udep *ep, const struct rdma_cm_event *ev);
void msga__usub_on_ctl(struct msga__udep *ep, const struct msga__udw_hdr *h,
		       uint64_t now_ns);
uint64_t msga__usub_tick(struct msga__udep *ep, uint64_t now_ns);
void msga__usub_leave(struct msga__udep *ep);
/* ud:// reconnection (0.10): lib/core/retry.h's records on sub->ud.retries */
void msga__usub_on_end(struct msga__udep *ep, int status, int notify);
uint64_t msga__usub_retry_tick(struct msga_sub *sub,
			       const struct msga__udep_cb *cb, uint64_t now_ns);
int msga__usub_retry_cancel(struct msga_sub *sub, uint32_t conn_id);
int msga__udep_send_ctl(struct msga__udep *ep, struct msga__mgroup *to,
			const struct msga__udw_hdr *h, const char *pattern);
int msga__usub_from_peer(const struct msga__udep *ep, const struct ibv_wc *wc,
			 const void *grh);

/* dgram_auth.c: Q_Key and MAC of a context with keys */
uint32_t msga__ud_remote_qkey(const struct msga__udep *ep, uint32_t reported);
int msga__ud_qkey_apply(struct msga__udep *ep);
int msga__dgram_auth_init(struct msga__udep *ep);
void msga__dgram_auth_free(struct msga__udep *ep);
uint32_t msga__dgram_auth_room(const struct msga_pub *pub);
uint32_t msga__dgram_auth_send(struct msga__udep *ep, char *hdr,
			       uint32_t hdr_len, const void *data,
			       uint32_t len);
int msga__dgram_auth_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			  const struct ibv_wc *wc);

/* local_addr.c */
int msga__ctx_local_addr(struct msga_ctx *ctx, struct sockaddr_storage *ss);
uint32_t msga__host_id(void);
uint64_t msga__new_origin(void);
/* A UD datagram's sender GID from the 40 bytes before its payload. */
void msga__ud_sender_gid(const void *grh, union ibv_gid *gid);

/* src_filter.c: a membership's ?source= list, as GIDs ... */
struct msga__uri_opts;
void msga__src_filter_set(struct msga__udep *ep,
			  const struct msga__uri_opts *o);
/* ... and whether a received datagram (its wc, its GRH) passes it. */
int msga__src_filter_pass(const struct msga__udep *ep,
			  const struct ibv_wc *wc, const void *grh);
/* "mcast://GROUP[/BITS]" into a range; -EINVAL. */
int msga__parse_mcast_uri(const char *uri, struct msga__mcast_range *r);

/*
 * Keys on the READ endpoint (read_auth.c): the reader's connect private
 * data (its length; 0 without keys) and its check of the accept (0 or
 * -EACCES); the endpoint's check of a request (0 with *key set, NULL
 * without keys; -EACCES) and its accept's tag after the offer (the
 * accept's length).
 */
#define MSGA__READ_AUTH_WINDOW_MS 30000u
struct msga__key;
size_t msga__read_auth_connect(struct msga__rconn *rc, uint8_t *pdata);
int msga__read_auth_established(const struct msga__rconn *rc,
				const void *pdata, size_t plen);
int msga__read_auth_request(struct msga__rserve *sv, const void *pdata,
			    size_t plen, const struct msga__key **key,
			    uint8_t nonce[16]);
size_t msga__read_auth_accept(const struct msga__key *key,
			      const uint8_t *nonce, uint8_t *offer);

#endif
