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

static char *ringmem, *ringbuf;
static struct msga__ring_writer W;
static struct msga__ring_reader R;
static uint64_t topic_seq[4];    /* the publisher's per-topic sequence */

/*
 * The NIC, between two of the reader's looks at the ring
 * (-DMSGA__PEER_MEM_HOOK): each is inside the ring (peer_mem.h checks).
 */
static void (*on_load)(uint32_t off);

void msga__peer_mem_hook(const struct msga__peer_mem *m, uint32_t off,
			 uint32_t n)
{
	cr_assert_eq(m->size, SIZE);
	(void)n;
	if (on_load)
		on_load(off);
}

static void setup(void)
{
	/* as rc_ring.c does: the ring starts 12 bytes past 16 */
	ringmem = aligned_alloc(64, SIZE + 64);
	cr_assert_not_null(ringmem);
	memset(ringmem, 0, SIZE + 64);
	ringbuf = ringmem + MSGA__RING_BASE_SKEW;
	msga__ring_writer_init(&W, 1, SIZE);
	cr_assert_eq(msga__ring_reader_init(&R, msga__peer_mem_of(ringbuf,
								  SIZE)), 0);
	memset(topic_seq, 0, sizeof(topic_seq));
	on_load = NULL;
}

static void teardown(void)
{
	msga__ring_reader_fini(&R);
	free(ringmem);
}

/* What a test record is: its topic picks its sequence, fill its bytes. */
struct trec {
	uint32_t plen;
	int ext;           /* a fragment (the first of a larger message) */
	uint16_t topic;    /* 0..3 */
	uint8_t fill;
	uint64_t seq;      /* set by place() */
	uint32_t head;     /* set by place() */
	int padded;        /* a PAD went before it */
};

/* The publisher: take the topic's next seq, pick the head, place. */
static void place(struct trec *t, struct msga__ring_place *p)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .topic = t->topic,
		.flags = t->ext ? MSGA__WF_FIRST : MSGA__WF_FIRST | MSGA__WF_LAST,
		.seq = t->seq = ++topic_seq[t->topic],
	};

	t->head = msga__ring_head_len(&W, &h, t->plen);
	msga__ring_place(&W, t->head, t->plen, p);
}

/*
 * What the publisher's WRITE puts into the ring (a PAD first if placed);
 * upto < rec: only that many bytes have landed.
 */
static void nic_write(const struct msga__ring_place *p, const struct trec *t,
		      uint32_t upto)
{
	struct msga__wire_hdr h = {
		.type = MSGA__W_DATA, .topic = t->topic, .seq = t->seq,
		.len = t->ext ? t->plen + 100 : t->plen,
		.flags = t->ext ? MSGA__WF_FIRST : MSGA__WF_FIRST | MSGA__WF_LAST,
	};
	uint8_t rec[MSGA__RING_REC_MAX];

	if (p->pad_len) {
		msga__put64((uint8_t *)ringbuf + p->pad_off,
			    MSGA__RING_PAD_BIT | p->pad_len);
		msga__put64((uint8_t *)ringbuf + p->pad_off + 8, p->pad_stamp);
	}
	memset(rec, 0, sizeof(rec));
	msga__ring_head_put(rec, t->head, t->plen, &h);
	memset(rec + t->head, t->fill, t->plen);
	msga__put64(rec + p->len - MSGA__RING_TRAILER, p->stamp);
	memcpy(ringbuf + p->off, rec, upto < p->len ? upto : p->len);
}

/* Place and write a whole message of plen bytes on topic 0. */
static struct trec send_msg(uint32_t plen, uint8_t fill,
			    struct msga__ring_place *p)
{
	struct trec t = { .plen = plen, .fill = fill };

	place(&t, p);
	nic_write(p, &t, p->len);
	return t;
}

/* The record peek found must be t, its payload all t's fill. */
static void take_rec_at(const struct trec *t, const struct msga__ring_rec *rec)
{
	struct msga__wire_hdr h;
	const char *payload;
	uint32_t plen;

	cr_assert_eq(msga__ring_head_get(&R, rec, &h, &payload, &plen), 0);
	cr_assert_eq(payload - (ringbuf + R.off), t->head);
	/* every payload is 16-byte aligned in memory */
	cr_assert_eq((uintptr_t)payload % 16, 0, "payload at %p", payload);
	cr_assert_eq(h.seq, t->seq, "seq %llu, want %llu",
		     (unsigned long long)h.seq, (unsigned long long)t->seq);
	cr_assert_eq(h.topic, t->topic);
	cr_assert_eq(plen, t->plen);
	for (uint32_t i = 0; i < plen; i++)
		cr_assert_eq((uint8_t)payload[i], t->fill);
	msga__ring_consume(&R, rec->len);
}

/* Read the next record: it must be t. */
static void take_rec(const struct trec *t)
{
	struct msga__ring_rec rec;
	int ret = msga__ring_peek(&R, &rec);

	cr_assert_eq(ret, 1, "peek %d at rd %llu", ret,
		     (unsigned long long)R.rd);
	take_rec_at(t, &rec);
}

