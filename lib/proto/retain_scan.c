/* SPDX-License-Identifier: MIT */
/* retain_scan.c - see retain_scan.h. */
#include <errno.h>
#include <string.h>

#include "retain.h"
#include "retain_scan.h"

int msga__retain_scan(const void *buf, uint64_t lo, uint64_t hi, uint64_t cap,
		      uint32_t max_len,
		      int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		      void *arg)
{
	const uint8_t *p = buf;
	uint64_t pos = lo;

	if (!cap || cap % 8 || lo % 8 || hi % 8 || hi < lo || hi - lo > cap)
		return -EINVAL;
	while (pos < hi) {
		uint64_t room = cap - pos % cap; /* to the ring's end */
		struct msga__retain_rec h;
		struct msga__rscan_rec rec;
		uint64_t sz;
		int ret;

		/*
		 * An unused end (too short for a header, or marked SKIP)
		 * that reaches hi ends the walk: pos + room could pass 2^64
		 * (positions are the peer's numbers) and wrap below lo.
		 */
		if (room < sizeof(h)) { /* too short for a header: unused */
			if (room >= hi - pos)
				break;
			pos += room;
			continue;
		}
		if (hi - pos < sizeof(h))
			return -EBADMSG;
		/* (a copy: the bytes are another host's, maybe unaligned) */
		memcpy(&h, p + (pos - lo), sizeof(h));
		if (h.check != (uint32_t)(pos / 8))
			return -EBADMSG;
		if (h.topic == MSGA__RETAIN_SKIP) {
			if (room >= hi - pos)
				break;
			pos += room;
			continue;
		}
		if (h.len > max_len)
			return -EBADMSG;
		sz = msga__retain_rec_size(h.len);
		if (sz > room || sz > hi - pos)
			return -EBADMSG;
		rec.topic_id = h.topic;
		rec.len = h.len;
		rec.seq = h.seq;
		rec.pos = pos;
		rec.data = p + (pos - lo) + sizeof(h);
		ret = fn(arg, &rec);
		if (ret)
			return ret;
		pos += sz;
	}
	return 0;
}
