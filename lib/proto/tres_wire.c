/* SPDX-License-Identifier: MIT */
/*
 * tres_wire.c - topic resolution's datagrams (tres_wire.h): written
 * record by record into a bounded buffer, and read only after the whole
 * datagram has been checked.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "byteorder.h"
#include "topic.h"
#include "tres_wire.h"

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
				       0xff, 0xff };

void msga__trw_addr_of(uint8_t addr[16], const struct sockaddr *sa)
{
	memset(addr, 0, 16);
	if (sa->sa_family == AF_INET6) {
		memcpy(addr, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	} else if (sa->sa_family == AF_INET) {
		addr[10] = addr[11] = 0xff;
		memcpy(addr + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	}
}

void msga__trw_uri(const struct msga__trw_advert *a, char *buf, size_t n)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	const char *scheme = a->kind == MSGA__TRW_RC ? "rdma" :
			     a->kind == MSGA__TRW_UD ? "ud" : "mcast";
	int v4 = !memcmp(a->addr, v4mapped, sizeof(v4mapped));
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? a->addr + 12 : a->addr, ip,
		  sizeof(ip));
	if (a->kind == MSGA__TRW_MCAST)
		snprintf(buf, n, "%s://%s", scheme, ip);
	else
		snprintf(buf, n, v4 ? "%s://%s:%u" : "%s://[%s]:%u", scheme, ip,
			 a->port);
}

static int addr_is_group(const uint8_t a[16])
{
	if (!memcmp(a, v4_mapped, sizeof(v4_mapped)))
		return (a[12] & 0xf0u) == 0xe0u; /* 224.0.0.0/4 */
	return a[0] == 0xffu;                  /* ff00::/8 */
}

/* A unicast address a subscriber may connect to: not a group, not the
 * unspecified address (of either family). */
static int addr_is_host(const uint8_t a[16])
{
	static const uint8_t zero[16];

	if (addr_is_group(a) || !memcmp(a, zero, sizeof(zero)))
		return 0;
	if (!memcmp(a, v4_mapped, sizeof(v4_mapped)))
		return a[12] || a[13] || a[14] || a[15];
	return 1;
}

/* The rules of an advert record but its name: 0 or -EINVAL. */
static int advert_fields_ok(uint8_t kind, uint8_t flags, uint16_t port,
			    const uint8_t addr[16], uint64_t origin)
{
	if (flags & ~MSGA__TRW_F_ALL || !origin)
		return -EINVAL;
	switch (kind) {
	case MSGA__TRW_RC:
	case MSGA__TRW_UD:
		if (flags & (MSGA__TRW_F_RELIABLE | MSGA__TRW_F_LINE_B))
			return -EINVAL; /* (multicast's alone) */
		return port && addr_is_host(addr) ? 0 : -EINVAL;
	case MSGA__TRW_MCAST:
		return !port && addr_is_group(addr) ? 0 : -EINVAL;
	default:
		return -EINVAL;
	}
}

void msga__trw_begin(struct msga__trw_enc *e, void *buf, uint32_t cap,
		     uint8_t type, uint64_t sender, uint32_t seq)
{
	uint8_t *p = buf;

	e->buf = p;
	e->cap = cap > MSGA__TRW_DGRAM_MAX ? MSGA__TRW_DGRAM_MAX : cap;
	e->len = MSGA__TRW_HDR;
	e->count = 0;
	msga__put32(p, MSGA__TRW_MAGIC);
	p[4] = MSGA__TRW_VERSION;
	p[5] = type;
	msga__put16(p + 6, 0);
	msga__put64(p + 8, sender);
	msga__put32(p + 16, seq);
	msga__put32(p + 20, 0);
}

/* Room for a record of n bytes more? */
static int room(const struct msga__trw_enc *e, uint32_t n)
{
	return e->count < MSGA__TRW_RECS_MAX && n <= e->cap - e->len;
}

int msga__trw_add_advert(struct msga__trw_enc *e,
			 const struct msga__trw_advert *a)
{
	uint8_t *p;
	size_t n;

	if (e->buf[5] == MSGA__TRW_QUERY || msga__topic_check(a->topic) ||
	    advert_fields_ok(a->kind, a->flags, a->port, a->addr, a->origin))
		return -EINVAL;
	n = strlen(a->topic);
	if (!room(e, MSGA__TRW_ADV_FIXED + (uint32_t)n))
		return -ENOSPC;
	p = e->buf + e->len;
	p[0] = a->kind;
	p[1] = a->flags;
	msga__put16(p + 2, a->port);
	memcpy(p + 4, a->addr, 16);
	msga__put64(p + 20, a->origin);
	p[28] = (uint8_t)n;
	memcpy(p + 29, a->topic, n);
	e->len += MSGA__TRW_ADV_FIXED + (uint32_t)n;
	e->count++;
	return 0;
}