/* All read is freed: tell the writer when a quarter of the ring is. */
static void report_freed(void)
{
	cr_assert_eq(R.freed, R.rd);
	if (msga__ring_need_report(&R)) {
		cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
		R.reported = R.freed;
	}
}

TestSuite(ring, .init = setup, .fini = teardown);

Test(ring, record_sizes_are_aligned_and_bounded)
{
	/* a 64-byte message: a WRITE of 4 + 64 + 8, under soft-RoCE's
	 * 79-byte cut, in 80 ring bytes */
	cr_assert_eq(msga__ring_trailer_off(MSGA__RING_SHORT_HEAD, 64) +
		     MSGA__RING_TRAILER, 76);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_SHORT_HEAD, 64), 80);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_SHORT_HEAD, 1), 16);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_SHORT_HEAD, 4), 16);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_SHORT_HEAD, 5), 32);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_HEAD, 0), 32);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_HEAD, 9), 48);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_HEAD + MSGA__RING_EXT,
					 64), 112);
	cr_assert_eq(msga__ring_rec_size(MSGA__RING_HEAD + MSGA__RING_EXT,
					 MSGA_FRAG_MAX), MSGA__RING_REC_MAX);
	cr_assert_eq(MSGA__RING_REC_MAX % MSGA__RING_ALIGN, 0);
	/* what rc_fanout.c assumes to send a message inline everywhere */
	for (uint32_t len = 0, worst = 0; len < 200; len++, worst = 0) {
		worst = msga__ring_trailer_off(MSGA__RING_HEAD, len) +
			MSGA__RING_TRAILER - len;
		cr_assert_leq(worst, MSGA__RING_REC_EXTRA_MAX);
		cr_assert(len % 4 != 1 || worst == MSGA__RING_REC_EXTRA_MAX);
	}
	cr_assert(msga__ring_size_ok(SIZE));
	cr_assert_not(msga__ring_size_ok(SIZE + 4));
	cr_assert_not(msga__ring_size_ok(MSGA__RING_MIN - 16));
	/* the hello's offer says the format; an unmarked one is refused */
	cr_assert_eq(msga__ring_offered_size(msga__ring_offer(SIZE)), SIZE);
	cr_assert_eq(msga__ring_offered_size(SIZE), 0);
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

/* The writer leaves a seq out only where the reader can count it. */
Test(ring, the_head_is_short_only_for_the_next_seq_of_a_whole_message)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .topic = 5,
				    .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				    .seq = 10 };

	/* the first message of a topic tells the reader where it is */
	cr_assert_eq(msga__ring_head_len(&W, &h, 64), MSGA__RING_HEAD);
	h.seq = 11;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64), MSGA__RING_SHORT_HEAD);
	h.seq = 12;
	cr_assert_eq(msga__ring_head_len(&W, &h, MSGA_FRAG_MAX),
		     MSGA__RING_SHORT_HEAD);
	/* a gap (this connection missed one), another topic: explicit */
	h.seq = 14;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64), MSGA__RING_HEAD);
	h.topic = 6, h.seq = 15;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64), MSGA__RING_HEAD);
	/* a fragment always says it, and the next whole one follows it */
	h.topic = 5, h.seq = 15, h.flags = MSGA__WF_FIRST;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64),
		     MSGA__RING_HEAD + MSGA__RING_EXT);
	h.flags = MSGA__WF_LAST;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64),
		     MSGA__RING_HEAD + MSGA__RING_EXT);
	h.seq = 16, h.flags = MSGA__WF_FIRST | MSGA__WF_LAST;
	cr_assert_eq(msga__ring_head_len(&W, &h, 64), MSGA__RING_SHORT_HEAD);
	/* control records, and topics a short head cannot name */
	h.type = MSGA__W_TOPIC;
	cr_assert_eq(msga__ring_head_len(&W, &h, 5), MSGA__RING_HEAD);
	h.type = MSGA__W_DATA, h.topic = MSGA_PUB_TOPICS_MAX, h.seq = 1;
	cr_assert_eq(msga__ring_head_len(&W, &h, 5), MSGA__RING_HEAD);
}

Test(ring, empty_ring_has_nothing)
{
	struct msga__ring_rec rec;

	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
}

Test(ring, partial_record_is_not_read_until_its_trailer_lands)
{
	struct msga__ring_place p;
	struct trec t[2] = { { .plen = 104, .fill = 0x5a },
			     { .plen = 64, .fill = 0x5b } };
	struct msga__ring_rec rec;

	/* a long record, then a short one with its trailer unaligned */
	for (int i = 0; i < 2; i++) {
		place(&t[i], &p);
		for (uint32_t upto = 0; upto < p.len; upto++) {
			nic_write(&p, &t[i], upto);
			cr_assert_eq(msga__ring_peek(&R, &rec), 0,
				     "read with %u of %u bytes", upto, p.len);
		}
		nic_write(&p, &t[i], p.len);
		take_rec(&t[i]);
	}
	cr_assert_eq(t[1].head, MSGA__RING_SHORT_HEAD);
	cr_assert_eq((p.off + p.len - MSGA__RING_TRAILER) % 8, 4);
}

