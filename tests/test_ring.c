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
#include "wire.h"

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

/*
 * What the publisher's WRITE puts into the ring (a PAD first if placed);
 * upto < rec: only that many bytes have landed. A fragment (ext) says it
 * is the first part of a larger message.
 */
static void nic_write_ext(const struct msga__ring_place *p, uint32_t plen,
			  int ext, uint8_t fill, uint32_t upto)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .topic = 3,
				    .seq = 77, .len = plen };
	uint32_t head = MSGA__RING_HEAD + (ext ? MSGA__RING_EXT : 0);
	uint8_t rec[MSGA__RING_REC_MAX];

	h.flags = ext ? MSGA__WF_FIRST : MSGA__WF_FIRST | MSGA__WF_LAST;
	if (ext)
		h.len = plen + 100;
	if (p->pad_len) {
		msga__put64((uint8_t *)ringbuf + p->pad_off,
			    MSGA__RING_PAD_BIT | p->pad_len);
		msga__put64((uint8_t *)ringbuf + p->pad_off + 8, p->pad_stamp);
	}
	memset(rec, 0, sizeof(rec));
	msga__ring_head_put(rec, plen, ext, &h);
	memset(rec + head, fill, plen);
	msga__put64(rec + p->rec - MSGA__RING_TRAILER, p->stamp);
	memcpy(ringbuf + p->off, rec, upto < p->rec ? upto : p->rec);
}

static void nic_write(const struct msga__ring_place *p, uint32_t plen,
		      uint8_t fill, uint32_t upto)
{
	nic_write_ext(p, plen, 0, fill, upto);
}

/* Read the next record; its payload must be all fill_expected. */
static uint32_t take(uint8_t fill_expected)
{
	struct msga__wire_hdr h;
	const char *payload;
	uint32_t rec_len, plen;
	char *rec;
	int ret = msga__ring_peek(&R, &rec, &rec_len);

	cr_assert_eq(ret, 1, "peek %d at rd %llu", ret,
		     (unsigned long long)R.rd);
	cr_assert_eq(msga__ring_head_get(rec, rec_len, &h, &payload, &plen),
		     0);
	cr_assert_eq(h.seq, 77);
	cr_assert_eq(h.topic, 3);
	for (uint32_t i = 0; i < plen; i++)
		cr_assert_eq((uint8_t)payload[i], fill_expected);
	msga__ring_consume(&R, rec_len);
	return plen;
}

TestSuite(ring, .init = setup, .fini = teardown);

