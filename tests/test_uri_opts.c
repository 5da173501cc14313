/* SPDX-License-Identifier: MIT */
/* test_uri_opts.c - a multicast URI's "?bind=&source=" options. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "uri_opts.h"

#define BOTH (MSGA__URI_OPT_BIND | MSGA__URI_OPT_SOURCE)

static char base[128];
static struct msga__uri_opts o;

static int split(const char *uri, unsigned allowed)
{
	return msga__uri_opts_split(uri, allowed, base, sizeof(base), &o);
}

static void assert_v4(const struct sockaddr_storage *ss, const char *want)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	char text[INET_ADDRSTRLEN];

	cr_assert_eq(ss->ss_family, AF_INET);
	cr_assert_eq(sin->sin_port, 0);
	inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
	cr_assert_str_eq(text, want);
}

Test(uri_opts, none_leaves_the_uri_whole)
{
	cr_assert_eq(split("mcast://239.1.2.3", BOTH), 0);
	cr_assert_str_eq(base, "mcast://239.1.2.3");
	cr_assert_eq(o.has_bind, 0);
	cr_assert_eq(o.nsources, 0);
}

Test(uri_opts, bind_and_sources)
{
	cr_assert_eq(split("mcast://239.1.2.0/24?bind=198.18.0.1&"
			   "source=198.18.0.2&source=10.0.0.1", BOTH), 0);
	cr_assert_str_eq(base, "mcast://239.1.2.0/24");
	cr_assert_eq(o.has_bind, 1);
	assert_v4(&o.bind, "198.18.0.1");
	cr_assert_eq(o.nsources, 2);
	assert_v4(&o.sources[0], "198.18.0.2");
	assert_v4(&o.sources[1], "10.0.0.1");
}

Test(uri_opts, ipv6_addresses)
{
	const struct sockaddr_in6 *s6;

	cr_assert_eq(split("mcast://ff0e::1?source=fd00::2", BOTH), 0);
	cr_assert_str_eq(base, "mcast://ff0e::1");
	cr_assert_eq(o.nsources, 1);
	s6 = (const struct sockaddr_in6 *)&o.sources[0];
	cr_assert_eq(s6->sin6_family, AF_INET6);
	cr_assert_eq(s6->sin6_addr.s6_addr[15], 2);
}

Test(uri_opts, unknown_or_not_allowed_option)
{
	cr_assert_eq(split("mcast://239.1.2.3?iface=eth0", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?Bind=1.2.3.4", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bindx=1.2.3.4", BOTH), -EINVAL);
	/* a publisher takes bind, not source */
	cr_assert_eq(split("mcast://239.1.2.3?source=1.2.3.4",
			   MSGA__URI_OPT_BIND), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3.4",
			   MSGA__URI_OPT_SOURCE), -EINVAL);
}

Test(uri_opts, empty_parts)
{
	cr_assert_eq(split("mcast://239.1.2.3?", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3.4&", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?&bind=1.2.3.4", BOTH), -EINVAL);
}

Test(uri_opts, repeated_option)
{
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3.4&bind=1.2.3.4",
			   BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?source=1.2.3.4&source=1.2.3.4",
			   BOTH), 0, "a source may repeat");
}

Test(uri_opts, source_bound)
{
	char uri[MSGA__URI_MAX];
	size_t n = (size_t)snprintf(uri, sizeof(uri), "mcast://239.1.2.3?");

	for (unsigned i = 0; i < MSGA_SUB_SOURCES_MAX; i++)
		n += (size_t)snprintf(uri + n, sizeof(uri) - n, "%ssource=10.0.0.%u",
				      i ? "&" : "", i + 1);
	cr_assert_eq(split(uri, BOTH), 0);
	cr_assert_eq(o.nsources, MSGA_SUB_SOURCES_MAX);
	snprintf(uri + n, sizeof(uri) - n, "&source=10.0.0.99");
	cr_assert_eq(split(uri, BOTH), -EINVAL, "one more than the bound");
}

Test(uri_opts, bad_address)
{
	cr_assert_eq(split("mcast://239.1.2.3?bind=host.example", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3.4:80", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?source=[fd00::1]", BOTH), -EINVAL);
	cr_assert_eq(split("mcast://239.1.2.3?bind=1.2.3.4?source=1.2.3.4",
			   BOTH), -EINVAL);
}

Test(uri_opts, too_long)
{
	char uri[MSGA__URI_MAX + 64];
	char value[MSGA__URI_VALUE_MAX + 8];

	memset(value, '1', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	snprintf(uri, sizeof(uri), "mcast://239.1.2.3?bind=%s", value);
	cr_assert_eq(split(uri, BOTH), -EINVAL, "a value too long");
	memset(uri, 'a', sizeof(uri) - 1);
	uri[sizeof(uri) - 1] = '\0';
	cr_assert_eq(split(uri, BOTH), -EINVAL, "a uri too long");
	cr_assert_eq(msga__uri_opts_split("mcast://239.1.2.3", BOTH, base, 8,
					  &o), -EINVAL, "longer than base");
	cr_assert_eq(split(NULL, BOTH), -EINVAL);
}
