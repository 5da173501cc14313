/* SPDX-License-Identifier: MIT */
/* read_wire.c - encode and check read_wire.h's offer. */
#include <errno.h>
#include <string.h>

#include "byteorder.h"
#include "retain.h"
#include "read_wire.h"

void msga__rdw_put(void *buf, const struct msga__rdw_offer *o)
{
	uint8_t *p = buf;

	memset(p, 0, MSGA__RDW_LEN);
	msga__put32(p, MSGA__RDW_MAGIC);
	msga__put16(p + 4, MSGA__RDW_VERSION);
	msga__put32(p + 8, o->rkey);
	msga__put64(p + 16, o->len);
	msga__put64(p + 24, o->cap);
}

int msga__rdw_get(const void *buf, uint32_t n, struct msga__rdw_offer *o)
{
	const uint8_t *p = buf;

	if (!p || n < MSGA__RDW_LEN || msga__get32(p) != MSGA__RDW_MAGIC ||
	    msga__get16(p + 4) != MSGA__RDW_VERSION)
		return -EPROTO;
	o->rkey = msga__get32(p + 8);
	o->len = msga__get64(p + 16);
	o->cap = msga__get64(p + 24);
	/* the block is the control block and the ring, nothing more */
	if (!o->cap || o->cap % 8 || o->cap > (1ull << 35) ||
	    o->len != MSGA__RETAIN_CTRL + o->cap)
		return -EPROTO;
	return 0;
}