Test(ring, record_sizes_are_aligned_and_bounded)
{
	cr_assert_eq(msga__ring_rec_size(0, 0), 24);
	cr_assert_eq(msga__ring_rec_size(8, 0), 32);
	cr_assert_eq(msga__ring_rec_size(9, 0), 40);
	cr_assert_eq(msga__ring_rec_size(64, 0), 88);
	cr_assert_eq(msga__ring_rec_size(64, 1), 96);
	cr_assert_eq(msga__ring_rec_size(MSGA_FRAG_MAX, 1) + MSGA__RING_ALIGN,
		     MSGA__RING_REC_MAX);
	cr_assert_eq(MSGA__RING_REC_MAX % MSGA__RING_ALIGN, 0);
	cr_assert(msga__ring_size_ok(SIZE));
	cr_assert_not(msga__ring_size_ok(SIZE + 4));
	cr_assert_not(msga__ring_size_ok(MSGA__RING_MIN - 8));
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

	msga__ring_place(&W, 100, 0, &p);
	for (uint32_t upto = 0; upto < p.rec; upto++) {
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
		msga__ring_place(&W, 200, 0, &p);
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
	msga__ring_place(&W, 100, 0, &p);
	nic_write(&p, 100, 2, p.rec);
	take(2);
	used = p.rec;
	while (SIZE - used >= msga__ring_rec_size(MSGA_FRAG_MAX, 0) + 16) {
		msga__ring_place(&W, MSGA_FRAG_MAX, 0, &p);
		cr_assert_eq(p.pad_len, 0);
		nic_write(&p, MSGA_FRAG_MAX, 2, p.rec);
		used += p.rec;
		take(2);
	}
	msga__ring_free(&R, NULL);
	cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
	msga__ring_place(&W, MSGA_FRAG_MAX, 0, &p);
	cr_assert_eq(p.pad_off, used);
	cr_assert_eq(p.pad_len, SIZE - used);
	cr_assert_eq(p.off, 0);
	nic_write(&p, MSGA_FRAG_MAX, 3, p.rec);
	take(3);
	cr_assert_eq(R.rd, W.tail);
}

/* A PAD needs 16 bytes, so no record may leave just 8 before the end. */
Test(ring, a_record_that_would_leave_8_bytes_takes_them)
{
	struct msga__ring_place p;
	uint32_t want = msga__ring_rec_size(40, 0);

	/* Place fillers until exactly want + 8 bytes are left. */
	while (SIZE - W.tail % SIZE > want + 8 + MSGA__RING_REC_MAX) {
		msga__ring_place(&W, MSGA_FRAG_MAX, 0, &p);
		nic_write(&p, MSGA_FRAG_MAX, 4, p.rec);
		take(4);
	}
	msga__ring_place(&W, SIZE - (uint32_t)(W.tail % SIZE) - want - 8 -
				     msga__ring_rec_size(0, 0), 0, &p);
	nic_write(&p, p.rec - msga__ring_rec_size(0, 0), 4, p.rec);
	take(4);
	cr_assert_eq(SIZE - W.tail % SIZE, want + 8);
	msga__ring_place(&W, 40, 0, &p);
	cr_assert_eq(p.pad_len, 0);
	cr_assert_eq(p.rec, want + 8);
	cr_assert_eq(W.tail % SIZE, 0);
	nic_write(&p, 40, 5, p.rec);
	cr_assert_eq(take(5), 40);
	cr_assert_eq(R.rd, W.tail);
	msga__ring_free(&R, NULL);
	cr_assert_eq(R.freed, R.rd);
}

Test(ring, random_traffic_arrives_in_order_and_is_never_overrun)
{
	uint64_t rng = 0x243f6a8885a308d3ull, placed = 0, got = 0;
	uint8_t fills[4096];
	uint32_t plens[4096];
	uint64_t eights = 0;

	for (int step = 0; step < 200000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if ((rng & 3) && msga__ring_can_place(&W, 0) &&
		    placed - got < 4096) {
			struct msga__ring_place p;
			uint32_t plen = (rng >> 8) % 64 ? (rng >> 16) % 200 :
					(rng >> 16) % (MSGA_FRAG_MAX + 1);

			int ext = (rng >> 40) % 4 == 0;

			msga__ring_place(&W, plen, ext, &p);
			/* Never write over what the reader has not freed. */
			cr_assert_leq(W.tail - R.freed, SIZE);
			eights += p.rec != msga__ring_rec_size(plen, ext);
			fills[placed % 4096] = (uint8_t)(placed * 7 + 1);
			plens[placed % 4096] = plen;
			nic_write_ext(&p, plen, ext, fills[placed % 4096],
				      p.rec);
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
	cr_assert_gt(eights, 0, "the 8-byte rule was never exercised");
}

static int held_if_marked(const char *rec)
{
	return rec[MSGA__RING_FLAGS_OFF] & MSGA__WF_HELD;
}

Test(ring, a_held_record_stops_freeing_until_released)
{
	struct msga__ring_place p[3];

	for (int i = 0; i < 3; i++) {
		msga__ring_place(&W, 32, 0, &p[i]);
		nic_write(&p[i], 32, 9, p[i].rec);
		take(9);
	}
	ringbuf[p[1].off + MSGA__RING_FLAGS_OFF] = (char)MSGA__WF_HELD;
	msga__ring_free(&R, held_if_marked);
	cr_assert_eq(R.freed, p[1].off);
	ringbuf[p[1].off + MSGA__RING_FLAGS_OFF] = 0;
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

/* A stale lap's bytes may look like anything: they only make us wait. */
Test(ring, garbage_in_an_unverified_head_only_waits)
{
	char *rec;
	uint32_t rec_len;
	uint64_t s = msga__ring_stamp(0);

	msga__put64((uint8_t *)ringbuf, MSGA_FRAG_MAX + 1);
	cr_assert_eq(msga__ring_peek(&R, &rec, &rec_len), 0);
	msga__put64((uint8_t *)ringbuf, 0xffffffffffffffffull);
	cr_assert_eq(msga__ring_peek(&R, &rec, &rec_len), 0);
	msga__put64((uint8_t *)ringbuf, MSGA__RING_PAD_BIT | 64);
	msga__put64((uint8_t *)ringbuf + 8, s + 1);
	cr_assert_eq(msga__ring_peek(&R, &rec, &rec_len), 0);
	/* right stamp, but at a trailer the stale length points to: no */
	msga__put64((uint8_t *)ringbuf, 64);
	msga__put64((uint8_t *)ringbuf + msga__ring_rec_size(64, 0) - 8, s - 1);
	cr_assert_eq(msga__ring_peek(&R, &rec, &rec_len), 0);
	cr_assert_eq(R.rd, 0);
}

Test(ring, a_verified_pad_of_the_wrong_length_is_a_protocol_error)
{
	char *rec;
	uint32_t rec_len;

	msga__put64((uint8_t *)ringbuf, MSGA__RING_PAD_BIT | 64);
	msga__put64((uint8_t *)ringbuf + 8, msga__ring_stamp(0));
	cr_assert_eq(msga__ring_peek(&R, &rec, &rec_len), -EPROTO);
}

static int head_round_trip(struct msga__wire_hdr *h, uint32_t plen, int ext,
			   struct msga__wire_hdr *out, const char **payload)
{
	char rec[MSGA__RING_REC_MAX];
	uint32_t got;
	int ret;

	msga__ring_head_put(rec, plen, ext, h);
	ret = msga__ring_head_get(rec, msga__ring_rec_size(plen, ext), out,
				  payload, &got);
	if (!ret)
		cr_assert_eq(*payload - rec, MSGA__RING_HEAD +
					     (ext ? MSGA__RING_EXT : 0));
	if (!ret)
		cr_assert_eq(got, plen);
	return ret;
}

Test(ring, heads_round_trip_and_only_ring_types_are_taken)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .topic = 9,
				    .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				    .seq = 0x1122334455667788ull, .len = 64 };
	struct msga__wire_hdr o;
	const char *pl;

	cr_assert_eq(head_round_trip(&h, 64, 0, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_DATA && o.topic == 9 && o.len == 64 &&
		  o.off == 0 && o.seq == h.seq && o.credit == 0);
	/* a middle fragment carries its message length and offset */
	h.flags = 0, h.len = 100000, h.off = 4072;
	cr_assert_eq(head_round_trip(&h, 4072, 1, &o, &pl), 0);
	cr_assert(o.len == 100000 && o.off == 4072 && o.flags == 0);
	/* a fragment without the extension, or a whole one with it: no */
	cr_assert_eq(head_round_trip(&h, 4072, 0, &o, &pl), -EPROTO);
	h.flags = MSGA__WF_FIRST | MSGA__WF_LAST, h.len = 64, h.off = 0;
	cr_assert_eq(head_round_trip(&h, 64, 1, &o, &pl), -EPROTO);
	h = (struct msga__wire_hdr){ .type = MSGA__W_CREDIT, .credit = 4242 };
	cr_assert_eq(head_round_trip(&h, 0, 0, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_CREDIT && o.credit == 4242);
	h = (struct msga__wire_hdr){ .type = MSGA__W_TOPIC, .topic = 2,
				     .len = 5 };
	cr_assert_eq(head_round_trip(&h, 5, 0, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_TOPIC && o.len == 5);
	h.type = MSGA__W_SUBSCRIBE;
	cr_assert_eq(head_round_trip(&h, 5, 0, &o, &pl), -EPROTO);
	h.type = MSGA__W_BATCH;
	cr_assert_eq(head_round_trip(&h, 5, 0, &o, &pl), -EPROTO);
}
