/* SPDX-License-Identifier: MIT */
/*
 * fuzz_retain.c - the publisher's retention buffer (lib/proto/retain.c)
 * under any sequence of puts, gets (what a subscriber's NAK asks for) and
 * range queries. The input chooses the buffer's size and topic count, then
 * each operation: a put of any topic (one out of range), seq (the next,
 * a jump small or huge, UINT64_MAX, or one not above the topic's last)
 * and length (small, up to the whole buffer, just around what fits, or
 * above MSGA_MSG_MAX); a get of a record put lately or long ago, or of
 * any seq near a topic's last; a range; a full check. Checked against a
 * reference that lays the records out in a line, a record crossing a
 * multiple of the buffer size moved up to it (the ring's unused end), and
 * keeps the records that, with every later one, span at most the buffer:
 *  - every put returns what the reference says (0, -EINVAL, -EMSGSIZE)
 *    and a refused one changes nothing;
 *  - a get finds exactly the records kept, with their length and bytes,
 *    8-byte aligned; -ENOENT for the dropped, skipped and never put;
 *  - range gives each topic's count, oldest and newest kept;
 *  - the buffer's own counts agree: records kept, dropped, bytes in use
 *    within the budget;
 *  - positions (0.7, what a remote reader goes by): the reference's line
 *    offset is the position; msga__retain_next_pos predicts a put's, its
 *    header's check names it, ctrl->head is the oldest kept record's, and
 *    every unused end of a header or more that is still kept reads SKIP.
 * Each message is handed over in a heap copy of exactly its length, so
 * AddressSanitizer reports a read past it; the ring is one allocation,
 * so a write past its end is reported too.
 */
#include <errno.h>
#include <string.h>

#include "msgaccel.h"
#include "retain.h"
#include "fuzz.h"

#define MAX_CAP 8192
#define MAX_TOPICS 6
#define MAX_PUTS 16384

struct put {
	uint32_t topic, len;
	uint64_t seq, start; /* start: in the reference's line of bytes */
};

struct run {
	struct msga__retain r;
	size_t cap;
	uint32_t ntopics;
	struct put puts[MAX_PUTS];
	size_t n, first;      /* puts[first..n) are kept */
	uint64_t end;         /* of the newest, in the line */
	uint64_t last[MAX_TOPICS];
	int put_any[MAX_TOPICS];
};

static uint8_t byte_of(uint32_t topic, uint64_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + topic * 17 + i * 7);
}

static void model_put(struct run *x, uint32_t topic, uint64_t seq,
		      uint32_t len)
{
	size_t sz = msga__retain_rec_size(len);
	uint64_t start = x->end;

	if (start % x->cap + sz > x->cap)
		start += x->cap - start % x->cap;
	x->end = start + sz;
	x->puts[x->n++] = (struct put){ topic, len, seq, start };
	while (x->end - x->puts[x->first].start > x->cap)
		x->first++;
	x->last[topic] = seq;
	x->put_any[topic] = 1;
}

static void check_counts(const struct run *x)
{
	FUZZ_CHECK(x->r.nrec == x->n - x->first);
	FUZZ_CHECK(x->r.dropped == x->first);
	FUZZ_CHECK(x->r.used <= x->r.cap);
	FUZZ_CHECK(x->r.ctrl->head ==
		   (x->n > x->first ? x->puts[x->first].start : 0));
}

static const struct msga__retain_rec *hdr_at(const struct run *x,
					     uint64_t pos)
{
	return (const struct msga__retain_rec *)(x->r.buf + pos % x->cap);
}

/* Kept records name their position; kept unused ends are marked. */
static void check_positions(const struct run *x)
{
	for (size_t i = x->first; i < x->n; i++) {
		const struct put *p = &x->puts[i];
		uint64_t end = p->start + msga__retain_rec_size(p->len);

		FUZZ_CHECK(hdr_at(x, p->start)->check ==
			   (uint32_t)(p->start / 8));
		if (i + 1 < x->n && x->puts[i + 1].start - end >=
					    sizeof(struct msga__retain_rec)) {
			FUZZ_CHECK(hdr_at(x, end)->topic == MSGA__RETAIN_SKIP);
			FUZZ_CHECK(hdr_at(x, end)->check ==
				   (uint32_t)(end / 8));
		}
	}
}

/* Where the reference has (topic, seq): its index, or -1 if never put. */
static long model_find(const struct run *x, uint32_t topic, uint64_t seq)
{
	for (size_t i = x->n; i-- > 0;)
		if (x->puts[i].topic == topic && x->puts[i].seq == seq)
			return (long)i;
	return -1;
}

/* Get (topic, seq), which the reference has at puts[i] (-1: never). */
static void check_get_at(const struct run *x, uint32_t topic, uint64_t seq,
			 long i)
{
	const void *data = NULL;
	uint32_t len = UINT32_MAX;
	int ret = msga__retain_get(&x->r, topic, seq, &data, &len);

	if (topic >= x->ntopics) {
		FUZZ_CHECK(ret == -EINVAL);
		return;
	}
	if (i < 0 || (size_t)i < x->first) {
		FUZZ_CHECK(ret == -ENOENT);
		return;
	}
	FUZZ_CHECK(ret == 0);
	FUZZ_CHECK(len == x->puts[i].len);
	FUZZ_CHECK(data && (uintptr_t)data % 8 == 0);
	for (uint32_t k = 0; k < len; k++)
		FUZZ_CHECK(((const uint8_t *)data)[k] ==
			   byte_of(topic, seq, k));
}

