/* SPDX-License-Identifier: MIT */
/*
 * Topic resolution's datagrams (lib/proto/tres_wire.c): the layout of
 * tres_wire.h byte for byte, round trips of adverts and queries, batching
 * up to the datagram's bound, and every reason a receiver refuses one
 * (a datagram is refused whole, never read in part).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "byteorder.h"
#include "tres_wire.h"

static uint8_t buf[2048];

static struct msga__trw_advert rc_advert(const char *topic)
{
	struct msga__trw_advert a = { .kind = MSGA__TRW_RC,
				      .flags = MSGA__TRW_F_KEYS,
				      .port = 7471,
				      .addr = { [10] = 0xff, [11] = 0xff,
						[12] = 198, [13] = 18,
						[14] = 0, [15] = 1 },
				      .origin = 0x1122334455667788ull };

	strcpy(a.topic, topic);
	return a;
}

static struct msga__trw_advert mcast_advert(const char *topic)
{
	struct msga__trw_advert a = rc_advert(topic);

	a.kind = MSGA__TRW_MCAST;
	a.flags = MSGA__TRW_F_RELIABLE | MSGA__TRW_F_LAST;
	a.port = 0;
	a.addr[12] = 239;
	a.addr[13] = 255;
	return a;
}

/* One advert datagram of a, its length. */
static uint32_t one(const struct msga__trw_advert *a, uint8_t type)
{
	struct msga__trw_enc e;

	msga__trw_begin(&e, buf, sizeof(buf), type, 42, 7);
	cr_assert_eq(msga__trw_add_advert(&e, a), 0);
	return msga__trw_end(&e);
}

static int open_n(uint32_t n)
{
	struct msga__trw_dec d;

	return msga__trw_open(buf, n, &d);
}

Test(tres_wire, advert_layout)
{
	struct msga__trw_advert a = rc_advert("md.eq.IBM");
	uint32_t n = one(&a, MSGA__TRW_ADVERT);

	cr_assert_eq(n, MSGA__TRW_HDR + MSGA__TRW_ADV_FIXED + 9);
	cr_expect_eq(memcmp(buf, "MSGT", 4), 0);
	cr_expect_eq(buf[4], 1);
	cr_expect_eq(buf[5], MSGA__TRW_ADVERT);
	cr_expect_eq(msga__get16(buf + 6), 1);
	cr_expect_eq(msga__get64(buf + 8), 42);
	cr_expect_eq(msga__get32(buf + 16), 7);
	cr_expect_eq(msga__get32(buf + 20), 0);
	cr_expect_eq(buf[24], MSGA__TRW_RC);
	cr_expect_eq(buf[25], MSGA__TRW_F_KEYS);
	cr_expect_eq(msga__get16(buf + 26), 7471);
	cr_expect_eq(memcmp(buf + 28, a.addr, 16), 0);
	cr_expect_eq(msga__get64(buf + 44), a.origin);
	cr_expect_eq(buf[52], 9);
	cr_expect_eq(memcmp(buf + 53, "md.eq.IBM", 9), 0);
}

Test(tres_wire, adverts_round_trip)
{
	struct msga__trw_advert in[2] = { rc_advert("a"),
					  mcast_advert("md.eq.IBM") }, out;
	char pat[MSGA_TOPIC_MAX + 2];
	struct msga__trw_enc e;
	struct msga__trw_dec d;
	uint32_t n;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_WITHDRAW, 9, 1);
	for (int i = 0; i < 2; i++)
		cr_assert_eq(msga__trw_add_advert(&e, &in[i]), 0);
	n = msga__trw_end(&e);
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	cr_expect_eq(d.type, MSGA__TRW_WITHDRAW);
	cr_expect_eq(d.sender, 9);
	for (int i = 0; i < 2; i++) {
		memset(&out, 0xa5, sizeof(out));
		cr_assert_eq(msga__trw_next_advert(&d, &out), 1);
		cr_expect_eq(out.kind, in[i].kind);
		cr_expect_eq(out.flags, in[i].flags);
		cr_expect_eq(out.port, in[i].port);
		cr_expect_eq(memcmp(out.addr, in[i].addr, 16), 0);
		cr_expect_eq(out.origin, in[i].origin);
		cr_expect_str_eq(out.topic, in[i].topic);
	}
	cr_expect_eq(msga__trw_next_advert(&d, &out), 0);
	cr_expect_eq(msga__trw_next_query(&d, pat), 0, "not a query");
}

