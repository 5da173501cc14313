/* SPDX-License-Identifier: MIT */
/* The fixture library of tests/check-abi.sh: see include/fixture.h. */
#include "fixture.h"

int fix_open(const struct fix_attr *attr)
{
	return attr && attr->size >= sizeof(*attr) ? (int)attr->depth : -1;
}

uint32_t fix_msg_len(const struct fix_msg *msg)
{
	return msg->len;
}

#ifndef FIX_REMOVE
const char *fix_mode_name(enum fix_mode mode)
{
	return mode == FIX_MODE_A ? "a" : "b";
}
#endif

#if defined(FIX_GROW) || defined(FIX_OLD_STANZA)
int fix_added(int x)
{
	return x + 1;
}
#endif
