/* SPDX-License-Identifier: MIT */
/*
 * resolver.c - topic resolution's socket and its datagrams (resolver.h).
 *
 * One non-blocking UDP socket per context, bound to the resolver group's
 * address and port (so it takes that group's datagrams and no unicast),
 * joined on the context's own interface, sending there with loopback on
 * (a subscriber on the same host must hear its neighbours). Every
 * context on a host binds the same port (SO_REUSEADDR: each one gets a
 * copy of every datagram).
 *
 * What arrives is read once into a private buffer and checked before
 * anything else: its sender against the allow list, then in a context
 * with keys its MAC (SipHash-2-4, 128 bits, keyed with a key derived
 * from the context's own, over the whole datagram: 16 bytes after it),
 * then its records whole (tres_wire.c). A context without keys sends no
 * MAC and takes no datagram that has one (its length is wrong).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "auth.h"
#include "endpoint.h"
#include "resolver.h"

#define RX_PER_TICK 64  /* datagrams read per tick at most */

static int parse_group(const char *text, struct sockaddr_in *sin)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = text ? strrchr(text, ':') : NULL;
	char *end;
	unsigned long port;

	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(host))
		return -EINVAL;
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	port = strtoul(colon + 1, &end, 10);
	if (*end || !colon[1] || !port || port > 65535 ||
	    inet_pton(AF_INET, host, &sin->sin_addr) != 1 ||
	    !IN_MULTICAST(ntohl(sin->sin_addr.s_addr)))
		return -EINVAL;
	sin->sin_port = htons((uint16_t)port);
	return 0;
}

/* "a.b.c.d,e.f.g.h": 0, or -EINVAL. */
static int parse_allow(struct msga__resolver *r, const char *text)
{
	char buf[INET_ADDRSTRLEN];

	while (text && *text) {
		const char *comma = strchr(text, ',');
		size_t n = comma ? (size_t)(comma - text) : strlen(text);

		if (!n || n >= sizeof(buf) || r->nallow == MSGA_RESOLVER_ALLOW_MAX)
			return -EINVAL;
		memcpy(buf, text, n);
		buf[n] = '\0';
		if (inet_pton(AF_INET, buf, &r->allow[r->nallow++]) != 1)
			return -EINVAL;
		text = comma ? comma + 1 : NULL;
		if (comma && !*text)
			return -EINVAL;
	}
	return 0;
}

static uint32_t field(const struct msga_resolver_attr *a, size_t off,
		      uint32_t def)
{
	uint32_t v;

	if (a->size < off + sizeof(v))
		return def;
	memcpy(&v, (const char *)a + off, sizeof(v));
	return v ? v : def;
}

#define FIELD(a, f, def) field(a, offsetof(struct msga_resolver_attr, f), def)
#define MS 1000000ull

static int settings(struct msga__resolver *r, const struct msga_resolver_attr *a)
{
	const struct msga__tres_timing *d = &msga__tres_defaults;
	uint32_t rate;

	if (a->size < offsetof(struct msga_resolver_attr, ttl) + sizeof(a->ttl))
		return msga__open_fail(-EINVAL, "msga_ctx_open: resolver->size "
				       "%u is below 0.11's struct", a->size);
	if (a->flags & ~(uint32_t)MSGA_RESOLVER_ADVERTISE)
		return msga__open_fail(-EINVAL, "msga_ctx_open: resolver has "
				       "unknown flags 0x%x", a->flags);
	r->advertise = !!(a->flags & MSGA_RESOLVER_ADVERTISE);
	if (a->group && parse_group(a->group, &r->group))
		return msga__open_fail(-EINVAL, "msga_ctx_open: resolver group "
				       "'%s' is not IPv4-multicast:PORT",
				       a->group);
	if (parse_allow(r, a->allow))
		return msga__open_fail(-EINVAL, "msga_ctx_open: resolver allow "
				       "'%s' is not up to %u IPv4 addresses, "
				       "comma-separated", a->allow,
				       MSGA_RESOLVER_ALLOW_MAX);
	r->tm.initial_min_ns = FIELD(a, fast_ms, d->initial_min_ns / MS) * MS;
	r->tm.initial_max_ns = FIELD(a, fast_max_ms, d->initial_max_ns / MS) * MS;
	r->tm.initial_ns = FIELD(a, fast_for_ms, d->initial_ns / MS) * MS;
	r->tm.sustain_ns = FIELD(a, sustain_ms, d->sustain_ns / MS) * MS;
	rate = FIELD(a, bytes_per_s, (uint32_t)d->bytes_per_s);
	r->tm.bytes_per_s = rate;
	r->tm.burst = rate / 4;
	r->ttl = FIELD(a, ttl, 1);
	if (r->tm.initial_max_ns > MSGA_RESOLVER_PERIOD_MAX_MS * MS ||
	    r->tm.initial_ns > MSGA_RESOLVER_PERIOD_MAX_MS * MS ||
	    r->tm.sustain_ns > MSGA_RESOLVER_PERIOD_MAX_MS * MS ||
	    rate < MSGA_RESOLVER_RATE_MIN || r->ttl > 255 ||
	    msga__tres_timing_check(&r->tm))
		return msga__open_fail(-EINVAL, "msga_ctx_open: resolver timing "
				       "(fast_ms <= fast_max_ms, each <= %u ms; "
				       "bytes_per_s >= %u; ttl <= 255)",
				       MSGA_RESOLVER_PERIOD_MAX_MS,
				       MSGA_RESOLVER_RATE_MIN);
	return 0;
}

