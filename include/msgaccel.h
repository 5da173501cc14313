/* SPDX-License-Identifier: MIT */
/*
 * msgaccel.h - the one public header of libmsgaccel.
 *
 * Conventions (see msgaccel(7)):
 *  - every fallible call returns int: >= 0 on success, a negative errno on
 *    failure; msga_strerror() turns it into text;
 *  - handles are opaque; every public struct the library reads or fills
 *    starts with its size, so it can grow at its end without breaking the
 *    ABI (soname libmsgaccel.so.9 since 0.10.0; msgaccel(7), ABI): the
 *    caller sets size in its own memory (attributes, information,
 *    msga_claim), the library in its own (msga_msg, msga_event); no enum
 *    type is a member (a uint32_t holds the constants); reserved fields
 *    must be 0 (-EINVAL);
 *  - MSGA_* limits: protocol constants are fixed forever; the policy
 *    limits and attribute ranges are fixed for the soname (a change would
 *    bump it), so a caller may size arrays by them (msgaccel(7), ABI);
 *  - a context and everything created from it belong to one thread at a
 *    time; the library takes no locks on the fast path;
 *  - callbacks (on_msg, on_event, authorize) run only inside
 *    msga_ctx_poll(), or a MSGA_PUB_BLOCK claim or send that waits, on
 *    the calling thread. A callback may make any call on its context but
 *    two: poll it (msga_ctx_poll(), or a MSGA_PUB_BLOCK claim or send
 *    that would wait: -EDEADLK) and close it (ignored). A publisher or
 *    subscriber destroyed there, its own included, stops at once and is
 *    freed when the outermost call that runs callbacks returns
 *    (msga_ctx_poll(3), NOTES).
 */
#ifndef MSGACCEL_H
#define MSGACCEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MSGA_API __attribute__((visibility("default")))
#else
#define MSGA_API
#endif

#define MSGA_VERSION_MAJOR 0
#define MSGA_VERSION_MINOR 12
#define MSGA_VERSION_PATCH 0

/**
 * The running library's version, "MAJOR.MINOR.PATCH" (MSGA_VERSION_MAJOR,
 * _MINOR and _PATCH are the header's, which may differ). A constant string,
 * never NULL. Cannot fail. Any thread, any time; callbacks too.
 */
MSGA_API const char *msga_version(void);

/**
 * Text for an error code of any msga_ call, negative or positive (-EINVAL
 * and EINVAL give strerror(EINVAL)'s); unknown codes give "Unknown error
 * N". Never NULL; valid until this thread's next call into msgaccel.
 * Cannot fail. Any thread, any time; callbacks too.
 */
MSGA_API const char *msga_strerror(int err);

/* ------------------------------------------------------------------ */
/* Context: one opened RDMA device port and its protection domain.     */
/* ------------------------------------------------------------------ */

struct msga_ctx;

/** Transport of the device under a context. */
enum msga_transport {
	MSGA_TRANSPORT_UNKNOWN = 0,
	MSGA_TRANSPORT_IB = 1,    /* InfiniBand: LIDs, subnet manager */
	MSGA_TRANSPORT_ROCE = 2,  /* RoCE (v1 or v2): Ethernet link, GIDs */
	MSGA_TRANSPORT_IWARP = 3, /* iWARP: RC only, rdma_cm connections */
};

/** How msga_ctx_open() picked its device. */
enum msga_ctx_flags {
	/* Busy-poll only: do not create a completion channel / event fd. */
	MSGA_CTX_NO_EVENTS = 1u << 0,
	/*
	 * Since 0.10: no live-counters file (msgaccel(7), LIVE COUNTERS):
	 * msga_stat -p does not see this context.
	 */
	MSGA_CTX_NO_STATS = 1u << 1,
};

struct msga_resolver_attr; /* (below) */

/**
 * Attributes for msga_ctx_open(). Zero-fill, then set .size.
 * Device choice, in order: dev_name if set; else local_addr (resolved to a
 * device through rdma_cm); else the first device with an active port.
 */
struct msga_ctx_attr {
	uint32_t size;          /* sizeof(struct msga_ctx_attr) */
	uint32_t flags;         /* enum msga_ctx_flags */
	const char *dev_name;   /* e.g. "mlx5_0", "rxe0"; NULL = any */
	const char *local_addr; /* numeric IPv4/IPv6 address; NULL = any */
	uint8_t port;           /* 1-based port; 0 = first active port */
	uint8_t reserved[7];    /* 0 (since 0.10: else -EINVAL) */
	/*
	 * A connected unicast peer (RC, or UD unicast) that says nothing
	 * for this long is reported gone: MSGA_EVENT_DISCONNECTED with
	 * -ETIMEDOUT. Each side sends a keepalive when it has sent nothing
	 * for a fifth of it. 0 = MSGA_PEER_TIMEOUT_DEFAULT_MS; otherwise
	 * MSGA_PEER_TIMEOUT_MIN_MS to MSGA_PEER_TIMEOUT_MAX_MS.
	 */
	uint32_t peer_timeout_ms;
	uint32_t reserved2;     /* 0 (since 0.10: else -EINVAL) */
	/*
	 * Since 0.8, authentication (msgaccel(7), SECURITY). Keys come from
	 * key_file, or one key is given here (key and key_name); not both.
	 * key_file: a file readable by its owner only, one key a line,
	 * "NAME HEX" (MSGA_KEY_LEN bytes as 2 * MSGA_KEY_LEN hex digits),
	 * "#" comments; its first key is this context's own (what it
	 * proves when it connects, and what keys its datagrams), and every
	 * key in it is one a peer may prove when it connects here (NAME is
	 * that peer's identity). key: MSGA_KEY_LEN bytes, copied; key_name
	 * its identity (NULL = "default"). All NULL: no authentication.
	 */
	const char *key_file;
	const uint8_t *key;
	const char *key_name;
	/*
	 * Since 0.10, device choice by route: a peer's numeric IPv4/IPv6
	 * address; the context opens the device and port the kernel's
	 * route to it goes out on, and takes the route's source address
	 * as its local_addr (multicast joins there). Not with dev_name or
	 * local_addr (-EINVAL); port, if set, must be the route's. The
	 * resolution waits MSGA_ROUTE_RESOLVE_MS at most. NULL = unused.
	 */
	const char *route_to;
	/*
	 * Since 0.11, topic resolution (msgaccel(7), TOPIC RESOLUTION):
	 * the resolver group and whether this context's publishers
	 * advertise their topics there. NULL: the defaults (group
	 * MSGA_RESOLVER_GROUP_DEFAULT; no advertising; browsing with
	 * msga_resolver_browse() still works).
	 */
	const struct msga_resolver_attr *resolver;
};

/*
 * Since 0.11: topic resolution's settings (msga_ctx_attr.resolver).
 * Zero-fill, then set .size; every 0 is the default. The resolver speaks
 * kernel UDP, not verbs, so it works on every transport (iWARP too).
 */
struct msga_resolver_attr {
	uint32_t size;          /* sizeof(struct msga_resolver_attr) */
	uint32_t flags;         /* enum msga_resolver_flags */
	/* "IPv4:PORT" of a multicast group; NULL = the default */
	const char *group;
	/*
	 * Adverts taken only from these senders: numeric IPv4 addresses,
	 * comma-separated, at most MSGA_RESOLVER_ALLOW_MAX; NULL = any.
	 * (Queries are answered whoever asks: an answer tells only what
	 * the adverts tell anyway.)
	 */
	const char *allow;
	/*
	 * An advert's schedule: at once when its topic is made, again after
	 * fast_ms, the wait doubling up to fast_max_ms while the topic is
	 * younger than fast_for_ms, then once every sustain_ms. 0 = 10,
	 * 500, 5000 and 1000 ms. fast_ms <= fast_max_ms; each at most
	 * MSGA_RESOLVER_PERIOD_MAX_MS.
	 */
	uint32_t fast_ms, fast_max_ms, fast_for_ms, sustain_ms;
	/* All of the context's resolver traffic, bytes a second at most
	 * (a token bucket a quarter of it deep); 0 = 262144. At least
	 * MSGA_RESOLVER_RATE_MIN. */
	uint32_t bytes_per_s;
	uint32_t ttl;           /* the datagrams' multicast TTL; 0 = 1 */
};

enum msga_resolver_flags {
	/* this context's publishers advertise their topics */
	MSGA_RESOLVER_ADVERTISE = 1u << 0,
};

#define MSGA_RESOLVER_GROUP_DEFAULT "239.255.77.77:14977"
#define MSGA_RESOLVER_ALLOW_MAX 16u
#define MSGA_RESOLVER_PERIOD_MAX_MS 3600000u
#define MSGA_RESOLVER_RATE_MIN 8192u

/* The longest msga_ctx_open() waits to resolve route_to. */
#define MSGA_ROUTE_RESOLVE_MS 2000u

/* Bytes of a key (msga_ctx_attr.key). */
#define MSGA_KEY_LEN 32u
/* Keys in a key file, and the longest NAME ([A-Za-z0-9._@-]). */
#define MSGA_KEYS_MAX 256u
#define MSGA_KEY_NAME_MAX 31u

