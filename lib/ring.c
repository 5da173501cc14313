/* SPDX-License-Identifier: MIT */
/* ring.c - the record and flow-control rules described in ring.h. */
#include <endian.h>
#include <errno.h>

#include "byteorder.h"
#include "ring.h"

uint64_t msga__ring_stamp(uint64_t n)
{
	/* splitmix64's finaliser: consecutive n give unrelated stamps. */
	uint64_t z = n + 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z | 0x0000000100000001ull;
}

int msga__ring_size_ok(uint32_t size)
{
	return size >= MSGA__RING_MIN && size % MSGA__RING_ALIGN == 0 &&
	       size < MSGA__RING_PAD_BIT;
}

void msga__ring_writer_init(struct msga__ring_writer *w, uint64_t addr,
			    uint32_t rkey, uint32_t size)
{
	*w = (struct msga__ring_writer){ .addr = addr, .rkey = rkey,
					 .size = size };
}

int msga__ring_can_place(const struct msga__ring_writer *w, uint32_t reserve)
{
	return w->size - (w->tail - w->head) >=
	       2u * MSGA__RING_REC_MAX + reserve;
}

void msga__ring_place(struct msga__ring_writer *w, uint32_t plen,
		      struct msga__ring_place *p)
{
	uint32_t rec = msga__ring_rec_size(plen);
	uint32_t off = (uint32_t)(w->tail % w->size);

	p->pad_len = 0;
	if (rec > w->size - off) {
		p->pad_off = off;
		p->pad_len = w->size - off;
		p->pad_stamp = msga__ring_stamp(w->nrec++);
		w->tail += p->pad_len;
		off = 0;
	}
	p->off = off;
	p->rec = rec;
	p->stamp = msga__ring_stamp(w->nrec++);
	w->tail += rec;
}

int msga__ring_on_report(struct msga__ring_writer *w, uint32_t freed)
{
	uint64_t head = w->head + (uint32_t)(freed - (uint32_t)w->head);

	if (head > w->tail)
		return -EPROTO;
	w->head = head;
	return 0;
}

void msga__ring_reader_init(struct msga__ring_reader *r, char *buf,
			    uint32_t size)
{
	*r = (struct msga__ring_reader){ .buf = buf, .size = size,
					 .stamp = msga__ring_stamp(0) };
}

/* The writer's NIC stores these words; read each exactly once, in order. */
static uint64_t load_word(const char *p)
{
	return le64toh(__atomic_load_n((const uint64_t *)(const void *)p,
				       __ATOMIC_ACQUIRE));
}

int msga__ring_peek(struct msga__ring_reader *r, char **rec, uint32_t *plen)
{
	for (;;) {
		uint32_t off = (uint32_t)(r->rd % r->size);
		uint64_t stamp = r->stamp;
		uint64_t w0 = load_word(r->buf + off);
		uint32_t len = (uint32_t)w0, size;

		if ((w0 ^ stamp) >> 32)
			return 0;
		if (len & MSGA__RING_PAD_BIT) {
			if ((len & ~MSGA__RING_PAD_BIT) != r->size - off)
				return -EPROTO;
			r->rd += r->size - off;
			r->stamp = msga__ring_stamp(++r->nrec);
			continue;
		}
		if (len > MSGA_FRAG_MAX)
			return -EPROTO;
		size = msga__ring_rec_size(len);
		if (size > r->size - off)
			return -EPROTO;
		if (load_word(r->buf + off + size - MSGA__RING_TRAILER) != stamp)
			return 0;
		*rec = r->buf + off;
		*plen = len;
		return 1;
	}
}

void msga__ring_consume(struct msga__ring_reader *r, uint32_t plen)
{
	r->rd += msga__ring_rec_size(plen);
	r->stamp = msga__ring_stamp(++r->nrec);
}

void msga__ring_free(struct msga__ring_reader *r,
		     int (*is_held)(const char *rec))
{
	while (r->freed < r->rd) {
		uint32_t off = (uint32_t)(r->freed % r->size);
		const char *rec = r->buf + off;
		uint32_t len = msga__get32((const uint8_t *)rec);

		if (len & MSGA__RING_PAD_BIT) {
			r->freed += r->size - off;
			continue;
		}
		if (is_held && is_held(rec))
			return;
		r->freed += msga__ring_rec_size(len);
	}
}

int msga__ring_need_report(const struct msga__ring_reader *r)
{
	return r->freed - r->reported >= r->size / 4;
}
