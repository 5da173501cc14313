/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ud_wire.c - the datagram header decoder (msga__udw_get,
 * lib/ud_wire.c) fed any received datagram, unicast or multicast. Its
 * verdict must equal a reference written here from ud_wire.h's rules; an
 * accepted header must re-encode (msga__udw_put) to the bytes it came
 * from, the RPOS extension included (the MAC extension is the MAC's
 * place: zero); the name and payload are then used
 * as mcast_sub.c and ud_unicast.c use them, on exact-size copies so
 * AddressSanitizer sees any read past the datagram.
 *
 * ud:// control datagrams (SUBSCRIBE, SUBACK, UNSUBSCRIBE, and COOKIE
 * since 0.8) carry any nonce (seq) and cookie (origin): the re-encoding
 * must give both back bit for bit.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "ud_wire.h"
#include "fuzz.h"

static int ref_frag_ok(const struct msga__udw_hdr *h)
{
	uint64_t end = (uint64_t)h->off + h->payload;
	unsigned int whole = MSGA__UDW_FIRST | MSGA__UDW_LAST;
	/* a resend, or one that says where it is kept: the same rules */
	unsigned int flags = h->flags & ~(MSGA__UDW_RETX | MSGA__UDW_RPOS |
					  MSGA__UDW_MAC);

	if ((flags & ~whole) || !h->seq || h->msg_len > MSGA_MSG_MAX ||
	    end > h->msg_len)
		return 0;
	if ((flags & MSGA__UDW_FIRST) && h->off)
		return 0;
	if ((flags & MSGA__UDW_LAST) && end != h->msg_len)
		return 0;
	if (flags == whole)
		return 1;
	if (!h->frag_size || !h->payload || h->off % h->frag_size)
		return 0;
	return (flags & MSGA__UDW_LAST) || h->payload == h->frag_size;
}

/* ud_wire.h's rules for a datagram of n bytes whose header decoded to h. */
static int ref_ok(const uint8_t *p, size_t n, const struct msga__udw_hdr *h)
{
	size_t name_end = (MSGA__UDW_FIXED + (size_t)p[6] + 7) & ~(size_t)7;
	int rpos = (p[5] & MSGA__UDW_RPOS) != 0;
	int mac = (p[5] & MSGA__UDW_MAC) != 0; /* (any type, after RPOS) */
	size_t hdr_len = name_end + (rpos ? 16 : 0) + (mac ? 16 : 0);

	if (p[4] != MSGA__UDW_VERSION || !p[6] || p[6] > MSGA_TOPIC_MAX + 1 ||
	    hdr_len > n || memchr(p + MSGA__UDW_FIXED, 0, p[6]) ||
	    p[7] > MSGA__UDW_COOKIE)
		return 0;
	/* RPOS: DATA, HEARTBEAT and END only, its last two bytes zero */
	if (rpos && ((p[7] != MSGA__UDW_DATA && p[7] != MSGA__UDW_HEARTBEAT &&
		      p[7] != MSGA__UDW_END) ||
		     p[name_end + 14] || p[name_end + 15]))
		return 0;
	if (p[7] == MSGA__UDW_NAK || p[7] == MSGA__UDW_LOST)
		return n == hdr_len && p[6] <= MSGA_TOPIC_MAX &&
		       !(h->flags & ~MSGA__UDW_MAC) &&
		       h->seq && !h->off && !h->frag_size && h->msg_len &&
		       h->msg_len <= MSGA__UDW_RANGE_MAX &&
		       (unsigned __int128)h->seq + h->msg_len - 1 <= UINT64_MAX;
	if (p[7] == MSGA__UDW_HEARTBEAT || p[7] == MSGA__UDW_END)
		return n == hdr_len && p[6] <= MSGA_TOPIC_MAX &&
		       !(h->flags & ~(MSGA__UDW_RPOS | MSGA__UDW_MAC)) &&
		       h->seq && !h->msg_len && !h->off && !h->frag_size;
	if (p[7] != MSGA__UDW_DATA)
		return n == hdr_len;
	return p[6] <= MSGA_TOPIC_MAX && ref_frag_ok(h);
}

static void consume(const struct msga__udw_hdr *h, const uint8_t *data)
{
	char name[MSGA_TOPIC_MAX + 2];
	void *payload;

	memcpy(name, h->topic, h->topic_len);
	name[h->topic_len] = '\0';
	FUZZ_CHECK(strlen(name) == h->topic_len);
	payload = fuzz_dup(data + h->hdr_len, h->payload);
	free(payload);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msga__udw_hdr h;
	uint8_t again[MSGA__UDW_HDR_MAX + MSGA__UDW_MAC_LEN];
	uint32_t len;
	int ret;

	memset(&h, 0, sizeof(h));
	ret = msga__udw_get(data, size, &h);
	FUZZ_CHECK(ret == 0 || ret == -EPROTO || ret == -EBADMSG);
	if (size < MSGA__UDW_FIXED || data[0] != 'M' || data[1] != 'S' ||
	    data[2] != 'G' || data[3] != 'U') {
		FUZZ_CHECK(ret == -EBADMSG);
		return 0;
	}
	FUZZ_CHECK(ret != -EBADMSG);
	FUZZ_CHECK((ret == 0) == ref_ok(data, size, &h));
	if (ret)
		return 0;
	FUZZ_CHECK(h.hdr_len <= size &&
		   h.hdr_len <= MSGA__UDW_HDR_MAX + MSGA__UDW_MAC_LEN);
	FUZZ_CHECK(h.hdr_len + h.payload == size);
	FUZZ_CHECK(h.topic == (const char *)data + MSGA__UDW_FIXED);
	/* Re-encoded, the header matches (padding is 0). */
	len = msga__udw_put(again, &h, h.topic);
	FUZZ_CHECK(len == h.hdr_len);
	FUZZ_CHECK(!memcmp(again, data, MSGA__UDW_FIXED));
	FUZZ_CHECK(!memcmp(again + MSGA__UDW_FIXED, data + MSGA__UDW_FIXED,
			   h.topic_len));
	if (h.flags & MSGA__UDW_RPOS) { /* the extension, zero u16 and all */
		uint32_t x = msga__udw_hdr_len(h.topic_len, 0);

		FUZZ_CHECK(x + MSGA__UDW_RPOS_LEN +
			   (h.flags & MSGA__UDW_MAC ? MSGA__UDW_MAC_LEN : 0) ==
			   h.hdr_len);
		FUZZ_CHECK(!memcmp(again + x, data + x, MSGA__UDW_RPOS_LEN));
	} else {
		FUZZ_CHECK(!h.rpos && !h.topic_id && !h.read_port);
	}
	if (h.type >= MSGA__UDW_SUBSCRIBE && h.type <= MSGA__UDW_UNSUBSCRIBE)
		FUZZ_CHECK(!h.payload);
	if (h.type == MSGA__UDW_COOKIE)
		FUZZ_CHECK(!h.payload && h.hdr_len == size);
	if (h.flags & MSGA__UDW_MAC) /* re-encoded as zero: the MAC's place */
		for (uint32_t i = h.hdr_len - MSGA__UDW_MAC_LEN; i < h.hdr_len;
		     i++)
			FUZZ_CHECK(!again[i]);
	consume(&h, data);
	return 0;
}
