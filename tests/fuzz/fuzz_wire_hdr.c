/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wire_hdr.c - the RC header decoder (msga__wire_hdr_get, lib/wire.c)
 * fed any received SEND. Its verdict must equal a reference written here
 * from wire.h's rules, an accepted header must re-encode to the bytes it
 * came from, and the payload is then used the way the receive path uses
 * it (copied at its offset into a buffer of the message's size, a topic
 * name into its fixed array), so AddressSanitizer sees any check that lets
 * a peer's numbers point outside.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "wire.h"
#include "fuzz.h"

static int ref_data_ok(const struct msga__wire_hdr *h, size_t payload)
{
	uint64_t end = (uint64_t)h->off + payload;

	if (h->flags & ~(MSGA__WF_FIRST | MSGA__WF_LAST))
		return 0;
	if (h->len > MSGA_MSG_MAX || end > h->len || payload > MSGA_FRAG_MAX)
		return 0;
	if ((h->flags & MSGA__WF_FIRST) && h->off)
		return 0;
	return !(h->flags & MSGA__WF_LAST) || end == h->len;
}

/* wire.h's rules, written again without looking at wire.c's code. */
static int ref_ok(const struct msga__wire_hdr *h, size_t payload)
{
	switch (h->type) {
	case MSGA__W_DATA:
		return ref_data_ok(h, payload);
	case MSGA__W_TOPIC:
		return h->len == payload && payload >= 1 &&
		       payload <= MSGA_TOPIC_MAX;
	case MSGA__W_SUBSCRIBE: /* (0.12) WANT_LV its only flag */
		return h->len == payload && payload >= 1 &&
		       payload <= MSGA_TOPIC_MAX + 1 &&
		       (h->flags | MSGA__WF_WANT_LV) == MSGA__WF_WANT_LV;
	case MSGA__W_CREDIT:
		return payload == 0;
	case MSGA__W_BATCH:
		return h->len == payload && payload >= MSGA__WIRE_HDR_LEN;
	case MSGA__W_AUTH:
		return h->len == 16 && payload == 16;
	case MSGA__W_REFUSE:
		return payload == 0 && h->seq >= 1 && h->seq < 4096;
	case MSGA__W_BYE: /* (0.10) the credit field alone may be set */
		return payload == 0 && h->flags == 0 && h->topic == 0 &&
		       h->seq == 0 && h->len == 0 && h->off == 0;
	case MSGA__W_LAST_VALUE: /* (0.12) one whole message of a topic */
		return h->len == payload && payload <= MSGA_FRAG_MAX &&
		       h->flags == 0 && h->off == 0 && h->seq != 0 &&
		       h->topic < MSGA_PUB_TOPICS_MAX;
	default:
		return 0;
	}
}

/* Use the payload as subscriber.c and publisher.c would. */
static void consume(const struct msga__wire_hdr *h, const uint8_t *payload,
		    size_t n)
{
	char name[MSGA_TOPIC_MAX + 2]; /* a pattern: one more */
	uint8_t *msg;

	switch (h->type) {
	case MSGA__W_DATA:
	case MSGA__W_LAST_VALUE: /* (off is 0) */
		msg = malloc(h->len ? h->len : 1);
		FUZZ_CHECK(msg);
		if (n)
			memcpy(msg + h->off, payload, n);
		free(msg);
		break;
	case MSGA__W_TOPIC:
	case MSGA__W_SUBSCRIBE:
		memcpy(name, payload, h->len);
		name[h->len] = '\0';
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msga__wire_hdr h;
	uint8_t again[MSGA__WIRE_HDR_LEN];
	int ret;

	memset(&h, 0xa5, sizeof(h));
	ret = msga__wire_hdr_get(data, size, &h);
	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	if (size < MSGA__WIRE_HDR_LEN) {
		FUZZ_CHECK(ret == -EPROTO);
		return 0;
	}
	FUZZ_CHECK((ret == 0) == ref_ok(&h, size - MSGA__WIRE_HDR_LEN));
	FUZZ_CHECK(msga__wire_hdr_check(&h, size - MSGA__WIRE_HDR_LEN) == ret);
	/* Every field decoded: the header re-encodes to the same bytes. */
	msga__wire_hdr_put(again, &h);
	FUZZ_CHECK(!memcmp(again, data, sizeof(again)));
	if (!ret)
		consume(&h, data + MSGA__WIRE_HDR_LEN,
			size - MSGA__WIRE_HDR_LEN);
	return 0;
}