/**
 * Since 0.10: read the context's key_file again (msgaccel(7), SECURITY,
 * Key rotation). Its first key becomes the context's own for connections
 * and UD endpoints made from now on; peers may prove any of its keys,
 * and for overlap_ms more any key of the file as it was (0: none; one
 * earlier file at a time). Established connections keep their keys. On
 * failure nothing changes. 0, or -EINVAL (ctx NULL, opened without a
 * key_file, overlap_ms above MSGA_KEY_OVERLAP_MAX_MS, the file's text),
 * -ENOENT, -EACCES, -EPERM (the file, as msga_ctx_open()), -ENOMEM;
 * msga_ctx_last_error() says why. Not async-signal-safe: a signal
 * handler sets a flag the polling loop acts on. Callbacks: yes.
 */
MSGA_API int msga_ctx_reload_keys(struct msga_ctx *ctx, uint32_t overlap_ms);

#define MSGA_KEY_OVERLAP_MAX_MS 86400000u

#define MSGA_PEER_TIMEOUT_DEFAULT_MS 5000u
#define MSGA_PEER_TIMEOUT_MIN_MS 100u
#define MSGA_PEER_TIMEOUT_MAX_MS 3600000u

/** What msga_ctx_query() reports about the opened device port. */
struct msga_dev_info {
	uint32_t size;          /* sizeof(struct msga_dev_info), set by caller */
	uint32_t transport;     /* enum msga_transport (uint32_t: 0.10) */
	char dev_name[64];
	uint8_t port;
	uint8_t reserved[3];
	uint32_t active_mtu;    /* bytes, the port's active path MTU */
	uint32_t max_inline;    /* largest inline send an RC QP accepted */
	uint32_t max_sge;       /* scatter/gather entries per send WR */
	uint32_t max_qp_wr;     /* work requests per queue */
	uint32_t max_cqe;       /* completion queue entries */
	uint64_t max_mr_size;   /* largest registrable region, bytes */
	uint64_t node_guid;     /* host byte order */
};

/**
 * Open a context on an RDMA device port (attr NULL: the first active one,
 * defaults). 0 with *ctxp set; or a negative errno, *ctxp NULL and
 * msga_open_error() telling why: -EINVAL (ctxp NULL, attr, key file text),
 * -ENODEV (no such device, no active port; route_to's route leaves by a
 * netdev without an RDMA device), -ENETDOWN (dev_name's port down),
 * -EADDRNOTAVAIL (local_addr not here), -ENETUNREACH, -EHOSTUNREACH
 * (no route to route_to, or it did not resolve in MSGA_ROUTE_RESOLVE_MS),
 * -ENOENT, -EACCES, -EPERM (key file), -ENOMEM, or rdma-core's own code.
 * Any thread; callbacks too.
 */
MSGA_API int msga_ctx_open(const struct msga_ctx_attr *attr,
			   struct msga_ctx **ctxp);

/**
 * Close ctx and free everything made from it: publishers, subscribers,
 * their connections and held messages. NULL is a no-op. Cannot fail.
 * Not from a callback of ctx: there it does nothing, and
 * msga_ctx_last_error() says so (-EBUSY).
 */
MSGA_API void msga_ctx_close(struct msga_ctx *ctx);

/**
 * Fill *info (set info->size first) with the device port's transport and
 * limits, read once at open: no device call. 0, or -EINVAL (a NULL
 * pointer, or info->size below 0.1's struct); *info unchanged then.
 * Records no last error. Callbacks: yes.
 */
MSGA_API int msga_ctx_query(const struct msga_ctx *ctx,
			    struct msga_dev_info *info);

/**
 * The last failure recorded on ctx, "what failed and where: text", or ""
 * when none (or ctx NULL). Since 0.10 its clearing is defined: only a
 * failure sets it (not every failure records one: msga_ctx_query() and
 * the argument checks of the fast path do not), a success never changes
 * it, and only msga_ctx_clear_error() empties it. So clear, call, and on
 * failure read it. Never NULL, at most 255 bytes, unchanged until the
 * next failure recorded or clear on ctx. Cannot fail. Callbacks: yes.
 */
MSGA_API const char *msga_ctx_last_error(const struct msga_ctx *ctx);
/**
 * Since 0.10: empty ctx's last error (msga_ctx_last_error() gives ""
 * until a failure is recorded again). NULL is a no-op. Cannot fail.
 * Callbacks: yes.
 */
MSGA_API void msga_ctx_clear_error(struct msga_ctx *ctx);

/**
 * Why the last msga_ctx_open() in this thread failed, or "" if it did not
 * (a failed open has no context to hold the message). Never NULL, at most
 * 255 bytes, valid until this thread's next msga_ctx_open(). Cannot fail.
 * Any thread; callbacks too.
 */
MSGA_API const char *msga_open_error(void);

/**
 * Printable name of a transport: "InfiniBand", "RoCE", "iWARP", and
 * "unknown" for any other value. A constant string, never NULL. Cannot
 * fail. Any thread, any time; callbacks too.
 */
MSGA_API const char *msga_transport_name(uint32_t t);

/* ------------------------------------------------------------------ */
/* Publish / subscribe (see msga_pub_create(3), msga_sub_create(3),   */
/* msga_ctx_poll(3)): over RC queue pairs with "rdma://IP:PORT", over  */
/* unicast UD with "ud://IP:PORT", and over UD multicast with          */
/* "mcast://GROUP" or "mcast://BASE/BITS".                             */
/* ------------------------------------------------------------------ */

struct msga_pub;
struct msga_sub;

/*
 * Protocol constants, fixed forever (every peer's wire format depends on
 * them): MSGA_TOPIC_MAX, MSGA_MSG_MAX, MSGA_FRAG_MAX, MSGA_KEY_LEN,
 * MSGA_KEY_NAME_MAX. Policy limits, fixed for soname 9 (raising one is an
 * incompatible change: topic ids stay below MSGA_PUB_TOPICS_MAX for
 * callers that index arrays by them): MSGA_PUB_TOPICS_MAX,
 * MSGA_SUB_STREAMS_MAX, MSGA_PUB_CONNS_MAX, MSGA_PUB_ALLOW_MAX,
 * MSGA_KEYS_MAX, MSGA_SUB_SOURCES_MAX, and every attribute's _MIN/_MAX.
 * Defaults (_DEFAULT): pass 0 to get the running library's.
 */
/* Longest topic name; names use [A-Za-z0-9._/-]. */
#define MSGA_TOPIC_MAX 63
/* Largest message; longer ones are refused with -EMSGSIZE. */
#define MSGA_MSG_MAX (1u << 20)
/* Largest message sent in one piece (and delivered zero-copy). */
#define MSGA_FRAG_MAX 4072u
/* Topics one publisher can register. */
#define MSGA_PUB_TOPICS_MAX 1024
/* Multicast streams (publisher, topic) one subscriber tracks. */
#define MSGA_SUB_STREAMS_MAX 1024

/** What a struct msga_event reports. */
enum msga_event_type {
	/* sub: connected and subscribed; pub: a subscriber subscribed */
	MSGA_EVENT_CONNECTED = 1,
	/*
	 * the peer went away or the connection failed; status says why.
	 * Since 0.10, rdma:// (both sides): status 0 when the peer ended
	 * cleanly (msga_sub_disconnect, msga_sub_destroy, msga_pub_destroy,
	 * msga_ctx_close: it sent a goodbye), -ECONNRESET when it died or
	 * its goodbye could not go out, -ETIMEDOUT when it fell silent.
	 * Multicast and ud:// subscribers, since 0.6: with topic set, one
	 * stream ended and the membership goes on: status 0 when its
	 * publisher was destroyed (an end of stream), -ETIMEDOUT when it
	 * went silent (no datagram, heartbeats included, for the peer
	 * timeout or three of its heartbeat intervals, whichever is longer).
	 * seq is the stream's last sequence number known.
	 */
	MSGA_EVENT_DISCONNECTED = 2,
	/* sub only: msga_sub_connect() did not reach a publisher */
	MSGA_EVENT_CONNECT_FAILED = 3,
	/*
	 * Multicast subscribers only (see msga_sub_connect(3)): a stream
	 * skipped sequence numbers [seq, seq + count); a message arrived a
	 * second time (seq, dropped); a message of an earlier gap arrived
	 * late (seq, delivered out of order).
	 */
	MSGA_EVENT_GAP = 4,
	MSGA_EVENT_DUPLICATE = 5,
	MSGA_EVENT_REORDER = 6,
	/*
	 * Multicast subscribers only: a new stream (topic, origin) found
	 * the stream table full of live streams; its messages are dropped
	 * and counted (msga_sub_stats.overflow). Raised once per stream.
	 */
	MSGA_EVENT_STREAM_OVERFLOW = 7,
	/*
	 * Since 0.6, multicast subscribers of a MSGA_PUB_RELIABLE publisher
	 * (see msga_sub_connect(3), RECOVERY): [seq, seq + count) of the
	 * stream could not be recovered (the publisher no longer had it, or
	 * the repair did not come within the subscriber's limits). Delivery
	 * goes on after it, in order; nothing else is skipped.
	 */
	MSGA_EVENT_LOSS = 8,
	/*
	 * Since 0.8, publishers only: connection attempts were refused:
	 * status -EACCES (no key, a key this publisher does not hold, or a
	 * failed proof), -EPERM (a pattern the publisher does not allow
	 * that identity), -ECONNREFUSED (max_conns or max_handshakes
	 * reached) or -ETIMEDOUT (handshake deadline). peer is the last
	 * one's address; count is how many were refused since the previous
	 * MSGA_EVENT_REJECTED (this one included): the events are rate
	 * limited (msga_pub_attr.reject_events_per_s), the count is not.
	 */
	MSGA_EVENT_REJECTED = 9,
	/*
	 * Since 0.11, subscribers by name (topic://, msga_sub_connect(3)):
	 * a publisher of a matching topic was found (status 0: conn_id is
	 * the connection made to it, peer its uri, origin the publisher,
	 * topic the topic that found it; its CONNECTED and messages follow
	 * on that conn_id), or found but not connected (status -ENOSPC:
	 * MSGA_SUB_BYNAME_MAX reached; -EACCES: it wants keys and the
	 * context has none; or why the connect failed).
	 */
	MSGA_EVENT_PUBLISHER_FOUND = 10,
	/*
	 * Since 0.11, subscribers by name: a publisher withdrew its last
	 * matching topic (a clean destroy) or fell silent on the resolver
	 * group; its connection conn_id (peer, origin) is closed.
	 */
	MSGA_EVENT_PUBLISHER_GONE = 11,
};

