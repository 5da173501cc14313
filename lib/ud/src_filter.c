/* SPDX-License-Identifier: MIT */
/*
 * src_filter.c - a multicast membership's "?source=ADDR" list: the only
 * senders whose datagrams it takes. The addresses become GIDs once, at
 * connect; a datagram's sender GID is read from its GRH (RoCE v2: the
 * IPv4-mapped source address; InfiniBand: the sender's port GID, which
 * an IP address matches only if the port's GID is that address).
 * Checked before anything else in the membership looks at the datagram,
 * so an unlisted sender makes no stream, no probation, no reassembly.
 */
#include <string.h>

#include "mcast.h"
#include "uri_opts.h"

static void gid_of(const struct sockaddr_storage *ss, union ibv_gid *gid)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)ss;
	const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)ss;

	memset(gid, 0, sizeof(*gid));
	if (ss->ss_family == AF_INET6) {
		memcpy(gid->raw, &sin6->sin6_addr, sizeof(gid->raw));
		return;
	}
	gid->raw[10] = gid->raw[11] = 0xff; /* ::ffff:a.b.c.d */
	memcpy(&gid->raw[12], &sin->sin_addr, 4);
}

void msga__src_filter_set(struct msga__udep *ep,
			  const struct msga__uri_opts *o)
{
	ep->nsrc = o->nsources;
	for (uint32_t i = 0; i < o->nsources; i++)
		gid_of(&o->sources[i], &ep->src_gid[i]);
}

int msga__src_filter_pass(const struct msga__udep *ep,
			  const struct ibv_wc *wc, const void *grh)
{
	union ibv_gid from;

	if (!ep->nsrc)
		return 1;
	/* no GRH, no sender to vouch for: not a listed one */
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	msga__ud_sender_gid(grh, &from);
	for (uint32_t i = 0; i < ep->nsrc; i++)
		if (!memcmp(&from, &ep->src_gid[i], sizeof(from)))
			return 1;
	return 0;
}