Test(ring, stale_lap_is_not_taken_for_a_record)
{
	struct msga__ring_place p;
	struct msga__ring_rec rec;

	/* Fill one lap, consume it, then look at the same bytes again. */
	while (msga__ring_can_place(&W, 0)) {
		struct trec t = send_msg(200, 1, &p);

		take_rec(&t);
		msga__ring_free(&R);
		cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
		if (W.tail > 3ull * SIZE)
			break;
	}
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
}

Test(ring, pad_at_the_end_wraps_to_the_start)
{
	struct msga__ring_place p;
	struct trec t = send_msg(100, 2, &p);
	uint32_t used = p.rec, big;

	/* One small record, so full fragments no longer tile the ring. */
	take_rec(&t);
	big = msga__ring_rec_size(MSGA__RING_SHORT_HEAD, MSGA_FRAG_MAX);
	while (SIZE - used >= big + MSGA__RING_PAD_LEN) {
		t = send_msg(MSGA_FRAG_MAX, 2, &p);
		cr_assert_eq(p.pad_len, 0);
		used += p.rec;
		take_rec(&t);
	}
	msga__ring_free(&R);
	cr_assert_eq(msga__ring_on_report(&W, (uint32_t)R.freed), 0);
	t = send_msg(MSGA_FRAG_MAX, 3, &p);
	cr_assert_eq(p.pad_off, used);
	cr_assert_eq(p.pad_len, SIZE - used);
	cr_assert_eq(p.off, 0);
	take_rec(&t);
	cr_assert_eq(R.rd, W.tail);
}

/* Records and rings are whole 16s, so the rest of a lap is one PAD. */
Test(ring, the_rest_of_a_lap_is_always_room_for_a_pad)
{
	struct msga__ring_place p;
	struct trec t;

	/* records of every size mod 16 until past the end */
	for (uint32_t len = 0; W.tail < 2ull * SIZE; len = (len + 1) % 300) {
		t = send_msg(len, 4, &p);
		cr_assert_eq(p.off % MSGA__RING_ALIGN, 0);
		cr_assert_eq(p.rec % MSGA__RING_ALIGN, 0);
		cr_assert(!p.pad_len || p.pad_len >= MSGA__RING_PAD_LEN);
		take_rec(&t);
		msga__ring_free(&R);
		report_freed();
	}
}

Test(ring, random_traffic_arrives_in_order_and_is_never_overrun)
{
	uint64_t rng = 0x243f6a8885a308d3ull, placed = 0, got = 0;
	static struct trec q[4096];
	uint64_t forms[3] = { 0 };

	for (int step = 0; step < 200000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if ((rng & 3) && msga__ring_can_place(&W, 0) &&
		    placed - got < 4096) {
			struct msga__ring_place p;
			struct trec *t = &q[placed % 4096];

			*t = (struct trec){
				.plen = (rng >> 8) % 64 ? (rng >> 16) % 200 :
					(rng >> 16) % (MSGA_FRAG_MAX + 1),
				.ext = (rng >> 40) % 4 == 0,
				.topic = (uint16_t)((rng >> 44) % 4),
				.fill = (uint8_t)(placed * 7 + 1),
			};
			place(t, &p);
			/* now and then a publisher skips a number */
			if ((rng >> 50) % 16 == 0)
				topic_seq[t->topic]++;
			/* Never write over what the reader has not freed. */
			cr_assert_leq(W.tail - R.freed, SIZE);
			forms[t->head == MSGA__RING_SHORT_HEAD ? 0 :
			      t->head == MSGA__RING_HEAD ? 1 : 2]++;
			nic_write(&p, t, p.len);
			placed++;
		} else if (got < placed) {
			take_rec(&q[got % 4096]);
			got++;
			msga__ring_free(&R);
			report_freed();
		}
	}
	cr_assert_gt(W.tail, 20ull * SIZE, "only %llu bytes went round",
		     (unsigned long long)W.tail);
	cr_assert(forms[0] && forms[1] && forms[2], "forms %llu %llu %llu",
		  (unsigned long long)forms[0], (unsigned long long)forms[1],
		  (unsigned long long)forms[2]);
}

/* Read a record as rc_ring.c does, leaving it current (not consumed). */
/* The stamp of the last delivery (msga_msg.rx_time_ns: each its own). */
static uint64_t stamp;

static const char *deliver(uint32_t *rec_len)
{
	struct msga__ring_rec rec;
	struct msga__wire_hdr h;
	const char *payload;
	uint32_t plen;

	cr_assert_eq(msga__ring_peek(&R, &rec), 1);
	cr_assert_eq(msga__ring_head_get(&R, &rec, &h, &payload, &plen), 0);
	*rec_len = rec.len;
	stamp++;
	return payload;
}