/**
 * Connection event, passed to the on_event callback. The library fills it:
 * size is the running library's sizeof(struct msga_event), so a caller
 * built against a later header reads a member only when size covers it
 * (offsetof + sizeof). Since 0.10 (soname 9): size first, type a
 * uint32_t (values of enum msga_event_type), status an int32_t.
 */
struct msga_event {
	uint32_t size;          /* sizeof(struct msga_event): the library's */
	uint32_t type;          /* enum msga_event_type */
	int32_t status;         /* 0 or a negative errno */
	uint32_t conn_id;       /* connection the event is about */
	struct msga_pub *pub;   /* the publisher, or NULL */
	struct msga_sub *sub;   /* the subscriber, or NULL */
	const char *peer;       /* "address:port" of the other side */
	/*
	 * GAP, DUPLICATE, REORDER, STREAM_OVERFLOW, LOSS and a stream's
	 * DISCONNECTED only (else NULL, 0):
	 */
	const char *topic;      /* the stream's topic */
	uint64_t origin;        /* the stream's publisher (msga_msg.origin) */
	uint64_t seq;           /* first number concerned */
	uint64_t count;         /* how many numbers */
};

typedef void (*msga_event_cb)(const struct msga_event *ev, void *user);

/**
 * A received message. data points into registered receive memory and is
 * valid until the callback returns, unless msga_msg_hold() is called.
 * The library fills it: size is the running library's
 * sizeof(struct msga_msg), so a caller built against a later header reads
 * a member only when size covers it. Since 0.10 (soname 9): size and
 * flags first, priv_ last.
 */
struct msga_msg {
	uint32_t size;          /* sizeof(struct msga_msg): the library's */
	uint32_t flags;         /* enum msga_msg_flags (since 0.7) */
	const void *data;
	size_t len;
	const char *topic;      /* topic name */
	uint32_t topic_id;      /* the publisher's id for the topic */
	uint32_t conn_id;       /* the subscriber's connection it came on
				 * (A/B lines: the stream's line) */
	uint64_t seq;           /* publisher's per-topic sequence, from 1 */
	/*
	 * CLOCK_MONOTONIC when it was polled. Since 0.8.1, for a message
	 * that can be held it also names the delivery: strictly later than
	 * any such message's before it in the context (messages polled
	 * together are 1 ns apart), so keep it unchanged in a copy.
	 */
	uint64_t rx_time_ns;
	/*
	 * The publisher that sent it: a 64-bit id, unique per publisher
	 * object; its high 32 bits identify the host. 0 over RC.
	 */
	uint64_t origin;
	void *priv_;            /* library use; keep it in a copy */
};

/** msga_msg.flags */
enum msga_msg_flags {
	/*
	 * MSGA_SUB_OUT_OF_ORDER: a repaired message, delivered after a
	 * higher number of its stream.
	 */
	MSGA_MSG_OUT_OF_ORDER = 1u << 0,
	/*
	 * Since 0.12, MSGA_SUB_LAST_VALUE: the topic's last value, with its
	 * real seq, delivered before the live stream, which follows from
	 * seq + 1 on with no gap and no duplicate at the seam.
	 */
	MSGA_MSG_LAST_VALUE = 1u << 1,
};

typedef void (*msga_msg_cb)(const struct msga_msg *msg, void *user);

/** Who asks to subscribe (msga_pub_attr.authorize). */
struct msga_peer_info {
	uint32_t size;          /* sizeof(struct msga_peer_info) */
	uint32_t conn_id;
	const char *identity;   /* the NAME of the key it proved */
	const char *peer;       /* "address:port" */
};

/** 0 lets the peer subscribe to pattern; a negative errno refuses. */
typedef int (*msga_authorize_cb)(const struct msga_peer_info *peer,
				 const char *pattern, void *user);

enum msga_pub_flags {
	/* claim/send busy-poll the context instead of returning -EAGAIN */
	MSGA_PUB_BLOCK = 1u << 0,
	/*
	 * Since 0.6, UD (mcast://, ud://): keep the last retransmit_bytes of
	 * messages and send any of them again when a subscriber misses it
	 * (a NAK), so that subscribers lose nothing the buffer still holds.
	 */
	MSGA_PUB_RELIABLE = 1u << 1,
	/*
	 * Since 0.8, UD (mcast://, ud://), a context with keys (else
	 * -EINVAL): every datagram carries a keyed MAC, and a subscriber's
	 * datagram (NAK, SUBSCRIBE) without a valid one is dropped
	 * (msgaccel(7), SECURITY). RC publishers ignore it.
	 */
	MSGA_PUB_MAC = 1u << 2,
	/*
	 * Since 0.10: no coalescing of its own. Without it, a send queue
	 * that is busy (msgaccel(7), BATCHING) holds sends back and posts
	 * them together at its next doorbell (at the latest the next
	 * msga_ctx_poll()); with it, each commit rings the doorbell as
	 * before 0.10. MSGA_COMMIT_MORE still holds sends back.
	 */
	MSGA_PUB_NO_COALESCE = 1u << 3,
	/*
	 * Since 0.12, rdma://: keep a private copy of the last message
	 * committed on each topic, and send it first to each subscriber
	 * that asks (MSGA_SUB_LAST_VALUE) when it subscribes (msgaccel(7),
	 * LAST VALUE). Bounded: one message per topic, and only messages of
	 * at most MSGA_FRAG_MAX bytes are kept (a larger one forgets the
	 * topic's value), so at most MSGA_PUB_TOPICS_MAX * MSGA_FRAG_MAX
	 * bytes (about 4 MiB), allocated per topic as it is used. Costs one
	 * copy per message sent. mcast:// and ud://: needs
	 * MSGA_PUB_RELIABLE (else -EINVAL), whose retransmit buffer serves
	 * a late joiner's last message; no copy is kept.
	 */
	MSGA_PUB_LAST_VALUE = 1u << 4,
};

