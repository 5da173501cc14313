/* SPDX-License-Identifier: MIT */
/* ud_wire.c - encode and check the datagram header of ud_wire.h. */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "byteorder.h"
#include "ud_wire.h"

void msga__udw_restamp(void *buf, const struct msga__udw_hdr *h)
{
	uint8_t *p = buf;

	p[5] = h->flags;
	msga__put64(p + 16, h->seq);
	msga__put32(p + 24, h->msg_len);
	msga__put32(p + 28, h->off);
	if (h->flags & MSGA__UDW_RPOS)
		msga__put64(p + msga__udw_hdr_len(h->topic_len, 0), h->rpos);
}

uint32_t msga__udw_put(void *buf, const struct msga__udw_hdr *h,
		       const char *topic)
{
	uint32_t len = msga__udw_hdr_len(h->topic_len, h->flags);
	uint8_t *p = buf;

	memset(p, 0, len);
	msga__put32(p, MSGA__UDW_MAGIC);
	p[4] = MSGA__UDW_VERSION;
	p[6] = h->topic_len;
	p[MSGA__UDW_TYPE_OFF] = h->type;
	msga__put64(p + 8, h->origin);
	msga__put16(p + 32, h->frag_size);
	msga__put16(p + 34, (uint16_t)((h->hb_ms & MSGA__UDW_HB_MS_MAX) |
				       (h->retains ? MSGA__UDW_HB_RETAINS : 0)));
	memcpy(p + MSGA__UDW_FIXED, topic, h->topic_len);
	if (h->flags & MSGA__UDW_RPOS) {
		uint8_t *x = p + msga__udw_hdr_len(h->topic_len, 0);

		msga__put32(x + 8, h->topic_id);
		msga__put16(x + 12, h->read_port);
	}
	msga__udw_restamp(buf, h);
	return len;
}

/* The fragment lies inside its message, and whole messages are whole. */
static int frag_ok(const struct msga__udw_hdr *h)
{
	uint32_t flags = h->flags;

	if (flags & ~(MSGA__UDW_FIRST | MSGA__UDW_LAST | MSGA__UDW_RETX |
		      MSGA__UDW_RPOS | MSGA__UDW_MAC) ||
	    !h->seq ||
	    h->msg_len > MSGA_MSG_MAX || h->off > h->msg_len ||
	    h->payload > h->msg_len - h->off)
		return 0;
	if ((flags & MSGA__UDW_FIRST) && h->off)
		return 0;
	if ((flags & MSGA__UDW_LAST) && h->off + h->payload != h->msg_len)
		return 0;
	flags &= ~(MSGA__UDW_RETX | MSGA__UDW_RPOS | MSGA__UDW_MAC);
	if (flags == (MSGA__UDW_FIRST | MSGA__UDW_LAST))
		return 1;
	/* A fragment: every one but the last carries frag_size bytes. */
	return h->frag_size && h->payload &&
	       h->off % h->frag_size == 0 &&
	       ((flags & MSGA__UDW_LAST) || h->payload == h->frag_size);
}

/* HEARTBEAT and END: a topic, a sequence number, RPOS, nothing else. */
static int stream_state_ok(const struct msga__udw_hdr *h)
{
	return !h->payload &&
	       !(h->flags & ~(MSGA__UDW_RPOS | MSGA__UDW_MAC)) && h->seq &&
	       !h->msg_len && !h->off && !h->frag_size &&
	       h->topic_len <= MSGA_TOPIC_MAX;
}

/* NAK and LOST: a topic and a range [seq, seq + msg_len) that fits. */
static int range_ok(const struct msga__udw_hdr *h)
{
	return !h->payload && !(h->flags & ~MSGA__UDW_MAC) && h->seq && !h->off &&
	       !h->frag_size && h->topic_len <= MSGA_TOPIC_MAX &&
	       h->msg_len && h->msg_len <= MSGA__UDW_RANGE_MAX &&
	       h->seq - 1 <= UINT64_MAX - h->msg_len;
}

int msga__udw_get(const void *buf, size_t n, struct msga__udw_hdr *h)
{
	const uint8_t *p = buf;

	if (n < MSGA__UDW_FIXED || msga__get32(p) != MSGA__UDW_MAGIC)
		return -EBADMSG;
	if (p[4] != MSGA__UDW_VERSION)
		return -EPROTO;
	h->flags = p[5];
	h->topic_len = p[6];
	h->type = p[MSGA__UDW_TYPE_OFF];
	h->origin = msga__get64(p + 8);
	h->seq = msga__get64(p + 16);
	h->msg_len = msga__get32(p + 24);
	h->off = msga__get32(p + 28);
	h->frag_size = msga__get16(p + 32);
	h->hb_ms = msga__get16(p + 34) & MSGA__UDW_HB_MS_MAX;
	h->retains = (msga__get16(p + 34) & MSGA__UDW_HB_RETAINS) != 0;
	h->topic = (const char *)p + MSGA__UDW_FIXED;
	h->hdr_len = msga__udw_hdr_len(h->topic_len, h->flags);
	if (!h->topic_len || h->topic_len > MSGA_TOPIC_MAX + 1 ||
	    h->hdr_len > n || memchr(h->topic, '\0', h->topic_len) ||
	    h->type > MSGA__UDW_COOKIE)
		return -EPROTO;
	h->rpos = 0;
	h->topic_id = 0;
	h->read_port = 0;
	if (h->flags & MSGA__UDW_RPOS) {
		const uint8_t *x = p + msga__udw_hdr_len(h->topic_len, 0);

		if ((h->type != MSGA__UDW_DATA &&
		     h->type != MSGA__UDW_HEARTBEAT &&
		     h->type != MSGA__UDW_END) || msga__get16(x + 14))
			return -EPROTO;
		h->rpos = msga__get64(x);
		h->topic_id = msga__get32(x + 8);
		h->read_port = msga__get16(x + 12);
	}
	h->payload = (uint32_t)(n - h->hdr_len);
	if (h->type == MSGA__UDW_HEARTBEAT || h->type == MSGA__UDW_END)
		return stream_state_ok(h) ? 0 : -EPROTO;
	if (h->type == MSGA__UDW_NAK || h->type == MSGA__UDW_LOST)
		return range_ok(h) ? 0 : -EPROTO;
	if (h->type != MSGA__UDW_DATA) /* control: a pattern, nothing else */
		return h->payload ? -EPROTO : 0;
	if (h->topic_len > MSGA_TOPIC_MAX)
		return -EPROTO;
	return frag_ok(h) ? 0 : -EPROTO;
}