static void check_get(const struct run *x, uint32_t topic, uint64_t seq)
{
	check_get_at(x, topic, seq,
		     topic < x->ntopics ? model_find(x, topic, seq) : -1);
}

static void check_range(const struct run *x, uint32_t topic)
{
	uint64_t oldest = 1, newest = 1, want_old = 0, want_new = 0;
	int ret = msga__retain_range(&x->r, topic, &oldest, &newest);
	int count = 0;

	if (topic >= x->ntopics) {
		FUZZ_CHECK(ret == -EINVAL);
		return;
	}
	for (size_t i = x->first; i < x->n; i++)
		if (x->puts[i].topic == topic) {
			if (!count++)
				want_old = x->puts[i].seq;
			want_new = x->puts[i].seq;
		}
	FUZZ_CHECK(ret == count);
	FUZZ_CHECK(oldest == want_old && newest == want_new);
}

static void check_all(const struct run *x)
{
	check_counts(x);
	check_positions(x);
	for (size_t i = 0; i < x->n; i++)
		check_get_at(x, x->puts[i].topic, x->puts[i].seq, (long)i);
	for (uint32_t t = 0; t <= x->ntopics; t++)
		check_range(x, t);
}

static uint64_t choose_seq(struct run *x, struct fuzz_in *in, uint32_t topic)
{
	uint64_t last = topic < x->ntopics ? x->last[topic] : 0;
	uint8_t how = fuzz_u8(in);

	if (how < 170)
		return last + 1;
	if (how < 220)
		return last + 1 + fuzz_u8(in) % 32;
	if (how < 235)
		return last + 1 + fuzz_u64(in);
	if (how < 240)
		return UINT64_MAX;
	return last - fuzz_u8(in) % 3; /* not above the last: refused */
}

static uint32_t choose_len(const struct run *x, struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);
	uint32_t room = (uint32_t)x->cap - sizeof(struct msga__retain_rec);

	if (how < 150)
		return fuzz_u8(in) % 65;
	if (how < 220)
		return (uint32_t)fuzz_range(in, 0, x->cap);
	if (how < 250) /* around the most that fits */
		return room + 8 - (uint32_t)(fuzz_u8(in) % 17);
	return MSGA_MSG_MAX + (uint32_t)(fuzz_u8(in) % 2);
}

static void op_put(struct run *x, struct fuzz_in *in)
{
	uint32_t topic = fuzz_u8(in) % (x->ntopics + 1);
	uint64_t seq = choose_seq(x, in, topic);
	uint32_t len = choose_len(x, in);
	size_t copy = len <= MAX_CAP ? len : 1; /* too big: never read */
	uint64_t dropped = x->r.dropped;
	uint64_t at = msga__retain_next_pos(&x->r, len);
	int want, ret;
	uint8_t *data;

	if (topic >= x->ntopics)
		want = -EINVAL;
	else if (x->put_any[topic] && seq <= x->last[topic])
		want = -EINVAL;
	else if (len > MSGA_MSG_MAX || msga__retain_rec_size(len) > x->cap)
		want = -EMSGSIZE;
	else if (x->n == MAX_PUTS)
		return;
	else
		want = 0;
	data = malloc(copy ? copy : 1);
	FUZZ_CHECK(data);
	for (uint32_t k = 0; k < copy; k++)
		data[k] = byte_of(topic, seq, k);
	ret = msga__retain_put(&x->r, topic, seq, data, len);
	free(data);
	FUZZ_CHECK(ret == want);
	if (!ret) {
		model_put(x, topic, seq, len);
		FUZZ_CHECK(at == x->puts[x->n - 1].start);
		FUZZ_CHECK(hdr_at(x, at)->check == (uint32_t)(at / 8));
	} else {
		FUZZ_CHECK(x->r.dropped == dropped);
		FUZZ_CHECK(msga__retain_next_pos(&x->r, len) == at);
	}
	check_counts(x);
}

static void op_get(struct run *x, struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);
	uint32_t topic;

	if (x->n && how < 128) { /* a record put: lately, or any */
		size_t back = how < 96 ? fuzz_u8(in) : fuzz_u16(in);
		const struct put *p = &x->puts[x->n - 1 - back % x->n];

		check_get(x, p->topic, p->seq);
		return;
	}
	topic = fuzz_u8(in) % (x->ntopics + 1);
	check_get(x, topic, (topic < x->ntopics ? x->last[topic] : 0) -
				    fuzz_u16(in) % 64 + 2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run x;
	struct fuzz_in in = { data, size };
	size_t bytes = (size_t)fuzz_range(&in, 24, MAX_CAP);

	memset(&x, 0, sizeof(x));
	x.ntopics = (uint32_t)fuzz_range(&in, 1, MAX_TOPICS);
	FUZZ_CHECK(msga__retain_init(&x.r, bytes, 0) == -EINVAL);
	FUZZ_CHECK(!msga__retain_init(&x.r, bytes, x.ntopics));
	x.cap = bytes & ~(size_t)7;
	FUZZ_CHECK(x.r.cap == x.cap);
	while (fuzz_left(&in)) {
		uint8_t op = fuzz_u8(&in);

		if (op < 150)
			op_put(&x, &in);
		else if (op < 220)
			op_get(&x, &in);
		else if (op < 245)
			check_range(&x, fuzz_u8(&in) % (x.ntopics + 1));
		else
			check_all(&x);
	}
	check_all(&x);
	msga__retain_fini(&x.r);
	return 0;
}