/** Attributes for msga_pub_create(). Zero-fill, then set .size. */
struct msga_pub_attr {
	uint32_t size;          /* sizeof(struct msga_pub_attr) */
	uint32_t flags;         /* enum msga_pub_flags */
	/*
	 * "rdma://IP:PORT" (RC), "ud://IP:PORT" (unicast UD): port 0
	 * picks one (msga_pub_port()); "mcast://GROUP", or
	 * "mcast://BASE/BITS" (a range of groups, a topic to each).
	 */
	const char *uri;
	msga_event_cb on_event; /* may be NULL */
	void *user;
	/*
	 * Since 0.4 (a caller passing an older, smaller .size gets the
	 * defaults). RC: a subscriber that has held up the stream (no ring
	 * room or receive credit for a message) this long is disconnected,
	 * MSGA_EVENT_DISCONNECTED with -ENOBUFS naming it, and the others go
	 * on. 0 = MSGA_SLOW_CONSUMER_DEFAULT_PEER_TIMEOUTS times the
	 * context's peer timeout; otherwise MSGA_PEER_TIMEOUT_MIN_MS to
	 * MSGA_PEER_TIMEOUT_MAX_MS.
	 */
	uint32_t slow_consumer_ms;
	/*
	 * RC: connections at once, handshakes in progress included; more
	 * are rejected. 0 = MSGA_PUB_CONNS_DEFAULT; at most MSGA_PUB_CONNS_MAX.
	 */
	uint32_t max_conns;
	/*
	 * UD (mcast://, ud://): largest datagram sent, headers included.
	 * 0 = the smaller of the port's active MTU and the group's MTU;
	 * otherwise at least MSGA_DATAGRAM_MIN, and never above those.
	 */
	uint32_t max_datagram;
	/*
	 * Since 0.6. UD (mcast://, ud://): a stream (topic) that has sent
	 * nothing for this long sends a heartbeat carrying its last
	 * sequence number, so subscribers see a lost tail and a publisher
	 * that died. While the stream stays idle the interval doubles, up
	 * to the larger of heartbeat_ms and a fifth of the context's peer
	 * timeout (and at most 32767 ms). Destroying the publisher sends
	 * each stream's end. 0 = MSGA_HEARTBEAT_DEFAULT_MS; otherwise
	 * MSGA_HEARTBEAT_MIN_MS to MSGA_HEARTBEAT_MAX_MS. Heartbeats cannot
	 * be turned off. Ignored over RC, which has keepalives.
	 */
	uint32_t heartbeat_ms;
	/*
	 * Since 0.6, with MSGA_PUB_RELIABLE: bytes of recent messages kept
	 * for resending, all topics together. 0 =
	 * MSGA_RETRANSMIT_DEFAULT_BYTES; otherwise MSGA_RETRANSMIT_MIN_BYTES
	 * to MSGA_RETRANSMIT_MAX_BYTES.
	 */
	uint64_t retransmit_bytes;
	/*
	 * Since 0.6, mcast:// only: a second line (the B feed of an A/B
	 * pair): every datagram goes on both, to the group uri maps its
	 * topic to and to the one uri_b maps it to. uri_b has uri's shape
	 * (one group, or a range of as many bits) and another base. NULL:
	 * one line. Subscribers arbitrate with MSGA_SUB_AB_LINES.
	 */
	const char *uri_b;
	/*
	 * Since 0.8, RC (rdma://): authorisation (msgaccel(7), SECURITY).
	 * allow: NULL, or a NULL-terminated list of "IDENTITY PATTERN"
	 * strings; a subscriber's pattern is allowed when an entry names
	 * its authenticated identity (or "*": any authenticated one) and
	 * PATTERN covers it ("md.*" covers "md.eq.IBM" and "md.eq*"; "*"
	 * covers all). authorize: NULL, or called for each SUBSCRIBE that
	 * the allow list (if any) passed; 0 allows, a negative errno
	 * refuses. A refused subscriber is disconnected with -EPERM.
	 * Either needs an authenticated context (msga_ctx_attr.key_file
	 * or key), or msga_pub_create() fails with -EINVAL.
	 */
	const char *const *allow;
	msga_authorize_cb authorize;
	/*
	 * Since 0.8, RC: connection handshakes in progress at once (more
	 * are rejected before anything is allocated for them), and how
	 * long one may take, from the request to the subscriber's proof
	 * and SUBSCRIBE. 0 = MSGA_PUB_HANDSHAKES_DEFAULT and
	 * MSGA_HANDSHAKE_DEFAULT_MS; max_handshakes at most max_conns,
	 * handshake_ms MSGA_HANDSHAKE_MIN_MS to MSGA_HANDSHAKE_MAX_MS.
	 */
	uint32_t max_handshakes;
	uint32_t handshake_ms;
	/*
	 * Since 0.8: MSGA_EVENT_REJECTED events per second at most (the
	 * refusals in between are counted into the next one). 0 =
	 * MSGA_REJECT_EVENTS_DEFAULT.
	 */
	uint32_t reject_events_per_s;
	uint32_t reserved;      /* 0 (since 0.10: else -EINVAL) */
	/*
	 * Since 0.10: msga_pub_destroy() first waits up to this long for
	 * what was committed to reach the subscribers (msga_pub_flush()),
	 * polling the context. 0: no wait, as before 0.10; at most
	 * MSGA_LINGER_MAX_MS. Not from a callback, where it cannot poll.
	 */
	uint32_t linger_ms;
	uint32_t reserved3;     /* 0 (since 0.10: else -EINVAL) */
};

#define MSGA_LINGER_MAX_MS 3600000u

#define MSGA_SLOW_CONSUMER_DEFAULT_PEER_TIMEOUTS 3u
#define MSGA_PUB_HANDSHAKES_DEFAULT 32u
#define MSGA_HANDSHAKE_DEFAULT_MS 5000u
#define MSGA_HANDSHAKE_MIN_MS 100u
#define MSGA_HANDSHAKE_MAX_MS 60000u
#define MSGA_REJECT_EVENTS_DEFAULT 10u
#define MSGA_PUB_ALLOW_MAX 1024u
#define MSGA_PUB_CONNS_DEFAULT 256u
#define MSGA_PUB_CONNS_MAX 4096u
#define MSGA_DATAGRAM_MIN 256u
#define MSGA_HEARTBEAT_DEFAULT_MS 100u
#define MSGA_HEARTBEAT_MIN_MS 1u
#define MSGA_HEARTBEAT_MAX_MS 60000u
#define MSGA_RETRANSMIT_DEFAULT_BYTES (8u << 20)
#define MSGA_RETRANSMIT_MIN_BYTES (64u << 10)
#define MSGA_RETRANSMIT_MAX_BYTES (1ull << 32)

/** Options of a subscriber. */
enum msga_sub_flags {
	/* Drop messages of publishers on this host (counted as "local"). */
	MSGA_SUB_NO_LOCAL = 1u << 0,
	/*
	 * Stop on gap: a lost message ends the membership (MSGA_EVENT_GAP,
	 * then MSGA_EVENT_DISCONNECTED with -EPIPE). The default is loss
	 * tolerant: report the gap, count it and carry on.
	 */
	MSGA_SUB_STOP_ON_GAP = 1u << 1,
	/*
	 * RC: take data by SEND/RECV rather than through an RDMA WRITE ring
	 * polled in memory. Connections made while the context is in event
	 * mode (msga_ctx_fd()) do this anyway: a WRITE wakes nobody.
	 */
	MSGA_SUB_NO_RING = 1u << 2,
	/*
	 * Since 0.6: do not recover lost messages of MSGA_PUB_RELIABLE
	 * publishers; report gaps as for any other (loss tolerant, or
	 * MSGA_SUB_STOP_ON_GAP).
	 */
	MSGA_SUB_NO_RECOVERY = 1u << 3,
	/*
	 * Since 0.6, multicast: this subscriber's memberships are redundant
	 * lines (the A and B feeds of a publisher with msga_pub_attr.uri_b)
	 * carrying the same streams. Each number is delivered once, in
	 * order, from whichever line brings it first; a line's late copy is
	 * dropped without an event and counted (msga_sub_line_stats()). A
	 * number missing on both lines waits recovery_ms (and is asked for,
	 * from a MSGA_PUB_RELIABLE publisher) before it is MSGA_EVENT_LOSS.
	 */
	MSGA_SUB_AB_LINES = 1u << 4,
	/*
	 * Since 0.7: repair by NAK only, never by RDMA READ from the
	 * publisher's retention buffer (msgaccel(7), RELIABLE MULTICAST).
	 */
	MSGA_SUB_REPAIR_BY_NAK = 1u << 5,
	/*
	 * Since 0.7, recovery: deliver each message when it arrives, past a
	 * gap still being repaired; the repaired numbers come later with
	 * MSGA_MSG_OUT_OF_ORDER in msg->flags. Each number is still
	 * delivered once, or named by one MSGA_EVENT_LOSS; nothing is held
	 * back (recovery_bytes unused). With MSGA_SUB_NO_RECOVERY: -EINVAL.
	 */
	MSGA_SUB_OUT_OF_ORDER = 1u << 6,
	/*
	 * Since 0.8, UD, a context with keys (else -EINVAL): drop every
	 * datagram without a valid MAC (publishers' MSGA_PUB_MAC), counted
	 * in msga_sub_stats.forged. Without it only a datagram whose MAC is
	 * wrong is.
	 */
	MSGA_SUB_REQUIRE_MAC = 1u << 7,
	/*
	 * Since 0.9, recovery: give a gap up when it has waited recovery_ms
	 * for its repair, however the repair is progressing (the rule
	 * before 0.9: a bound on the latency a gap adds). By default a gap
	 * is given up only when its stream has repaired nothing for
	 * recovery_ms, or its publisher no longer has it: an outage the
	 * publisher still retains is repaired whole (msgaccel(7)).
	 */
	MSGA_SUB_RECOVERY_BOUND = 1u << 8,
	/*
	 * Since 0.10, rdma:// and ud://: do not reconnect. By default a
	 * connection (a ud:// membership) whose publisher is not up yet,
	 * goes away or restarts is tried
	 * again on the same conn_id, with a backoff (10 ms doubling to 1 s,
	 * jittered), until it connects again or msga_sub_disconnect() ends
	 * it (msga_sub_connect(3), RECONNECT). With this flag a connection
	 * that fails or ends is gone, as before 0.10.
	 */
	MSGA_SUB_NO_RECONNECT = 1u << 9,
	/*
	 * Since 0.12, by address or by name: rdma://: when a connection
	 * subscribes, first deliver each matching topic's last value from a
	 * MSGA_PUB_LAST_VALUE publisher, flagged MSGA_MSG_LAST_VALUE, then
	 * the topic's live stream from the next seq on, with no gap and no
	 * duplicate at the seam; again after each reconnection. A publisher
	 * without the option, or before 0.12, sends the live stream only.
	 * mcast://, ud://: a history of one (history = 1) from a
	 * MSGA_PUB_RELIABLE publisher, flagged the same way, while its
	 * retransmit buffer holds it (else MSGA_EVENT_LOSS). Not with
	 * history or history_from (-EINVAL).
	 */
	MSGA_SUB_LAST_VALUE = 1u << 10,
};