Test(tres_wire, queries_round_trip)
{
	static const char *pats[] = { "*", "md.eq.*", "md.eq.IBM" };
	char pat[MSGA_TOPIC_MAX + 2];
	struct msga__trw_advert a = rc_advert("x");
	struct msga__trw_enc e;
	struct msga__trw_dec d;
	uint32_t n;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_QUERY, 5, 2);
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "a query");
	for (int i = 0; i < 3; i++)
		cr_assert_eq(msga__trw_add_query(&e, pats[i]), 0);
	n = msga__trw_end(&e);
	cr_assert_eq(n, MSGA__TRW_HDR + 2 + 8 + 10);
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(msga__trw_next_query(&d, pat), 1);
		cr_expect_str_eq(pat, pats[i]);
	}
	cr_expect_eq(msga__trw_next_query(&d, pat), 0);
	cr_expect_eq(msga__trw_next_advert(&d, &a), 0, "not adverts");
}

Test(tres_wire, encoder_refuses_bad_records)
{
	struct msga__trw_advert a;
	struct msga__trw_enc e;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_ADVERT, 1, 1);
	a = rc_advert("bad name");
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "a space");
	a = rc_advert("md.*");
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "a pattern");
	a = rc_advert("t");
	a.port = 0;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "no port");
	a = rc_advert("t");
	a.flags = MSGA__TRW_F_RELIABLE;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "reliable RC");
	a = rc_advert("t");
	a.flags = 0x80;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "unknown flag");
	a = rc_advert("t");
	a.flags = MSGA__TRW_F_LINE_B;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "line B RC");
	a = rc_advert("t");
	a.kind = MSGA__TRW_UD;
	a.flags = MSGA__TRW_F_LINE_B;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "line B ud://");
	a = rc_advert("t");
	a.origin = 0;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "no origin");
	a = rc_advert("t");
	a.kind = 4;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "unknown kind");
	a = rc_advert("t");
	memset(a.addr + 12, 0, 4);
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "0.0.0.0");
	a = mcast_advert("t");
	a.kind = MSGA__TRW_UD;
	a.flags = 0;
	a.port = 1;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "ud:// to a group");
	a = mcast_advert("t");
	a.addr[12] = 10;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "not a group");
	a = mcast_advert("t");
	a.port = 1;
	cr_expect_eq(msga__trw_add_advert(&e, &a), -EINVAL, "group and port");
	cr_expect_eq(msga__trw_end(&e), 0, "nothing was added");
	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_QUERY, 1, 1);
	cr_expect_eq(msga__trw_add_query(&e, ""), -EINVAL);
	cr_expect_eq(msga__trw_add_query(&e, "a*b"), -EINVAL);
	cr_expect_eq(msga__trw_add_query(&e, NULL), -EINVAL);
}

/* Adverts fill a datagram to its bound, then say -ENOSPC; what was
 * written is a valid datagram, and the next starts afresh. */
