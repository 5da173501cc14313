/* SPDX-License-Identifier: MIT */
/* uri.c - the numeric "scheme://address:port" URIs of every transport. */
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"

/* "SCHEME://IPv4:PORT" or "SCHEME://[IPv6]:PORT", numeric only. */
int msga__parse_uri_as(const char *uri, const char *scheme,
		       struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	size_t slen = scheme ? strlen(scheme) : 0;
	char host[128];
	const char *h, *colon;
	struct addrinfo *ai;
	size_t hl;

	if (!uri || !slen || strncmp(uri, scheme, slen))
		return -EINVAL;
	h = uri + slen;
	colon = strrchr(h, ':');
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") !=
	    strlen(colon + 1) || strlen(colon + 1) > 5 ||
	    atoi(colon + 1) > 65535)
		return -EINVAL;
	hl = (size_t)(colon - h);
	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (hl == 0 || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (getaddrinfo(host, colon + 1, &hints, &ai))
		return -EINVAL;
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

int msga__parse_uri(const char *uri, struct sockaddr_storage *ss)
{
	return msga__parse_uri_as(uri, "rdma://", ss);
}