Test(ring, a_held_record_stops_freeing_until_released)
{
	struct msga__ring_place p[3];
	const char *data[3];
	uint64_t st[3];
	uint32_t rec_len;
	struct trec t[3];

	for (int i = 0; i < 3; i++) {
		t[i] = send_msg(32, 9, &p[i]);
		data[i] = deliver(&rec_len);
		st[i] = stamp;
		if (i < 2)
			cr_assert_eq(msga__ring_hold(&R, data[i], st[i]), 0);
		cr_assert_eq(msga__ring_hold(&R, data[i], st[i]),
			     i < 2 ? -EALREADY : 0);
		msga__ring_consume(&R, rec_len);
		msga__ring_free(&R);
	}
	/* the first is long (a topic's first message), the others short */
	cr_assert_eq(t[0].head, MSGA__RING_HEAD);
	cr_assert_eq(t[1].head, MSGA__RING_SHORT_HEAD);
	/* freeing stops at the first held payload's word, whatever order */
	cr_assert_eq(R.freed, (uint64_t)(data[0] - ringbuf) - 4);
	cr_assert_eq(msga__ring_release(&R, data[1], st[1]), 1);
	cr_assert_eq(msga__ring_release(&R, data[1], st[1]), 0);
	msga__ring_free(&R);
	cr_assert_eq(R.freed, (uint64_t)(data[0] - ringbuf) - 4);
	cr_assert_eq(msga__ring_release(&R, data[0], st[0]), 1);
	msga__ring_free(&R);
	cr_assert_eq(R.freed, p[2].off);
	cr_assert_eq(msga__ring_release(&R, data[2], st[2]), 1);
	msga__ring_free(&R);
	cr_assert_eq(R.freed, R.rd);
	cr_assert_eq(R.nheld, 0);
}

/*
 * Issue 23 item 1: the publisher rewrites, while a message is held, the
 * heads of records already read (a length, a PAD, the old HELD bit).
 * Freeing must not follow them: never past the held message, never past
 * rd, and never outside the ring.
 */
Test(ring, rewriting_consumed_records_does_not_move_freeing)
{
	struct msga__ring_place p[3];
	const char *held = NULL;
	uint64_t held_stamp = 0;
	uint32_t rec_len;

	for (int i = 0; i < 3; i++) {
		const char *d;

		send_msg(40, 7, &p[i]);
		d = deliver(&rec_len);
		if (i == 1) {
			held = d;
			held_stamp = stamp;
			cr_assert_eq(msga__ring_hold(&R, d, stamp), 0);
		}
		msga__ring_consume(&R, rec_len);
	}
	/* a huge length in the first record, a PAD over the held one */
	msga__put32((uint8_t *)ringbuf + p[0].off, MSGA__RING_LEN_MASK);
	msga__put32((uint8_t *)ringbuf + p[1].off, MSGA__RING_PAD_BIT | 16);
	msga__put32((uint8_t *)ringbuf + p[2].off, 0);
	msga__ring_free(&R);
	cr_assert_leq(R.freed, R.rd);
	cr_assert_leq(R.freed, (uint64_t)(held - ringbuf) - 4);
	cr_assert_lt(R.free_off, SIZE);
	/* the ring's bytes cannot release it either: only the reader can */
	memset(ringbuf, 0, SIZE);
	msga__ring_free(&R);
	cr_assert_leq(R.freed, (uint64_t)(held - ringbuf) - 4);
	cr_assert_eq(msga__ring_release(&R, held, held_stamp), 1);
	msga__ring_free(&R);
	cr_assert_eq(R.freed, R.rd);
}

/* Issue 23 item 3: only the message being delivered may be held. */
Test(ring, holding_a_stale_message_is_refused)
{
	struct msga__ring_place p;
	const char *old, *cur;
	uint32_t rec_len;

	uint64_t old_stamp, cur_stamp;

	send_msg(40, 1, &p);
	old = deliver(&rec_len);
	old_stamp = stamp;
	msga__ring_consume(&R, rec_len);
	msga__ring_free(&R);
	send_msg(40, 2, &p);
	cur = deliver(&rec_len);
	cur_stamp = stamp;
	cr_assert_eq(msga__ring_hold(&R, old, old_stamp), -EINVAL);
	cr_assert_eq(msga__ring_hold(&R, cur + 1, cur_stamp), -EINVAL);
	cr_assert_eq(msga__ring_hold(&R, ringbuf - 16, cur_stamp), -EINVAL);
	cr_assert_eq(msga__ring_hold(&R, cur, cur_stamp), 0);
	cr_assert(msga__ring_is_held(&R, cur, cur_stamp));
	cr_assert(!msga__ring_is_held(&R, old, old_stamp));
	msga__ring_consume(&R, rec_len);
	cr_assert(msga__ring_is_held(&R, cur, cur_stamp),
		  "held after its callback too");
	/* after its callback, not even the last one */
	send_msg(40, 3, &p);
	cr_assert_eq(msga__ring_hold(&R, deliver(&rec_len) - 16, stamp),
		     -EINVAL);
	msga__ring_consume(&R, rec_len);
	cr_assert_eq(R.nheld, 1);
}