/** Attributes for msga_sub_create(). Zero-fill, then set .size. */
struct msga_sub_attr {
	uint32_t size;          /* sizeof(struct msga_sub_attr) */
	uint32_t flags;         /* enum msga_sub_flags */
	const char *pattern;    /* "name" exactly, or "prefix*" */
	msga_msg_cb on_msg;     /* required */
	msga_event_cb on_event; /* may be NULL */
	void *user;
	/*
	 * Since 0.6, recovery from MSGA_PUB_RELIABLE publishers: how long a
	 * stream's gaps may go without any repair, later messages held back
	 * meanwhile, before they are given up (MSGA_EVENT_LOSS; since 0.9,
	 * with MSGA_SUB_RECOVERY_BOUND: how long a gap may wait in all);
	 * and the bytes of such
	 * held-back messages, all streams together, past which the oldest
	 * gap is given up. 0 = MSGA_RECOVERY_DEFAULT_MS and
	 * MSGA_RECOVERY_DEFAULT_BYTES.
	 */
	uint32_t recovery_ms;
	uint32_t recovery_bytes;
	/*
	 * Since 0.6, late join to MSGA_PUB_RELIABLE publishers: on first
	 * hearing a stream, first deliver up to this many of its messages
	 * from before that (from what its publisher still keeps), in order,
	 * then the live stream, with no gap and no duplicate at the seam.
	 * What the publisher no longer keeps comes as MSGA_EVENT_LOSS. 0 =
	 * none; MSGA_HISTORY_ALL = from the stream's first message.
	 */
	uint32_t history;
	/*
	 * Since 0.7, late join from a sequence number: on first hearing a
	 * stream, first deliver its messages from history_from on (what
	 * its publisher still keeps; the rest as MSGA_EVENT_LOSS), then the
	 * live stream. A stream first heard at or before it has no history.
	 * 0 = none; not with history (-EINVAL).
	 */
	uint64_t history_from;
	/*
	 * Since 0.10, the receive queue of each mcast:// and ud://
	 * membership, in datagrams (one MTU-sized buffer each): how many
	 * may arrive between two polls before the device drops the rest.
	 * 0 = MSGA_SUB_RX_DEPTH_DEFAULT; otherwise MSGA_SUB_RX_DEPTH_MIN
	 * to MSGA_SUB_RX_DEPTH_MAX, and at most the device's max_qp_wr
	 * and max_cqe less MSGA_SUB_RX_DEPTH_MIN (msga_ctx_query()).
	 */
	uint32_t rx_depth;
	uint32_t reserved_rx;   /* 0 (else -EINVAL) */
};

/* Since 0.10: the most "?source=ADDR" options of one mcast:// URI. */
#define MSGA_SUB_SOURCES_MAX 8u

#define MSGA_SUB_RX_DEPTH_DEFAULT 512u
#define MSGA_SUB_RX_DEPTH_MIN 16u
#define MSGA_SUB_RX_DEPTH_MAX 16384u

#define MSGA_HISTORY_ALL UINT32_MAX

#define MSGA_RECOVERY_DEFAULT_MS 1000u
#define MSGA_RECOVERY_MAX_MS 3600000u
#define MSGA_RECOVERY_DEFAULT_BYTES (16u << 20)
#define MSGA_RECOVERY_MIN_BYTES (64u << 10)

/**
 * A claimed, not yet committed, message (msga_pub_claim()), in the
 * caller's memory: set .size, then the library fills the rest and reads
 * it back in msga_pub_commit() and msga_pub_abort(). Since 0.10 (soname
 * 9): size first, priv_ last.
 */
struct msga_claim {
	uint32_t size;          /* sizeof(struct msga_claim), set by caller */
	uint32_t topic_id;
	void *data;             /* write len bytes here */
	size_t len;
	uint32_t priv_[3];      /* library use */
};

/**
 * Create a publisher on attr->uri: rdma:// and ud:// listen for
 * subscribers, mcast:// sends to groups. 0 with *pubp set; or a negative
 * errno, *pubp NULL and msga_ctx_last_error() telling what: -EINVAL (attr,
 * flags, uri or a limit), -EADDRINUSE, -EADDRNOTAVAIL, -ENODEV (address on
 * another device), -EOPNOTSUPP (UD on iWARP), -ENOMEM. Callbacks: yes.
 */
MSGA_API int msga_pub_create(struct msga_ctx *ctx,
			     const struct msga_pub_attr *attr,
			     struct msga_pub **pubp);
/**
 * Destroy pub: since 0.10 it first flushes for up to msga_pub_attr's
 * linger_ms (msga_pub_flush(); not from a callback); a UD publisher then
 * sends each stream's END (waiting 100 ms at most); then its connections
 * close (subscribers see DISCONNECTED, pub's on_event is not called) and
 * an uncommitted claim is dropped. NULL is a no-op. Cannot fail.
 * Callbacks: yes, its own included (without the linger; msga_ctx_close()
 * does not linger either).
 */
MSGA_API void msga_pub_destroy(struct msga_pub *pub);
/**
 * Since 0.10: wait until every message committed on pub has reached every
 * subscriber it has now (rdma://: each send acknowledged by the peer's
 * device; UD: sent; MSGA_PUB_RELIABLE: and no repair asked for during a
 * quiet period, msga_pub_flush(3)), polling pub's context meanwhile
 * (callbacks run). timeout_ms: 0 looks once without polling, -1 waits
 * without a limit. 0, or -EINVAL (pub NULL, timeout_ms below -1),
 * -ETIMEDOUT, -EDEADLK (from a callback, timeout_ms not 0), -ESHUTDOWN
 * (a callback destroyed pub), -ENETDOWN (UD endpoint gone). Callbacks:
 * only with timeout_ms 0.
 */
MSGA_API int msga_pub_flush(struct msga_pub *pub, int timeout_ms);
/**
 * The port, in host order, that an rdma:// or ud:// publisher listens on:
 * what port 0 picked. The port (1 to 65535), or -EINVAL (pub NULL),
 * -EOPNOTSUPP (mcast://: a group has no port). Callbacks: yes.
 */
MSGA_API int msga_pub_port(const struct msga_pub *pub);
/**
 * Subscribers connected and subscribed to an rdma:// or ud:// publisher
 * now (CONNECTED events not yet followed by DISCONNECTED). The count (0 or
 * more), or -EINVAL (pub NULL), -EOPNOTSUPP (mcast://: a sender never
 * learns who joined). Callbacks: yes.
 */
MSGA_API int msga_pub_subscribers(const struct msga_pub *pub);
/**
 * Register topic name on pub: *topic_id is its id (dense, from 0) for
 * claim and send; a name registered again gives the same id. Matching
 * subscribers hear the name before its first message. 0, or -EINVAL (a
 * NULL pointer, a bad name), -ENOSPC (MSGA_PUB_TOPICS_MAX topics), or for
 * mcast:// the error of starting its group's join. Callbacks: yes.
 */
MSGA_API int msga_pub_topic(struct msga_pub *pub, const char *name,
			    uint32_t *topic_id);
/**
 * 0 if name is a valid topic name: 1 to MSGA_TOPIC_MAX characters of
 * [A-Za-z0-9._/-]; else -EINVAL (NULL, empty, too long, another character,
 * "*" included). Needs no context. Any thread, any time; callbacks too.
 */
MSGA_API int msga_topic_check(const char *name);
/**
 * 0 if pattern is a valid subscription pattern: a topic name, or a prefix
 * of 0 to MSGA_TOPIC_MAX name characters and one "*" at the end; else
 * -EINVAL (NULL, empty, too long, a bad character, a "*" elsewhere or
 * twice). Needs no context. Any thread, any time; callbacks too.
 */
MSGA_API int msga_pattern_check(const char *pattern);
/**
 * Reserve len bytes for a message on topic_id in registered memory, at
 * claim->data; then msga_pub_commit() (len may shrink) or msga_pub_abort().
 * Set claim->size first (since 0.10). One claim at a time; callbacks:
 * yes. 0, or -EINVAL (NULL, claim->size below 0.10's, unknown topic),
 * -EMSGSIZE (len > MSGA_MSG_MAX), -EBUSY (a claim is out), -EAGAIN (no room
 * yet: poll, retry), -ENOMEM; mcast:// -ENETUNREACH, -ENOTCONN; UD -ENETDOWN;
 * MSGA_PUB_BLOCK: no -EAGAIN but -ETIMEDOUT, -EDEADLK (callback), -ESHUTDOWN.
 *
 *	struct msga_claim c = { .size = sizeof(c) };
 *	int ret;
 *
 *	while ((ret = msga_pub_claim(pub, topic_id, len, &c)) == -EAGAIN)
 *		msga_ctx_poll(ctx, 64);    // back-pressure: let room return
 *	if (ret < 0)
 *		return ret;
 *	fill(c.data, len);              // in place: nothing is copied
 *	ret = msga_pub_commit(pub, &c); // >= 0: how many it went to
 */
MSGA_API int msga_pub_claim(struct msga_pub *pub, uint32_t topic_id,
			    size_t len, struct msga_claim *claim);
/**
 * Send the outstanding claim with its topic's next sequence number: to
 * every matching subscriber (rdma://, ud://) or to its group (mcast://).
 * Returns how many it went to (0 or more), or -EINVAL (not the outstanding
 * claim, or changed beyond a lower len: nothing sent, the claim stays), or
 * on UD the device's error when the post fails. Callbacks: yes.
 */
MSGA_API int msga_pub_commit(struct msga_pub *pub, struct msga_claim *claim);
/**
 * Give back the outstanding claim unsent; no sequence number is used.
 * 0, or -EINVAL (a NULL pointer, no outstanding claim, or claim is not it
 * or was changed, as for msga_pub_commit(); the claim stays then).
 * Callbacks: yes.
 */
