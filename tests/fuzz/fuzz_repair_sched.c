/* SPDX-License-Identifier: MIT */
/*
 * fuzz_repair_sched.c - the repair schedule (lib/proto/repair_sched.c)
 * driven by any sequence of spans added, chunks taken, walked in order
 * or not, short, failed, and retention moving, against a reference model
 * that keeps one state per ring byte: not wanted, wanted, handed out in
 * a chunk, settled (walked, or dropped to NAK). The input's first bytes
 * choose the configuration (small: a ring of 4 096 bytes). Checked:
 *  - the tables stay sorted, disjoint and within their bounds, and the
 *    chunks out are exactly those the model holds, at most max_inflight;
 *  - a chunk is at most chunk_max, and no wanted byte lies below it (the
 *    oldest first);
 *  - a walk begins where the one before stopped, and a chunk completed
 *    out of order is refused without a change;
 *  - once every chunk is taken and walked, every byte ever wanted was
 *    walked or dropped (nothing is forgotten, however full the table);
 *  - the NAK share: within budget and wants, everything given that can
 *    be, and no stream short of its want below another by more than one;
 *  - the give-up rule against its definition.
 */
#include <errno.h>
#include <string.h>

#include "repair_sched.h"
#include "fuzz.h"

#define RING 4096u
enum { NONE, WANTED, OUT, SETTLED };

struct model {
	uint8_t st[RING];
	uint32_t fifo[64], nfifo; /* chunks out, in the order taken */
};

static void settle(struct model *m, uint64_t lo, uint64_t hi)
{
	for (uint64_t p = lo; p < hi && p < RING; p++)
		if (m->st[p] != NONE)
			m->st[p] = SETTLED;
}

static void check_tables(const struct msga__rsched *s, const struct model *m)
{
	FUZZ_CHECK(s->nreg <= s->cfg.max_regions);
	FUZZ_CHECK(s->inflight == m->nfifo);
	FUZZ_CHECK(s->inflight <= s->cfg.max_inflight);
	for (uint32_t i = 0; i < s->nreg; i++) {
		const struct msga__rsched_region *r = &s->reg[i];

		FUZZ_CHECK(r->lo < r->hi && r->lo <= r->next && r->next <= r->hi);
		FUZZ_CHECK(r->walk >= r->lo && r->walk <= r->hi);
		FUZZ_CHECK(r->gen);
		FUZZ_CHECK(i == 0 || s->reg[i - 1].hi <= r->lo);
	}
}

/* Regions before a call that may drop some: what went is settled. */
static void settle_gone(struct model *m, const struct msga__rsched_region *old,
			uint32_t nold, const struct msga__rsched *s)
{
	for (uint32_t i = 0; i < nold; i++) {
		int kept = 0;

		for (uint32_t j = 0; j < s->nreg; j++)
			kept |= s->reg[j].gen == old[i].gen;
		if (!kept)
			settle(m, old[i].lo, old[i].hi);
	}
}

static void do_add(struct msga__rsched *s, struct model *m, struct fuzz_in *in)
{
	uint64_t lo = fuzz_range(in, 0, RING - 1);
	uint64_t hi = lo + fuzz_range(in, 0, 600);

	if (hi > RING)
		hi = RING;
	if (lo >= hi) {
		FUZZ_CHECK(msga__rsched_add(s, lo, hi) == -EINVAL);
		return;
	}
	/* a byte a region has handed out already counts as served */
	for (uint64_t p = lo; p < hi; p++) {
		int served = 0;

		for (uint32_t i = 0; i < s->nreg; i++)
			served |= p >= s->reg[i].lo && p < s->reg[i].next;
		if (!served && m->st[p] != OUT)
			m->st[p] = WANTED;
	}
	FUZZ_CHECK(msga__rsched_add(s, lo, hi) == 0);
}

static void do_next(struct msga__rsched *s, struct model *m)
{
	uint64_t lo, hi;
	uint32_t id;

	if (!msga__rsched_next(s, &id, &lo, &hi)) {
		FUZZ_CHECK(s->inflight == s->cfg.max_inflight ||
			   !msga__rsched_pending(s));
		return;
	}
	FUZZ_CHECK(lo < hi && hi - lo <= s->cfg.chunk_max && hi <= RING);
	for (uint64_t p = 0; p < lo; p++)
		FUZZ_CHECK(m->st[p] != WANTED);
	for (uint64_t p = lo; p < hi; p++)
		if (m->st[p] == WANTED)
			m->st[p] = OUT;
	for (uint32_t k = 0; k < m->nfifo; k++)
		FUZZ_CHECK(m->fifo[k] != id);
	m->fifo[m->nfifo++] = id;
}

static void fifo_drop(struct model *m, uint32_t k)
{
	memmove(&m->fifo[k], &m->fifo[k + 1],
		(m->nfifo - k - 1) * sizeof(m->fifo[0]));
	m->nfifo--;
}

/* Complete chunk fifo[k]: walked to a stop chosen by in (or whole). */
static void do_complete(struct msga__rsched *s, struct model *m,
			struct fuzz_in *in, uint32_t k, int whole)
{
	struct msga__rsched_region old[64];
	uint32_t id = m->fifo[k], nold = s->nreg;
	const struct msga__rsched_chunk c = s->ch[id];
	uint64_t from, stop;
	int ret = msga__rsched_walk_from(s, id, &from);

