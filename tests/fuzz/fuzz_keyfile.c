/* SPDX-License-Identifier: MIT */
/*
 * fuzz_keyfile.c - the key file parser (msga__keyfile_parse,
 * lib/proto/keyfile.c) fed any text. The text is local, not a peer's, but
 * it is secret and hand-written: a parser that reads past it, or accepts
 * a line the format does not allow, is a bug worth finding here. The
 * first input byte is how many keys may be taken (0 to 15), the rest the
 * text, in an exact-size heap copy (no NUL after it), parsed into an
 * exact-size array, so AddressSanitizer sees a read past the text or a
 * write past the array. The verdict and the line it names must equal a
 * reference written here from keyfile.h, every key taken has a valid
 * name, and each re-serialises to a line that parses to the same key.
 */
#include <errno.h>
#include <string.h>

#include "keyfile.h"
#include "fuzz.h"

static int ref_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int ref_hex(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
	       (c >= 'A' && c <= 'F');
}

static uint8_t ref_hex_val(uint8_t c)
{
	return (uint8_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
}

/* keyfile.h's NAME: 1 to MSGA_KEY_NAME_MAX of [A-Za-z0-9._@-]. */
static int ref_name(const uint8_t *p, size_t n)
{
	if (n < 1 || n > MSGA_KEY_NAME_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz"
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._@-", p[i]) ||
		    !p[i])
			return 0;
	return 1;
}

/* The next blank-separated word of p[*i, n): where it starts, its length. */
static size_t ref_word(const uint8_t *p, size_t n, size_t *i, size_t *len)
{
	size_t start;

	while (*i < n && ref_blank(p[*i]))
		(*i)++;
	for (start = *i; *i < n && !ref_blank(p[*i]); (*i)++)
		;
	*len = *i - start;
	return start;
}

/* One line without its '\n': -1 skipped, 0 a key (in e), 1 malformed. */
static int ref_line(const uint8_t *p, size_t n, struct msga__keyfile_entry *e)
{
	size_t i = 0, name_len, hex_len, rest;
	size_t name = ref_word(p, n, &i, &name_len);
	size_t hex = ref_word(p, n, &i, &hex_len);

	if (!name_len || p[name] == '#')
		return -1;
	ref_word(p, n, &i, &rest);
	if (rest || !ref_name(p + name, name_len) ||
	    hex_len != 2 * MSGA_KEY_LEN)
		return 1;
	for (size_t k = 0; k < hex_len; k++)
		if (!ref_hex(p[hex + k]))
			return 1;
	memcpy(e->name, p + name, name_len);
	e->name[name_len] = '\0';
	for (size_t k = 0; k < MSGA_KEY_LEN; k++)
		e->key[k] = (uint8_t)(ref_hex_val(p[hex + 2 * k]) << 4 |
				      ref_hex_val(p[hex + 2 * k + 1]));
	return 0;
}

/* keyfile.h's msga__keyfile_parse, written again from its comment. */
static int ref_parse(const uint8_t *p, size_t n,
		     struct msga__keyfile_entry *out, uint32_t max,
		     uint32_t *bad_line)
{
	struct msga__keyfile_entry e;
	uint32_t count = 0, line = 0;
	size_t pos = 0;

	while (pos < n) {
		size_t end = pos;
		int r;

		while (end < n && p[end] != '\n')
			end++;
		line++;
		r = ref_line(p + pos, end - pos, &e);
		if (r > 0 || (r == 0 && count == max))
			goto bad;
		for (uint32_t j = 0; r == 0 && j < count; j++)
			if (!strcmp(out[j].name, e.name))
				goto bad;
		if (r == 0)
			out[count++] = e;
		pos = end + 1;
	}
	*bad_line = 0;
	return count ? (int)count : -EINVAL;
bad:
	*bad_line = line;
	return -EINVAL;
}

/* e as a line of a key file, parsed alone: the same key. */
static void check_reserialised(const struct msga__keyfile_entry *e)
{
	static const char digits[] = "0123456789abcdef";
	struct msga__keyfile_entry back;
	char line[MSGA_KEY_NAME_MAX + 2 + 2 * MSGA_KEY_LEN + 1];
	size_t n = strlen(e->name);
	uint32_t bad_line = 1;

	memcpy(line, e->name, n);
	line[n++] = ' ';
	for (size_t k = 0; k < MSGA_KEY_LEN; k++) {
		line[n++] = digits[e->key[k] >> 4];
		line[n++] = digits[e->key[k] & 15];
	}
	line[n++] = '\n';
	FUZZ_CHECK(msga__keyfile_parse(line, n, &back, 1, &bad_line) == 1);
	FUZZ_CHECK(bad_line == 0);
	FUZZ_CHECK(!strcmp(back.name, e->name));
	FUZZ_CHECK(!memcmp(back.key, e->key, MSGA_KEY_LEN));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t max = size ? data[0] & 15u : 0, bad_line = 77, ref_bad = 88;
	size_t n = size ? size - 1 : 0;
	/* (no text: NULL, which a length of 0 allows) */
	char *text = n ? fuzz_dup(data + 1, n) : NULL;
	struct msga__keyfile_entry *out = malloc(max ? max * sizeof(*out) : 1);
	struct msga__keyfile_entry ref[16];
	int ret, want;

	FUZZ_CHECK(out);
	ret = msga__keyfile_parse(text, n, out, max, &bad_line);
	want = ref_parse((const uint8_t *)text, n, ref, max, &ref_bad);
	FUZZ_CHECK(ret == -EINVAL || (ret >= 1 && (uint32_t)ret <= max));
	FUZZ_CHECK(ret == want);
	FUZZ_CHECK(bad_line == ref_bad);
	FUZZ_CHECK(ret > 0 ? bad_line == 0 : bad_line <= n);
	for (int i = 0; i < ret; i++) {
		FUZZ_CHECK(memchr(out[i].name, '\0', sizeof(out[i].name)));
		FUZZ_CHECK(msga__key_name_check(out[i].name) == 0);
		FUZZ_CHECK(!strcmp(out[i].name, ref[i].name));
		FUZZ_CHECK(!memcmp(out[i].key, ref[i].key, MSGA_KEY_LEN));
		check_reserialised(&out[i]);
	}
	free(out);
	free(text);
	return 0;
}