MSGA_API int msga_pub_abort(struct msga_pub *pub, struct msga_claim *claim);
/**
 * Copying publish: msga_pub_claim(), a copy of len bytes from data (NULL
 * if len is 0) and msga_pub_commit() in one call; small RC messages go
 * from data straight into the provider's inline copy. Returns what
 * msga_pub_commit() does, or msga_pub_claim()'s errors (-EINVAL also for
 * data NULL with len > 0). Callbacks: yes.
 */
MSGA_API int msga_pub_send(struct msga_pub *pub, uint32_t topic_id,
			   const void *data, size_t len);

/** Since 0.10: flags of msga_pub_commit_flags() and msga_pub_send_flags(). */
enum msga_commit_flags {
	/*
	 * More follows: the message's sends may be held back on the send
	 * queues (posted with later ones, one doorbell for many) until the
	 * next commit or send without it, msga_pub_doorbell(), the next
	 * msga_ctx_poll(), msga_pub_flush() or msga_pub_destroy(), or 64
	 * sends wait on one queue (msgaccel(7), BATCHING).
	 */
	MSGA_COMMIT_MORE = 1u << 0,
};

/**
 * Since 0.10: msga_pub_commit() and msga_pub_send() with flags (enum
 * msga_commit_flags); flags 0 is the plain call, which also rings what
 * earlier MSGA_COMMIT_MORE calls held back. Returns what the plain call
 * does, and -EINVAL for an unknown flag (nothing sent, a claim stays).
 * Every transport takes MSGA_COMMIT_MORE. Callbacks: yes.
 */
MSGA_API int msga_pub_commit_flags(struct msga_pub *pub,
				   struct msga_claim *claim,
				   unsigned int flags);
MSGA_API int msga_pub_send_flags(struct msga_pub *pub, uint32_t topic_id,
				 const void *data, size_t len,
				 unsigned int flags);
/**
 * Since 0.10: ring pub's doorbells: post at once every send its queues
 * hold back (MSGA_COMMIT_MORE, or coalescing while busy). 0 (also when
 * nothing was held), or -EINVAL (pub NULL), -ESHUTDOWN (destroyed in a
 * callback), UD: -ENETDOWN (the endpoint died at the post). An RC
 * subscriber whose connection dies at it is its DISCONNECTED event, not
 * an error here. Callbacks: yes.
 */
MSGA_API int msga_pub_doorbell(struct msga_pub *pub);

/**
 * Create a subscriber for attr->pattern ("name" or "prefix*"); it hears
 * messages once connected (msga_sub_connect()). 0 with *subp set; or *subp
 * NULL and -EINVAL (a NULL pointer or on_msg, size, flags, pattern, or
 * options that conflict: msga_ctx_last_error() says which), -ENOMEM, or
 * the connection manager's error opening its channel. Callbacks: yes.
 */
MSGA_API int msga_sub_create(struct msga_ctx *ctx,
			     const struct msga_sub_attr *attr,
			     struct msga_sub **subp);
/**
 * Destroy sub: its connections and memberships close (RC publishers see
 * DISCONNECTED, sub's on_event is not called) and messages it holds are
 * freed. NULL is a no-op. Cannot fail. Callbacks: yes, its own included.
 */
MSGA_API void msga_sub_destroy(struct msga_sub *sub);
/**
 * Connect to a publisher at uri: rdma://IP:PORT, ud://IP:PORT, or join
 * mcast://GROUP or mcast://BASE/BITS; since 0.10 a mcast:// uri may end
 * in "?bind=ADDR" (join on that local address of the context's device)
 * and "&source=ADDR" (up to MSGA_SUB_SOURCES_MAX: take datagrams from
 * those senders only, by their GRH source GID). It goes on in
 * msga_ctx_poll(), which raises CONNECTED or CONNECT_FAILED with the
 * connection's id, stored in *conn_id (NULL: not wanted). Since 0.10
 * (soname 9) the id comes back there, not as the return value. Since
 * 0.11, "topic://": the subscriber's pattern wherever it is published
 * (topic resolution: a connection to each publisher found, with
 * MSGA_EVENT_PUBLISHER_FOUND and _GONE; *conn_id names the subscription
 * by name). 0; or -EINVAL (sub or uri NULL, bad uri or option, a prefix
 * pattern on a range), -EOPNOTSUPP (UD on iWARP), -EADDRNOTAVAIL
 * (mcast://, no local address, or bind= not here), -ENODEV (bind= on
 * another or no RDMA device), -EHOSTUNREACH (no route), -ENOMEM,
 * -EALREADY (topic:// twice), -ENOSPC (64 topic:// subscriptions in the
 * context); *conn_id unchanged then. Callbacks: yes.
 */
MSGA_API int msga_sub_connect(struct msga_sub *sub, const char *uri,
			      uint32_t *conn_id);
/**
 * Close connection or membership conn_id of sub: what it has not delivered
 * is dropped, and sub's on_event is not called (an RC publisher sees
 * DISCONNECTED). 0, or -EINVAL (sub NULL), -ENOENT (no open connection or
 * membership with that id). Callbacks: yes.
 */
MSGA_API int msga_sub_disconnect(struct msga_sub *sub, uint32_t conn_id);
/**
 * Keep msg's buffer past its callback: call it inside the on_msg that
 * delivered msg, copy *msg, and give it back with msga_msg_release(). 0,
 * or -EINVAL (NULL, not in msg's own callback, or a copy of an earlier
 * message, even one that sat in the same buffer), -EALREADY (held),
 * -EOPNOTSUPP (a UD message reassembled, or held back for recovery: copy
 * it). Hold briefly: a held RC message slows its publisher down.
 */
MSGA_API int msga_msg_hold(const struct msga_msg *msg);
/**
 * Give back a message held with msga_msg_hold() (msg: the copy kept),
 * oldest first, before its subscriber is destroyed or its context closed.
 * NULL, or a message not held (released already, or a stale copy of an
 * earlier message in the same buffer: it never releases the one there
 * now), is a no-op. Cannot fail. Callbacks: yes.
 */
MSGA_API void msga_msg_release(const struct msga_msg *msg);

/*
 * Counters of a multicast subscriber (msga_sub_stats(3)): totals, and one
 * record per stream, a stream being one publisher's one topic.
 */
#define MSGA_RECOVERY_HIST_BUCKETS 24

struct msga_sub_stats {
	uint32_t size;          /* sizeof(struct msga_sub_stats), set by caller */
	uint32_t streams;       /* streams known (msga_sub_stream_stats) */
	uint64_t msgs, bytes;   /* delivered */
	uint64_t gaps;          /* gap events */
	uint64_t missing;       /* sequence numbers lost (less late arrivals) */
	uint64_t dups;          /* duplicates dropped */
	uint64_t late;          /* reordered arrivals delivered */
	uint64_t reasm_drops;   /* fragmented messages never completed */
	uint64_t foreign;       /* datagrams not in msgaccel's format */
	uint64_t filtered;      /* topics the pattern does not match */
	uint64_t local;         /* dropped by MSGA_SUB_NO_LOCAL */
	uint64_t overflow;      /* dropped: more than MSGA_SUB_STREAMS_MAX streams */
	/* since 0.4 */
	uint64_t oversize;      /* datagrams longer than a receive buffer, dropped */
	uint64_t evicted;       /* idle or departed streams forgotten */
	/* since 0.6 */
	uint64_t heartbeats;    /* heartbeat datagrams taken */
	uint64_t ended;         /* streams whose publisher sent their end */
	uint64_t silent;        /* streams reported gone silent (-ETIMEDOUT) */
	uint64_t recovered;     /* lost messages delivered after all (repairs) */
	uint64_t unrecoverable; /* numbers given up (MSGA_EVENT_LOSS) */
	uint64_t naks;          /* NAKs sent */
	/* since 0.7 */
	uint64_t reads;         /* RDMA READs issued for repair */
	uint64_t read_fallbacks; /* ranges READ could not repair, NAKed */
	uint64_t out_of_order;  /* delivered with MSGA_MSG_OUT_OF_ORDER */
	/*
	 * Recovery latency, from a number first missed to its repair:
	 * recovery_hist[i] counts repairs that took less than 2^i
	 * microseconds (and at least 2^(i-1)); the last bucket, all longer.
	 */
	uint64_t recovery_hist[MSGA_RECOVERY_HIST_BUCKETS];
	/* since 0.8: forged datagrams (msgaccel(7), UD TRUST) */
	uint64_t far_ahead;     /* dropped: far ahead of their stream, unconfirmed */
	uint64_t probation;     /* streams on probation (unverified) now */
	uint64_t probation_evicted; /* unverified streams forgotten for newer */
	uint64_t spoofed;       /* ud://: not from our publisher, or answering
				 * no SUBSCRIBE of ours: dropped */
	uint64_t forged;        /* dropped: a MAC wrong, or missing and required */
	/* since 0.10 */
	uint64_t unlisted_source; /* mcast://?source=: from another sender,
				   * dropped before anything else */
	/*
	 * Since 0.10: the rdma:// connections (msga_line_stats per
	 * connection; the fields above count mcast:// and ud:// only).
	 */
	uint64_t rc_conns;      /* connected now (CONNECTED, not yet gone) */
	uint64_t rc_msgs, rc_bytes; /* delivered, every connection ever */
	uint64_t rc_gone_clean; /* DISCONNECTED status 0: publisher's BYE */
	uint64_t rc_gone_reset; /* -ECONNRESET */
	uint64_t rc_gone_timeout; /* -ETIMEDOUT: the peer fell silent */
	uint64_t rc_gone_other; /* any other status (refusals among them) */
	uint64_t rc_retries;    /* reconnection attempts (MSGA_SUB_NO_RECONNECT
				 * off) */
	/*
	 * Since 0.10: a pattern that matches nothing, every transport:
	 * rdma:// connections up whose publisher announced no topic the
	 * pattern matches, plus 1 when mcast:// or ud:// datagrams arrived
	 * (filtered) but none of a matching topic (streams 0).
	 */
	uint64_t unmatched;
	/* Since 0.11: a subscription by name (topic://) */
	uint64_t byname_conns;  /* publishers it is connected to now */
	uint64_t byname_refused; /* publishers found but not connected */
};

