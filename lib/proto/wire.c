/* SPDX-License-Identifier: MIT */
/*
 * wire.c - encode and check the header and hello of wire.h. Explicit
 * little-endian byte order so that mixed-endian peers agree; on x86 the
 * conversions compile away.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "wire.h"
#include "byteorder.h"

void msga__wire_hdr_put(void *buf, const struct msga__wire_hdr *h)
{
	uint8_t *p = buf;

	p[0] = h->type;
	p[1] = h->flags;
	msga__put16(p + 2, h->topic);
	msga__put32(p + 4, h->credit);
	msga__put64(p + 8, h->seq);
	msga__put32(p + 16, h->len);
	msga__put32(p + 20, h->off);
}

/* A DATA fragment must lie inside its message, and the message size limit. */
static int data_ok(const struct msga__wire_hdr *h, size_t payload)
{
	if (h->len > MSGA_MSG_MAX || h->off > h->len ||
	    payload > h->len - h->off || payload > MSGA_FRAG_MAX)
		return 0;
	if ((h->flags & MSGA__WF_FIRST) && h->off != 0)
		return 0;
	if ((h->flags & MSGA__WF_LAST) && h->off + payload != h->len)
		return 0;
	return !(h->flags & ~(MSGA__WF_FIRST | MSGA__WF_LAST));
}

int msga__wire_hdr_get(const void *buf, size_t n, struct msga__wire_hdr *h)
{
	const uint8_t *p = buf;

	if (n < MSGA__WIRE_HDR_LEN)
		return -EPROTO;
	h->type = p[0];
	h->flags = p[1];
	h->topic = msga__get16(p + 2);
	h->credit = msga__get32(p + 4);
	h->seq = msga__get64(p + 8);
	h->len = msga__get32(p + 16);
	h->off = msga__get32(p + 20);
	return msga__wire_hdr_check(h, n - MSGA__WIRE_HDR_LEN);
}

int msga__wire_hdr_check(const struct msga__wire_hdr *h, size_t payload)
{
	switch (h->type) {
	case MSGA__W_DATA:
		return data_ok(h, payload) ? 0 : -EPROTO;
	case MSGA__W_TOPIC:
		return h->len >= 1 && h->len <= MSGA_TOPIC_MAX &&
		       h->len == payload ? 0 : -EPROTO;
	case MSGA__W_SUBSCRIBE: /* a pattern: a name plus maybe a '*' */
		return h->len >= 1 && h->len <= MSGA_TOPIC_MAX + 1 &&
		       h->len == payload &&
		       !(h->flags & ~MSGA__WF_WANT_LV) ? 0 : -EPROTO;
	case MSGA__W_CREDIT:
		return payload == 0 ? 0 : -EPROTO;
	case MSGA__W_BATCH:
		return h->len == payload && payload >= MSGA__WIRE_HDR_LEN ?
			       0 : -EPROTO;
	case MSGA__W_AUTH: /* a tag (auth_wire.h) */
		return h->len == 16 && payload == 16 ? 0 : -EPROTO;
	case MSGA__W_REFUSE: /* seq: a positive errno */
		return payload == 0 && h->seq >= 1 && h->seq < 4096 ?
			       0 : -EPROTO;
	case MSGA__W_BYE: /* nothing but the credit field */
		return payload == 0 && !h->flags && !h->topic && !h->seq &&
		       !h->len && !h->off ? 0 : -EPROTO;
	case MSGA__W_LAST_VALUE: /* a whole message, one record */
		return h->len == payload && payload <= MSGA_FRAG_MAX &&
		       !h->flags && !h->off && h->seq &&
		       h->topic < MSGA_PUB_TOPICS_MAX ? 0 : -EPROTO;
	default:
		return -EPROTO;
	}
}

int msga__wire_batch_next(const void *buf, size_t n, size_t *off,
			  struct msga__wire_hdr *h)
{
	const uint8_t *p = (const uint8_t *)buf + *off;
	size_t left = n - *off, len;

	if (*off >= n)
		return 0;
	if (left < MSGA__WIRE_HDR_LEN)
		return -EPROTO;
	len = msga__get32(p + 16);
	if (len > left - MSGA__WIRE_HDR_LEN ||
	    msga__wire_hdr_get(p, MSGA__WIRE_HDR_LEN + len, h) ||
	    h->type != MSGA__W_DATA ||
	    h->flags != (MSGA__WF_FIRST | MSGA__WF_LAST))
		return -EPROTO;
	*off += MSGA__WIRE_ALIGN(MSGA__WIRE_HDR_LEN + len);
	return 1;
}

void msga__wire_hello_put(void *buf, const struct msga__wire_hello *h)
{
	uint8_t *p = buf;

	msga__put32(p, MSGA__WIRE_MAGIC);
	msga__put16(p + 4, MSGA__WIRE_VERSION);
	msga__put16(p + 6, h->role);
	msga__put32(p + 8, h->recv_depth);
	msga__put32(p + 12, h->slot_size);
	msga__put64(p + 16, h->ring_addr);
	msga__put32(p + 24, h->ring_rkey);
	msga__put32(p + 28, h->ring_size);
}

/*
 * IB/RoCE pad connect private data to the CM's fixed size, so n may exceed
 * the hello; only a short or foreign one is refused.
 */
int msga__wire_hello_get(const void *buf, size_t n,
			 struct msga__wire_hello *h)
{
	const uint8_t *p = buf;

	if (!buf || n < MSGA__WIRE_HELLO_V1_LEN)
		return -EPROTO;
	h->magic = msga__get32(p);
	h->version = msga__get16(p + 4);
	h->role = msga__get16(p + 6);
	h->recv_depth = msga__get32(p + 8);
	h->slot_size = msga__get32(p + 12);
	h->ring_addr = n >= MSGA__WIRE_HELLO_LEN ? msga__get64(p + 16) : 0;
	h->ring_rkey = n >= MSGA__WIRE_HELLO_LEN ? msga__get32(p + 24) : 0;
	h->ring_size = n >= MSGA__WIRE_HELLO_LEN ? msga__get32(p + 28) : 0;
	if (h->magic != MSGA__WIRE_MAGIC || h->version != MSGA__WIRE_VERSION ||
	    h->role < 1 || h->role > 2 || h->recv_depth < 4 ||
	    h->slot_size < MSGA__WIRE_HDR_LEN + MSGA_TOPIC_MAX + 1)
		return -EPROTO;
	return 0;
}
