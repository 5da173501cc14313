/* SPDX-License-Identifier: MIT */
/*
 * fuzz_read_wire.c - the READ endpoint's offer decoder (msga__rdw_get,
 * lib/proto/read_wire.c) fed any rdma_cm private data, in the input's
 * own buffer (exactly its size, under libFuzzer and replay.c alike), so
 * AddressSanitizer sees a read past it. Its verdict must
 * equal a reference written here from read_wire.h; an accepted offer
 * describes a block the subscriber may READ from (the control block and
 * a ring of a sane size) and re-encodes to the bytes it came from, but
 * for the fields the decoder ignores (the two zero ones).
 */
#include <errno.h>
#include <string.h>

#include "byteorder.h"
#include "read_wire.h"
#include "retain.h"
#include "fuzz.h"

static int ref_ok(const uint8_t *p, size_t n)
{
	uint64_t len, cap;

	if (n < 32 || p[0] != 'M' || p[1] != 'S' || p[2] != 'G' ||
	    p[3] != 'R' || p[4] != 1 || p[5] != 0)
		return 0;
	len = msga__get64(p + 16);
	cap = msga__get64(p + 24);
	return cap && cap % 8 == 0 && cap <= 1ull << 35 && len == 64 + cap;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct msga__rdw_offer o;
	uint8_t again[MSGA__RDW_LEN];
	const uint8_t *p = data;
	uint32_t n = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	int ret = msga__rdw_get(p, n, &o);

	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	FUZZ_CHECK((ret == 0) == ref_ok(p, size));
	if (!ret) {
		FUZZ_CHECK(o.len == MSGA__RETAIN_CTRL + o.cap);
		FUZZ_CHECK(o.cap && o.cap % 8 == 0 && o.cap <= 1ull << 35);
		msga__rdw_put(again, &o);
		memcpy(again + 6, p + 6, 2);
		memcpy(again + 12, p + 12, 4);
		FUZZ_CHECK(!memcmp(again, p, MSGA__RDW_LEN));
	}
	return 0;
}