struct msga_stream_stats {
	uint32_t size;          /* sizeof(struct msga_stream_stats) */
	uint32_t conn_id;       /* the membership it arrived on */
	char topic[MSGA_TOPIC_MAX + 1];
	uint64_t origin;        /* publisher id */
	uint64_t first_seq;     /* where this subscriber joined the stream */
	uint64_t last_seq;      /* highest sequence number seen */
	uint64_t msgs, bytes, gaps, missing, dups, late, reasm_drops;
	/* since 0.6: recovery (msga_sub_stats) of this stream */
	uint64_t recovered, unrecoverable, naks;
	/* since 0.7 */
	uint64_t reads;
	/* since 0.8 */
	uint64_t far_ahead;     /* dropped: far ahead, unconfirmed */
	uint64_t verified;      /* 1: off probation; 0: unverified */
};

/**
 * sub's multicast and ud:// counters, all streams together, into *st (set
 * st->size first; an older, smaller size gets that much). Plain fields
 * that msga_ctx_poll() updates: no I/O, no lock; read them from the
 * polling thread. 0, or -EINVAL (a NULL pointer, st->size below 0.2's
 * struct). Callbacks: yes.
 */
MSGA_API int msga_sub_stats(const struct msga_sub *sub,
			    struct msga_sub_stats *st);

/*
 * Since 0.6: what one multicast or ud:// membership (a line) brought:
 * messages delivered from it because it had them first, and copies that
 * came after another line's and were dropped (MSGA_SUB_AB_LINES).
 */
struct msga_line_stats {
	uint32_t size;          /* sizeof(struct msga_line_stats), set by caller */
	uint32_t conn_id;       /* the membership (msga_sub_connect()) */
	uint64_t first;         /* numbers this line brought first */
	uint64_t behind;        /* copies it brought after another line */
	/* Since 0.10: an rdma:// connection (0 for the others) */
	uint64_t msgs, bytes;   /* delivered on it */
	uint64_t topics;        /* topics its publisher announced (they
				 * match the pattern; 0: unmatched) */
	uint64_t up;            /* 1: connected now */
	char peer[64];          /* "address:port" it connects to */
};

/**
 * What membership conn_id (mcast:// or ud://) brought, into *st (set
 * st->size first): numbers it brought first, copies it brought behind
 * another line; since 0.10 also an rdma:// connection's counters (msgs,
 * bytes, topics, up, peer). 0, or -EINVAL (a NULL pointer, st->size below
 * 0.6's struct), -ENOENT (not a membership or connection of sub, or freed
 * since). Callbacks: yes.
 */
MSGA_API int msga_sub_line_stats(const struct msga_sub *sub, uint32_t conn_id,
				 struct msga_line_stats *st);
/**
 * The counters of stream idx, 0 to msga_sub_stats()'s streams - 1, into
 * *st (set st->size first). 0, or -EINVAL (a NULL pointer, st->size below
 * 0.2's struct), -ENOENT (no stream at idx now: evicted, its index not yet
 * taken again). Callbacks: yes.
 */
MSGA_API int msga_sub_stream_stats(const struct msga_sub *sub, uint32_t idx,
				   struct msga_stream_stats *st);

/*
 * Since 0.10: a publisher's counters (msga_pub_stats(3)), every transport
 * together. Plain fields that the publisher's own calls and
 * msga_ctx_poll() update: no I/O, no lock; read them from the polling
 * thread. Fields a transport never counts stay 0 (the page says which).
 */
struct msga_pub_stats {
	uint32_t size;          /* sizeof(struct msga_pub_stats), set by caller */
	uint32_t conn_slots;    /* msga_pub_conn_stats idx: 0 to conn_slots - 1 */
	uint64_t msgs, bytes;   /* committed (claim+commit or send): payload */
	uint64_t deliveries;    /* what commits returned, summed */
	uint64_t eagain;        /* -EAGAIN returned by claim and send */
	uint64_t blocked_ns;    /* MSGA_PUB_BLOCK: time spent waiting for room */
	uint64_t stalls;        /* rdma://: a subscriber began holding it up */
	uint64_t keepalives;    /* rdma:// keepalives, UD heartbeats sent */
	uint64_t subscribers;   /* rdma://, ud://: subscribed now */
	uint64_t subscribed;    /* ... and ever (CONNECTED events) */
	uint64_t unmatched;     /* subscribed now, pattern matches no topic */
	/* subscribers gone (DISCONNECTED events), by status */
	uint64_t gone_clean;    /* 0: it unsubscribed */
	uint64_t gone_reset;    /* -ECONNRESET */
	uint64_t gone_timeout;  /* -ETIMEDOUT: silent for the peer timeout */
	uint64_t gone_slow;     /* -ENOBUFS: slow consumer dropped */
	uint64_t gone_other;    /* any other status */
	/* connection attempts refused (MSGA_EVENT_REJECTED's count), by why */
	uint64_t refused_keys;  /* -EACCES: keys (READ connections too) */
	uint64_t refused_allow; /* -EPERM: allow list or authorize */
	uint64_t refused_limits; /* -ECONNREFUSED: max_conns, max_handshakes */
	uint64_t refused_timeout; /* -ETIMEDOUT: handshake deadline */
	/* MSGA_PUB_RELIABLE */
	uint64_t naks;          /* NAKs taken */
	uint64_t naks_dropped;  /* ... dropped: the resend budget was spent */
	uint64_t retransmits;   /* messages sent again */
	uint64_t lost_sent;     /* LOST answers sent */
	uint64_t retained_bytes; /* bytes kept for resending now */
	/* UD trust (msgaccel(7), SECURITY) */
	uint64_t forged;        /* datagrams dropped: MAC wrong or missing */
	uint64_t spoofed;       /* ud:// SUBSCRIBEs echoing a wrong cookie */
};

/**
 * Since 0.10: pub's counters, all transports together, into *st (set
 * st->size first; an older, smaller size gets that much). 0, or -EINVAL
 * (a NULL pointer, st->size below 0.10's struct). Callbacks: yes.
 */
MSGA_API int msga_pub_stats(const struct msga_pub *pub,
			    struct msga_pub_stats *st);

/* Since 0.10: one subscriber of an rdma:// or ud:// publisher. */
struct msga_pub_conn_stats {
	uint32_t size;          /* sizeof(struct msga_pub_conn_stats) */
	uint32_t conn_id;       /* as its CONNECTED event said */
	char peer[64];          /* "address:port" (ud://: address) */
	char identity[MSGA_KEY_NAME_MAX + 1]; /* key proved; "" none */
	char pattern[MSGA_TOPIC_MAX + 2];
	uint32_t topics;        /* of the publisher's topics, how many match */
	uint64_t msgs, bytes;   /* messages committed to it, their payload */
	uint64_t stalls;        /* rdma://: times it began holding the stream up */
	uint64_t held_ns;       /* rdma://: time it held the stream up, in all */
};

/**
 * Since 0.10: the subscriber in slot idx, 0 to msga_pub_stats()'s
 * conn_slots - 1, into *st (set st->size first). 0, or -EINVAL (a NULL
 * pointer, st->size below 0.10's struct), -ENOENT (no subscribed
 * subscriber in that slot now), -EOPNOTSUPP (mcast://: a sender never
 * learns who joined). Callbacks: yes.
 */
MSGA_API int msga_pub_conn_stats(const struct msga_pub *pub, uint32_t idx,
				 struct msga_pub_conn_stats *st);

/**
 * Drive every publisher and subscriber of ctx: connection events, up to
 * budget completions per queue, messages and events to their callbacks,
 * timers. Never blocks. Returns how many completions and events it handled
 * (0: nothing to do), or -EINVAL (ctx NULL, budget < 1). Not from a
 * callback of ctx: -EDEADLK (polling does not nest).
 */
MSGA_API int msga_ctx_poll(struct msga_ctx *ctx, int budget);
/**
 * One fd (epoll) that turns readable when msga_ctx_poll() has work; the
 * first call puts ctx in event mode: poll until 0 before waiting again.
 * Call it before msga_sub_connect(). The fd, or -EINVAL (ctx NULL),
 * -EOPNOTSUPP (MSGA_CTX_NO_EVENTS; on Linux the value of -ENOTSUP),
 * -EBUSY (a busy-poll connection reads a WRITE ring, which wakes
 * nobody), -EMFILE. Callbacks: yes.
 */
MSGA_API int msga_ctx_fd(struct msga_ctx *ctx);

/* ------------------------------------------------------------------ */
/* Topic resolution (since 0.11; msgaccel(7), TOPIC RESOLUTION).       */
/* ------------------------------------------------------------------ */

