/* SPDX-License-Identifier: MIT */
/*
 * fuzz_retain_scan.c - the walk over a span of a publisher's retention
 * ring (msga__retain_scan, lib/proto/retain_scan.c) fed any bytes as the
 * span a subscriber's RDMA READ copied: another host's memory, which may
 * be anything. The input's first bytes choose the arguments: lo (any
 * 64-bit position, usually 8-aligned; the top of the range included),
 * cap (a small ring, up to 2^35, or any number), max_len, and after how
 * many records fn stops the walk; the rest is the copy, handed over in a
 * heap block of exactly its size, and hi is lo plus its size. Checked:
 *  - bad arguments give -EINVAL without a call to fn;
 *  - every record fn gets lies in the copy and in [lo, hi), starts on an
 *    8-byte position above the one before, does not cross the ring's
 *    end, is at most max_len, and its header there names it;
 *  - the walk returns 0, -EBADMSG or what fn returned, when it stopped.
 * Then the same copy as one chunk of a longer span (msga__retain_walk),
 * from a position the input chooses: the same checks on the records,
 * which begin at from; *stopped lies in [from, hi]; a walk that returns
 * 0 short of hi stopped at a record that hi cuts; and a walk from lo
 * agrees with the scan (0 at hi exactly when the scan returned 0).
 */
#include <errno.h>
#include <string.h>

#include "retain.h"
#include "retain_scan.h"
#include "fuzz.h"

struct walk {
	const uint8_t *buf;
	uint64_t lo, hi, cap, last;
	uint32_t max_len;
	unsigned int n, stop_at;
	int any;
};

static int on_rec(void *arg, const struct msga__rscan_rec *rec)
{
	struct walk *w = arg;
	const struct msga__retain_rec *h;
	const uint8_t *data = rec->data;
	uint64_t sz = msga__retain_rec_size(rec->len);
	unsigned int sum = 0;

	FUZZ_CHECK(rec->pos >= w->lo && rec->pos < w->hi);
	FUZZ_CHECK(rec->pos % 8 == 0);
	FUZZ_CHECK(!w->any || rec->pos > w->last);
	FUZZ_CHECK(rec->len <= w->max_len);
	FUZZ_CHECK(sz <= w->hi - rec->pos);
	FUZZ_CHECK(rec->pos % w->cap + sz <= w->cap);
	h = (const void *)(w->buf + (rec->pos - w->lo));
	FUZZ_CHECK(data == (const uint8_t *)(h + 1));
	FUZZ_CHECK(h->check == (uint32_t)(rec->pos / 8));
	FUZZ_CHECK(h->topic != MSGA__RETAIN_SKIP);
	FUZZ_CHECK(h->topic == rec->topic_id && h->len == rec->len &&
		   h->seq == rec->seq);
	/* read every byte: AddressSanitizer checks they are in the copy */
	for (uint32_t i = 0; i < rec->len; i++)
		sum += data[i];
	(void)sum;
	w->last = rec->pos;
	w->any = 1;
	return ++w->n == w->stop_at ? 1000 + (int)w->n : 0;
}

static uint64_t choose_cap(struct fuzz_in *in)
{
	uint8_t how = fuzz_u8(in);

	if (how < 160) /* a ring of up to 4 KiB: spans cross its end */
		return 8 * fuzz_range(in, 3, 512);
	if (how < 200)
		return 1ull << 35;
	if (how < 230)
		return 8 * fuzz_range(in, 1, 1ull << 32);
	return fuzz_u64(in); /* anything, mostly refused */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct walk w = { 0 };
	uint8_t how = fuzz_u8(&in);
	uint8_t *copy;
	size_t n;
	int valid, ret, wret;
	uint64_t from, stopped, k;

	w.lo = fuzz_u64(&in);
	if (how & 1) /* mostly aligned; at the top of the range now and then */
		w.lo &= ~7ull;
	if ((how & 6) == 6)
		w.lo |= ~0ull << 12;
	w.cap = choose_cap(&in);
	w.max_len = how & 8 ? fuzz_u32(&in) : 4072;
	w.stop_at = fuzz_u8(&in) % 8;
	k = fuzz_u8(&in);
	n = fuzz_left(&in);
	if (how & 16)
		n &= ~(size_t)7;
	copy = fuzz_dup(in.p, n);
	w.buf = copy;
	w.hi = w.lo + n; /* may pass 2^64: then below lo, refused */
	valid = w.cap && w.cap % 8 == 0 && w.lo % 8 == 0 && w.hi % 8 == 0 &&
		w.hi >= w.lo && w.hi - w.lo <= w.cap;
	ret = msga__retain_scan(copy, w.lo, w.hi, w.cap, w.max_len, on_rec, &w);
	if (!valid) {
		FUZZ_CHECK(ret == -EINVAL && !w.n);
	} else if (w.stop_at && w.n == w.stop_at) {
		FUZZ_CHECK(ret == 1000 + (int)w.stop_at);
	} else {
		FUZZ_CHECK(ret == 0 || ret == -EBADMSG);
	}
	/* from lo: as the scan, but a record cut by hi is a stop, not bad */
	w.n = 0;
	w.any = 0;
	wret = msga__retain_walk(copy, w.lo, w.lo, w.hi, w.cap, w.max_len,
				 on_rec, &w, &stopped);
	if (!valid) {
		FUZZ_CHECK(wret == -EINVAL && !w.n);
	} else if (!w.stop_at || w.n != w.stop_at) {
		FUZZ_CHECK(wret == 0 || wret == -EBADMSG);
		FUZZ_CHECK(stopped >= w.lo && stopped <= w.hi);
		/* (a scan's 0 may end in an unused end past hi: a stop) */
		FUZZ_CHECK(ret != 0 || wret == 0);
		FUZZ_CHECK(!(wret == 0 && stopped == w.hi) || ret == 0);
	}
	/* from a later position, as the next chunk's walk would begin */
	from = w.lo + 8 * (k % 16);
	w.n = 0;
	w.any = 0;
	wret = msga__retain_walk(copy, w.lo, from, w.hi, w.cap, w.max_len,
				 on_rec, &w, &stopped);
	if (!valid || from > w.hi || from < w.lo) {
		FUZZ_CHECK(wret == -EINVAL && !w.n);
	} else {
		FUZZ_CHECK(stopped >= from && stopped <= w.hi);
		FUZZ_CHECK(!w.any || w.last >= from);
		if (w.stop_at && w.n == w.stop_at)
			FUZZ_CHECK(wret == 1000 + (int)w.stop_at);
		else
			FUZZ_CHECK(wret == 0 || wret == -EBADMSG);
	}
	free(copy);
	return 0;
}
