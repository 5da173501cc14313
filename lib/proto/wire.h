/* SPDX-License-Identifier: MIT */
/*
 * wire.h - the bytes msgaccel puts on an RC connection. Every SEND starts
 * with a 24-byte header (little-endian), then a payload:
 *
 *   0  u8  type     DATA, TOPIC, SUBSCRIBE, CREDIT, BATCH, AUTH, REFUSE,
 *                   BYE, LAST_VALUE
 *   1  u8  flags    FIRST and LAST fragment bits (DATA); WANT_LV
 *                   (SUBSCRIBE, 0.12)
 *   2  u16 topic    publisher's topic id (DATA, TOPIC)
 *   4  u32 credit   receives the sender has re-posted so far (mod 2^32)
 *   8  u64 seq      per-topic sequence (DATA)
 *  16  u32 len      DATA: whole message length; TOPIC/SUBSCRIBE: name length
 *  20  u32 off      DATA: offset of this fragment in the message
 *
 * A BATCH carries several whole messages in one SEND when the subscriber
 * is behind: after its header come records, each a DATA header with
 * FIRST|LAST (credit 0) and the payload, padded to 8 bytes.
 *
 * Last value (0.12, msgaccel(7) LAST VALUE): a subscriber created with
 * MSGA_SUB_LAST_VALUE sets WANT_LV in its SUBSCRIBE; a publisher created
 * with MSGA_PUB_LAST_VALUE then sends, right after each matching topic's
 * TOPIC and before any DATA of it, that topic's kept message as one
 * LAST_VALUE (topic, seq, len = payload, at most MSGA_FRAG_MAX bytes,
 * flags and off 0). A publisher before 0.12 never looked at a SUBSCRIBE's
 * flags, so it ignores WANT_LV: such a subscriber gets the live stream
 * only. A subscriber that did not ask takes a LAST_VALUE as a protocol
 * error.
 *
 * Connection private data (connect and accept) carries struct
 * msga__wire_hello so each side knows how many receives the other posted.
 * Its second 16 bytes offer (subscriber) and accept (publisher, echoing
 * ring_size) an RDMA WRITE ring (ring.h); a peer that sends only the first
 * 16, or zeros there (IB pads private data), uses SEND/RECV only.
 */
#ifndef MSGA_WIRE_H
#define MSGA_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__WIRE_HDR_LEN 24u
#define MSGA__WIRE_MAGIC 0x4147534du /* "MSGA" little-endian */
#define MSGA__WIRE_VERSION 1u
#define MSGA__WIRE_HELLO_LEN 32u
#define MSGA__WIRE_HELLO_V1_LEN 16u

enum msga__wire_type {
	MSGA__W_DATA = 1,      /* pub -> sub: a message or one fragment */
	MSGA__W_TOPIC = 2,     /* pub -> sub: topic id -> name, before data */
	MSGA__W_SUBSCRIBE = 3, /* sub -> pub: pattern; the first SEND */
	MSGA__W_CREDIT = 4,    /* either way: only the credit field */
	MSGA__W_BATCH = 5,     /* pub -> sub: len bytes of DATA records */
	/* Since 0.8, authenticated connections (auth_wire.h): */
	MSGA__W_AUTH = 6,      /* sub -> pub: its proof (len 16), first */
	MSGA__W_REFUSE = 7,    /* pub -> sub: SUBSCRIBE refused; seq = errno */
	/* Since 0.10: */
	MSGA__W_BYE = 8,       /* either way: a clean end, the last message;
				* every field but credit 0, no payload */
	/* Since 0.12: */
	MSGA__W_LAST_VALUE = 9, /* pub -> sub: a topic's last value, whole */
};

enum msga__wire_flags {
	MSGA__WF_FIRST = 1u << 0,
	MSGA__WF_LAST = 1u << 1,
	MSGA__WF_WANT_LV = 1u << 2, /* SUBSCRIBE: send me last values */
};

/* Records of a BATCH start on 8-byte boundaries. */
#define MSGA__WIRE_ALIGN(x) (((x) + 7u) & ~(size_t)7u)

struct msga__wire_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t topic;
	uint32_t credit;
	uint64_t seq;
	uint32_t len;
	uint32_t off;
};

struct msga__wire_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t role;       /* 1 = publisher (accept), 2 = subscriber */
	uint32_t recv_depth; /* receives posted before connect/accept */
	uint32_t slot_size;  /* bytes per receive buffer */
	/* 16: where the ring starts in its zero-based registration: always
	 * 0 (no address of ours goes on the wire); a publisher refuses a
	 * hello with anything else. (The name stays for the layout.) */
	uint64_t ring_addr;
	uint32_t ring_rkey;  /* 24 */
	uint32_t ring_size;  /* 28: bytes; 0 = no ring */
};

void msga__wire_hdr_put(void *buf, const struct msga__wire_hdr *h);
/* Decode and check a received SEND of n bytes; 0 or -EPROTO. */
int msga__wire_hdr_get(const void *buf, size_t n, struct msga__wire_hdr *h);
/* Whether h (payload bytes after it) is a header a peer may send. */
int msga__wire_hdr_check(const struct msga__wire_hdr *h, size_t payload);
/*
 * Next record of a BATCH payload buf[0, n) at *off: 1 and *h filled, *off
 * advanced; 0 at the end; -EPROTO if malformed.
 */
int msga__wire_batch_next(const void *buf, size_t n, size_t *off,
			  struct msga__wire_hdr *h);
void msga__wire_hello_put(void *buf, const struct msga__wire_hello *h);
int msga__wire_hello_get(const void *buf, size_t n,
			 struct msga__wire_hello *h);

#endif