/*
 * Issue 33: a copy of a message from an earlier lap, at the very place
 * where a message is held now, is not that message: releasing it (twice,
 * or late) leaves the held one held, and it is never "held" itself.
 */
Test(ring, a_copy_from_an_earlier_lap_at_the_same_place_is_not_the_held_one)
{
	struct msga__ring_place p;
	const char *first = NULL, *d;
	uint64_t first_stamp = 0, d_stamp;
	uint32_t rec_len;

	/* to a lap's start (short records from there on), then a lap on */
	int pending = 1;

	send_msg(40, 0, &p);
	for (int lap = 1; lap <= 2; lap++) {
		for (int n = 0;; n++) {
			cr_assert_lt(n, 100000);
			if (pending) {
				deliver(&rec_len);
				msga__ring_consume(&R, rec_len);
				msga__ring_free(&R);
				report_freed();
			}
			send_msg(40, (uint8_t)lap, &p);
			pending = 1;
			if (p.off == 0)
				break;
		}
		if (lap == 1) {
			first = deliver(&rec_len);
			first_stamp = stamp;
			cr_assert_eq(msga__ring_hold(&R, first, first_stamp), 0);
			msga__ring_consume(&R, rec_len);
			cr_assert_eq(msga__ring_release(&R, first, first_stamp),
				     1);
			msga__ring_free(&R);
			report_freed();
			pending = 0;
		}
	}
	d = deliver(&rec_len);
	d_stamp = stamp;
	cr_assert_eq(d, first);
	cr_assert_gt(R.rd, (uint64_t)SIZE, "a lap later");
	/* inside its callback, the old copy is refused by the caller's
	 * stamp check (rc_sub.c); the reader is asked only for this one */
	cr_assert_eq(msga__ring_hold(&R, d, d_stamp), 0);
	msga__ring_consume(&R, rec_len);
	cr_assert(!msga__ring_is_held(&R, first, first_stamp));
	cr_assert_eq(msga__ring_hold(&R, first, first_stamp), -EINVAL);
	cr_assert_eq(msga__ring_release(&R, first, first_stamp), 0);
	cr_assert_eq(msga__ring_release(&R, first, first_stamp), 0);
	cr_assert_eq(R.nheld, 1);
	cr_assert(msga__ring_is_held(&R, d, d_stamp));
	msga__ring_free(&R);
	cr_assert_leq(R.freed, (uint64_t)(d - ringbuf) - 4 + R.rd / SIZE * SIZE);
	cr_assert_eq(msga__ring_release(&R, d, d_stamp), 1);
	msga__ring_free(&R);
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
	struct msga__ring_rec rec;
	uint64_t s = msga__ring_stamp(0);

	msga__put64((uint8_t *)ringbuf, MSGA_FRAG_MAX + 1);
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
	msga__put64((uint8_t *)ringbuf, MSGA__RING_SHORT_BIT | 0x1fff);
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
	msga__put64((uint8_t *)ringbuf, 0xffffffffffffffffull);
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
	msga__put64((uint8_t *)ringbuf, MSGA__RING_PAD_BIT | 64);
	msga__put64((uint8_t *)ringbuf + 8, s + 1);
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
	/* right stamp, but at a trailer the stale length points to: no */
	msga__put64((uint8_t *)ringbuf, 64);
	msga__put64((uint8_t *)ringbuf +
		    msga__ring_rec_size(MSGA__RING_HEAD, 64) - 8, s - 1);
	cr_assert_eq(msga__ring_peek(&R, &rec), 0);
	cr_assert_eq(R.rd, 0);
}

Test(ring, a_verified_pad_of_the_wrong_length_is_a_protocol_error)
{
	struct msga__ring_rec rec;

	msga__put64((uint8_t *)ringbuf, MSGA__RING_PAD_BIT | 64);
	msga__put64((uint8_t *)ringbuf + 8, msga__ring_stamp(0));
	cr_assert_eq(msga__ring_peek(&R, &rec), -EPROTO);
}

/*
 * Issue 23 item 2: a 1-4 byte short record has its trailer at +8, where
 * a PAD's stamp sits. Read first as a stale word with bit 31, it is still
 * the short record it is, by either reader.
 */
static uint32_t loads, late_word, late_off;

/* The record's word lands only after the reader's first load. */
static void word_lands_late(uint32_t off)
{
	if (++loads == 2)
		msga__put32((uint8_t *)ringbuf + late_off, late_word);
	(void)off;
}

Test(ring, a_tiny_record_behind_a_stale_pad_word_is_read)
{
	for (uint32_t len = 1; len <= 4; len++) {
		struct msga__ring_place p;
		struct trec t;
		struct msga__ring_rec rec;

		teardown();
		setup();
		t = send_msg(8, 1, &p); /* the topic's first: a long head */
		take_rec(&t);
		t = (struct trec){ .plen = len, .fill = 0x42 };
		place(&t, &p);
		cr_assert_eq(t.head, MSGA__RING_SHORT_HEAD);
		cr_assert_eq(p.len, 16);
		/* the record is there, but the reader's first look at its
		 * word saw a stale lap's, with bit 31 */
		nic_write(&p, &t, p.len);
		late_off = p.off;
		late_word = msga__get32((uint8_t *)ringbuf + p.off);
		msga__put32((uint8_t *)ringbuf + p.off,
			    MSGA__RING_PAD_BIT | 64);
		loads = 0;
		on_load = word_lands_late;
		cr_assert_eq(msga__ring_peek(&R, &rec), 1,
			     "a %u-byte record taken for a bad PAD", len);
		on_load = NULL;
		take_rec_at(&t, &rec);
	}
}

