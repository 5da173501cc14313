/* SPDX-License-Identifier: MIT */
/*
 * fuzz_topic.c - topic names and patterns (lib/topic.c). A peer's bytes
 * reach these rules as a SUBSCRIBE pattern (RC and unicast UD), a TOPIC
 * announcement and a datagram's topic name. The input is split into a
 * pattern and a name (first byte: where); each check must agree with a
 * reference written here from topic.c's rules, and matching a checked
 * pattern against any name, checked or not, must agree with a plain
 * prefix/exact compare. Both strings are exact-size heap copies, so
 * AddressSanitizer sees a read past either NUL.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "topic.h"
#include "fuzz.h"

static int ref_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || strchr("._-/", c);
}

static int ref_name_ok(const char *s, size_t n)
{
	if (n < 1 || n > MSGA_TOPIC_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!s[i] || !ref_name_char((unsigned char)s[i]))
			return 0;
	return 1;
}

static int ref_pattern_ok(const char *s)
{
	size_t n = strlen(s);

	if (n && s[n - 1] == '*')
		return n == 1 || ref_name_ok(s, n - 1);
	return ref_name_ok(s, n);
}

static int ref_match(const char *pat, const char *name)
{
	size_t n = strlen(pat);

	if (n && pat[n - 1] == '*')
		return strlen(name) >= n - 1 && !memcmp(pat, name, n - 1);
	return !strcmp(pat, name);
}

/* A NUL-terminated heap copy of data[0, n) (it may hold earlier NULs). */
static char *str_of(const uint8_t *data, size_t n)
{
	char *s = malloc(n + 1);

	FUZZ_CHECK(s);
	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t split = size ? 1 + data[0] % size : 0;
	char *pat, *name;
	int pat_ok;

	FUZZ_CHECK(msga__topic_check(NULL) == -EINVAL);
	FUZZ_CHECK(msga__pattern_check(NULL) == -EINVAL);
	if (split > size)
		split = size;
	pat = str_of(data + (size ? 1 : 0), split ? split - 1 : 0);
	name = str_of(data + split, size - split);
	FUZZ_CHECK((msga__topic_check(name) == 0) ==
		   ref_name_ok(name, strlen(name)));
	FUZZ_CHECK((msga__topic_check(pat) == 0) ==
		   ref_name_ok(pat, strlen(pat)));
	pat_ok = msga__pattern_check(pat) == 0;
	FUZZ_CHECK(pat_ok == ref_pattern_ok(pat));
	FUZZ_CHECK(msga__pattern_check(name) == 0 ? ref_pattern_ok(name) :
						    !ref_pattern_ok(name));
	if (pat_ok)
		FUZZ_CHECK(!msga__topic_match(pat, name) ==
			   !ref_match(pat, name));
	free(pat);
	free(name);
	return 0;
}
