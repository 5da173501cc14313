/* SPDX-License-Identifier: MIT */
/*
 * uri_opts.h - the options after a multicast URI's "?": "bind=ADDR" (the
 * local address a membership or publisher joins on) and "source=ADDR"
 * (repeatable: the only senders a subscriber takes datagrams from),
 * "&"-separated. Numeric addresses only, like every msgaccel URI.
 */
#ifndef MSGA_URI_OPTS_H
#define MSGA_URI_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "msgaccel.h"

/* Which options a caller takes (the rest are -EINVAL). */
#define MSGA__URI_OPT_BIND 1u
#define MSGA__URI_OPT_SOURCE 2u
/* The longest URI with its options, and one option's value. */
#define MSGA__URI_MAX 512u
#define MSGA__URI_VALUE_MAX 63u

struct msga__uri_opts {
	int has_bind;
	struct sockaddr_storage bind;
	uint32_t nsources;
	struct sockaddr_storage sources[MSGA_SUB_SOURCES_MAX];
};

/*
 * Split uri at its first "?": what comes before it into base (base_len
 * bytes, NUL-terminated), its options into *o (zeroed first). 0, or
 * -EINVAL: uri longer than MSGA__URI_MAX or than base, an empty option
 * list or option, an option not in allowed or unknown, no "=VALUE", a
 * value that is not a numeric IPv4/IPv6 address, bind twice, more than
 * MSGA_SUB_SOURCES_MAX sources.
 */
int msga__uri_opts_split(const char *uri, unsigned allowed, char *base,
			 size_t base_len, struct msga__uri_opts *o);

#endif
