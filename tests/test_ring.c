/* SPDX-License-Identifier: MIT */
/*
 * The WRITE ring's record and flow-control rules (lib/ring.c), with the
 * NIC played by memcpy: a writer places records of random sizes into a
 * reader's buffer, the reader must find exactly those records, in order,
 * across many wraps, never read one before its last byte is there, never
 * take a stale lap's bytes for a record, and never be overrun.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "byteorder.h"
#include "ring.h"

#define SIZE (MSGA__RING_MIN)

static char *ringbuf;
static struct msga__ring_writer W;
static struct msga__ring_reader R;

static void setup(void)
{
	ringbuf = aligned_alloc(64, SIZE);
	cr_assert_not_null(ringbuf);
	memset(ringbuf, 0, SIZE);
	msga__ring_writer_init(&W, 0, 1, SIZE);
	msga__ring_reader_init(&R, ringbuf, SIZE);
}

static void teardown(void)
{
	free(ringbuf);
}

/* What the publisher's WRITE puts into the ring; upto < rec: partial. */
static void nic_write(const struct msga__ring_place *p, uint32_t plen,
		      uint8_t fill, uint32_t upto)
{
	uint8_t rec[MSGA__RING_REC_MAX];

	if (p->pad_len)
		msga__put64((uint8_t *)ringbuf + p->pad_off,
			    msga__ring_word0(MSGA__RING_PAD_BIT | p->pad_len,
					     p->pad_stamp));
	memset(rec, 0, sizeof(rec));
	msga__put64(rec, msga__ring_word0(plen, p->stamp));
	memset(rec + MSGA__RING_WORD0, 0x6e, MSGA__WIRE_HDR_LEN);
	memset(rec + MSGA__RING_WORD0 + MSGA__WIRE_HDR_LEN, fill, plen);
	msga__put64(rec + p->rec - MSGA__RING_TRAILER, p->stamp);
	memcpy(ringbuf + p->off, rec, upto < p->rec ? upto : p->rec);
}

static uint32_t take(uint8_t fill_expected)
{
	char *rec;
	uint32_t plen;
	int ret = msga__ring_peek(&R, &rec, &plen);

	cr_assert_eq(ret, 1, "peek %d at rd %llu", ret,
		     (unsigned long long)R.rd);
	for (uint32_t i = 0; i < plen; i++)
		cr_assert_eq((uint8_t)rec[MSGA__RING_WORD0 +
					  MSGA__WIRE_HDR_LEN + i],
			     fill_expected);
	msga__ring_consume(&R, plen);
	return plen;
}

TestSuite(ring, .init = setup, .fini = teardown);

Test(ring, record_sizes_are_aligned_and_bounded)
{
	cr_assert_eq(msga__ring_rec_size(0), 48);
	cr_assert_eq(msga__ring_rec_size(8), 48);
	cr_assert_eq(msga__ring_rec_size(9), 64);
	cr_assert_eq(msga__ring_rec_size(64), 112);
	cr_assert_eq(msga__ring_rec_size(MSGA_FRAG_MAX), MSGA__RING_REC_MAX);
	cr_assert_eq(MSGA__RING_REC_MAX % MSGA__RING_ALIGN, 0);
	cr_assert(msga__ring_size_ok(SIZE));
	cr_assert_not(msga__ring_size_ok(SIZE + 8));
	cr_assert_not(msga__ring_size_ok(MSGA__RING_MIN - 16));
}

Test(ring, stamps_differ_and_have_both_halves_set)
{
	for (uint64_t n = 0; n < 100000; n++) {
		uint64_t s = msga__ring_stamp(n);

		cr_assert(s >> 32);
		cr_assert(s & 0xffffffffu);
		cr_assert_neq(s >> 32, msga__ring_stamp(n + 1) >> 32);
	}
}

Test(ring, empty_ring_has_nothing)
{
	char *rec;
	uint32_t plen;

	cr_assert_eq(msga__ring_peek(&R, &rec, &plen), 0);
}

Test(ring, partial_record_is_not_read_until_its_trailer_lands)
{
	struct msga__ring_place p;
	char *rec;
	uint32_t plen;

	msga__ring_place(&W, 100, &p);
	for (uint32_t upto = 0; upto < p.rec; upto += 8) {
		nic_write(&p, 100, 0x5a, upto);
		cr_assert_eq(msga__ring_peek(&R, &rec, &plen), 0,
			     "read with %u of %u bytes", upto, p.rec);
	}
	nic_write(&p, 100, 0x5a, p.rec);
	cr_assert_eq(take(0x5a), 100);
}

Test(ring, stale_lap_is_not_taken_for_a_record)
{
	struct msga__ring_place p;
	char *rec;
	uint32_t plen;

	/* Fill one lap, consume it, then look at the same bytes again. */
	while (msga__ring_can_place(&W, 0)) {
		msga__ring_place(&W, 200, &p);
		nic_write(&p, 200, 1, p.rec);
		take(1);
		msga__ring_free(&R, NULL);
		cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
		if (W.tail > 3ull * SIZE)
			break;
	}
	cr_assert_eq(msga__ring_peek(&R, &rec, &plen), 0);
}