static struct msga__resolver *resolver_new(struct msga_ctx *ctx)
{
	struct msga__resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ctx = ctx;
	r->fd = -1;
	r->tm = msga__tres_defaults;
	r->ttl = 1;
	parse_group(MSGA_RESOLVER_GROUP_DEFAULT, &r->group);
	msga__auth_random(&r->sender, sizeof(r->sender));
	msga__auth_random(&r->rand, sizeof(r->rand));
	r->rand |= 1;
	r->st.size = sizeof(r->st);
	return r;
}

/* The context's resolver, made with the defaults on first use. */
static struct msga__resolver *resolver_of(struct msga_ctx *ctx)
{
	if (!ctx->resolver)
		ctx->resolver = resolver_new(ctx);
	return ctx->resolver;
}

int msga__resolver_open(struct msga_ctx *ctx, const struct msga_ctx_attr *attr)
{
	struct msga__resolver *r;
	int ret;

	if (attr->size < offsetof(struct msga_ctx_attr, resolver) +
			 sizeof(attr->resolver) || !attr->resolver)
		return 0;
	r = resolver_of(ctx);
	if (!r)
		return msga__open_fail(-ENOMEM, "msga_ctx_open: resolver");
	ret = settings(r, attr->resolver);
	if (ret || !r->advertise)
		return ret;
	/* (an advertising context says at once if it cannot) */
	ret = msga__res_socket(r);
	if (ret)
		return msga__open_fail(ret, "msga_ctx_open: %s",
				       msga_ctx_last_error(ctx));
	return 0;
}

/* Keyed contexts MAC their datagrams with a key of their own key's. */
static void mac_key(struct msga__resolver *r)
{
	const struct msga__keyring *kr = r->ctx->keys;

	r->keyed = kr != NULL;
	if (kr)
		msga__auth_derive(kr->keys[0].key, "msgaccel tres mac v1",
				  r->mac_key, sizeof(r->mac_key));
}

static int sock_opts(struct msga__resolver *r, int fd)
{
	struct ip_mreqn mreq = { .imr_multiaddr = r->group.sin_addr };
	struct in_addr ifaddr = { 0 };
	int one = 1, zero = 0, ttl = (int)r->ttl;

	if (r->has_self && r->self.ss_family == AF_INET)
		ifaddr = ((struct sockaddr_in *)&r->self)->sin_addr;
	mreq.imr_address = ifaddr;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&r->group, sizeof(r->group)))
		return -1;
	if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_ALL, &zero, sizeof(zero)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &one, sizeof(one)) ||
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl)))
		return -1;
	if (ifaddr.s_addr &&
	    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof(ifaddr)))
		return -1;
	return 0;
}

int msga__res_socket(struct msga__resolver *r)
{
	struct msga_ctx *ctx = r->ctx;
	char group[INET_ADDRSTRLEN];
	int fd, ret;

	if (r->fd >= 0)
		return 0;
	r->has_self = !msga__ctx_own_addr(ctx, AF_INET, &r->self);
	mac_key(r);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return msga__ctx_fail(ctx, msga__neg_errno(EMFILE),
				      "resolver: socket");
	if (sock_opts(r, fd)) {
		ret = msga__neg_errno(EADDRNOTAVAIL);
		close(fd);
		inet_ntop(AF_INET, &r->group.sin_addr, group, sizeof(group));
		return msga__ctx_fail(ctx, ret, "resolver: cannot join %s:%u "
				      "on %s: %s", group,
				      ntohs(r->group.sin_port), ctx->dev_name,
				      strerror(-ret));
	}
	if (ctx->evmode && msga__ctx_watch_fd(ctx, fd)) {
		close(fd);
		return msga__ctx_fail(ctx, -EMFILE, "resolver: epoll_ctl");
	}
	r->fd = fd;
	return 0;
}

void msga__res_begin(struct msga__resolver *r, struct msga__trw_enc *e,
		     uint8_t *buf, uint8_t type)
{
	msga__trw_begin(e, buf, MSGA__TRW_DGRAM_MAX, type, r->sender, r->seq++);
}

int msga__res_send(struct msga__resolver *r, uint8_t *buf, uint32_t len)
{
	if (r->keyed) {
		crypto_shorthash_siphashx24(buf + len, buf, len, r->mac_key);
		len += MSGA__RES_MAC_LEN;
	}
	if (sendto(r->fd, buf, len, 0, (struct sockaddr *)&r->group,
		   sizeof(r->group)) != (ssize_t)len) {
		r->st.tx_errors++;
		return msga__neg_errno(EIO);
	}
	r->st.tx_dgrams++;
	r->st.tx_bytes += len;
	return 0;
}

