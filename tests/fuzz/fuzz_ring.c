/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ring.c - libFuzzer harness for the RDMA WRITE ring's reader
 * (lib/ring.c). The input is a program of operations: the publisher's
 * NIC writes arbitrary bytes anywhere in the ring at any time (between
 * polls, and between any two of the reader's loads or copies, through
 * peer_mem.h's hook), or a well-formed record through the real writer;
 * the subscriber
 * polls as rc_ring.c does, holds the message it is delivering (or tries
 * a stale one), releases held messages in any order, and reports freed
 * bytes. After every step the reader's invariants are checked, and any
 * violation aborts:
 *   - every ring load or copy is inside the ring; every payload handed
 *     out lies inside it and is 16-byte aligned;
 *   - freed <= rd, free_off == freed % size, off == rd % size;
 *   - nothing is freed past a held message (its word before the payload);
 *   - the credit reported never exceeds what was consumed;
 *   - only the message being delivered can be held (-EINVAL otherwise);
 *   - a release frees exactly the holds the model has;
 *   - messages are named by (payload, stamp), as msga_msg's data and
 *     rx_time_ns name them: a copy of an earlier delivery, at the same
 *     place a lap before a held message or not, neither holds nor
 *     releases anything, and is never reported held (issue 33).
 * No verbs are involved: the reader is pure.
 *
 * Built with -DMSGA__PEER_MEM_HOOK (FUZZ_DEFS_ring in fuzz.am) by make
 * fuzz, make fuzz-coverage and, as tests/fuzz/replay_ring, make check.
 * The seed corpus is tests/fuzz/corpus/ring (see gen_ring_corpus.py).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "byteorder.h"
#include "last_value.h"
#include "ring.h"
#include "wire.h"
#include "fuzz.h"

#ifndef MSGA__PEER_MEM_HOOK
#error "build with -DMSGA__PEER_MEM_HOOK: the NIC writes between loads"
#endif

#define SIZE MSGA__RING_MIN
#define MAX_HELD 4096u
#define CHECK(x) do { if (!(x)) abort(); } while (0)

struct input {
	const uint8_t *p;
	size_t n;
};

static uint32_t take(struct input *in, unsigned bytes)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n)
			in->p++, in->n--;
	}
	return v;
}

struct held {
	const char *data;
	uint64_t word_pos; /* absolute ring position of its word */
	uint64_t stamp;    /* its delivery's, as msga_msg.rx_time_ns */
};

/* Deliveries seen, held or not: the stale copies an application keeps. */
#define COPIES 64u
static struct held copies[COPIES];
static uint32_t ncopies;
static uint64_t stamp;

static char *mem, *ring;
static struct msga__ring_reader R;
static struct msga__ring_writer W;
static struct held held[MAX_HELD];
static uint32_t nheld;
static const char *old_payload; /* a message delivered earlier */
static uint64_t topic_seq[4];
static struct msga__lv_gate gate; /* the subscriber's (last_value.h) */

/* A WRITE armed to land just before the reader's n-th next load. */
static struct {
	uint32_t countdown, off, len;
	uint8_t bytes[64];
} armed;

static void nic_write(uint32_t off, const void *src, uint32_t len)
{
	if (off >= SIZE)
		return;
	if (len > SIZE - off)
		len = SIZE - off;
	memcpy(ring + off, src, len);
}

void msga__peer_mem_hook(const struct msga__peer_mem *m, uint32_t off,
			 uint32_t n)
{
	/* no read outside the ring, ever (peer_mem.h checks it too) */
	CHECK(msga__peer_mem_addr(m) == (uintptr_t)ring && m->size == SIZE);
	CHECK(off <= SIZE && n <= SIZE - off);
	if (armed.countdown && !--armed.countdown)
		nic_write(armed.off, armed.bytes, armed.len);
}

static void check_invariants(void)
{
	CHECK(R.freed <= R.rd);
	CHECK(R.free_off < SIZE && R.free_off == R.freed % SIZE);
	CHECK(R.off < SIZE && R.off == R.rd % SIZE);
	CHECK(R.reported <= R.freed);
	CHECK(R.nheld == nheld);
	for (uint32_t i = 0; i < nheld; i++)
		CHECK(R.freed <= held[i].word_pos);
}

