/* SPDX-License-Identifier: MIT */
/*
 * ud_wire.h - the bytes of one msgaccel datagram (UD unicast or multicast).
 * There is no connection to announce topics or to carry state, so every
 * datagram names its stream: the publisher's origin id and the topic
 * name. Little-endian:
 *
 *   0  u32 magic      "MSGU"
 *   4  u8  version    1
 *   5  u8  flags      FIRST and LAST fragment bits
 *   6  u8  topic_len  1..MSGA_TOPIC_MAX (a pattern: up to one more)
 *   7  u8  type       DATA, HEARTBEAT, END, or a unicast control datagram
 *   8  u64 origin     publisher id (high 32 bits: host)
 *  16  u64 seq        per-topic sequence number, from 1
 *  24  u32 msg_len    whole message length
 *  28  u32 off        offset of this fragment's bytes in the message
 *  32  u16 frag_size  payload of every fragment but the last
 *  34  u16 hb         bits 0-14: the publisher's longest heartbeat interval,
 *                     ms (0 from a publisher that sends none, before 0.6);
 *                     bit 15: it keeps its messages and answers NAKs
 *  36  topic name (topic_len bytes), zero padding to a multiple of 8
 *
 * then the payload. A whole message in one datagram has FIRST|LAST, off 0.
 *
 * Unicast UD (ud://) adds control types with no payload, whose name
 * field carries the subscriber's pattern: SUBSCRIBE (sub -> pub, repeated
 * every second as a keepalive), SUBACK (pub -> sub, the answer to each)
 * and UNSUBSCRIBE (sub -> pub, a polite goodbye).
 *
 * Since 0.8 (issue 26) a subscriber's control datagrams carry its nonce
 * (a random number of the membership) in seq, and a SUBSCRIBE carries
 * in origin the publisher's cookie, 0 when it has none: a publisher adds
 * a subscriber only when its SUBSCRIBE echoes a cookie the publisher
 * gave that address, proof that the address is the sender's. A SUBSCRIBE
 * without one (or with a stale or wrong one) from an address not yet
 * subscribed is answered with COOKIE (type 8, pub -> sub): seq the
 * nonce, origin the cookie, a keyed hash of the sender's GID, QPN, LID,
 * nonce and a 2.1 s time step. SUBACK and COOKIE echo the nonce; a
 * subscriber takes neither without its own nonce, nor any datagram from
 * another address than its publisher's. A subscriber before 0.8 sends no
 * cookie and is never added; a publisher before 0.8 does not echo the
 * nonce and is never taken: both ends need 0.8.
 *
 * Since 0.6 two more types, also without payload, carry a stream's state
 * from its publisher (multicast and unicast alike): HEARTBEAT, sent by a
 * stream that has been idle for a heartbeat interval, and END, sent when
 * the publisher is destroyed. Their name field is the stream's topic and
 * their seq the last sequence number the stream sent (never 0: a stream
 * that sent nothing says nothing). A subscriber before 0.6 counts them as
 * foreign datagrams and drops them; its data path is unchanged, since
 * DATA's layout is (hb_ms sat in a field it never read).
 *
 * Loss recovery (0.6, a publisher with MSGA_PUB_RELIABLE): a subscriber
 * that misses numbers of such a stream sends the publisher's QP a NAK
 * (unicast): name the topic, origin the publisher, seq the first number
 * missing and msg_len how many. The publisher sends the messages again to
 * the group, as DATA with the RETX flag, or, for numbers it no longer
 * keeps, a LOST datagram with the same fields as the NAK. A subscriber
 * before 0.6 takes RETX datagrams and LOST for foreign ones.
 *
 * Repair by RDMA READ (0.7): a reliable publisher that serves READs of its
 * retention buffer (retain.h) sets the RPOS flag on its DATA, HEARTBEAT
 * and END datagrams, and 16 more bytes follow the padded name:
 *
 *   +0 u64 rpos       DATA: where the message's record starts in the
 *                     retention ring, counted in bytes ever written (so
 *                     never reused); HEARTBEAT, END: the ring's tail
 *   +8 u32 topic_id   the publisher's id of the topic (records name it)
 *  +12 u16 read_port  the rdma_cm port of its READ endpoint, 0 none
 *  +14 u16 zero
 *
 * A message's records lie in the ring in the order sent, so the numbers
 * a subscriber missed between two it has lie between those two records:
 * it reads that span. A decoder before 0.7 refuses the unknown flag
 * (-EPROTO): such a subscriber does not take a READ-serving publisher's
 * datagrams at all, rather than misread the extension as payload.
 *
 * Datagram MAC (0.8, a publisher with MSGA_PUB_MAC, and every datagram a
 * subscriber in a context with keys sends): the MAC flag, on any type,
 * and 16 more bytes end the header, after the padded name and RPOS if
 * set:
 *
 *   +0 u8[16] mac     SipHash-2-4 (128-bit output, libsodium's
 *                     crypto_shorthash_siphashx24) of the whole datagram,
 *                     header and payload, with these 16 bytes zero, keyed
 *                     with msga__auth_derive(own key, "msgaccel ud mac
 *                     v1") (dgram_mac.h)
 *
 * The payload follows it, so a MAC'd header is at most
 * MSGA__UDW_HDR_MAX + MSGA__UDW_MAC_LEN bytes. A decoder before 0.8
 * refuses the unknown flag (-EPROTO). The MAC is checked, and a datagram
 * that fails is dropped, before the header is decoded (lib/ud/
 * dgram_auth.c): msga__udw_get() only skips it.
 */
