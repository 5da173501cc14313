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
	       size <= MSGA__RING_LEN_MASK;
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

/* A record that would leave exactly 8 bytes, too few for a PAD, takes them. */
static uint32_t rec_at(uint32_t size, uint32_t off, uint32_t rec)
{
	return size - off - rec == MSGA__RING_ALIGN ? rec + MSGA__RING_ALIGN :
						       rec;
}

/* A record's bytes, before the 8-byte rule, from its head's first word. */
static uint32_t rec_size_of(uint32_t word)
{
	return msga__ring_rec_size(word & MSGA__RING_LEN_MASK,
				   !!(word & MSGA__RING_EXT_BIT));
}

void msga__ring_place(struct msga__ring_writer *w, uint32_t plen, int ext,
		      struct msga__ring_place *p)
{
	uint32_t rec = msga__ring_rec_size(plen, ext);
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
	p->rec = rec_at(w->size, off, rec);
	p->stamp = msga__ring_stamp(w->nrec++);
	w->tail += p->rec;
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

void msga__ring_head_put(void *rec, uint32_t plen, int ext,
			 const struct msga__wire_hdr *h)
{
	uint8_t *p = rec;

	msga__put32(p, plen | (ext ? MSGA__RING_EXT_BIT : 0));
	p[4] = h->type;
	p[MSGA__RING_FLAGS_OFF] = h->flags;
	msga__put16(p + 6, h->topic);
	msga__put64(p + 8, h->type == MSGA__W_CREDIT ? h->credit : h->seq);
	if (ext) {
		msga__put32(p + MSGA__RING_HEAD, h->len);
		msga__put32(p + MSGA__RING_HEAD + 4, h->off);
	}
}

int msga__ring_head_get(const char *rec, uint32_t rec_len,
			struct msga__wire_hdr *h, const char **payload,
			uint32_t *plen)
{
	const uint8_t *p = (const uint8_t *)rec;
	uint32_t word = msga__get32(p), len = word & MSGA__RING_LEN_MASK;
	int ext = !!(word & MSGA__RING_EXT_BIT);
	uint64_t v = msga__get64(p + 8);

	if (msga__ring_rec_size(len, ext) > rec_len)
		return -EPROTO;
	*h = (struct msga__wire_hdr){ .type = p[4],
				      .flags = p[MSGA__RING_FLAGS_OFF],
				      .topic = msga__get16(p + 6),
				      .len = len };
	if (h->type == MSGA__W_CREDIT)
		h->credit = (uint32_t)v;
	else
		h->seq = v;
	if (ext) {
		h->len = msga__get32(p + MSGA__RING_HEAD);
		h->off = msga__get32(p + MSGA__RING_HEAD + 4);
	}
	*payload = rec + MSGA__RING_HEAD + (ext ? MSGA__RING_EXT : 0);
	*plen = len;
	/* Only what a publisher writes into a ring; a fragment says so. */
	if (h->type != MSGA__W_DATA && h->type != MSGA__W_TOPIC &&
	    h->type != MSGA__W_CREDIT)
		return -EPROTO;
	if (ext != (h->type == MSGA__W_DATA &&
		    h->flags != (MSGA__WF_FIRST | MSGA__WF_LAST)))
		return -EPROTO;
	return msga__wire_hdr_check(h, len);
}

/* The writer's NIC stores these words; read each exactly once, in order. */
static uint64_t load_word(const char *p)
{
	return le64toh(__atomic_load_n((const uint64_t *)(const void *)p,
				       __ATOMIC_ACQUIRE));
}

/*
 * Nothing in a record is trusted before its trailer matches: until then
 * the head may be a stale lap's bytes, which must only make the reader
 * wait, never fail the connection.
 */
int msga__ring_peek(struct msga__ring_reader *r, char **rec,
		    uint32_t *rec_len)
{
	for (;;) {
		uint32_t off = (uint32_t)(r->rd % r->size), left = r->size - off;
		uint64_t stamp = r->stamp;
		uint32_t word = (uint32_t)load_word(r->buf + off), len, size;

		if (word & MSGA__RING_PAD_BIT) {
			if (left < MSGA__RING_PAD_LEN ||
			    load_word(r->buf + off + 8) != stamp)
				return 0;
			/*
			 * The stamp is there, so the PAD's first word is too;
			 * but the word read above may be a stale lap's bytes
			 * that the PAD overwrote since: read it again.
			 */
			word = (uint32_t)load_word(r->buf + off);
			if (word != (MSGA__RING_PAD_BIT | left))
				return -EPROTO;
			r->rd += left;
			r->stamp = msga__ring_stamp(++r->nrec);
			continue;
		}
		len = word & MSGA__RING_LEN_MASK;
		if (len > MSGA_FRAG_MAX)
			return 0;
		size = rec_size_of(word);
		if (size > left)
			return 0;
		size = rec_at(r->size, off, size);
		if (load_word(r->buf + off + size - MSGA__RING_TRAILER) != stamp)
			return 0;
		*rec = r->buf + off;
		*rec_len = size;
		return 1;
	}
}

void msga__ring_consume(struct msga__ring_reader *r, uint32_t rec_len)
{
	r->rd += rec_len;
	r->stamp = msga__ring_stamp(++r->nrec);
}

/* Records behind rd were verified when read, so their heads are sound. */
void msga__ring_free(struct msga__ring_reader *r,
		     int (*is_held)(const char *rec))
{
	while (r->freed < r->rd) {
		uint32_t off = (uint32_t)(r->freed % r->size);
		const char *rec = r->buf + off;
		uint32_t word = msga__get32((const uint8_t *)rec);

		if (word & MSGA__RING_PAD_BIT) {
			r->freed += r->size - off;
			continue;
		}
		if (is_held && is_held(rec))
			return;
		r->freed += rec_at(r->size, off, rec_size_of(word));
	}
}

int msga__ring_need_report(const struct msga__ring_reader *r)
{
	return r->freed - r->reported >= r->size / 4;
}
