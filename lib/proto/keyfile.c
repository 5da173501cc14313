/* SPDX-License-Identifier: MIT */
/* keyfile.c - see keyfile.h. */
#include <errno.h>
#include <string.h>

#include "keyfile.h"
#include "topic.h"

static int name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' ||
	       ch == '@' || ch == '-';
}

static int blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

int msga__key_name_check(const char *name)
{
	size_t i;

	if (!name)
		return -EINVAL;
	for (i = 0; name[i]; i++)
		if (i >= MSGA_KEY_NAME_MAX || !name_char(name[i]))
			return -EINVAL;
	return i ? 0 : -EINVAL;
}

int msga__allow_entry_check(const char *entry)
{
	const char *sp = entry ? strchr(entry, ' ') : NULL;
	char id[MSGA_KEY_NAME_MAX + 1];
	size_t n;

	if (!sp || sp == entry)
		return -EINVAL;
	n = (size_t)(sp - entry);
	if (n > MSGA_KEY_NAME_MAX)
		return -EINVAL;
	memcpy(id, entry, n);
	id[n] = '\0';
	if (strcmp(id, "*") && msga__key_name_check(id))
		return -EINVAL;
	return msga__pattern_check(sp + 1);
}

static int hex_val(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* One "NAME HEX" line, p[0, n) without its newline: 0 or -EINVAL. */
static int parse_line(const char *p, size_t n, struct msga__keyfile_entry *e)
{
	size_t i = 0, start, k;

	while (i < n && blank(p[i]))
		i++;
	for (start = i; i < n && name_char(p[i]); i++)
		;
	if (i == start || i - start > MSGA_KEY_NAME_MAX || i == n ||
	    !blank(p[i]))
		return -EINVAL;
	memcpy(e->name, p + start, i - start);
	e->name[i - start] = '\0';
	while (i < n && blank(p[i]))
		i++;
	for (k = 0; k < MSGA_KEY_LEN; k++, i += 2) {
		int hi = i + 1 < n ? hex_val(p[i]) : -1;
		int lo = i + 1 < n ? hex_val(p[i + 1]) : -1;

		if (hi < 0 || lo < 0)
			return -EINVAL;
		e->key[k] = (uint8_t)(hi << 4 | lo);
	}
	while (i < n && blank(p[i]))
		i++;
	return i == n ? 0 : -EINVAL;
}

static int skipped(const char *p, size_t n)
{
	size_t i = 0;

	while (i < n && blank(p[i]))
		i++;
	return i == n || p[i] == '#';
}

int msga__keyfile_parse(const char *text, size_t n,
			struct msga__keyfile_entry *out, uint32_t max,
			uint32_t *bad_line)
{
	uint32_t count = 0, line = 0;
	size_t pos = 0;

	*bad_line = 0;
	while (pos < n) {
		const char *nl = memchr(text + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (text + pos)) : n - pos;

		line++;
		if (!skipped(text + pos, len)) {
			*bad_line = line;
			if (count >= max || memchr(text + pos, '\0', len) ||
			    parse_line(text + pos, len, &out[count]))
				return -EINVAL;
			for (uint32_t j = 0; j < count; j++)
				if (!strcmp(out[j].name, out[count].name))
					return -EINVAL;
			count++;
			*bad_line = 0;
		}
		pos += len + (nl != NULL);
	}
	return count ? (int)count : -EINVAL;
}