/* The publisher: a well-formed record, landing wholly or in part. */
static void op_record(struct input *in)
{
	uint32_t plen = take(in, 2) % (MSGA_FRAG_MAX + 1);
	uint32_t kind = take(in, 1), land = take(in, 2), head;
	uint16_t topic = (uint16_t)(kind % 4);
	/* kind: bit 6 a TOPIC, else bit 5 a LAST_VALUE (0.12: a long record,
	 * flags 0, a number of the topic's own), else DATA (bit 7: a first
	 * fragment) */
	struct msga__wire_hdr h = {
		.type = kind & 0x40 ? MSGA__W_TOPIC :
			kind & 0x20 ? MSGA__W_LAST_VALUE : MSGA__W_DATA,
		.topic = topic,
		.flags = kind & 0x60 ? 0 : kind & 0x80 ? MSGA__WF_FIRST :
				       MSGA__WF_FIRST | MSGA__WF_LAST,
	};
	static uint8_t rec[MSGA__RING_REC_MAX];
	struct msga__ring_place p;
	uint8_t pad[MSGA__RING_PAD_LEN] = { 0 };

	if (!msga__ring_can_place(&W, 0))
		return;
	if (h.type == MSGA__W_TOPIC) {
		plen %= MSGA_TOPIC_MAX;
		h.len = plen;
	} else if (h.type == MSGA__W_LAST_VALUE) {
		h.seq = ++topic_seq[topic]; /* (the live stream goes on after) */
		h.len = plen;
	} else {
		h.seq = ++topic_seq[topic];
		h.len = h.flags == MSGA__WF_FIRST ? plen + 1 : plen;
	}
	head = msga__ring_head_len(&W, &h, plen);
	msga__ring_place(&W, head, plen, &p);
	if (p.pad_len) {
		msga__put32(pad, MSGA__RING_PAD_BIT | p.pad_len);
		msga__put64(pad + 8, p.pad_stamp);
		nic_write(p.pad_off, pad, sizeof(pad));
	}
	memset(rec, 0, p.len);
	msga__ring_head_put(rec, head, plen, &h);
	memset(rec + head, 'a' + (int)plen % 26, plen);
	msga__put64(rec + p.len - MSGA__RING_TRAILER, p.stamp);
	nic_write(p.off, rec, land % 8 ? p.len : land % p.len);
}

/* A hostile WRITE: any bytes, anywhere, now or between two loads. */
static void op_write(struct input *in, int later)
{
	uint32_t off = take(in, 3) % SIZE, len = take(in, 1) % 64;
	uint8_t bytes[64];

	for (uint32_t i = 0; i < len; i++)
		bytes[i] = (uint8_t)take(in, 1);
	/* a stamp the reader waits for, to get past the trailer check */
	if (len >= 8 && bytes[0] == 0xa5)
		msga__put64(bytes + len - 8, msga__ring_stamp(R.nrec));
	if (!later) {
		nic_write(off, bytes, len);
		return;
	}
	armed.countdown = take(in, 1) % 8 + 1;
	armed.off = off;
	armed.len = len;
	memcpy(armed.bytes, bytes, len);
}

static int model_holds(const struct held *m)
{
	for (uint32_t i = 0; i < nheld; i++)
		if (held[i].data == m->data && held[i].stamp == m->stamp)
			return 1;
	return 0;
}

static void hold_current(const char *payload, uint32_t plen, int want)
{
	uint64_t pos = R.rd + (uint64_t)(payload - (ring + R.off));
	struct held cur = { payload, pos - MSGA__RING_SHORT_HEAD, ++stamp };

	CHECK(payload >= ring && payload + plen <= ring + SIZE);
	CHECK((uintptr_t)payload % 16 == 0);
	/* a stale message is never held */
	if (old_payload && old_payload != payload)
		CHECK(msga__ring_hold(&R, old_payload, stamp - 1) < 0);
	/* nor a stale copy from the same place, with its own stamp */
	for (uint32_t i = 0; i < ncopies && i < COPIES; i++) {
		int held_now = model_holds(&copies[i]);

		CHECK(msga__ring_is_held(&R, copies[i].data,
					 copies[i].stamp) == held_now);
		/* (one at this very place: the caller refuses it, by its
		 * stamp, before the reader is asked: rc_sub.c) */
		if (copies[i].data != payload)
			CHECK(msga__ring_hold(&R, copies[i].data,
					      copies[i].stamp) ==
			      (held_now ? -EALREADY : -EINVAL));
	}
	/* nor anything that is not where a payload starts */
	CHECK(msga__ring_hold(&R, payload + 1, stamp) == -EINVAL);
	copies[ncopies++ % COPIES] = cur;
	if (!want || nheld == MAX_HELD)
		return;
	CHECK(msga__ring_hold(&R, payload, stamp) == 0);
	CHECK(msga__ring_hold(&R, payload, stamp) == -EALREADY);
	held[nheld++] = cur;
}