static int allowed(const struct msga__resolver *r, const struct sockaddr_in *f)
{
	if (!r->nallow)
		return 1;
	for (uint32_t i = 0; i < r->nallow; i++)
		if (r->allow[i].s_addr == f->sin_addr.s_addr)
			return 1;
	return 0;
}

/* The datagram's bytes without its MAC: its length, or 0 if forged. */
static uint32_t mac_checked(struct msga__resolver *r, uint8_t *buf,
			    uint32_t n)
{
	uint8_t mac[MSGA__RES_MAC_LEN];

	if (!r->keyed)
		return n;
	if (n <= MSGA__RES_MAC_LEN)
		return 0;
	n -= MSGA__RES_MAC_LEN;
	crypto_shorthash_siphashx24(mac, buf, n, r->mac_key);
	return crypto_verify_16(mac, buf + n) ? 0 : n;
}

static void take(struct msga__resolver *r, uint8_t *buf, uint32_t n,
		 const struct sockaddr_in *from, uint64_t now)
{
	struct msga__trw_dec d;

	if (!allowed(r, from)) {
		r->st.rx_not_allowed++;
		return;
	}
	n = mac_checked(r, buf, n);
	if (!n) {
		r->st.rx_forged++;
		return;
	}
	if (msga__trw_open(buf, n, &d)) {
		r->st.rx_malformed++;
		return;
	}
	if (d.sender == r->sender)
		return; /* (our own, looped back) */
	r->st.rx_dgrams++;
	r->st.rx_bytes += n;
	if (d.type == MSGA__TRW_QUERY)
		msga__res_adv_query(r, &d, now);
	else
		msga__res_heard_dgram(r, &d, from, now);
}

static void receive(struct msga__resolver *r, uint64_t now)
{
	uint8_t buf[MSGA__TRW_DGRAM_MAX + MSGA__RES_MAC_LEN + 1];

	for (int i = 0; i < RX_PER_TICK; i++) {
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(r->fd, buf, sizeof(buf), 0,
				     (struct sockaddr *)&from, &flen);

		if (n < 0)
			return;
		if (flen != sizeof(from) || from.sin_family != AF_INET ||
		    (size_t)n == sizeof(buf)) {
			r->st.rx_malformed++; /* (too long: cut) */
			continue;
		}
		take(r, buf, (uint32_t)n, &from, now);
	}
}

uint64_t msga__resolver_tick(struct msga_ctx *ctx, uint64_t now)
{
	struct msga__resolver *r = ctx->resolver;
	uint64_t next, h;

	if (!r || r->fd < 0)
		return UINT64_MAX;
	receive(r, now);
	next = msga__res_adv_run(r, now);
	h = msga__res_heard_run(r, now);
	return h < next ? h : next;
}

int msga__resolver_fd(const struct msga_ctx *ctx)
{
	return ctx->resolver ? ctx->resolver->fd : -1;
}

void msga__resolver_close(struct msga_ctx *ctx)
{
	struct msga__resolver *r = ctx->resolver;

	if (!r)
		return;
	if (r->fd >= 0)
		msga__res_adv_run(r, msga__now_ns()); /* (the withdrawals) */
	msga__res_adv_fini(r);
	msga__res_heard_fini(r);
	if (r->fd >= 0)
		close(r->fd);
	sodium_memzero(r->mac_key, sizeof(r->mac_key));
	free(r);
	ctx->resolver = NULL;
}

MSGA_API int msga_resolver_stats(const struct msga_ctx *ctx,
				 struct msga_resolver_stats *st)
{
	struct msga_resolver_stats all = { .size = sizeof(all) };
	size_t n;

	if (!ctx || !st || st->size < sizeof(all))
		return -EINVAL;
	if (ctx->resolver) {
		const struct msga__resolver *r = ctx->resolver;

		all = r->st;
		all.advertised = r->adv.n;
		all.topic_slots = r->heard.table.ent_max;
		all.topics = r->heard.table.nent;
		all.rx_full = r->heard.table.full;
		all.rx_conflicts = r->heard.table.conflicts;
		for (uint32_t i = 0; i < r->heard.table.pub_max; i++)
			all.publishers += r->heard.table.pub[i].topics != 0;
	}
	n = st->size;
	memcpy((char *)st + sizeof(st->size), (char *)&all + sizeof(all.size),
	       (n < sizeof(all) ? n : sizeof(all)) - sizeof(all.size));
	return 0;
}

/* msga_resolver_browse's socket and table, made on its first call. */
int msga__res_get(struct msga_ctx *ctx, struct msga__resolver **rp)
{
	struct msga__resolver *r = resolver_of(ctx);

	if (!r)
		return msga__ctx_fail(ctx, -ENOMEM, "resolver");
	*rp = r;
	return msga__res_socket(r);
}
