/* SPDX-License-Identifier: MIT */
/*
 * fixture.h - a tiny library's public header for tests/check-abi.sh, in
 * an "old" shape (no macro) and "new" shapes chosen by one -D each:
 *   FIX_GROW      allowed: a member appended to the size-first struct and
 *                 a function added in a new version stanza (fix_v2.map);
 *   FIX_ENUM_ADD  allowed: an enumerator added (a new flag or event type;
 *                 libabigail counts it harmless);
 *   FIX_RETYPE    refused: a member of the size-first struct retyped;
 *   FIX_MOVE      refused: a member moved (inserted before the last);
 *   FIX_ENUM      refused: an enum value changed;
 *   FIX_REMOVE    refused: a function removed;
 *   FIX_OLD_STANZA refused: a function added to a released stanza
 *                 (fix_v1_grown.map);
 *   FIX_MSG_GROW  refused: a member appended to a struct that is not
 *                 size-first (the library hands it out, callers may copy
 *                 it or keep arrays of it).
 */
#ifndef FIXTURE_H
#define FIXTURE_H

#include <stdint.h>

enum fix_mode {
	FIX_MODE_A = 0,
#ifdef FIX_ENUM
	FIX_MODE_B = 2,
#else
	FIX_MODE_B = 1,
#endif
#ifdef FIX_ENUM_ADD
	FIX_MODE_C = 2,
#endif
};

/* Size-first, like msgaccel's attribute structs: only grows at its end. */
struct fix_attr {
	uint32_t size;
	uint32_t flags;
#ifdef FIX_MOVE
	uint32_t moved;
#endif
#ifdef FIX_RETYPE
	uint64_t depth;
#else
	uint32_t depth;
#endif
	enum fix_mode mode;
#ifdef FIX_GROW
	uint64_t grown;         /* appended: allowed */
#endif
};

/* Not size-first: fixed for good. */
struct fix_msg {
	const void *data;
	uint32_t len;
#ifdef FIX_MSG_GROW
	uint32_t more;
#endif
};

int fix_open(const struct fix_attr *attr);
uint32_t fix_msg_len(const struct fix_msg *msg);
#ifndef FIX_REMOVE
const char *fix_mode_name(enum fix_mode mode);
#endif
#if defined(FIX_GROW) || defined(FIX_OLD_STANZA)
int fix_added(int x);
#endif

#endif /* FIXTURE_H */
