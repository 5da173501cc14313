/* SPDX-License-Identifier: MIT */
/*
 * fuzz_reasm.c - reassembly (lib/reasm.c) of fragments a peer chooses.
 * The harness builds up to four messages of fuzzer-chosen size, stream and
 * fragment geometry, sets a byte budget (often smaller than a message),
 * then the input decides what arrives: any fragment of any message in any
 * order (dups and drops included), time passing, a completed message kept
 * instead of released, a stream forgotten (msga__reasm_forget), or a
 * hostile fragment with any geometry, on any stream in range or not. At
 * the end the missing fragments are fed in order. Checked:
 *  - a completed message has its length and exactly its bytes, and every
 *    one of its fragments arrived since it last completed;
 *  - a message whose fragments all arrived completes at the last one,
 *    unless a documented drop reason was counted for it: on_drop named
 *    its stream (evicted by its stream's newer message, timed out,
 *    forgotten, refused by the budget), or one of its fragments was
 *    counted as stale, over budget, or refused while its stream's last
 *    message is still being delivered;
 *  - a valid fragment of a real message is never refused as invalid; a
 *    fragment naming a stream out of range always is;
 *  - memory stays bounded: at most one message per stream in reassembly,
 *    the bytes in use within the budget, and none once all is released
 *    and expired; counters, pending count and next expiry agree.
 * Hostile fragments use message numbers no real message has (0, or above
 * every real one), so they compete for slots and budget, may evict or
 * outlive a real message, but cannot legitimately change its bytes.
 */
#include <errno.h>
#include <string.h>

#include "reasm.h"
#include "fuzz.h"

#define MAX_MSGS 4
#define MAX_MSG_LEN 4096
#define MAX_HOLDS 8
#define HOSTILE_SEQ 100u /* above every real message's */

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
	unsigned int nslots, nmsgs, nholds, drops_seen;
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

		m->stream = fuzz_u8(in) % x->nslots;
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

/* Drops of a fragment itself, each a documented reason. */
static uint64_t refusals(const struct run *x)
{
	return x->r.c.stale_fragments + x->r.c.dropped_budget;
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
	uint64_t evicted = x->r.c.dropped_evicted, refused = refusals(x);
	unsigned int seen = x->drops_seen;
	const void *msg = NULL;
	uint32_t len = 0;
	int ret;

	f.data = fuzz_dup(m->bytes + off, f.len);
	ret = msga__reasm_add(&x->r, &f, x->now, &msg, &len);
	free((void *)f.data);
	FUZZ_CHECK(ret == 0 || ret == 1);
	/*
	 * Counted as evicted with no message dropped (its stream's last one
	 * is being delivered), as stale or over budget: this one was refused.
	 */
	if (x->r.c.dropped_evicted - evicted > x->drops_seen - seen ||
	    refusals(x) != refused)
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

/*
 * A fragment of any geometry, on any stream (two out of range), of a
 * message no real one is: number 0 or above theirs.
 */
static void hostile(struct run *x, struct fuzz_in *in)
{
	uint8_t seq = fuzz_u8(in) % 4;
	struct msga__frag f = {
		.stream = fuzz_u8(in) % (x->nslots + 2),
		.msg_seq = seq ? HOSTILE_SEQ + seq : 0,
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
	if (f.stream >= x->nslots)
		FUZZ_CHECK(ret == -EINVAL);
	if (ret == 1) {
		FUZZ_CHECK(len == f.total_len);
		completed(x, msg, len, 0);
	}
}

/* The stream's index will name another (ud_stream evicted it). */
static void forget(struct run *x, struct fuzz_in *in)
{
	msga__reasm_forget(&x->r, fuzz_u8(in) % (x->nslots + 1));
}

/* Memory is bounded: a message per stream, bytes within the budget. */
static void check_bounds(const struct run *x)
{
	FUZZ_CHECK(msga__reasm_pending(&x->r) <= x->nslots);
	FUZZ_CHECK(x->r.used <= x->r.budget);
}

/* The budget: the default, or from under one message to a few. */
static uint64_t choose_budget(struct fuzz_in *in, uint32_t max_msg)
{
	uint8_t how = fuzz_u8(in);

	if (how < 128)
		return MSGA__REASM_BUDGET_DEFAULT;
	return fuzz_range(in, 0, 4ull * max_msg + 64);
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
	x.nslots = nslots;
	x.r.on_drop = on_drop;
	x.r.drop_arg = &x;
	x.r.budget = choose_budget(&in, max_msg);
	build(&x, &in);
	while (fuzz_left(&in)) {
		uint8_t op = fuzz_u8(&in);
		unsigned int mi = fuzz_u8(&in) % x.nmsgs;

		if (op < 200)
			feed(&x, mi, fuzz_u16(&in) % x.msgs[mi].nfrags, op & 1);
		else if (op < 215)
			pass_time(&x, fuzz_u16(&in));
		else if (op < 228)
			release_all(&x);
		else if (op < 236)
			forget(&x, &in);
		else
			hostile(&x, &in);
		check_bounds(&x);
	}
	drain(&x);
	check_bounds(&x);
	release_all(&x);
	/* Everything released and timed out: no memory held. */
	msga__reasm_expire(&x.r, x.now + 1000000);
	FUZZ_CHECK(!msga__reasm_pending(&x.r) && x.r.used == 0);
	msga__reasm_fini(&x.r);
	return 0;
}