Test(ring, pad_at_the_end_wraps_to_the_start)
{
	struct msga__ring_place p;
	uint32_t used;

	/* One small record, so full fragments no longer tile the ring. */
	msga__ring_place(&W, 100, &p);
	nic_write(&p, 100, 2, p.rec);
	take(2);
	used = p.rec;
	while (SIZE - used >= msga__ring_rec_size(MSGA_FRAG_MAX)) {
		msga__ring_place(&W, MSGA_FRAG_MAX, &p);
		cr_assert_eq(p.pad_len, 0);
		nic_write(&p, MSGA_FRAG_MAX, 2, p.rec);
		used += p.rec;
		take(2);
	}
	msga__ring_free(&R, NULL);
	cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
	msga__ring_place(&W, MSGA_FRAG_MAX, &p);
	cr_assert_eq(p.pad_off, used);
	cr_assert_eq(p.pad_len, SIZE - used);
	cr_assert_eq(p.off, 0);
	nic_write(&p, MSGA_FRAG_MAX, 3, p.rec);
	take(3);
	cr_assert_eq(R.rd, W.tail);
}

Test(ring, random_traffic_arrives_in_order_and_is_never_overrun)
{
	uint64_t rng = 0x243f6a8885a308d3ull, placed = 0, got = 0;
	uint8_t fills[4096];
	uint32_t plens[4096];

	for (int step = 0; step < 200000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if ((rng & 3) && msga__ring_can_place(&W, 0) &&
		    placed - got < 4096) {
			struct msga__ring_place p;
			uint32_t plen = (rng >> 8) % 64 ? (rng >> 16) % 200 :
					(rng >> 16) % (MSGA_FRAG_MAX + 1);

			msga__ring_place(&W, plen, &p);
			/* Never write over what the reader has not freed. */
			cr_assert_leq(W.tail - R.freed, SIZE);
			fills[placed % 4096] = (uint8_t)(placed * 7 + 1);
			plens[placed % 4096] = plen;
			nic_write(&p, plen, fills[placed % 4096], p.rec);
			placed++;
		} else if (got < placed) {
			cr_assert_eq(take(fills[got % 4096]), plens[got % 4096]);
			got++;
			msga__ring_free(&R, NULL);
			if (msga__ring_need_report(&R)) {
				cr_assert_eq(msga__ring_on_report(&W,
						(uint32_t)R.freed), 0);
				R.reported = R.freed;
			}
		}
	}
	cr_assert_gt(W.tail, 20ull * SIZE, "only %llu bytes went round",
		     (unsigned long long)W.tail);
}

static int held_if_marked(const char *rec)
{
	return rec[MSGA__RING_WORD0 + 1] & 0x80;
}

Test(ring, a_held_record_stops_freeing_until_released)
{
	struct msga__ring_place p[3];

	for (int i = 0; i < 3; i++) {
		msga__ring_place(&W, 32, &p[i]);
		nic_write(&p[i], 32, 9, p[i].rec);
		take(9);
	}
	ringbuf[p[1].off + MSGA__RING_WORD0 + 1] = (char)0x80;
	msga__ring_free(&R, held_if_marked);
	cr_assert_eq(R.freed, p[1].off);
	ringbuf[p[1].off + MSGA__RING_WORD0 + 1] = 0;
	msga__ring_free(&R, held_if_marked);
	cr_assert_eq(R.freed, R.rd);
}

Test(ring, reports_wrap_mod_2_32_and_overclaims_are_refused)
{
	W.tail = (1ull << 32) + 1000;
	W.head = (1ull << 32) - 5000;
	cr_assert_eq(msga__ring_on_report(&W, 200), 0);
	cr_assert_eq(W.head, (1ull << 32) + 200);
	cr_assert_eq(msga__ring_on_report(&W, 2000), -EPROTO);
	cr_assert_eq(W.head, (1ull << 32) + 200);
}

Test(ring, need_report_after_a_quarter)
{
	R.freed = SIZE / 4 - 16;
	cr_assert_not(msga__ring_need_report(&R));
	R.freed = SIZE / 4;
	cr_assert(msga__ring_need_report(&R));
}

Test(ring, corrupt_lengths_are_protocol_errors)
{
	char *rec;
	uint32_t plen;
	uint64_t s = msga__ring_stamp(0);

	msga__put64((uint8_t *)ringbuf, msga__ring_word0(MSGA_FRAG_MAX + 1, s));
	cr_assert_eq(msga__ring_peek(&R, &rec, &plen), -EPROTO);
	msga__put64((uint8_t *)ringbuf,
		    msga__ring_word0(MSGA__RING_PAD_BIT | 64, s));
	cr_assert_eq(msga__ring_peek(&R, &rec, &plen), -EPROTO);
}
