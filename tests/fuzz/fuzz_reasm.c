/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reasm.c - reassembly (lib/reasm.c) of fragments a peer chooses.
 * The harness builds up to four messages of fuzzer-chosen size and
 * fragment geometry, then the input decides what arrives: any fragment of
 * any message in any order (dups and drops included), time passing, a
 * completed message kept instead of released, or a hostile fragment of
 * its own stream with any geometry. At the end the missing fragments are
 * fed in order. Checked:
 *  - a completed message has its length and exactly its bytes, and every
 *    one of its fragments arrived since it last completed;
 *  - a message whose fragments all arrived completes at the last one,
 *    unless the reassembler reported dropping it (eviction, timeout) or
 *    refused the fragment (every slot holds a completed message);
 *  - a valid fragment of a real message is never refused as invalid;
 *  - counters, pending count and next expiry agree with what happened.
 * Hostile fragments use other stream ids, so they compete for memory
 * but cannot legitimately change a real message's bytes.
 */
#include <errno.h>
#include <string.h>

#include "reasm.h"
#include "fuzz.h"

#define MAX_MSGS 4
#define MAX_MSG_LEN 4096
#define MAX_HOLDS 8
#define HOSTILE_STREAM 1000u

struct msg {
	uint64_t stream, seq;
	uint32_t len, frag_size; /* frag_size 0: the reassembler's own */
	uint32_t nfrags, nfed;
	int disturbed;           /* dropped by the reassembler this round */
	unsigned int completions;
	uint8_t fed[MAX_MSG_LEN];
	uint8_t bytes[MAX_MSG_LEN];
};

struct run {
	struct msga__reasm r;
	struct msg msgs[MAX_MSGS];
	unsigned int nmsgs, nholds, drops_seen;
	const void *holds[MAX_HOLDS];
	uint64_t now, completed;
};

static uint32_t geometry(const struct run *x, const struct msg *m)
{
	return m->frag_size ? m->frag_size : x->r.frag_size;
}

/* The reassembler drops an incomplete message of this stream. */
static void on_drop(void *arg, uint64_t stream)
{
	struct run *x = arg;

	x->drops_seen++;
	for (unsigned int i = 0; i < x->nmsgs; i++)
		if (x->msgs[i].stream == stream && x->msgs[i].nfed)
			x->msgs[i].disturbed = 1;
}

static void build(struct run *x, struct fuzz_in *in)
{
	uint8_t seed = fuzz_u8(in);

	x->nmsgs = (unsigned int)fuzz_range(in, 1, MAX_MSGS);
	for (unsigned int i = 0; i < x->nmsgs; i++) {
		struct msg *m = &x->msgs[i];

		m->stream = fuzz_u8(in) % 3;
		m->seq = i + 1; /* (stream, seq) differ between messages */
		m->len = (uint32_t)fuzz_range(in, 1, x->r.max_msg);
		m->frag_size = (uint32_t)(fuzz_u8(in) % 4) * x->r.frag_size;
		m->nfrags = (m->len + geometry(x, m) - 1) / geometry(x, m);
		for (uint32_t j = 0; j < m->len; j++)
			m->bytes[j] = (uint8_t)(seed + j * 31 + i * 7);
	}
}

/* A completed message: check it, then release it or keep it a while. */
static void completed(struct run *x, const void *msg, uint32_t len, int keep)
{
	x->completed++;
	FUZZ_CHECK(x->r.c.completed == x->completed);
	if (keep && x->nholds < MAX_HOLDS)
		x->holds[x->nholds++] = msg;
	else
		msga__reasm_release(&x->r, msg);
	(void)len;
}

static void release_all(struct run *x)
{
	while (x->nholds)
		msga__reasm_release(&x->r, x->holds[--x->nholds]);
}

static uint64_t drops(const struct run *x)
{
	return x->r.c.dropped_evicted;
}

