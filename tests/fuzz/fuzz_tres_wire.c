/* SPDX-License-Identifier: MIT */
/*
 * fuzz_tres_wire.c - topic resolution's datagram reader (msga__trw_open,
 * lib/proto/tres_wire.c) fed any UDP payload, in the input's own buffer
 * (exactly its size), so AddressSanitizer sees a read past it. A
 * datagram it accepts must read out as exactly its count of records,
 * each valid by the encoder's own rules (the encoder takes every record
 * back, and the datagram it writes is the input byte for byte): the
 * reader and the writer agree on every byte, and nothing the reader
 * hands on is outside what a publisher could have sent. The adverts and
 * withdrawals then go into a small subscriber's table (tres_table.c),
 * kept across inputs, whose bounds and counts must hold whatever comes
 * (line B records of A/B publishers included: entries of their own).
 */
#include <errno.h>
#include <string.h>

#include "tres_table.h"
#include "tres_wire.h"
#include "fuzz.h"

#define PUBS 4u
#define ENTS 16u

/* Into the table: adverts heard, withdrawals applied; an expiry now and
 * then (the input's sequence number as the clock); then its invariants. */
static void into_table(const struct msga__trw_dec *d)
{
	static struct msga__tres_table t;
	struct msga__trw_dec r = *d;
	struct msga__trw_advert a;
	uint32_t p, topics = 0;

	if (!t.pub_max)
		FUZZ_CHECK(msga__tres_table_init(&t, PUBS, ENTS) == 0);
	while (msga__trw_next_advert(&r, &a)) {
		if (d->type == MSGA__TRW_WITHDRAW) {
			int w = msga__tres_withdrawn(&t, &a, &p);

			FUZZ_CHECK(w >= 0 && w <= 2);
			FUZZ_CHECK(!w || p < PUBS);
		} else {
			int h = msga__tres_heard(&t, &a, d->seq, 1000, &p);

			FUZZ_CHECK(h >= MSGA__TRES_KNOWN &&
				   h <= MSGA__TRES_CONFLICT);
			if (h < MSGA__TRES_FULL)
				FUZZ_CHECK(p < PUBS &&
					   t.pub[p].origin == a.origin);
		}
	}
	if (d->sender & 1)
		msga__tres_expire(&t, d->seq, NULL, NULL);
	for (uint32_t i = 0; i < PUBS; i++) {
		topics += t.pub[i].topics;
		/* (a line is an entry's: a publisher's flags never say one) */
		FUZZ_CHECK(!(t.pub[i].flags & MSGA__TRW_F_LINE_B));
	}
	FUZZ_CHECK(t.nent <= ENTS && topics == t.nent);
}

static void readvert(const struct msga__trw_dec *d, const uint8_t *p,
		     uint32_t n)
{
	static uint8_t again[MSGA__TRW_DGRAM_MAX];
	struct msga__trw_dec r = *d;
	struct msga__trw_advert a;
	struct msga__trw_enc e;
	uint32_t count = 0;

	msga__trw_begin(&e, again, sizeof(again), d->type, d->sender,
			d->seq);
	msga__trw_period(&e, d->period_ms);
	while (msga__trw_next_advert(&r, &a)) {
		FUZZ_CHECK(msga__trw_add_advert(&e, &a) == 0);
		count++;
	}
	FUZZ_CHECK(count == d->left);
	FUZZ_CHECK(msga__trw_end(&e) == n && !memcmp(again, p, n));
	into_table(d);
}

static void requery(const struct msga__trw_dec *d, const uint8_t *p,
		    uint32_t n)
{
	static uint8_t again[MSGA__TRW_DGRAM_MAX];
	char pat[MSGA_TOPIC_MAX + 2];
	struct msga__trw_dec r = *d;
	struct msga__trw_enc e;
	uint32_t count = 0;

	msga__trw_begin(&e, again, sizeof(again), d->type, d->sender,
			d->seq);
	while (msga__trw_next_query(&r, pat)) {
		FUZZ_CHECK(msga__trw_add_query(&e, pat) == 0);
		count++;
	}
	FUZZ_CHECK(count == d->left);
	FUZZ_CHECK(msga__trw_end(&e) == n && !memcmp(again, p, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t n = size > UINT32_MAX ? UINT32_MAX : (uint32_t)size;
	struct msga__trw_dec d;
	int ret = msga__trw_open(data, n, &d);

	FUZZ_CHECK(ret == 0 || ret == -EPROTO);
	if (ret)
		return 0;
	FUZZ_CHECK(n >= MSGA__TRW_HDR && n <= MSGA__TRW_DGRAM_MAX);
	FUZZ_CHECK(d.left >= 1 && d.left <= MSGA__TRW_RECS_MAX);
	if (d.type == MSGA__TRW_QUERY)
		requery(&d, data, n);
	else
		readvert(&d, data, n);
	return 0;
}
