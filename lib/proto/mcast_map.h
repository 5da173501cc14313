/* SPDX-License-Identifier: MIT */
/*
 * mcast_map.h - the documented, deterministic mapping of a topic name to a
 * multicast group inside a configured range, so that publishers and
 * subscribers that share only the topic name and the range agree on the
 * group without any resolver:
 *
 *   group = range base + (FNV-1a-32(topic name) mod 2^(host bits))
 *
 * host bits = 32 - prefix for IPv4 (at most 24 of them) and at most 32 for
 * IPv6 (the low 32 bits of the group). Ranges must be multicast (IPv4
 * 224.0.0.0/4, IPv6 ff00::/8); IPv4 ranges that touch 224.0.0.0/24 (local
 * network control: IGMP, OSPF, ...) are refused. Pure logic.
 */
#ifndef MSGA_MCAST_MAP_H
#define MSGA_MCAST_MAP_H

#include <stdint.h>
#include <sys/socket.h>

struct msga__mcast_range {
	struct sockaddr_storage base; /* network address, host bits zero */
	unsigned int host_bits;
};

/* FNV-1a, 32 bits, over the bytes of a NUL-terminated name. */
uint32_t msga__fnv1a32(const char *s);

/* Parse "239.255.0.0/16" or "ff15::1:0/112". -EINVAL when not as above. */
int msga__mcast_range_parse(const char *text, struct msga__mcast_range *r);

/* The group of topic inside r; writes a sockaddr_in or sockaddr_in6. */
void msga__mcast_group_of(const struct msga__mcast_range *r, const char *topic,
			  struct sockaddr_storage *group);

#endif