#ifndef MSGA_UD_WIRE_H
#define MSGA_UD_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__UDW_MAGIC 0x5547534du /* "MSGU" little-endian */
#define MSGA__UDW_VERSION 1u
#define MSGA__UDW_FIXED 36u
/* Longest header: fixed part plus the longest name, padded, and RPOS. */
#define MSGA__UDW_HDR_MAX 120u
#define MSGA__UDW_RPOS_LEN 16u
#define MSGA__UDW_FIRST 1u
#define MSGA__UDW_LAST 2u
#define MSGA__UDW_RETX 4u  /* DATA sent again, answering a NAK */
#define MSGA__UDW_RPOS 8u  /* the READ extension follows the name */
#define MSGA__UDW_MAC 16u  /* a 16-byte MAC ends the header (0.8) */
#define MSGA__UDW_MAC_LEN 16u
#define MSGA__UDW_HB_MS_MAX 0x7fffu
#define MSGA__UDW_HB_RETAINS 0x8000u
/* Numbers one NAK or LOST may name. */
#define MSGA__UDW_RANGE_MAX 4096u

/* Where the type byte is: read before the header is decoded (dgram_auth.c). */
#define MSGA__UDW_TYPE_OFF 7u

enum msga__udw_type {
	MSGA__UDW_DATA = 0,
	MSGA__UDW_SUBSCRIBE = 1,
	MSGA__UDW_SUBACK = 2,
	MSGA__UDW_UNSUBSCRIBE = 3,
	MSGA__UDW_HEARTBEAT = 4,
	MSGA__UDW_END = 5,
	MSGA__UDW_NAK = 6,
	MSGA__UDW_LOST = 7,
	MSGA__UDW_COOKIE = 8,
};

struct msga__udw_hdr {
	uint8_t type;
	uint8_t flags;
	uint8_t topic_len;
	uint16_t frag_size;
	uint16_t hb_ms;      /* the sender's heartbeat interval cap, ms */
	uint8_t retains;     /* the sender answers NAKs (hb bit 15) */
	uint32_t msg_len;
	uint32_t off;
	uint64_t origin;
	uint64_t seq;
	uint64_t rpos;       /* with RPOS: retention ring position */
	uint32_t topic_id;   /* with RPOS: the publisher's topic id */
	uint16_t read_port;  /* with RPOS: its READ endpoint, 0 none */
	const char *topic;   /* decode: points into the datagram, not NUL-ended */
	uint32_t hdr_len;    /* decode: where the payload starts */
	uint32_t payload;    /* decode: payload bytes in this datagram */
};

/* Header length for a topic name of topic_len bytes, flags' extensions in. */
static inline uint32_t msga__udw_hdr_len(uint32_t topic_len, uint32_t flags)
{
	return ((MSGA__UDW_FIXED + topic_len + 7u) & ~7u) +
	       (flags & MSGA__UDW_RPOS ? MSGA__UDW_RPOS_LEN : 0u) +
	       (flags & MSGA__UDW_MAC ? MSGA__UDW_MAC_LEN : 0u);
}

/* Write the header for h and topic (h->topic_len bytes); returns its length. */
uint32_t msga__udw_put(void *buf, const struct msga__udw_hdr *h,
		       const char *topic);
/*
 * Rewrite only the per-datagram fields (seq, msg_len, off, and rpos with
 * RPOS); the flags' RPOS bit must stay what it was at put.
 */
void msga__udw_restamp(void *buf, const struct msga__udw_hdr *h);
/*
 * Decode and check a received datagram of n bytes: 0, or -EPROTO when it is
 * not msgaccel's (bad magic or version, too short) or is inconsistent.
 * -EBADMSG tells a foreign datagram (no magic) from a malformed one.
 */
int msga__udw_get(const void *buf, size_t n, struct msga__udw_hdr *h);

#endif
