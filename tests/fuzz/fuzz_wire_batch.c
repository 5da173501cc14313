/* SPDX-License-Identifier: MIT */
/*
 * fuzz_wire_batch.c - the BATCH walker (msga__wire_batch_next, lib/wire.c)
 * fed any BATCH payload. Every record it returns must lie inside the
 * payload, be a whole DATA message (FIRST|LAST, offset 0) and start on an
 * 8-byte boundary; the walk must end, and end with 0 only at or past the
 * end. Each record's payload is copied out as the subscriber delivers it.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msga__wire_hdr h;
	size_t off = 0, records = 0;
	int ret;

	while ((ret = msga__wire_batch_next(data, size, &off, &h)) > 0) {
		size_t start = off - MSGA__WIRE_ALIGN(MSGA__WIRE_HDR_LEN + h.len);
		uint8_t again[MSGA__WIRE_HDR_LEN], *copy;

		FUZZ_CHECK(ret == 1);
		FUZZ_CHECK(start % 8 == 0 && start < size);
		FUZZ_CHECK(start + MSGA__WIRE_HDR_LEN + h.len <= size);
		FUZZ_CHECK(h.type == MSGA__W_DATA && h.off == 0 &&
			   h.flags == (MSGA__WF_FIRST | MSGA__WF_LAST));
		FUZZ_CHECK(h.len <= MSGA_FRAG_MAX);
		msga__wire_hdr_put(again, &h);
		FUZZ_CHECK(!memcmp(again, data + start, sizeof(again)));
		copy = fuzz_dup(data + start + MSGA__WIRE_HDR_LEN, h.len);
		free(copy);
		/* Each record is at least a header: the walk ends. */
		FUZZ_CHECK(++records <= size / MSGA__WIRE_HDR_LEN);
	}
	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	FUZZ_CHECK(ret == -EPROTO || off >= size);
	FUZZ_CHECK(ret == 0 || off < size);
	return 0;
}