Test(tres_wire, batches_stop_at_the_bound)
{
	char name[MSGA_TOPIC_MAX + 1];
	struct msga__trw_advert a;
	struct msga__trw_enc e;
	struct msga__trw_dec d;
	uint32_t i, n;

	memset(name, 'n', MSGA_TOPIC_MAX);
	name[MSGA_TOPIC_MAX] = '\0';
	a = rc_advert(name);
	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_ADVERT, 1, 1);
	for (i = 0; msga__trw_add_advert(&e, &a) == 0; i++)
		;
	cr_expect_eq(i, (MSGA__TRW_DGRAM_MAX - MSGA__TRW_HDR) /
			(MSGA__TRW_ADV_FIXED + MSGA_TOPIC_MAX));
	cr_expect_eq(msga__trw_add_advert(&e, &a), -ENOSPC);
	n = msga__trw_end(&e);
	cr_assert_leq(n, MSGA__TRW_DGRAM_MAX);
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	cr_expect_eq(d.left, i);
	/* the smallest records: as many as the count field allows */
	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_QUERY, 1, 1);
	for (i = 0; msga__trw_add_query(&e, "*") == 0; i++)
		;
	cr_expect_eq(i, MSGA__TRW_RECS_MAX);
	cr_assert_eq(msga__trw_open(buf, msga__trw_end(&e), &d), 0);
	/* a buffer smaller than the bound is the bound */
	msga__trw_begin(&e, buf, MSGA__TRW_HDR + 10, MSGA__TRW_QUERY, 1, 1);
	cr_expect_eq(msga__trw_add_query(&e, "md.eq.IBM"), 0);
	cr_expect_eq(msga__trw_add_query(&e, "*"), -ENOSPC);
}

Test(tres_wire, decoder_refuses_bad_datagrams)
{
	struct msga__trw_advert a = rc_advert("md.eq.IBM");
	uint32_t n = one(&a, MSGA__TRW_ADVERT);
	uint8_t keep[256];

	memcpy(keep, buf, n);
	cr_assert_eq(open_n(n), 0);
	for (uint32_t i = 0; i < n; i++)
		cr_expect_eq(open_n(i), -EPROTO, "cut at %u", i);
	cr_expect_eq(open_n(n + 1), -EPROTO, "a byte more");
	/* each field */
	struct { uint32_t at; uint8_t v; const char *why; } bad[] = {
		{ 0, 'X', "magic" }, { 4, 2, "version" }, { 5, 0, "type 0" },
		{ 5, 4, "type 4" }, { 6, 0, "count 0" }, { 6, 2, "count 2" },
		{ 24, 0, "kind 0" }, { 24, 9, "kind" },
		{ 25, 0x40, "flag" }, { 25, 0x10, "the bit after LINE_B" },
		{ 25, MSGA__TRW_F_LINE_B, "line B on rdma://" },
		{ 26, 0, "port" },
		{ 52, 0, "name length 0" }, { 52, 10, "name past the end" },
		{ 52, 8, "name short of the end" }, { 53, ' ', "name char" },
		{ 57, 0, "NUL in the name" }, { 53, '*', "pattern as name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(buf, keep, n);
		buf[bad[i].at] = bad[i].v;
		if (bad[i].at == 26) /* port 0: both bytes */
			buf[27] = 0;
		cr_expect_eq(open_n(n), -EPROTO, "%s", bad[i].why);
	}
	memcpy(buf, keep, n);
	memset(buf + 44, 0, 8);
	cr_expect_eq(open_n(n), -EPROTO, "origin 0");
	cr_expect_eq(open_n(MSGA__TRW_DGRAM_MAX + 1), -EPROTO, "too long");
}

/*
 * Line B (msga_pub_attr.uri_b): a multicast record of its own, flag
 * LINE_B, its addr line B's group; it round-trips, beside line A's record
 * of the same topic and origin, and says mcast://GROUP_B. Only multicast
 * has lines (above: the encoder and decoder refuse LINE_B on the others).
 */
Test(tres_wire, line_b_is_a_multicast_record_of_its_own)
{
	struct msga__trw_advert a = mcast_advert("md.ab"), b = a, out;
	struct msga__trw_enc e;
	struct msga__trw_dec d;
	char uri[80];
	uint32_t n;

	b.flags |= MSGA__TRW_F_LINE_B;
	b.addr[14] = 9;
	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_ADVERT, 1, 1);
	cr_assert_eq(msga__trw_add_advert(&e, &a), 0);
	cr_assert_eq(msga__trw_add_advert(&e, &b), 0);
	n = msga__trw_end(&e);
	cr_expect_eq(buf[MSGA__TRW_HDR + MSGA__TRW_ADV_FIXED + 5 + 1],
		     MSGA__TRW_F_RELIABLE | MSGA__TRW_F_LAST |
		     MSGA__TRW_F_LINE_B, "bit 3 of the second record");
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	cr_assert_eq(msga__trw_next_advert(&d, &out), 1);
	cr_expect_eq(out.flags & MSGA__TRW_F_LINE_B, 0);
	cr_assert_eq(msga__trw_next_advert(&d, &out), 1);
	cr_expect_eq(out.flags, b.flags);
	cr_expect_eq(memcmp(out.addr, b.addr, 16), 0);
	cr_expect_eq(out.origin, a.origin);
	msga__trw_uri(&out, uri, sizeof(uri));
	cr_expect_str_eq(uri, "mcast://239.255.9.1");
	/* a withdrawal of line B is the same record */
	cr_assert_gt(one(&b, MSGA__TRW_WITHDRAW), 0);
}

