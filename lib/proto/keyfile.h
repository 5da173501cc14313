/* SPDX-License-Identifier: MIT */
/*
 * keyfile.h - the text of a key file (msga_ctx_attr.key_file): one key a
 * line, "NAME HEX", NAME 1 to MSGA_KEY_NAME_MAX of [A-Za-z0-9._@-], HEX
 * exactly 2 * MSGA_KEY_LEN hex digits; blanks around them; empty lines
 * and lines starting with "#" are skipped. Pure parsing: reading the file
 * and checking who may read it is lib/core/keyring.c's.
 */
#ifndef MSGA_KEYFILE_H
#define MSGA_KEYFILE_H

#include <stddef.h>
#include <stdint.h>

#include "msgaccel.h"

struct msga__keyfile_entry {
	char name[MSGA_KEY_NAME_MAX + 1];
	uint8_t key[MSGA_KEY_LEN];
};

/* 0 if name is a valid key NAME, else -EINVAL. */
int msga__key_name_check(const char *name);

/*
 * 0 if entry is a publisher's allow list entry (msga_pub_attr.allow),
 * "IDENTITY PATTERN": a key NAME or "*", one space, a subscription pattern
 * (topic.h); else -EINVAL.
 */
int msga__allow_entry_check(const char *entry);

/*
 * Parse text[0, n) into out[0, max): the number of keys (at least 1), or
 * -EINVAL (a malformed line, a name twice, no key, or more than max) with
 * *bad_line its 1-based line number (0: the file as a whole).
 */
int msga__keyfile_parse(const char *text, size_t n,
			struct msga__keyfile_entry *out, uint32_t max,
			uint32_t *bad_line);

#endif
