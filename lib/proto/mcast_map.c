/* SPDX-License-Identifier: MIT */
/* mcast_map.c - see mcast_map.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcast_map.h"

uint32_t msga__fnv1a32(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (uint8_t)*s;
		h *= 16777619u;
	}
	return h;
}

static int parse_prefix(const char *p, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!*p)
		return -EINVAL;
	v = strtoul(p, &end, 10);
	if (*end || v > max)
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

static int parse_v4(const char *addr, unsigned int prefix,
		    struct msga__mcast_range *r)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&r->base;
	uint32_t a, mask;

	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
		return -EINVAL;
	a = ntohl(sin->sin_addr.s_addr);
	mask = prefix ? ~0u << (32 - prefix) : 0;
	/* Multicast, host bits zero, at most 24 of them (a /8 and smaller). */
	if ((a & 0xf0000000u) != 0xe0000000u || (a & ~mask) || prefix < 8)
		return -EINVAL;
	/* The range must not reach into 224.0.0.0/24: contain it, or lie in it. */
	if ((0xe0000000u & mask) == a || (a & 0xffffff00u) == 0xe0000000u)
		return -EINVAL;
	sin->sin_family = AF_INET;
	r->host_bits = 32 - prefix;
	return 0;
}

static int parse_v6(const char *addr, unsigned int prefix,
		    struct msga__mcast_range *r)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&r->base;
	const uint8_t *b = sin6->sin6_addr.s6_addr;
	uint32_t low;

	if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1 || b[0] != 0xff ||
	    prefix < 96 || prefix > 128)
		return -EINVAL;
	r->host_bits = 128 - prefix;
	/* Host bits (all within the last 32) must be zero. */
	memcpy(&low, b + 12, 4);
	if (ntohl(low) & (uint32_t)((1ull << r->host_bits) - 1))
		return -EINVAL;
	sin6->sin6_family = AF_INET6;
	return 0;
}

int msga__mcast_range_parse(const char *text, struct msga__mcast_range *r)
{
	char buf[INET6_ADDRSTRLEN + 8];
	char *slash;
	unsigned int prefix;

	if (!text || !r || strlen(text) >= sizeof(buf))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	strcpy(buf, text);
	slash = strchr(buf, '/');
	if (!slash)
		return -EINVAL;
	*slash = '\0';
	if (strchr(buf, ':'))
		return parse_prefix(slash + 1, 128, &prefix) ?:
		       parse_v6(buf, prefix, r);
	return parse_prefix(slash + 1, 32, &prefix) ?: parse_v4(buf, prefix, r);
}

void msga__mcast_group_of(const struct msga__mcast_range *r, const char *topic,
			  struct sockaddr_storage *group)
{
	uint32_t host = msga__fnv1a32(topic);

	host &= (uint32_t)((1ull << r->host_bits) - 1);
	*group = r->base;
	if (r->base.ss_family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)group;

		sin->sin_addr.s_addr =
			htonl(ntohl(sin->sin_addr.s_addr) | host);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)group;
		uint32_t low;

		memcpy(&low, sin6->sin6_addr.s6_addr + 12, 4);
		low = htonl(ntohl(low) | host);
		memcpy(sin6->sin6_addr.s6_addr + 12, &low, 4);
	}
}