/*
 * What peek would say of the len-byte record at the read position, had
 * its trailer matched: its word, read from the ring.
 */
static struct msga__ring_rec as_peeked(uint32_t len)
{
	return (struct msga__ring_rec){
		.word = msga__get32((uint8_t *)ringbuf + R.off), .len = len };
}

/* Writer's head into the ring, reader's decode of it (a fresh reader). */
static int head_round_trip(struct msga__wire_hdr *h, uint32_t head,
			   uint32_t plen, struct msga__wire_hdr *out,
			   const char **payload)
{
	char *rec = ringbuf + R.off;
	struct msga__ring_rec r;
	uint32_t got;
	int ret;

	memset(rec, 0, MSGA__RING_REC_MAX);
	msga__ring_head_put(rec, head, plen, h);
	r = as_peeked(msga__ring_rec_size(head, plen));
	ret = msga__ring_head_get(&R, &r, out, payload, &got);
	if (!ret)
		cr_assert_eq(*payload - rec, head);
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

	/* a short head before the reader knows the topic's seq: no */
	cr_assert_eq(head_round_trip(&h, MSGA__RING_SHORT_HEAD, 64, &o, &pl),
		     -EPROTO);
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 64, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_DATA && o.topic == 9 && o.len == 64 &&
		  o.off == 0 && o.seq == h.seq && o.credit == 0 &&
		  o.flags == h.flags);
	/* then a short one stands for the next */
	cr_assert_eq(head_round_trip(&h, MSGA__RING_SHORT_HEAD, 64, &o, &pl),
		     0);
	cr_assert(o.type == MSGA__W_DATA && o.topic == 9 && o.len == 64 &&
		  o.seq == h.seq + 1 && o.flags == h.flags);
	/* a middle fragment carries its message length and offset */
	h.flags = 0, h.len = 100000, h.off = 4072;
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD + MSGA__RING_EXT,
				     4072, &o, &pl), 0);
	cr_assert(o.len == 100000 && o.off == 4072 && o.flags == 0);
	/* a fragment without the extension, or a whole one with it: no */
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 4072, &o, &pl),
		     -EPROTO);
	h.flags = MSGA__WF_FIRST | MSGA__WF_LAST, h.len = 64, h.off = 0;
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD + MSGA__RING_EXT, 64,
				     &o, &pl), -EPROTO);
	h = (struct msga__wire_hdr){ .type = MSGA__W_CREDIT, .credit = 4242 };
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 0, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_CREDIT && o.credit == 4242);
	h = (struct msga__wire_hdr){ .type = MSGA__W_TOPIC, .topic = 2,
				     .len = 5 };
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 5, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_TOPIC && o.len == 5);
	/* a publisher's goodbye (0.10): the last record, nothing but type */
	h = (struct msga__wire_hdr){ .type = MSGA__W_BYE };
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 0, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_BYE && !o.seq && !o.len);
	/* a topic's last value (0.12): whole, its seq explicit, and it does
	 * not move the topic's implicit numbering (only DATA does) */
	h = (struct msga__wire_hdr){ .type = MSGA__W_LAST_VALUE, .topic = 2,
				     .seq = 77, .len = 5 };
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 5, &o, &pl), 0);
	cr_assert(o.type == MSGA__W_LAST_VALUE && o.seq == 77 &&
		  o.topic == 2 && o.len == 5 && !o.flags);
	h = (struct msga__wire_hdr){ .type = MSGA__W_TOPIC, .topic = 2,
				     .len = 5 };
	h.type = MSGA__W_SUBSCRIBE;
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 5, &o, &pl),
		     -EPROTO);
	h.type = MSGA__W_BATCH;
	cr_assert_eq(head_round_trip(&h, MSGA__RING_HEAD, 5, &o, &pl),
		     -EPROTO);
}

/* Reserved bits, in either form, mean a writer we do not understand. */
Test(ring, reserved_bits_are_a_protocol_error)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .topic = 1,
				    .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				    .seq = 1, .len = 8 };
	char *rec = ringbuf + R.off;
	struct msga__ring_rec r;
	const char *pl;
	uint32_t plen;

	msga__ring_head_put(rec, MSGA__RING_HEAD, 8, &h);
	rec[3] |= 0x01; /* bit 24 of a long head */
	r = as_peeked(48);
	cr_assert_eq(msga__ring_head_get(&R, &r, &h, &pl, &plen), -EPROTO);
	rec[3] = 0;
	r = as_peeked(48);
	cr_assert_eq(msga__ring_head_get(&R, &r, &h, &pl, &plen), 0);
	msga__put32((uint8_t *)rec, MSGA__RING_SHORT_BIT | 8 |
		    1u << MSGA__RING_SHORT_TOPIC_SHIFT | 1u << 23);
	r = as_peeked(32);
	cr_assert_eq(msga__ring_head_get(&R, &r, &h, &pl, &plen), -EPROTO);
}

