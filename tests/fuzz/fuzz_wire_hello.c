/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wire_hello.c - the connection hello (msga__wire_hello_get,
 * lib/wire.c), fed any rdma_cm private data: what a connecting subscriber
 * sends the publisher, and the publisher's accept. An accepted hello obeys
 * wire.h's rules and re-encodes to the bytes it came from; a short one
 * (the first 16 bytes only) offers no ring. The publisher reads the
 * ring's size from the offer (msga__ring_offered_size, lib/ring.c): 0 for
 * an offer of the old format, the offer without its format bit else.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "ring.h"
#include "wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msga__wire_hello h;
	uint8_t again[MSGA__WIRE_HELLO_LEN];
	int ret;

	FUZZ_CHECK(msga__wire_hello_get(NULL, size, &h) == -EPROTO);
	ret = msga__wire_hello_get(data, size, &h);
	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	if (ret)
		return 0;
	FUZZ_CHECK(size >= MSGA__WIRE_HELLO_V1_LEN);
	FUZZ_CHECK(h.magic == MSGA__WIRE_MAGIC &&
		   h.version == MSGA__WIRE_VERSION);
	FUZZ_CHECK(h.role == 1 || h.role == 2);
	FUZZ_CHECK(h.recv_depth >= 4);
	FUZZ_CHECK(h.slot_size >= MSGA__WIRE_HDR_LEN + MSGA_TOPIC_MAX + 1);
	msga__wire_hello_put(again, &h);
	if (size >= MSGA__WIRE_HELLO_LEN) {
		FUZZ_CHECK(!memcmp(again, data, MSGA__WIRE_HELLO_LEN));
	} else {
		FUZZ_CHECK(!memcmp(again, data, MSGA__WIRE_HELLO_V1_LEN));
		FUZZ_CHECK(!h.ring_addr && !h.ring_rkey && !h.ring_size);
	}
	if (h.ring_size & MSGA__RING_OFFER_FMT2)
		FUZZ_CHECK(msga__ring_offered_size(h.ring_size) ==
			   (h.ring_size & ~MSGA__RING_OFFER_FMT2));
	else
		FUZZ_CHECK(msga__ring_offered_size(h.ring_size) == 0);
	return 0;
}