/* A query datagram with one bad pattern among good ones is refused. */
Test(tres_wire, one_bad_record_refuses_all)
{
	struct msga__trw_enc e;
	uint32_t n;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_QUERY, 1, 1);
	cr_assert_eq(msga__trw_add_query(&e, "ab*"), 0);
	cr_assert_eq(msga__trw_add_query(&e, "cd"), 0);
	n = msga__trw_end(&e);
	cr_assert_eq(open_n(n), 0);
	buf[n - 1] = '*'; /* "c*" is fine */
	cr_expect_eq(open_n(n), 0);
	buf[n - 2] = '*'; /* "**" is not */
	cr_expect_eq(open_n(n), -EPROTO);
	buf[n - 2] = 'c';
	buf[MSGA__TRW_HDR + 2] = '*'; /* "a**" */
	cr_expect_eq(open_n(n), -EPROTO);
}

/* The period field: an advert's is read back; a query's must be 0. */
Test(tres_wire, period_field)
{
	struct msga__trw_advert a = rc_advert("md.eq.IBM");
	struct msga__trw_dec d;
	struct msga__trw_enc e;
	uint32_t n;

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_ADVERT, 1, 1);
	cr_assert_eq(msga__trw_add_advert(&e, &a), 0);
	msga__trw_period(&e, 26000);
	n = msga__trw_end(&e);
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	cr_expect_eq(d.period_ms, 26000);
	cr_expect_eq(msga__get32(buf + 20), 26000);

	msga__trw_begin(&e, buf, sizeof(buf), MSGA__TRW_QUERY, 1, 1);
	cr_assert_eq(msga__trw_add_query(&e, "md.*"), 0);
	msga__trw_period(&e, 5); /* (not for a query: ignored) */
	n = msga__trw_end(&e);
	cr_assert_eq(msga__trw_open(buf, n, &d), 0);
	cr_expect_eq(d.period_ms, 0);
	buf[20] = 1;
	cr_expect_eq(msga__trw_open(buf, n, &d), -EPROTO, "a query's is 0");
}


/* Where a subscriber connects, from a record. */
Test(tres_wire, uri_of_a_record)
{
	struct msga__trw_advert a = rc_advert("md.eq.IBM");
	char uri[80];

	msga__trw_uri(&a, uri, sizeof(uri));
	cr_expect_str_eq(uri, "rdma://198.18.0.1:7471");
	a.kind = MSGA__TRW_UD;
	msga__trw_uri(&a, uri, sizeof(uri));
	cr_expect_str_eq(uri, "ud://198.18.0.1:7471");
	a.kind = MSGA__TRW_MCAST;
	a.port = 0;
	a.addr[12] = 239;
	a.addr[13] = 255;
	a.addr[14] = 1;
	a.addr[15] = 2;
	msga__trw_uri(&a, uri, sizeof(uri));
	cr_expect_str_eq(uri, "mcast://239.255.1.2");
	memset(a.addr, 0, 16);
	a.addr[0] = 0xfd;
	a.addr[15] = 1;
	a.kind = MSGA__TRW_RC;
	a.port = 9;
	msga__trw_uri(&a, uri, sizeof(uri));
	cr_expect_str_eq(uri, "rdma://[fd00::1]:9");
}
