/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stat_shm.c - a live-counters file as msga_stat -p maps it
 * (msga__shm_hdr_check, msga__shm_slot_read, lib/proto/stat_shm.c), any
 * bytes of any length, in the input's own buffer so AddressSanitizer sees
 * a read past it. A file the header check accepts must hold its slots
 * inside the input; every slot read returns a known verdict, and a record
 * it accepts has a known kind and a payload whose size field is its
 * length, within the slot.
 */
#include <errno.h>
#include <string.h>

#include "stat_shm.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t payload[MSGA__SHM_PAYLOAD_MAX / 8 + 1];
	struct msga__shm_hdr h;
	struct msga__shm_slot s;
	uint32_t size0;

	if (msga__shm_hdr_check(data, size, &h))
		return 0;
	FUZZ_CHECK(h.hdr_bytes <= size);
	FUZZ_CHECK((uint64_t)h.nslots * h.slot_bytes <= size - h.hdr_bytes);
	FUZZ_CHECK(h.slot_bytes <= MSGA__SHM_SLOT_BYTES);
	for (uint32_t i = 0; i < h.nslots && i < 4096; i++) {
		int r = msga__shm_slot_read(data, &h, i, 2, &s, payload);

		FUZZ_CHECK(r == 0 || r == 1 || r == -EAGAIN || r == -EINVAL);
		if (r != 1)
			continue;
		FUZZ_CHECK(s.kind >= 1 && s.kind <= MSGA__SHM_KIND_MAX);
		FUZZ_CHECK(s.len <= h.slot_bytes - sizeof(s));
		memcpy(&size0, payload, sizeof(size0));
		FUZZ_CHECK(size0 == s.len);
		FUZZ_CHECK(memchr(s.name, '\0', sizeof(s.name)) != NULL);
	}
	FUZZ_CHECK(msga__shm_slot_read(data, &h, h.nslots, 2, &s, payload) ==
		   -EINVAL);
	return 0;
}
