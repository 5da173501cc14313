/* SPDX-License-Identifier: MIT */
/* retain_scan.c - see retain_scan.h. */
#include <errno.h>
#include <string.h>

#include "retain.h"
#include "retain_scan.h"

/*
 * chunk: the span is a chunk of a longer one (msga__retain_walk), so a
 * record or an unused end that hi cuts stops the walk at its start (the
 * next chunk holds it whole); else it is the whole span asked for, and
 * only an unused end may reach past hi.
 */
static int walk(const void *buf, uint64_t lo, uint64_t from, uint64_t hi,
		uint64_t cap, uint32_t max_len, int chunk,
		int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		void *arg, uint64_t *stopped)
{
	const uint8_t *p = buf;
	uint64_t pos = from;

	*stopped = from;
	if (!cap || cap % 8 || lo % 8 || hi % 8 || from % 8 || hi < lo ||
	    hi - lo > cap || from < lo || from > hi)
		return -EINVAL;
	while (pos < hi) {
		uint64_t room = cap - pos % cap; /* to the ring's end */
		struct msga__retain_rec h;
		struct msga__rscan_rec rec;
		uint64_t sz;
		int ret;

		*stopped = pos;
		/*
		 * An unused end (too short for a header, or marked SKIP)
		 * that reaches hi ends the walk: pos + room could pass 2^64
		 * (positions are the peer's numbers) and wrap below lo.
		 */
		if (room < sizeof(h)) { /* too short for a header: unused */
			if (room >= hi - pos) {
				if (chunk && room > hi - pos)
					return 0;
				break;
			}
			pos += room;
			continue;
		}
		if (hi - pos < sizeof(h))
			return chunk ? 0 : -EBADMSG; /* the header is cut */
		/* (a copy: the bytes are another host's, maybe unaligned) */
		memcpy(&h, p + (pos - lo), sizeof(h));
		if (h.check != (uint32_t)(pos / 8))
			return -EBADMSG;
		if (h.topic == MSGA__RETAIN_SKIP) {
			if (room >= hi - pos) {
				if (chunk && room > hi - pos)
					return 0;
				break;
			}
			pos += room;
			continue;
		}
		if (h.len > max_len)
			return -EBADMSG;
		sz = msga__retain_rec_size(h.len);
		if (sz > room)
			return -EBADMSG;
		if (sz > hi - pos)
			return chunk ? 0 : -EBADMSG; /* cut by hi */
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
	*stopped = hi;
	return 0;
}

int msga__retain_walk(const void *buf, uint64_t lo, uint64_t from, uint64_t hi,
		      uint64_t cap, uint32_t max_len,
		      int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		      void *arg, uint64_t *stopped)
{
	return walk(buf, lo, from, hi, cap, max_len, 1, fn, arg, stopped);
}

int msga__retain_scan(const void *buf, uint64_t lo, uint64_t hi, uint64_t cap,
		      uint32_t max_len,
		      int (*fn)(void *arg, const struct msga__rscan_rec *rec),
		      void *arg)
{
	uint64_t stopped;

	return walk(buf, lo, lo, hi, cap, max_len, 0, fn, arg, &stopped);
}
