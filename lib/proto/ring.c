/* SPDX-License-Identifier: MIT */
/* ring.c - the record and flow-control rules described in ring.h. */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>

#include "byteorder.h"
#include "ring.h"

int msga__ring_size_ok(uint32_t size)
{
	return size >= MSGA__RING_MIN && size % MSGA__RING_ALIGN == 0 &&
	       size < MSGA__RING_PAD_BIT;
}

uint32_t msga__ring_offered_size(uint32_t offer)
{
	return offer & MSGA__RING_OFFER_FMT2 ? offer & ~MSGA__RING_OFFER_FMT2
					     : 0;
}

void msga__ring_writer_init(struct msga__ring_writer *w, uint32_t rkey,
			    uint32_t size)
{
	*w = (struct msga__ring_writer){ .rkey = rkey, .size = size };
}

uint32_t msga__ring_head_len(struct msga__ring_writer *w,
			     const struct msga__wire_hdr *h, uint32_t plen)
{
	uint64_t *next;

	if (h->type != MSGA__W_DATA || h->topic >= MSGA_PUB_TOPICS_MAX)
		return MSGA__RING_HEAD;
	next = &w->next_seq[h->topic];
	if (h->flags != (MSGA__WF_FIRST | MSGA__WF_LAST)) {
		*next = h->seq + 1; /* every fragment carries it */
		return MSGA__RING_HEAD + MSGA__RING_EXT;
	}
	if (h->seq == *next && *next && plen <= MSGA__RING_SHORT_LEN_MASK) {
		(*next)++;
		return MSGA__RING_SHORT_HEAD;
	}
	*next = h->seq + 1;
	return MSGA__RING_HEAD;
}

void msga__ring_place(struct msga__ring_writer *w, uint32_t head_len,
		      uint32_t plen, struct msga__ring_place *p)
{
	uint32_t rec = msga__ring_rec_size(head_len, plen);
	uint32_t off = w->off;

	p->pad_len = 0;
	if (rec > w->size - off) {
		p->pad_off = off;
		p->pad_len = w->size - off;
		p->pad_stamp = msga__ring_advance(w, off, p->pad_len);
		off = 0;
	}
	p->off = off;
	p->rec = rec;
	p->len = msga__ring_trailer_off(head_len, plen) + MSGA__RING_TRAILER;
	p->stamp = msga__ring_advance(w, off, rec);
}

int msga__ring_on_report(struct msga__ring_writer *w, uint32_t freed)
{
	uint64_t head = w->head + (uint32_t)(freed - (uint32_t)w->head);

	if (head > w->tail)
		return -EPROTO;
	w->head = head;
	return 0;
}

/* The hold bitmap: one bit per 16 ring bytes, in 64-bit words. */
static uint32_t held_words(uint32_t size)
{
	return (size / MSGA__RING_ALIGN + 63) / 64;
}

int msga__ring_reader_init(struct msga__ring_reader *r,
			   struct msga__peer_mem mem)
{
	if (!msga__ring_size_ok(mem.size) ||
	    (msga__peer_mem_addr(&mem) + MSGA__RING_SHORT_HEAD) %
	    MSGA__RING_ALIGN)
		return -EINVAL;
	*r = (struct msga__ring_reader){ .mem = mem,
					 .stamp = msga__ring_stamp(0),
					 .cur_payload = MSGA__RING_NO_PAYLOAD };
	r->held = calloc(held_words(mem.size), sizeof(*r->held));
	return r->held ? 0 : -ENOMEM;
}

void msga__ring_reader_fini(struct msga__ring_reader *r)
{
	free(r->held);
	r->held = NULL;
}

void msga__ring_head_put(void *rec, uint32_t head_len, uint32_t plen,
			 const struct msga__wire_hdr *h)
{
	uint8_t *p = rec;

	if (head_len == MSGA__RING_SHORT_HEAD) {
		msga__put32(p, msga__ring_short_word(h->topic, plen));
		return;
	}
	msga__put32(p, plen | (head_len > MSGA__RING_HEAD ?
			       MSGA__RING_EXT_BIT : 0));
	msga__put64(p + 4, h->type == MSGA__W_CREDIT ? h->credit : h->seq);
	msga__put16(p + 12, h->topic);
	p[14] = h->type;
	p[MSGA__RING_FLAGS_OFF] = h->flags;
	memset(p + 16, 0, head_len - 16);
	if (head_len > MSGA__RING_HEAD) {
		msga__put32(p + MSGA__RING_HEAD, h->len);
		msga__put32(p + MSGA__RING_HEAD + 4, h->off);
	}
}