	memcpy(old, s->reg, nold * sizeof(old[0]));
	if (ret == -EAGAIN) {
		FUZZ_CHECK(msga__rsched_done(s, id, c.hi) == -EINVAL);
		FUZZ_CHECK(s->nreg == nold);
		return;
	}
	if (ret == -ESPIPE || ret == -ENOENT ||
	    (!whole && fuzz_u8(in) < 16)) {
		FUZZ_CHECK(msga__rsched_fail(s, id) == 0);
		fifo_drop(m, k);
		settle_gone(m, old, nold, s);
		return;
	}
	FUZZ_CHECK(ret == 0 && from >= c.lo && from <= c.hi);
	stop = whole ? c.hi : from + fuzz_range(in, 0, c.hi - from);
	FUZZ_CHECK(msga__rsched_done(s, id, c.hi + 1) == -EINVAL);
	ret = msga__rsched_done(s, id, stop);
	FUZZ_CHECK(ret == 0 || ret == 1);
	fifo_drop(m, k);
	settle(m, from, stop);
	/* a region done: what its last walk did not reach goes to NAK */
	settle_gone(m, old, nold, s);
}

static void do_retained(struct msga__rsched *s, struct model *m,
			struct fuzz_in *in)
{
	struct msga__rsched_region old[64];
	uint32_t nold = s->nreg;
	uint64_t oldest = fuzz_range(in, 0, RING);

	memcpy(old, s->reg, nold * sizeof(old[0]));
	msga__rsched_retained(s, oldest);
	settle(m, 0, oldest);
	settle_gone(m, old, nold, s);
	for (uint32_t i = 0; i < s->nreg; i++)
		FUZZ_CHECK(s->reg[i].lo >= oldest);
}

static void check_share(struct fuzz_in *in)
{
	uint64_t want[8], grant[8], total = 0, budget;
	uint32_t n = (uint32_t)fuzz_range(in, 1, 8);
	uint32_t start = (uint32_t)fuzz_range(in, 0, n - 1);
	int64_t got;

	for (uint32_t i = 0; i < n; i++)
		total += want[i] = fuzz_range(in, 0, 5000);
	budget = fuzz_range(in, 0, 20000);
	got = msga__rsched_share(n, want, budget, start, grant);
	FUZZ_CHECK(got == (int64_t)(total < budget ? total : budget));
	for (uint32_t i = 0; i < n; i++) {
		FUZZ_CHECK(grant[i] <= want[i]);
		for (uint32_t j = 0; grant[i] < want[i] && j < n; j++)
			FUZZ_CHECK(grant[j] <= grant[i] + 1);
	}
}

static void check_give_up(struct fuzz_in *in)
{
	struct msga__rsched_giveup g = { .stall_ns = fuzz_range(in, 0, 100),
					 .bound_ns = fuzz_range(in, 0, 100) };
	uint64_t seq = fuzz_range(in, 0, 100), opened = fuzz_range(in, 0, 100);
	uint64_t prog = fuzz_range(in, 0, 100), ret = fuzz_range(in, 0, 100);
	uint64_t now = fuzz_range(in, 0, 300);
	uint64_t since = prog > opened ? prog : opened;
	enum msga__rsched_verdict want = MSGA__RSCHED_KEEP;

	if (ret && seq < ret)
		want = MSGA__RSCHED_GONE;
	else if (g.bound_ns && now >= opened && now - opened >= g.bound_ns)
		want = MSGA__RSCHED_BOUND;
	else if (now >= since && now - since >= g.stall_ns)
		want = MSGA__RSCHED_STALLED;
	FUZZ_CHECK(msga__rsched_give_up(&g, seq, opened, prog, ret, now) == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct msga__rsched s;
	struct msga__rsched_cfg cfg;
	static struct model m;
	uint32_t steps = 0;

	memset(&m, 0, sizeof(m));
	cfg.overlap = fuzz_range(&in, 0, 64);
	cfg.chunk_max = cfg.overlap + fuzz_range(&in, 1, 512);
	cfg.max_inflight = (uint32_t)fuzz_range(&in, 1, 6);
	cfg.max_regions = cfg.max_inflight + (uint32_t)fuzz_range(&in, 1, 8);
	FUZZ_CHECK(msga__rsched_init(&s, &cfg) == 0);
	while (fuzz_left(&in) && steps++ < 2000) {
		switch (fuzz_u8(&in) % 8) {
		case 0: case 1:
			do_add(&s, &m, &in);
			break;
		case 2: case 3:
			do_next(&s, &m);
			break;
		case 4: case 5:
			if (m.nfifo)
				do_complete(&s, &m, &in, 0, 0);
			break;
		case 6:
			if (m.nfifo)
				do_complete(&s, &m, &in, (uint32_t)fuzz_range(
					&in, 0, m.nfifo - 1), 0);
			break;
		default:
			switch (fuzz_u8(&in) % 3) {
			case 0: do_retained(&s, &m, &in); break;
			case 1: check_share(&in); break;
			default: check_give_up(&in); break;
			}
		}
		check_tables(&s, &m);
	}
	/* drain: every chunk taken and walked whole, in order */
	for (steps = 0; (s.nreg || m.nfifo) && steps < 100000; steps++) {
		if (m.nfifo)
			do_complete(&s, &m, &in, 0, 1);
		else
			do_next(&s, &m);
		check_tables(&s, &m);
	}
	FUZZ_CHECK(!s.nreg && !m.nfifo);
	for (uint32_t p = 0; p < RING; p++)
		FUZZ_CHECK(m.st[p] == NONE || m.st[p] == SETTLED);
	msga__rsched_fini(&s);
	return 0;
}
