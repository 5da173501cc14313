/* SPDX-License-Identifier: MIT */
/*
 * topic.c - topic names are 1..MSGA_TOPIC_MAX characters from
 * [A-Za-z0-9._/-]; a pattern is a name, or a (possibly empty) prefix
 * followed by one '*' at the end. Kept strict so that names are safe in
 * logs, file names and URIs, and matching stays a prefix compare.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "topic.h"

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' ||
	       c == '/';
}

/* Length of the valid name prefix of s, stopping at the first other char. */
static size_t name_span(const char *s)
{
	size_t n = 0;

	while (n <= MSGA_TOPIC_MAX && s[n] && name_char(s[n]))
		n++;
	return n;
}

int msga__topic_check(const char *name)
{
	size_t n;

	if (!name)
		return -EINVAL;
	n = name_span(name);
	return n >= 1 && n <= MSGA_TOPIC_MAX && !name[n] ? 0 : -EINVAL;
}

int msga__pattern_check(const char *pat)
{
	size_t n;

	if (!pat)
		return -EINVAL;
	n = name_span(pat);
	if (n > MSGA_TOPIC_MAX)
		return -EINVAL;
	if (!pat[n])
		return n >= 1 ? 0 : -EINVAL;
	return pat[n] == '*' && !pat[n + 1] ? 0 : -EINVAL;
}

/*
 * The public checks, so that tools and applications can refuse a bad name
 * or pattern with the library's own rule before opening a device.
 */
MSGA_API int msga_topic_check(const char *name)
{
	return msga__topic_check(name);
}

MSGA_API int msga_pattern_check(const char *pattern)
{
	return msga__pattern_check(pattern);
}

int msga__topic_match(const char *pat, const char *name)
{
	size_t n = strlen(pat);

	if (n && pat[n - 1] == '*')
		return strncmp(pat, name, n - 1) == 0;
	return strcmp(pat, name) == 0;
}
