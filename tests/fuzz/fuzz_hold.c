/* SPDX-License-Identifier: MIT */
/*
 * fuzz_hold.c - libFuzzer harness for the holds of SEND/RECV and UD
 * receive buffers (lib/proto/hold.c), driven as rc_sub.c and mcast_sub.c
 * drive them (issue 33). The input is a program: the publisher fills a
 * posted buffer with 1 to 170 messages (a BATCH, or one datagram) of
 * bytes of its choosing; the subscriber delivers a filled buffer's
 * messages, each with a stamp of its own, and the application holds the
 * one being delivered, or tries to hold any copy it kept of an earlier
 * one, and releases held messages and stale copies, twice and late, in
 * any order. A buffer goes back to the publisher when its messages were
 * delivered and none is held, as the library re-posts it. After every
 * step, any violation aborts:
 *   - a held message's bytes never change until it is released (the
 *     publisher never gets a buffer with a held message in it);
 *   - the holds say "held" for exactly the deliveries the model holds;
 *   - a copy of another delivery neither holds nor releases anything;
 *     holding a held one is -EALREADY, holding a stale one -EINVAL;
 *   - a release frees exactly one hold, once.
 * The seed corpus is tests/fuzz/corpus/hold.
 */
#include <errno.h>

#include "hold.h"
#include "fuzz.h"

#define BUFS 4u
#define RECS 170u          /* the most one 4096-byte buffer carries */
#define COPIES 64u

struct buf {
	struct msga__holds holds;
	uint8_t bytes[RECS];    /* one byte a message: its content */
	uint32_t nrec;          /* messages of the current fill */
	uint32_t next;          /* next to deliver */
	int posted;             /* the publisher may write it */
};

/* A struct msga_msg as the application keeps it: where, and the stamp. */
struct copy {
	uint32_t buf, rec;
	uint64_t stamp;
	uint8_t content;        /* its bytes when delivered */
	int held;               /* the model: held by this copy now */
};

static struct buf bufs[BUFS];
static struct copy copies[COPIES];
static uint32_t ncopies;
static uint64_t stamp;

static int model_held(uint32_t b, uint64_t st)
{
	for (uint32_t i = 0; i < ncopies && i < COPIES; i++)
		if (copies[i].held && copies[i].buf == b &&
		    copies[i].stamp == st)
			return 1;
	return 0;
}

static void check(void)
{
	for (uint32_t i = 0; i < ncopies && i < COPIES; i++) {
		struct copy *c = &copies[i];
		struct buf *b = &bufs[c->buf];

		FUZZ_CHECK(msga__holds_has(&b->holds, c->stamp) ==
			   model_held(c->buf, c->stamp));
		if (c->held) {
			FUZZ_CHECK(!b->posted);
			FUZZ_CHECK(b->bytes[c->rec] == c->content);
		}
	}
}

/* The library's rule: delivered and unheld, a buffer goes back. */
static void maybe_repost(struct buf *b)
{
	if (b->nrec && b->next == b->nrec && !b->holds.n)
		*b = (struct buf){ .holds = b->holds, .posted = 1 };
}

static void op_fill(struct fuzz_in *in)
{
	struct buf *b = &bufs[fuzz_u8(in) % BUFS];

	if (!b->posted)
		return;
	b->posted = 0;
	b->nrec = (uint32_t)fuzz_range(in, 1, RECS);
	b->next = 0;
	for (uint32_t i = 0; i < b->nrec; i++)
		b->bytes[i] = fuzz_u8(in);
}

/* Every earlier copy, tried inside the callback of (b, stamp). */
static void try_stale(uint32_t bi, uint64_t cur)
{
	for (uint32_t i = 0; i < ncopies && i < COPIES; i++) {
		struct copy *c = &copies[i];
		int ret;

		if (c->stamp == cur)
			continue;
		/* (the library asks the holds only for the current one:
		 * any other is -EINVAL unless held, as here) */
		ret = msga__holds_has(&bufs[c->buf].holds, c->stamp) ?
			      -EALREADY : -EINVAL;
		FUZZ_CHECK(ret == (c->held ? -EALREADY : -EINVAL));
	}
	(void)bi;
}

/*
 * The next message of a filled buffer. The library hands out one
 * buffer's messages back to back (a BATCH is one loop, between no other
 * delivery), so a buffer begun is finished first, and its messages'
 * stamps follow one another; between buffers, time passes.
 */
static void op_deliver(struct fuzz_in *in)
{
	uint32_t bi = fuzz_u8(in) % BUFS, flags = fuzz_u8(in);
	struct buf *b;
	struct copy *c;

	for (uint32_t i = 0; i < BUFS; i++)
		if (bufs[i].next && bufs[i].next < bufs[i].nrec)
			bi = i;
	b = &bufs[bi];
	if (b->posted || b->next == b->nrec)
		return;
	stamp += 1 + (!b->next && flags & 0x80 ? fuzz_u16(in) : 0);
	if (flags & 1)
		try_stale(bi, stamp);
	c = &copies[ncopies++ % COPIES];
	if (c->held) { /* (a copy the model forgets: release it first) */
		FUZZ_CHECK(msga__holds_give(&bufs[c->buf].holds, c->stamp) == 1);
		maybe_repost(&bufs[c->buf]);
	}
	*c = (struct copy){ .buf = bi, .rec = b->next, .stamp = stamp,
			    .content = b->bytes[b->next] };
	if (flags & 2) {
		FUZZ_CHECK(msga__holds_take(&b->holds, stamp) == 0);
		FUZZ_CHECK(msga__holds_take(&b->holds, stamp) == -EALREADY);
		c->held = 1;
	}
	b->next++;
	maybe_repost(b);
}

static void op_release(struct fuzz_in *in)
{
	struct copy *c;
	int was;

	if (!ncopies)
		return;
	c = &copies[fuzz_u8(in) % (ncopies < COPIES ? ncopies : COPIES)];
	was = c->held;
	FUZZ_CHECK(msga__holds_give(&bufs[c->buf].holds, c->stamp) == was);
	c->held = 0;
	/* released, again, or late: nothing more */
	FUZZ_CHECK(msga__holds_give(&bufs[c->buf].holds, c->stamp) == 0);
	maybe_repost(&bufs[c->buf]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };

	for (uint32_t i = 0; i < BUFS; i++)
		bufs[i] = (struct buf){ .posted = 1 };
	ncopies = 0;
	stamp = fuzz_u32(&in);
	memset(copies, 0, sizeof(copies));
	while (fuzz_left(&in)) {
		switch (fuzz_u8(&in) % 3) {
		case 0:
			op_fill(&in);
			break;
		case 1:
			op_deliver(&in);
			break;
		default:
			op_release(&in);
			break;
		}
		check();
	}
	return 0;
}