/* What the context's resolver did and heard (msga_resolver_stats). */
struct msga_resolver_stats {
	uint32_t size;          /* sizeof(struct msga_resolver_stats), by caller */
	uint32_t topic_slots;   /* msga_resolver_topic idx: 0 to topic_slots - 1 */
	uint64_t advertised;    /* topics this context advertises now */
	uint64_t topics;        /* (publisher, topic) pairs heard, kept now */
	uint64_t publishers;    /* publishers heard, kept now */
	uint64_t tx_dgrams, tx_bytes; /* sent: datagrams, their bytes */
	uint64_t tx_adverts, tx_withdraws, tx_queries; /* records sent */
	uint64_t tx_errors;     /* sends the kernel refused */
	uint64_t budget_waits;  /* times due sends waited for the budget */
	uint64_t withdraw_lost; /* withdrawals that found the queue full */
	uint64_t rx_dgrams, rx_bytes; /* taken: datagrams, their bytes */
	uint64_t queries_answered; /* adverts a query asked for (answers) */
	uint64_t queries_dropped;  /* query records over the work bound,
				    * answers over the list's bound */
	uint64_t rx_malformed;  /* dropped: not a valid resolver datagram */
	uint64_t rx_forged;     /* dropped: a keyed context, MAC wrong or
				 * missing */
	uint64_t rx_not_allowed; /* dropped: a sender not in allow */
	uint64_t rx_full;       /* adverts dropped: the table was full */
	uint64_t rx_conflicts;  /* adverts dropped: an origin's endpoint
				 * contradicted */
	uint64_t rx_withdrawn;  /* topics withdrawn by their publisher */
	uint64_t rx_expired;    /* topics forgotten: not heard for
				 * MSGA_RESOLVER_TTL_MS */
};

/* Connections one subscription by name (topic://) makes at most. */
#define MSGA_SUB_BYNAME_MAX 64u

/*
 * A topic heard on the resolver group is forgotten after three of its
 * publisher's advert periods without an advert (each advert says its
 * period), and never sooner than this.
 */
#define MSGA_RESOLVER_TTL_MS 10000u
/* Bounds of what one context keeps of what it heard. */
#define MSGA_RESOLVER_PUBS_MAX 1024u
#define MSGA_RESOLVER_TOPICS_MAX 131072u

/**
 * The counters of ctx's resolver into *st (set st->size first). A
 * context that never used topic resolution has all of them 0. 0, or
 * -EINVAL (a NULL pointer, st->size below 0.11's struct). Callbacks: yes.
 */
MSGA_API int msga_resolver_stats(const struct msga_ctx *ctx,
				 struct msga_resolver_stats *st);

/**
 * Listen on ctx's resolver group for topics pattern matches (topic.h's
 * rules: a name, or a prefix and "*"), and ask for them: a query goes out
 * at once and again during the advert schedule's fast phase, and every
 * publisher that has such a topic answers within 50 ms; after that the
 * publishers' periodic adverts keep it up to date. What is heard is kept
 * (msga_resolver_topic()) until withdrawn or silent for three of its
 * publisher's advert periods (at least MSGA_RESOLVER_TTL_MS). Up to
 * MSGA_RESOLVER_BROWSE_MAX patterns; the
 * same pattern again is a no-op. 0, or -EINVAL (ctx NULL, a bad pattern),
 * -ENOSPC (patterns full), -ENOMEM, or the resolver socket's errno
 * (-EADDRNOTAVAIL, ...); msga_ctx_last_error() says why. Callbacks: yes.
 */
MSGA_API int msga_resolver_browse(struct msga_ctx *ctx, const char *pattern);
#define MSGA_RESOLVER_BROWSE_MAX 16u

/* One (publisher, topic) heard (msga_resolver_topic). */
struct msga_topic_info {
	uint32_t size;          /* sizeof(struct msga_topic_info), by caller */
	uint32_t flags;         /* enum msga_topic_info_flags */
	char topic[MSGA_TOPIC_MAX + 1];
	char uri[80];           /* where to subscribe: "rdma://IP:PORT",
				 * "ud://IP:PORT", "mcast://GROUP" */
	uint64_t origin;        /* the publisher (msga_msg.origin of its
				 * multicast streams) */
	uint64_t age_ms;        /* since it was last heard */
	char sender[48];        /* the advert's source address */
};

enum msga_topic_info_flags {
	MSGA_TOPIC_RELIABLE = 1u << 0, /* a MSGA_PUB_RELIABLE multicast */
	MSGA_TOPIC_KEYS = 1u << 1,     /* the publisher wants keys */
	/* since 0.12: the topic's line B (msga_pub_attr.uri_b); uri is line
	 * B's group, and line A's is another slot of the same origin */
	MSGA_TOPIC_LINE_B = 1u << 2,
};

/**
 * The topic in slot idx, 0 to msga_resolver_stats()'s topic_slots - 1,
 * into *ti (set ti->size first). 0, or -EINVAL (a NULL pointer,
 * ti->size below 0.11's struct), -ENOENT (no topic in that slot now).
 * Callbacks: yes.
 */
MSGA_API int msga_resolver_topic(const struct msga_ctx *ctx, uint32_t idx,
				 struct msga_topic_info *ti);

/*
 * Quiet-CPU selection (0.12, issue 38): which CPU a busy-polling thread
 * should run on. msga_cpu_pick() measures each CPU the calling thread may
 * run on, all at once for duration_ms: a thread pinned to each reads
 * CLOCK_MONOTONIC in a tight loop and records every gap of threshold_ns
 * or more (time the CPU gave to an interrupt, a softirq, another thread,
 * firmware), while /proc/interrupts and /proc/softirqs are read before
 * and after. It ranks them as msga_cpu(1) does (least stolen share, then
 * fewest interrupts, fewest gaps, smallest largest gap) and picks the
 * best one that is not in avoid and, while such a CPU remains, not on a
 * core (thread_siblings_list) that a CPU in avoid is on: two pollers of
 * one process never share the two hyperthreads of a core while a whole
 * core is free. Pass the CPUs your other pollers took as avoid.
 */
struct msga_cpu_pick_attr {
	uint32_t size;          /* sizeof(struct msga_cpu_pick_attr) */
	uint32_t flags;         /* enum msga_cpu_pick_flags */
	uint32_t duration_ms;   /* how long to measure; 0: 200 ms */
	uint32_t threshold_ns;  /* the smallest gap counted; 0: 1000 ns */
	const uint32_t *avoid;  /* CPUs not to pick (other pollers'), */
	uint32_t navoid;        /* how many (NULL and 0: none) */
	uint32_t reserved;      /* 0 */
};

enum msga_cpu_pick_flags {
	/* Pin the calling thread to the chosen CPU (sched_setaffinity). */
	MSGA_CPU_PICK_PIN = 1u << 0,
};

/* Bounds of msga_cpu_pick_attr. */
#define MSGA_CPU_PICK_DURATION_MAX_MS 10000u
#define MSGA_CPU_PICK_AVOID_MAX 8192u

/* The CPU chosen and its measured noise (msga_cpu_pick). */
struct msga_cpu_choice {
	uint32_t size;          /* sizeof(struct msga_cpu_choice), by caller */
	uint32_t cpu;           /* the CPU chosen */
	uint32_t flags;         /* enum msga_cpu_choice_flags */
	uint32_t measured;      /* CPUs measured (allowed, not in avoid) */
	uint32_t rank;          /* the chosen CPU's place, 1 = quietest */
	uint32_t reserved;
	uint64_t run_ns;        /* how long its thread spun */
	uint64_t gaps;          /* gaps of threshold_ns or more */
	uint64_t gaps_per_s;
	uint64_t max_gap_ns;    /* the largest gap */
	uint64_t stolen_ppm;    /* the gaps' sum, parts per million of run */
	uint64_t irqs;          /* hard + soft interrupts it took during the
				 * run; UINT64_MAX when unknown */
	char why[112];          /* the ranking's reason, one line */
};

enum msga_cpu_choice_flags {
	/* The chosen CPU shares its core with a CPU in avoid: every core
	 * allowed had one already. */
	MSGA_CPU_CHOICE_SHARED_CORE = 1u << 0,
	/* The calling thread is now pinned to it (MSGA_CPU_PICK_PIN). */
	MSGA_CPU_CHOICE_PINNED = 1u << 1,
};

/**
 * Measure the CPUs the calling thread may run on, less attr->avoid, for
 * attr->duration_ms, and choose the quietest as above into *out (set
 * out->size first); with MSGA_CPU_PICK_PIN, pin the calling thread to it.
 * attr NULL: the defaults. Blocks for the measurement; starts and joins
 * one thread per CPU measured. 0, or -EINVAL (out NULL, out->size or
 * attr->size below 0.12's struct, an unknown flag, duration_ms over
 * MSGA_CPU_PICK_DURATION_MAX_MS, avoid NULL with navoid > 0, navoid over
 * MSGA_CPU_PICK_AVOID_MAX, reserved not 0), -ENODEV (every allowed CPU
 * is in avoid, or none could be measured), -ENOMEM, or
 * sched_setaffinity's errno when pinning failed (out is filled).
 * Needs no context; thread-safe.
 */
MSGA_API int msga_cpu_pick(const struct msga_cpu_pick_attr *attr,
			   struct msga_cpu_choice *out);

#ifdef __cplusplus
}
#endif

#endif /* MSGACCEL_H */