static void feed(struct run *x, unsigned int mi, uint32_t idx, int keep)
{
	struct msg *m = &x->msgs[mi];
	uint32_t fs = geometry(x, m), off = idx * fs;
	struct msga__frag f = {
		.stream = m->stream, .msg_seq = m->seq, .total_len = m->len,
		.offset = off, .len = m->len - off < fs ? m->len - off : fs,
		.frag_size = m->frag_size,
	};
	uint64_t evicted = drops(x);
	unsigned int seen = x->drops_seen;
	const void *msg = NULL;
	uint32_t len = 0;
	int ret;

	f.data = fuzz_dup(m->bytes + off, f.len);
	ret = msga__reasm_add(&x->r, &f, x->now, &msg, &len);
	free((void *)f.data);
	FUZZ_CHECK(ret == 0 || ret == 1);
	/* Counted as evicted with no message dropped: this one was refused. */
	if (drops(x) - evicted > x->drops_seen - seen)
		m->disturbed = 1;
	if (!m->fed[idx]) {
		m->fed[idx] = 1;
		m->nfed++;
	}
	if (ret == 1) {
		FUZZ_CHECK(m->nfed == m->nfrags);
		FUZZ_CHECK(len == m->len && !memcmp(msg, m->bytes, len));
		memset(m->fed, 0, m->nfrags);
		m->nfed = 0;
		m->disturbed = 0;
		m->completions++;
		completed(x, msg, len, keep);
	} else {
		FUZZ_CHECK(m->nfed < m->nfrags || m->disturbed);
	}
}

/* A fragment of any geometry on a stream of its own. */
static void hostile(struct run *x, struct fuzz_in *in)
{
	struct msga__frag f = {
		.stream = HOSTILE_STREAM + fuzz_u8(in) % 2,
		.msg_seq = fuzz_u8(in) % 4,
		.total_len = fuzz_u16(in),
		.offset = fuzz_u16(in),
		.len = fuzz_u16(in) % (MAX_MSG_LEN + 1),
		.frag_size = fuzz_u16(in),
	};
	const void *msg = NULL;
	uint32_t len = 0;
	void *data = calloc(1, f.len ? f.len : 1);
	int ret;

	FUZZ_CHECK(data);
	f.data = data;
	ret = msga__reasm_add(&x->r, &f, x->now, &msg, &len);
	free(data);
	FUZZ_CHECK(ret == 0 || ret == 1 || ret == -EINVAL);
	if (ret == 1) {
		FUZZ_CHECK(len == f.total_len);
		completed(x, msg, len, 0);
	}
}

static void pass_time(struct run *x, uint64_t dt)
{
	uint64_t next;

	x->now += dt;
	msga__reasm_expire(&x->r, x->now);
	next = msga__reasm_next_expiry(&x->r);
	FUZZ_CHECK((next == UINT64_MAX) == !msga__reasm_pending(&x->r));
	FUZZ_CHECK(next > x->now);
}

/*
 * Feed, in order, the fragments not yet fed of each message under way or
 * never completed; a feed that completes it ends the round.
 */
static void drain(struct run *x)
{
	release_all(x);
	for (unsigned int i = 0; i < x->nmsgs; i++) {
		struct msg *m = &x->msgs[i];
		unsigned int done = m->completions;

		if (!m->nfed && done)
			continue;
		for (uint32_t j = 0; j < m->nfrags && m->completions == done;
		     j++)
			if (!m->fed[j])
				feed(x, i, j, 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct run x;
	struct fuzz_in in = { data, size };
	unsigned int nslots = (unsigned int)fuzz_range(&in, 1, 6);
	uint32_t max_msg = (uint32_t)fuzz_range(&in, 1, MAX_MSG_LEN);
	uint32_t frag = (uint32_t)fuzz_range(&in, 8, 1024);

	memset(&x, 0, sizeof(x));
	/* Bad geometry is refused, and leaves nothing to free. */
	FUZZ_CHECK(msga__reasm_init(&x.r, 0, max_msg, 8, 1) == -EINVAL);
	FUZZ_CHECK(msga__reasm_init(&x.r, 1, 8, 9, 1) == -EINVAL);
	FUZZ_CHECK(msga__reasm_init(&x.r, 1, 8, 8, 0) == -EINVAL);
	if (frag > max_msg)
		frag = max_msg;
	FUZZ_CHECK(!msga__reasm_init(&x.r, nslots, max_msg, frag, 1000));
	x.r.on_drop = on_drop;
	x.r.drop_arg = &x;
	build(&x, &in);
	while (fuzz_left(&in)) {
		uint8_t op = fuzz_u8(&in);
		unsigned int mi = fuzz_u8(&in) % x.nmsgs;

		if (op < 200)
			feed(&x, mi, fuzz_u16(&in) % x.msgs[mi].nfrags, op & 1);
		else if (op < 220)
			pass_time(&x, fuzz_u16(&in));
		else if (op < 235)
			release_all(&x);
		else
			hostile(&x, &in);
		FUZZ_CHECK(msga__reasm_pending(&x.r) <= nslots);
	}
	drain(&x);
	release_all(&x);
	msga__reasm_fini(&x.r);
	return 0;
}