int msga__trw_add_query(struct msga__trw_enc *e, const char *pattern)
{
	size_t n;

	if (e->buf[5] != MSGA__TRW_QUERY || msga__pattern_check(pattern))
		return -EINVAL;
	n = strlen(pattern);
	if (!room(e, 1u + (uint32_t)n))
		return -ENOSPC;
	e->buf[e->len] = (uint8_t)n;
	memcpy(e->buf + e->len + 1, pattern, n);
	e->len += 1u + (uint32_t)n;
	e->count++;
	return 0;
}

uint32_t msga__trw_end(struct msga__trw_enc *e)
{
	if (!e->count)
		return 0;
	msga__put16(e->buf + 6, (uint16_t)e->count);
	return e->len;
}

/* Is the name of len bytes at p a valid topic (pattern: pattern)? */
static int name_ok(const uint8_t *p, uint32_t len, int pattern)
{
	char s[MSGA_TOPIC_MAX + 2];

	if (len > MSGA_TOPIC_MAX + (pattern ? 1u : 0u))
		return 0;
	memcpy(s, p, len);
	s[len] = '\0';
	if (memchr(s, '\0', len))
		return 0; /* (a NUL inside would pass as a shorter name) */
	return pattern ? !msga__pattern_check(s) : !msga__topic_check(s);
}

/* The length of the record at p (left bytes there), or 0 if it is not
 * a valid record of type. */
static uint32_t record_len(uint8_t type, const uint8_t *p, uint32_t left)
{
	uint32_t n;

	if (type == MSGA__TRW_QUERY) {
		if (left < 1u)
			return 0;
		n = p[0];
		return n < left && name_ok(p + 1, n, 1) ? 1u + n : 0;
	}
	if (left < MSGA__TRW_ADV_FIXED)
		return 0;
	n = p[28];
	if (!n || n > left - MSGA__TRW_ADV_FIXED || !name_ok(p + 29, n, 0) ||
	    advert_fields_ok(p[0], p[1], msga__get16(p + 2), p + 4,
			     msga__get64(p + 20)))
		return 0;
	return MSGA__TRW_ADV_FIXED + n;
}

void msga__trw_period(struct msga__trw_enc *e, uint32_t period_ms)
{
	if (e->buf[5] != MSGA__TRW_QUERY)
		msga__put32(e->buf + 20, period_ms);
}

int msga__trw_open(const void *buf, uint32_t n, struct msga__trw_dec *d)
{
	const uint8_t *p = buf;
	uint32_t count, pos = MSGA__TRW_HDR;

	if (n < MSGA__TRW_HDR || n > MSGA__TRW_DGRAM_MAX ||
	    msga__get32(p) != MSGA__TRW_MAGIC || p[4] != MSGA__TRW_VERSION ||
	    p[5] < MSGA__TRW_ADVERT || p[5] > MSGA__TRW_QUERY ||
	    (p[5] == MSGA__TRW_QUERY && msga__get32(p + 20)))
		return -EPROTO;
	count = msga__get16(p + 6);
	if (!count || count > MSGA__TRW_RECS_MAX)
		return -EPROTO;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t len = record_len(p[5], p + pos, n - pos);

		if (!len)
			return -EPROTO;
		pos += len;
	}
	if (pos != n)
		return -EPROTO;
	d->buf = p;
	d->len = n;
	d->pos = MSGA__TRW_HDR;
	d->left = count;
	d->type = p[5];
	d->sender = msga__get64(p + 8);
	d->seq = msga__get32(p + 16);
	d->period_ms = msga__get32(p + 20);
	return 0;
}

int msga__trw_next_advert(struct msga__trw_dec *d,
			  struct msga__trw_advert *a)
{
	const uint8_t *p = d->buf + d->pos;

	if (!d->left || d->type == MSGA__TRW_QUERY)
		return 0;
	a->kind = p[0];
	a->flags = p[1];
	a->port = msga__get16(p + 2);
	memcpy(a->addr, p + 4, 16);
	a->origin = msga__get64(p + 20);
	memcpy(a->topic, p + 29, p[28]);
	a->topic[p[28]] = '\0';
	d->pos += MSGA__TRW_ADV_FIXED + p[28];
	d->left--;
	return 1;
}

int msga__trw_next_query(struct msga__trw_dec *d,
			 char pat[MSGA_TOPIC_MAX + 2])
{
	const uint8_t *p = d->buf + d->pos;

	if (!d->left || d->type != MSGA__TRW_QUERY)
		return 0;
	memcpy(pat, p + 1, p[0]);
	pat[p[0]] = '\0';
	d->pos += 1u + p[0];
	d->left--;
	return 1;
}
