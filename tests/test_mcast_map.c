/* SPDX-License-Identifier: MIT */
/* Host unit tests: topic name -> multicast group mapping. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "mcast_map.h"

static const char *group_text(const struct sockaddr_storage *ss, char *buf)
{
	const void *a = ss->ss_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)ss)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr;

	return inet_ntop(ss->ss_family, a, buf, INET6_ADDRSTRLEN);
}

Test(mcast_map, fnv1a_known_vectors)
{
	/* Published FNV-1a 32-bit test values. */
	cr_expect_eq(msga__fnv1a32(""), 0x811c9dc5u);
	cr_expect_eq(msga__fnv1a32("a"), 0xe40c292cu);
	cr_expect_eq(msga__fnv1a32("foobar"), 0xbf9cf968u);
}

Test(mcast_map, ipv4_mapping_is_deterministic_and_in_range)
{
	struct msga__mcast_range r;
	struct sockaddr_storage g;
	char buf[INET6_ADDRSTRLEN];
	uint32_t host = msga__fnv1a32("md.eq.AAPL") & 0xffff;
	char want[32];

	cr_assert_eq(msga__mcast_range_parse("239.255.0.0/16", &r), 0);
	msga__mcast_group_of(&r, "md.eq.AAPL", &g);
	snprintf(want, sizeof(want), "239.255.%u.%u", host >> 8, host & 0xff);
	cr_expect_str_eq(group_text(&g, buf), want);
	/* A /24 keeps the top 24 bits. */
	cr_assert_eq(msga__mcast_range_parse("239.1.2.0/24", &r), 0);
	msga__mcast_group_of(&r, "md.eq.AAPL", &g);
	cr_expect_eq(strncmp(group_text(&g, buf), "239.1.2.", 8), 0);
	/* A /32 range maps every topic to the one group. */
	cr_assert_eq(msga__mcast_range_parse("239.1.2.3/32", &r), 0);
	msga__mcast_group_of(&r, "anything", &g);
	cr_expect_str_eq(group_text(&g, buf), "239.1.2.3");
}

Test(mcast_map, ipv6_mapping_uses_the_low_bits)
{
	struct msga__mcast_range r;
	struct sockaddr_storage g;
	char buf[INET6_ADDRSTRLEN];

	cr_assert_eq(msga__mcast_range_parse("ff15::/96", &r), 0);
	msga__mcast_group_of(&r, "", &g);
	cr_expect_str_eq(group_text(&g, buf), "ff15::811c:9dc5");
}

Test(mcast_map, bad_ranges_are_einval)
{
	static const char *bad[] = {
		"239.255.0.0",       /* no prefix */
		"10.0.0.0/8",        /* not multicast */
		"239.255.0.1/16",    /* host bits set */
		"224.0.0.0/16",      /* reaches 224.0.0.0/24 */
		"224.0.0.0/24",      /* is 224.0.0.0/24 */
		"224.0.0.0/4",       /* prefix too short: more than 24 host bits */
		"224.0.0.5/32",      /* one group inside 224.0.0.0/24 (OSPF) */
		"224.0.0.128/25",
		"239.0.0.0/33",
		"239.0.0.0/x",
		"239.0.0.0/",
		"fe80::/96",         /* IPv6 but not multicast */
		"ff15::/64",         /* more than 32 host bits */
		"ff15::1/96",
		"not an address/8",
	};
	struct msga__mcast_range r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(msga__mcast_range_parse(bad[i], &r), -EINVAL,
			     "'%s' should be refused", bad[i]);
	cr_expect_eq(msga__mcast_range_parse(NULL, &r), -EINVAL);
	cr_expect_eq(msga__mcast_range_parse("224.0.1.0/24", &r), 0,
		     "224.0.1.0/24 is outside the control block");
	cr_expect_eq(msga__mcast_range_parse("ff15::1:2/128", &r), 0,
		     "an IPv6 range may be one group");
	cr_expect_eq(r.host_bits, 0);
}
