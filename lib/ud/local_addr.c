/* SPDX-License-Identifier: MIT */
/*
 * local_addr.c - what multicast needs to know about "here": the context's
 * IP address (a UD rdma_cm id is bound to it, which picks the device and
 * the interface IGMP joins go out on), this host's id (for the software
 * self-delivery filter), fresh publisher origin ids, and mcast:// URIs.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mcast.h"

/*
 * RoCE v2 puts the interface's IPv4 addresses in the GID table as
 * ::ffff:a.b.c.d; InfiniBand GIDs hold no IP, so there the context must
 * have been opened by local_addr (the IPoIB address).
 */
static int gid_ipv4(struct msga_ctx *ctx, struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					      0, 0, 0xff, 0xff };
	int n = ctx->port_attr.gid_tbl_len;

	for (int i = 0; i < n; i++) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		union ibv_gid gid;

		if (ibv_query_gid(ctx->verbs, ctx->port, i, &gid) ||
		    memcmp(gid.raw, v4mapped, sizeof(v4mapped)))
			continue;
		memset(ss, 0, sizeof(*ss));
		sin->sin_family = AF_INET;
		memcpy(&sin->sin_addr, gid.raw + 12, 4);
		return 0;
	}
	return -EADDRNOTAVAIL;
}

int msga__ctx_local_addr(struct msga_ctx *ctx, struct sockaddr_storage *ss)
{
	if (ctx->has_local) {
		*ss = ctx->local_ss;
		return 0;
	}
	if (ctx->transport == MSGA_TRANSPORT_ROCE && !gid_ipv4(ctx, ss))
		return 0;
	return msga__ctx_fail(ctx, -EADDRNOTAVAIL,
			      "%s has no IPv4 address in its GID table: open "
			      "the context with local_addr", ctx->dev_name);
}

/* FNV-1a of /etc/machine-id, which every systemd host has; else hostid. */
uint32_t msga__host_id(void)
{
	static uint32_t id;
	char buf[64] = "";
	FILE *f;

	if (id)
		return id;
	f = fopen("/etc/machine-id", "r");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	id = buf[0] ? msga__fnv1a32(buf) : (uint32_t)gethostid();
	if (!id)
		id = 1;
	return id;
}

uint64_t msga__new_origin(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16);
	}
	return (uint64_t)msga__host_id() << 32 | r;
}

/* "mcast://239.1.2.3" is the range 239.1.2.3/32: one group. */
int msga__parse_mcast_uri(const char *uri, struct msga__mcast_range *r)
{
	static const char scheme[] = "mcast://";
	char text[96];
	const char *rest;

	if (!uri || strncmp(uri, scheme, sizeof(scheme) - 1))
		return -EINVAL;
	rest = uri + sizeof(scheme) - 1;
	if (strlen(rest) + 5 > sizeof(text))
		return -EINVAL;
	if (strchr(rest, '/'))
		snprintf(text, sizeof(text), "%s", rest);
	else
		snprintf(text, sizeof(text), "%s/%d", rest,
			 strchr(rest, ':') ? 128 : 32);
	return msga__mcast_range_parse(text, r);
}

/*
 * The sender's GID from the 40 bytes before a UD payload. On InfiniBand
 * and RoCE v1 they are a GRH; RoCE v2 over IPv4 puts the IPv4 header in
 * the last 20 instead, and the GID is the IPv4-mapped source address.
 * (Here, not in mcast_repair.c: the READ repair and ud:// check senders
 * too, and neither may call its owner.)
 * Told apart as rdma-core does: no GRH version 6, or a well-formed IPv4
 * header (length 5, its checksum right).
 */
static int ipv4_header(const uint8_t *ip)
{
	uint32_t sum = 0;

	if (ip[0] != 0x45)
		return 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

void msga__ud_sender_gid(const void *grh, union ibv_gid *gid)
{
	const uint8_t *p = grh;

	if ((p[0] >> 4) != 6 || ipv4_header(p + 20)) {
		memset(gid, 0, sizeof(*gid));
		gid->raw[10] = gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], p + 20 + 12, 4); /* IPv4 source */
		return;
	}
	memcpy(gid->raw, p + 8, 16); /* the GRH's source GID */
}
