/* SPDX-License-Identifier: MIT */
/* feed_wire - msga_feed's two header layouts (feed_wire.h). */
#include <errno.h>
#include <string.h>

#include "feed_wire.h"

/* The full layout's fields, at the offsets feed_wire.h gives. */
struct feed_wire_full {
	uint64_t seq;
	uint64_t due_ns;
	uint64_t sent_ns;
	uint32_t flags;
	uint32_t reserved;
};

/* The compact layout: 12 bytes, so packed (a plain struct would be 16). */
#define COMPACT_SEQ_AT 0
#define COMPACT_FLAGS_AT 8

_Static_assert(sizeof(struct feed_wire_full) == FEED_WIRE_FULL_LEN,
	       "the full layout is 32 bytes");
_Static_assert(COMPACT_FLAGS_AT + sizeof(uint32_t) == FEED_WIRE_COMPACT_LEN,
	       "the compact layout is 12 bytes");

int feed_wire_encode(void *buf, size_t len, const struct feed_msg *m)
{
	struct feed_wire_full f;

	if (len < FEED_WIRE_COMPACT_LEN)
		return -EMSGSIZE;
	if (len < FEED_WIRE_FULL_LEN) {
		memcpy((char *)buf + COMPACT_SEQ_AT, &m->seq, sizeof(m->seq));
		memcpy((char *)buf + COMPACT_FLAGS_AT, &m->flags,
		       sizeof(m->flags));
		return 0;
	}
	f = (struct feed_wire_full){ .seq = m->seq, .due_ns = m->due_ns,
				     .sent_ns = m->sent_ns,
				     .flags = m->flags };
	memcpy(buf, &f, sizeof(f));
	return 0;
}

int feed_wire_decode(const void *data, size_t len, struct feed_msg *out)
{
	struct feed_wire_full f;

	*out = (struct feed_msg){ 0 };
	if (len < FEED_WIRE_COMPACT_LEN)
		return -EBADMSG;
	if (len < FEED_WIRE_FULL_LEN) {
		memcpy(&out->seq, (const char *)data + COMPACT_SEQ_AT,
		       sizeof(out->seq));
		memcpy(&out->flags, (const char *)data + COMPACT_FLAGS_AT,
		       sizeof(out->flags));
		return 0;
	}
	memcpy(&f, data, sizeof(f));
	*out = (struct feed_msg){ .seq = f.seq, .flags = f.flags,
				  .stamped = 1, .due_ns = f.due_ns,
				  .sent_ns = f.sent_ns };
	return 0;
}