/* One poll step as rc_ring.c takes it; 0 when the connection dies. */
static int op_poll(struct input *in)
{
	uint32_t flags = take(in, 1), rec_len, plen;
	struct msga__ring_short s;
	struct msga__ring_rec rec;
	struct msga__wire_hdr h;
	const char *payload;
	int ret;

	rec_len = flags & 1 ? msga__ring_take_short(&R, &s) :
			      MSGA__RING_TAKE_OTHER;
	if (!rec_len)
		return 1;
	if (rec_len != MSGA__RING_TAKE_OTHER) {
		CHECK(s.topic < MSGA_PUB_TOPICS_MAX);
		msga__lv_gate_pass(&gate, s.topic, 0);
		hold_current(s.payload, s.len, flags & 2);
		payload = s.payload;
	} else {
		ret = msga__ring_peek(&R, &rec);
		if (ret <= 0)
			return ret == 0;
		rec_len = rec.len;
		CHECK(rec_len <= SIZE - R.off);
		if (msga__ring_head_get(&R, &rec, &h, &payload, &plen))
			return 0; /* a protocol error kills the connection */
		/* a whole message or a last value is delivered (holdable),
		 * the last value only before its topic's data, as rc_sub_rx.c
		 * has it (last_value.h): a late one kills the connection */
		if (h.type == MSGA__W_LAST_VALUE &&
		    (h.topic >= MSGA_PUB_TOPICS_MAX ||
		     !msga__lv_gate_pass(&gate, h.topic, 1)))
			return 0;
		if (h.type == MSGA__W_DATA && h.topic < MSGA_PUB_TOPICS_MAX)
			msga__lv_gate_pass(&gate, h.topic, 0);
		if ((h.type == MSGA__W_DATA &&
		     h.flags == (MSGA__WF_FIRST | MSGA__WF_LAST)) ||
		    h.type == MSGA__W_LAST_VALUE)
			hold_current(payload, plen, flags & 2);
	}
	msga__ring_consume(&R, rec_len);
	old_payload = payload;
	CHECK(msga__ring_hold(&R, payload, stamp) < 0); /* after its callback */
	msga__ring_free(&R);
	return 1;
}

static void op_release(struct input *in)
{
	uint32_t i;

	uint32_t how = take(in, 1);

	if (how & 1 && ncopies) {
		/* a copy: releases exactly what the model holds by it */
		struct held *c = &copies[take(in, 1) % (ncopies < COPIES ?
							ncopies : COPIES)];
		int was = model_holds(c);
		uint32_t n = nheld;

		CHECK(msga__ring_release(&R, c->data, c->stamp) == was);
		CHECK(R.nheld == n - (uint32_t)was);
		for (i = 0; was && i < nheld; i++)
			if (held[i].data == c->data && held[i].stamp == c->stamp)
				held[i] = held[--nheld];
		msga__ring_free(&R);
		return;
	}
	if (!nheld) {
		/* releasing what is not held does nothing */
		CHECK(msga__ring_release(&R, ring + take(in, 3) % SIZE,
					 take(in, 2)) == 0);
		return;
	}
	i = take(in, 2) % nheld;
	CHECK(msga__ring_release(&R, held[i].data, held[i].stamp) == 1);
	CHECK(msga__ring_release(&R, held[i].data, held[i].stamp) == 0);
	held[i] = held[--nheld];
	msga__ring_free(&R);
}

/*
 * The reader reports; the writer takes it (an overclaim is its error).
 * Or a hostile subscriber reports any number: the writer refuses one that
 * claims bytes it never wrote, and its head never passes its tail.
 */
static int op_report(struct input *in)
{
	if (take(in, 1) & 0x80) {
		int ret = msga__ring_on_report(&W, take(in, 4));

		CHECK(ret == 0 || ret == -EPROTO);
		CHECK(W.head <= W.tail);
		return ret == 0;
	}
	if (!msga__ring_need_report(&R))
		return 1;
	R.reported = R.freed;
	return msga__ring_on_report(&W, (uint32_t)R.freed) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	int alive = 1;

	mem = aligned_alloc(16, SIZE + 16);
	if (!mem)
		return 0;
	memset(mem, 0, SIZE + 16);
	ring = mem + MSGA__RING_BASE_SKEW;
	/* a ring that would misalign payloads, or of a bad size: refused */
	CHECK(msga__ring_reader_init(&R, msga__peer_mem_of(mem, SIZE)) ==
	      -EINVAL);
	CHECK(msga__ring_reader_init(&R, msga__peer_mem_of(ring, SIZE + 1)) ==
	      -EINVAL);
	CHECK(msga__ring_reader_init(&R, msga__peer_mem_of(ring, SIZE)) == 0);
	msga__ring_writer_init(&W, 1, SIZE);
	memset(topic_seq, 0, sizeof(topic_seq));
	memset(&gate, 0, sizeof(gate));
	memset(&armed, 0, sizeof(armed));
	nheld = 0;
	ncopies = 0;
	stamp = 0;
	old_payload = NULL;
	while (alive && in.n) {
		switch (take(&in, 1) % 6) {
		case 0:
			op_record(&in);
			break;
		case 1:
			op_write(&in, 0);
			break;
		case 2:
			op_write(&in, 1);
			break;
		case 3:
			alive = op_poll(&in);
			break;
		case 4:
			op_release(&in);
			break;
		default:
			alive = op_report(&in);
			break;
		}
		check_invariants();
	}
	armed.countdown = 0;
	msga__ring_reader_fini(&R);
	free(mem);
	return 0;
}