/* ---------------------------------------------------- the fast paths */

#define MSGA__RING_FAST_MAX_TEST 256u /* rc_ring.c's limit */

/* The general writer's record for a whole message, as the NIC gets it. */
static uint32_t general_record(struct msga__ring_writer *w, uint8_t *out,
			       uint16_t topic, uint64_t seq,
			       const uint8_t *data, uint32_t len,
			       uint32_t *off)
{
	struct msga__wire_hdr h = { .type = MSGA__W_DATA, .topic = topic,
				    .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				    .seq = seq, .len = len };
	uint32_t head = msga__ring_head_len(w, &h, len);
	struct msga__ring_place p;

	msga__ring_place(w, head, len, &p);
	memset(out, 0, p.len);
	msga__ring_head_put(out, head, len, &h);
	memcpy(out + head, data, len);
	msga__put64(out + p.len - MSGA__RING_TRAILER, p.stamp);
	*off = p.off;
	return p.pad_len ? 0 : p.len;
}

/*
 * put_short builds, byte for byte, what head_len + place + head_put
 * would, at every distance from the ring's end (a PAD due: then it
 * declines and changes nothing).
 */
Test(ring, a_fast_record_is_the_general_one_byte_for_byte)
{
	static uint8_t data[MSGA__RING_FAST_MAX_TEST];
	int declined = 0;

	for (uint32_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 13 + 5);
	for (uint32_t len = 0; len <= MSGA__RING_FAST_MAX_TEST; len += 1) {
		for (uint32_t back = 16; back <= 320; back += 16) {
			struct msga__ring_writer a, b;
			uint8_t fast[MSGA__RING_SHORT_BUF(
				MSGA__RING_FAST_MAX_TEST)];
			uint8_t slow[MSGA__RING_REC_MAX];
			uint32_t off_a = 77, off_b = 77, na, nb;

			msga__ring_writer_init(&a, 1, SIZE);
			a.off = SIZE - back;
			a.tail = a.off + 3ull * SIZE;
			a.nrec = 1000 + back;
			a.next_seq[2] = 41;
			b = a;
			memset(fast, 0xee, sizeof(fast));
			na = msga__ring_put_short(&a, (char *)fast, UINT32_MAX,
						  2, 41, data, len, &off_a);
			nb = general_record(&b, slow, 2, 41, data, len,
					    &off_b);
			if (!nb) {
				/* a PAD first: the general path's case */
				cr_assert_eq(na, 0, "len %u back %u", len,
					     back);
				cr_assert_eq(a.off, SIZE - back);
				cr_assert_eq(a.nrec, 1000 + back);
				cr_assert_eq(a.next_seq[2], 41);
				declined++;
				continue;
			}
			cr_assert_eq(na, nb, "len %u back %u: %u vs %u", len,
				     back, na, nb);
			cr_assert_eq(off_a, off_b);
			cr_assert_eq(memcmp(fast, slow, na), 0,
				     "len %u back %u", len, back);
			cr_assert_eq(a.off, b.off);
			cr_assert_eq(a.tail, b.tail);
			cr_assert_eq(a.nrec, b.nrec);
			cr_assert_eq(a.next_seq[2], b.next_seq[2]);
		}
	}
	cr_assert_gt(declined, 0);
}

/* What the general path sends instead, put_short leaves to it. */
Test(ring, a_fast_record_is_declined_where_it_cannot_be_short)
{
	uint8_t buf[MSGA__RING_SHORT_BUF(64)], data[64] = { 0 };
	uint32_t off;

	W.next_seq[1] = 5;
	/* not the topic's next seq, or the topic's first message */
	cr_assert_eq(msga__ring_put_short(&W, (char *)buf, 1024, 1, 6, data,
					  64, &off), 0);
	cr_assert_eq(msga__ring_put_short(&W, (char *)buf, 1024, 0, 1, data,
					  64, &off), 0);
	cr_assert_eq(msga__ring_put_short(&W, (char *)buf, 1024,
					  MSGA_PUB_TOPICS_MAX, 1, data, 64,
					  &off), 0);
	/* more than the caller's limit (the inline size) */
	cr_assert_eq(msga__ring_put_short(&W, (char *)buf, 75, 1, 5, data,
					  64, &off), 0);
	cr_assert_eq(W.tail, 0);
	cr_assert_eq(W.nrec, 0);
	cr_assert_eq(W.next_seq[1], 5);
	cr_assert_eq(msga__ring_put_short(&W, (char *)buf, 76, 1, 5, data,
					  64, &off), 76);
	cr_assert_eq(W.next_seq[1], 6);
}

