/* SPDX-License-Identifier: MIT */
/*
 * tres_wire.h - topic resolution's datagrams (issue 37): what a
 * publisher's context says about the topics it publishes (adverts, and
 * withdrawals when it stops), and what a subscriber by name asks
 * (queries, by pattern). They travel in kernel UDP on the resolver
 * group, not over verbs: topic resolution must work where the fast
 * transport has no multicast (iWARP), and it is control traffic, a few
 * datagrams a second. A datagram MAC, when keys are in use, follows the
 * bytes described here (dgram_mac.h) and is not part of them.
 *
 * Little-endian. A datagram is a 24-byte header and its records:
 *
 *   0  u32 magic    "MSGT"
 *   4  u8  version  1
 *   5  u8  type     1 advert, 2 withdraw, 3 query
 *   6  u16 count    records, 1 to MSGA__TRW_RECS_MAX
 *   8  u64 sender   the sending context's instance (random at open)
 *  16  u32 seq      the sender's datagram number (wraps)
 *  20  u32 period   advert and withdraw: the longest the sender's
 *                   adverts now take to come round again, ms (its
 *                   sustain period, or longer when its byte budget
 *                   stretches it); a browser forgets a topic after a
 *                   few of them. Query: zero.
 *
 * An advert or withdraw record, 29 bytes and its topic name:
 *
 *   0  u8  kind     1 rdma://, 2 ud://, 3 mcast://
 *   1  u8  flags    MSGA__TRW_F_*; undefined bits zero (LINE_B:
 *                   mcast:// only, and the record's addr is line B's)
 *   2  u16 port     rdma://, ud://: the publisher's port, 1 to 65535;
 *                   mcast://: zero
 *   4  u8  addr[16] rdma://, ud://: the publisher's address; mcast://:
 *                   the group; IPv6, or IPv4 mapped (::ffff:a.b.c.d)
 *  20  u64 origin   the publisher's origin (its streams' origin field)
 *  28  u8  len      topic name length, 1 to MSGA_TOPIC_MAX
 *  29  len bytes    the topic name (topic.h's rules; no terminator)
 *
 * A query record: u8 len, 1 to MSGA_TOPIC_MAX + 1, then a subscription
 * pattern of len bytes (topic.h's rules: a name, or a prefix and '*').
 *
 * A datagram is checked whole before any record is used: a bad record
 * anywhere refuses all of it, so a receiver never acts on half of one.
 * Its bytes end exactly where its last record ends.
 */
#ifndef MSGA_TRES_WIRE_H
#define MSGA_TRES_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "msgaccel.h"

#define MSGA__TRW_MAGIC 0x5447534du /* "MSGT" little-endian */
#define MSGA__TRW_VERSION 1u
#define MSGA__TRW_HDR 24u
#define MSGA__TRW_ADV_FIXED 29u
/* A datagram's bytes at most, MAC excluded: one Ethernet frame of UDP
 * over IPv6 with room for a MAC, so that nothing is ever fragmented. */
#define MSGA__TRW_DGRAM_MAX 1380u
/* Records in one datagram at most: the most the smallest records fit. */
#define MSGA__TRW_RECS_MAX ((MSGA__TRW_DGRAM_MAX - MSGA__TRW_HDR) / 2u)

enum {
	MSGA__TRW_ADVERT = 1,
	MSGA__TRW_WITHDRAW = 2,
	MSGA__TRW_QUERY = 3,
};

enum {
	MSGA__TRW_RC = 1,
	MSGA__TRW_UD = 2,
	MSGA__TRW_MCAST = 3,
};

#define MSGA__TRW_F_RELIABLE 0x01u /* MSGA_PUB_RELIABLE multicast */
#define MSGA__TRW_F_KEYS 0x02u     /* the publisher wants keys */
#define MSGA__TRW_F_LAST 0x04u     /* it keeps each topic's last value */
/* mcast:// only: addr is the topic's group on line B (msga_pub_attr.uri_b),
 * a record of its own beside line A's (the bit clear): a subscriber
 * without MSGA_SUB_AB_LINES joins line A only. */
#define MSGA__TRW_F_LINE_B 0x08u
#define MSGA__TRW_F_ALL 0x0fu

struct msga__trw_advert {
	uint8_t kind, flags;
	uint16_t port;
	uint8_t addr[16];
	uint64_t origin;
	char topic[MSGA_TOPIC_MAX + 1];
};

/* A datagram being written into a caller's buffer. */
struct msga__trw_enc {
	uint8_t *buf;
	uint32_t cap, len, count;
};

/* A checked datagram being read (msga__trw_open). */
struct msga__trw_dec {
	const uint8_t *buf;
	uint32_t len, pos, left;
	uint8_t type;
	uint64_t sender;
	uint32_t seq;
	uint32_t period_ms;
};

/*
 * Start a datagram of type in buf (cap bytes, at least MSGA__TRW_HDR;
 * more than MSGA__TRW_DGRAM_MAX are not used).
 */
void msga__trw_begin(struct msga__trw_enc *e, void *buf, uint32_t cap,
		     uint8_t type, uint64_t sender, uint32_t seq);
/*
 * Add an advert or withdraw record: 0; -ENOSPC when it does not fit
 * (end this datagram, start another), -EINVAL when the record is not
 * valid (the kind, the flags, the port for the kind, the topic name) or
 * the datagram is a query.
 */
int msga__trw_add_advert(struct msga__trw_enc *e,
			 const struct msga__trw_advert *a);
/* An advert or withdraw datagram's period field (header offset 20). */
void msga__trw_period(struct msga__trw_enc *e, uint32_t period_ms);
/* Add a query record: 0, -ENOSPC, or -EINVAL (a bad pattern, or the
 * datagram is not a query). */
int msga__trw_add_query(struct msga__trw_enc *e, const char *pattern);
/* The datagram's length, its count written; 0 when it has no record
 * (nothing to send). */
uint32_t msga__trw_end(struct msga__trw_enc *e);

/* A socket address's IP as a record's addr: IPv6, or IPv4 mapped; any
 * other family, the unspecified address. */
struct sockaddr;
void msga__trw_addr_of(uint8_t addr[16], const struct sockaddr *sa);

/* Where a subscriber connects for record a (its kind, port, addr):
 * "rdma://IP:PORT", "ud://IP:PORT" ([IPv6]), or "mcast://GROUP". */
void msga__trw_uri(const struct msga__trw_advert *a, char *buf, size_t n);

/* Check n bytes at buf whole: 0 with d ready to read, or -EPROTO. */
int msga__trw_open(const void *buf, uint32_t n, struct msga__trw_dec *d);
/* The next record of a checked advert or withdraw datagram: 1, or 0
 * when there is none left (or the datagram is a query). */
int msga__trw_next_advert(struct msga__trw_dec *d,
			  struct msga__trw_advert *a);
/* The next pattern of a checked query, NUL-terminated in pat: 1, or 0. */
int msga__trw_next_query(struct msga__trw_dec *d,
			 char pat[MSGA_TOPIC_MAX + 2]);

#endif