/* A short record: a whole DATA message, the topic's next seq. */
static int short_get(struct msga__ring_reader *r, uint32_t word,
		     struct msga__wire_hdr *h)
{
	uint32_t topic = word >> MSGA__RING_SHORT_TOPIC_SHIFT &
			 MSGA__RING_SHORT_TOPIC_MASK;

	if (!msga__ring_short_ok(r, word))
		return -EPROTO;
	*h = (struct msga__wire_hdr){ .type = MSGA__W_DATA,
				      .flags = MSGA__WF_FIRST | MSGA__WF_LAST,
				      .topic = (uint16_t)topic,
				      .seq = r->next_seq[topic]++,
				      .len = word & MSGA__RING_SHORT_LEN_MASK };
	return 0;
}

static int long_get(struct msga__ring_reader *r, const uint8_t *p,
		    uint32_t word, struct msga__wire_hdr *h)
{
	int ext = !!(word & MSGA__RING_EXT_BIT);
	uint64_t v = msga__get64(p + 4);

	if (word & ~(MSGA__RING_LEN_MASK | MSGA__RING_EXT_BIT))
		return -EPROTO;
	/* (the zero words of the head are ignored: nothing reads them) */
	*h = (struct msga__wire_hdr){ .type = p[14], .flags = p[MSGA__RING_FLAGS_OFF],
				      .topic = msga__get16(p + 12),
				      .len = word & MSGA__RING_LEN_MASK };
	if (h->type == MSGA__W_CREDIT)
		h->credit = (uint32_t)v;
	else
		h->seq = v;
	if (ext) {
		h->len = msga__get32(p + MSGA__RING_HEAD);
		h->off = msga__get32(p + MSGA__RING_HEAD + 4);
	}
	/* Only what a publisher writes into a ring; a fragment says so. */
	if (h->type != MSGA__W_DATA && h->type != MSGA__W_TOPIC &&
	    h->type != MSGA__W_CREDIT && h->type != MSGA__W_REFUSE &&
	    h->type != MSGA__W_BYE && /* (BYE: 0.10) */
	    h->type != MSGA__W_LAST_VALUE) /* (0.12) */
		return -EPROTO;
	if (ext != (h->type == MSGA__W_DATA &&
		    h->flags != (MSGA__WF_FIRST | MSGA__WF_LAST)))
		return -EPROTO;
	if (h->type == MSGA__W_DATA && h->topic < MSGA_PUB_TOPICS_MAX)
		r->next_seq[h->topic] = h->seq + 1;
	return 0;
}

/*
 * The record's word is the one peek checked against the trailer (read
 * once, kept in rec); the rest of a long head is copied out of the ring
 * once, here, and decoded from the copy. The head's bytes were placed
 * before the trailer, so they are final, unless the writer rewrites them
 * on purpose: then the copy is garbage, and is checked like any other.
 */
int msga__ring_head_get(struct msga__ring_reader *r,
			const struct msga__ring_rec *rec,
			struct msga__wire_hdr *h, const char **payload,
			uint32_t *plen)
{
	uint8_t p[MSGA__RING_HEAD + MSGA__RING_EXT];
	uint32_t word = rec->word, head = msga__ring_head_len_of(word, plen);
	int ret;

	/* (peek sized the record from this word) */
	if (msga__ring_rec_size(head, *plen) != rec->len ||
	    *plen > MSGA_FRAG_MAX)
		return -EPROTO;
	*payload = msga__peer_in_place(&r->mem, r->off + head, *plen);
	r->cur_payload = r->off + head;
	/* (a short record is a whole message of at most MSGA_FRAG_MAX
	 * bytes by construction: short_get checked all of it) */
	if (msga__ring_is_short(word))
		return short_get(r, word, h);
	msga__peer_copy(&r->mem, r->off, p, head);
	ret = long_get(r, p, word, h);
	return ret ? ret : msga__wire_hdr_check(h, *plen);
}

/*
 * Nothing in a record is trusted before its trailer matches: until then
 * the head may be a stale lap's bytes, which must only make the reader
 * wait, never fail the connection. The trailer found by a stale word can
 * be the new record's too (a 1-4 byte short record's trailer sits where
 * a PAD's does), so once one matches, the word is read again, final now,
 * and the record is what that word says, if its own trailer matches.
 */