/*
 * Random traffic with both writers and both readers mixed: whatever wrote
 * a record, either reader reads it, in order, and take_short takes every
 * short record that has fully arrived with no PAD in front.
 */
Test(ring, fast_and_general_paths_interleave)
{
	uint64_t rng = 0x13198a2e03707344ull, placed = 0, got = 0;
	uint64_t fast_put = 0, fast_took = 0;
	static struct trec q[4096];

	for (int step = 0; step < 200000; step++) {
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		if ((rng & 3) && msga__ring_can_place(&W, 0) &&
		    placed - got < 4096) {
			struct trec *t = &q[placed % 4096];
			uint8_t data[200], rec[MSGA__RING_SHORT_BUF(200)];
			uint32_t off, n = 0;

			*t = (struct trec){
				.plen = (uint32_t)((rng >> 16) % 200),
				.ext = (rng >> 40) % 8 == 0,
				.topic = (uint16_t)((rng >> 44) % 4),
				.fill = (uint8_t)(placed * 7 + 1),
			};
			if (!t->ext && (rng >> 48) % 4) {
				memset(data, t->fill, t->plen);
				t->seq = topic_seq[t->topic] + 1;
				n = msga__ring_put_short(&W, (char *)rec,
							 UINT32_MAX, t->topic,
							 t->seq, data, t->plen,
							 &off);
			}
			if (n) {
				topic_seq[t->topic]++;
				t->head = MSGA__RING_SHORT_HEAD;
				memcpy(ringbuf + off, rec, n);
				fast_put++;
			} else {
				struct msga__ring_place p;

				place(t, &p);
				nic_write(&p, t, p.len);
				t->padded = p.pad_len > 0;
			}
			cr_assert_leq(W.tail - R.freed, SIZE);
			placed++;
		} else if (got < placed) {
			const struct trec *t = &q[got % 4096];
			struct msga__ring_short s;
			uint32_t n = (rng >> 56) % 2 ?
				msga__ring_take_short(&R, &s) : 0;

			/* (every record here has landed: never "on its way";
			 * a PAD in front is peek's to skip) */
			if ((rng >> 56) % 2)
				cr_assert_neq(n, 0, "a landed record not seen");
			if ((rng >> 56) % 2 && !t->padded &&
			    t->head == MSGA__RING_SHORT_HEAD)
				cr_assert_neq(n, MSGA__RING_TAKE_OTHER,
					      "a short record refused");
			if (n && n != MSGA__RING_TAKE_OTHER) {
				cr_assert_eq(s.seq, t->seq);
				cr_assert_eq(s.topic, t->topic);
				cr_assert_eq(s.len, t->plen);
				for (uint32_t i = 0; i < s.len; i++)
					cr_assert_eq((uint8_t)s.payload[i],
						     t->fill);
				msga__ring_consume(&R, n);
				fast_took++;
			} else {
				take_rec(t);
			}
			got++;
			msga__ring_free(&R);
			report_freed();
		}
	}
	cr_assert_gt(W.tail, 20ull * SIZE);
	cr_assert_gt(fast_put, 1000);
	cr_assert_gt(fast_took, 1000);
}

/* take_short takes only a complete, sound short record; peek says why. */
Test(ring, the_fast_reader_leaves_everything_else_to_peek)
{
	struct msga__ring_short s;
	struct msga__ring_place p;
	struct msga__wire_hdr h;
	const char *payload;
	uint32_t plen;
	struct trec t;
	struct msga__ring_rec rec;

	/* nothing there (a zero word: peek's to judge); a long record (a
	 * topic's first) */
	cr_assert_eq(msga__ring_take_short(&R, &s), MSGA__RING_TAKE_OTHER);
	t = send_msg(64, 0x11, &p);
	cr_assert_eq(t.head, MSGA__RING_HEAD);
	cr_assert_eq(msga__ring_take_short(&R, &s), MSGA__RING_TAKE_OTHER);
	take_rec(&t);
	/* a short one, not fully landed, then landed */
	t = (struct trec){ .plen = 64, .fill = 0x22 };
	place(&t, &p);
	cr_assert_eq(t.head, MSGA__RING_SHORT_HEAD);
	nic_write(&p, &t, p.len - 1);
	cr_assert_eq(msga__ring_take_short(&R, &s), 0);
	nic_write(&p, &t, p.len);
	cr_assert_eq(msga__ring_take_short(&R, &s), p.rec);
	cr_assert_eq(s.seq, t.seq);
	msga__ring_consume(&R, p.rec);
	/* a landed short record with a reserved bit set: peek refuses it */
	t = (struct trec){ .plen = 64, .fill = 0x33 };
	place(&t, &p);
	nic_write(&p, &t, p.len);
	ringbuf[p.off + 2] |= 0x80; /* bit 23 */
	cr_assert_eq(msga__ring_take_short(&R, &s), MSGA__RING_TAKE_OTHER);
	cr_assert_eq(msga__ring_peek(&R, &rec), 1);
	cr_assert_eq(msga__ring_head_get(&R, &rec, &h, &payload, &plen),
		     -EPROTO);
}
