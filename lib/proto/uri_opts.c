/* SPDX-License-Identifier: MIT */
/* uri_opts.c - a multicast URI's "?bind=ADDR&source=ADDR" options. */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "uri_opts.h"

/* text (len bytes) as a numeric IPv4 or IPv6 address, port 0. */
static int parse_addr(const char *text, size_t len,
		      struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	char buf[MSGA__URI_VALUE_MAX + 1];

	if (!len || len > MSGA__URI_VALUE_MAX)
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, buf, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

/* One "NAME=VALUE" of len bytes into *o. */
static int take_opt(const char *opt, size_t len, unsigned allowed,
		    struct msga__uri_opts *o)
{
	const char *eq = memchr(opt, '=', len);
	size_t nlen = eq ? (size_t)(eq - opt) : len;
	size_t vlen = eq ? len - nlen - 1 : 0;

	if (!eq)
		return -EINVAL;
	if ((allowed & MSGA__URI_OPT_BIND) && nlen == 4 &&
	    !memcmp(opt, "bind", 4)) {
		if (o->has_bind)
			return -EINVAL;
		o->has_bind = 1;
		return parse_addr(eq + 1, vlen, &o->bind);
	}
	if ((allowed & MSGA__URI_OPT_SOURCE) && nlen == 6 &&
	    !memcmp(opt, "source", 6)) {
		if (o->nsources == MSGA_SUB_SOURCES_MAX)
			return -EINVAL;
		return parse_addr(eq + 1, vlen, &o->sources[o->nsources++]);
	}
	return -EINVAL;
}

int msga__uri_opts_split(const char *uri, unsigned allowed, char *base,
			 size_t base_len, struct msga__uri_opts *o)
{
	size_t len = uri ? strnlen(uri, MSGA__URI_MAX + 1) : 0;
	const char *q = uri ? memchr(uri, '?', len) : NULL;
	size_t blen = q ? (size_t)(q - uri) : len;

	memset(o, 0, sizeof(*o));
	if (!uri || len > MSGA__URI_MAX || blen >= base_len)
		return -EINVAL;
	memcpy(base, uri, blen);
	base[blen] = '\0';
	if (!q)
		return 0;
	for (const char *p = q + 1, *end = uri + len;;) {
		const char *amp = memchr(p, '&', (size_t)(end - p));
		size_t olen = (size_t)((amp ? amp : end) - p);
		int ret = take_opt(p, olen, allowed, o);

		if (ret)
			return ret;
		if (!amp)
			return 0;
		p = amp + 1;
	}
}
