/* SPDX-License-Identifier: MIT */
/*
 * cpulist.c - the kernel's CPU list text, read and written (cpulist.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"

/* Longer is no CPU number Linux has (NR_CPUS is at most 8192). */
#define NUM_DIGITS_MAX 7

static int is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A decimal number at text[*i, len): its value, or -1 if none. */
static long read_num(const char *text, size_t len, size_t *i)
{
	size_t start = *i;
	long v = 0;

	while (*i < len && text[*i] >= '0' && text[*i] <= '9') {
		if (*i - start == NUM_DIGITS_MAX)
			return -1;
		v = v * 10 + (text[*i] - '0');
		(*i)++;
	}
	return *i == start ? -1 : v;
}

static int add_range(uint64_t *set, uint32_t nbits, long lo, long hi)
{
	if (hi < lo)
		return -EINVAL;
	if ((unsigned long)hi >= nbits)
		return -ERANGE;
	for (long c = lo; c <= hi; c++)
		set[c / 64] |= 1ull << (c % 64);
	return 0;
}

/* One item, "N" or "N-M", at text[*i, end). */
static int read_item(const char *text, size_t end, size_t *i, uint64_t *set,
		     uint32_t nbits)
{
	long lo = read_num(text, end, i), hi = lo;

	if (lo < 0)
		return -EINVAL;
	if (*i < end && text[*i] == '-') {
		(*i)++;
		hi = read_num(text, end, i);
		if (hi < 0)
			return -EINVAL;
	}
	return add_range(set, nbits, lo, hi);
}

int msga__cpulist_parse(const char *text, size_t len, uint64_t *set,
			uint32_t nbits)
{
	size_t i = 0, end = len;
	int ret;

	memset(set, 0, MSGA__CPUSET_WORDS(nbits) * sizeof(*set));
	while (end > 0 && is_blank(text[end - 1]))
		end--;
	while (i < end && is_blank(text[i]))
		i++;
	if (i == end)
		return 0;
	for (;;) {
		ret = read_item(text, end, &i, set, nbits);
		if (ret < 0)
			return ret;
		if (i == end)
			break;
		if (text[i++] != ',')
			return -EINVAL;
	}
	return (int)msga__cpuset_count(set, nbits);
}

int msga__cpuset_has(const uint64_t *set, uint32_t nbits, uint32_t cpu)
{
	return cpu < nbits && (set[cpu / 64] >> (cpu % 64) & 1);
}

void msga__cpuset_add(uint64_t *set, uint32_t nbits, uint32_t cpu)
{
	if (cpu < nbits)
		set[cpu / 64] |= 1ull << (cpu % 64);
}

int msga__cpuset_first(const uint64_t *set, uint32_t nbits)
{
	for (uint32_t c = 0; c < nbits; c++)
		if (msga__cpuset_has(set, nbits, c))
			return (int)c;
	return -1;
}

uint32_t msga__cpuset_count(const uint64_t *set, uint32_t nbits)
{
	uint32_t n = 0;

	for (uint32_t c = 0; c < nbits; c++)
		n += (uint32_t)msga__cpuset_has(set, nbits, c);
	return n;
}

/* Append s to buf, keeping in *n the length the whole text would have. */
static void append(char *buf, size_t cap, size_t *n, const char *s)
{
	size_t len = strlen(s);

	if (*n + 1 < cap) {
		size_t room = cap - 1 - *n;
		size_t k = len < room ? len : room;

		memcpy(buf + *n, s, k);
		buf[*n + k] = '\0';
	}
	*n += len;
}

size_t msga__cpulist_format(const uint64_t *set, uint32_t nbits, char *buf,
			    size_t cap)
{
	char item[24];
	size_t n = 0;
	uint32_t c = 0;

	if (cap)
		buf[0] = '\0';
	while (c < nbits) {
		uint32_t lo = c;

		if (!msga__cpuset_has(set, nbits, c)) {
			c++;
			continue;
		}
		while (c + 1 < nbits && msga__cpuset_has(set, nbits, c + 1))
			c++;
		if (c > lo)
			snprintf(item, sizeof(item), "%s%u-%u", n ? "," : "",
				 lo, c);
		else
			snprintf(item, sizeof(item), "%s%u", n ? "," : "", lo);
		append(buf, cap, &n, item);
		c++;
	}
	return n;
}