int msga__ring_peek(struct msga__ring_reader *r, struct msga__ring_rec *rec)
{
	for (;;) {
		uint32_t off = r->off, left = r->mem.size - off, again;
		uint32_t word = msga__ring_load32(r, off);

		if (!msga__ring_arrived(r, word))
			return 0;
		again = msga__ring_load32(r, off);
		if (again != word && !msga__ring_arrived(r, again))
			return 0;
		if (!(again & MSGA__RING_PAD_BIT)) {
			rec->word = again;
			rec->len = msga__ring_arrived(r, again);
			return 1;
		}
		if (again != (MSGA__RING_PAD_BIT | left))
			return -EPROTO;
		r->rd += left;
		r->off = 0;
		r->stamp = msga__ring_stamp(++r->nrec);
	}
}

/*
 * The bit of the 16 ring bytes holding the word before a payload, from
 * where data points (an address the reader handed out; no byte is read).
 */
static int held_bit(const struct msga__ring_reader *r, const void *data,
		    uint32_t *bit)
{
	uint32_t off;

	if (!r->held || !msga__peer_offset_of(&r->mem, data, &off) ||
	    off % MSGA__RING_ALIGN != MSGA__RING_SHORT_HEAD)
		return 0;
	*bit = off / MSGA__RING_ALIGN;
	return 1;
}

static int bit_is_set(const uint64_t *map, uint32_t bit)
{
	return map[bit / 64] >> bit % 64 & 1;
}

/* The lap of the held message whose word is at bit (in [freed, rd]). */
static uint64_t held_lap_of(const struct msga__ring_reader *r, uint32_t bit)
{
	uint64_t lap = r->freed / r->mem.size;

	return bit * MSGA__RING_ALIGN >= r->free_off ? lap : lap + 1;
}

/* Whether the message at bit, delivered at stamp, is the one held there. */
static int held_is(const struct msga__ring_reader *r, uint32_t bit,
		   uint64_t stamp)
{
	uint64_t lap;

	if (!bit_is_set(r->held, bit))
		return 0;
	lap = held_lap_of(r, bit);
	return r->held_lap[lap & 1].lap == lap &&
	       stamp >= r->held_lap[lap & 1].since;
}

int msga__ring_hold(struct msga__ring_reader *r, const void *data,
		    uint64_t stamp)
{
	uint64_t lap = r->rd / r->mem.size;
	uint32_t bit;

	if (!held_bit(r, data, &bit))
		return -EINVAL;
	if (held_is(r, bit, stamp))
		return -EALREADY;
	if (r->cur_payload != bit * MSGA__RING_ALIGN + MSGA__RING_SHORT_HEAD ||
	    bit_is_set(r->held, bit))
		return -EINVAL; /* a stale copy: its bytes may be freed */
	/* (a lap two back has nothing held: freed has passed it) */
	if (r->held_lap[lap & 1].lap != lap || !r->nheld) {
		r->held_lap[lap & 1].lap = lap;
		r->held_lap[lap & 1].since = stamp;
	}
	r->held[bit / 64] |= 1ull << bit % 64;
	r->nheld++;
	return 0;
}

int msga__ring_is_held(const struct msga__ring_reader *r, const void *data,
		       uint64_t stamp)
{
	uint32_t bit;

	return held_bit(r, data, &bit) && held_is(r, bit, stamp);
}

int msga__ring_release(struct msga__ring_reader *r, const void *data,
		       uint64_t stamp)
{
	uint32_t bit;

	if (!held_bit(r, data, &bit) || !held_is(r, bit, stamp))
		return 0;
	r->held[bit / 64] &= ~(1ull << bit % 64);
	r->nheld--;
	return 1;
}

/*
 * Ring bytes from freed up to rd before the first held message, found in
 * the bitmap a word at a time (every held bit lies in [freed, rd]: a
 * message is held only while delivered, at rd, and freeing stops there).
 */
static uint64_t free_upto(const struct msga__ring_reader *r)
{
	uint32_t nbits = r->mem.size / MSGA__RING_ALIGN;
	uint64_t g = r->freed / MSGA__RING_ALIGN;
	uint64_t end = (r->rd + MSGA__RING_ALIGN - 1) / MSGA__RING_ALIGN;

	while (g < end) {
		uint32_t bit = (uint32_t)(g % nbits);
		uint32_t span = 64 - bit % 64;
		uint64_t w = r->held[bit / 64] >> bit % 64;

		if (span > nbits - bit)
			span = nbits - bit; /* (the map's last word) */
		if (w) {
			uint32_t first = (uint32_t)__builtin_ctzll(w);

			if (first < span) {
				g += first;
				return g < end ? g * MSGA__RING_ALIGN : r->rd;
			}
		}
		g += span;
	}
	return r->rd;
}

void msga__ring_free_held(struct msga__ring_reader *r)
{
	uint64_t to = free_upto(r);

	if (to > r->freed) {
		r->freed = to;
		r->free_off = (uint32_t)(to % r->mem.size);
	}
}
