/* SPDX-License-Identifier: MIT */
/* ring.c - the record and flow-control rules described in ring.h. */
#include <endian.h>
#include <errno.h>

#include "byteorder.h"
#include "ring.h"

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

/* A (non-PAD) record's bytes, before the rule about the ring's end. */
static uint32_t rec_size_of(uint32_t word)
{
	uint32_t plen, head = msga__ring_head_len_of(word, &plen);

	return msga__ring_rec_size(head, plen);
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
	p->rec = msga__ring_rec_at(w->size, off, rec);
	p->stamp = msga__ring_advance(w, off, p->rec);
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
	    h->type != MSGA__W_CREDIT)
		return -EPROTO;
	if (ext != (h->type == MSGA__W_DATA &&
		    h->flags != (MSGA__WF_FIRST | MSGA__WF_LAST)))
		return -EPROTO;
	if (h->type == MSGA__W_DATA && h->topic < MSGA_PUB_TOPICS_MAX)
		r->next_seq[h->topic] = h->seq + 1;
	return 0;
}

int msga__ring_head_get(struct msga__ring_reader *r, const char *rec,
			uint32_t rec_len, struct msga__wire_hdr *h,
			const char **payload, uint32_t *plen)
{
	const uint8_t *p = (const uint8_t *)rec;
	uint32_t word = msga__get32(p), head = msga__ring_head_len_of(word, plen), size;

	int ret;

	size = msga__ring_rec_size(head, *plen);
	/* peek sized the record from this word, perhaps read stale then */
	if (size > rec_len || rec_len - size >= MSGA__RING_PAD_LEN)
		return -EPROTO;
	*payload = rec + head;
	/* (a short record is a whole message of at most MSGA_FRAG_MAX
	 * bytes by construction: short_get checked all of it) */
	if (msga__ring_is_short(word))
		return short_get(r, word, h);
	ret = long_get(r, p, word, h);
	return ret ? ret : msga__wire_hdr_check(h, *plen);
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
		uint32_t off = r->off, left = r->size - off;
		uint32_t word = msga__ring_load32(r->buf + off);

		if (word & MSGA__RING_PAD_BIT) {
			if (left < MSGA__RING_PAD_LEN ||
			    msga__ring_load64(r->buf + off + 8) != r->stamp)
				return 0;
			/*
			 * The stamp is there, so the PAD's first word is too;
			 * but the word read above may be a stale lap's bytes
			 * that the PAD overwrote since: read it again.
			 */
			word = msga__ring_load32(r->buf + off);
			if (word != (MSGA__RING_PAD_BIT | left))
				return -EPROTO;
			r->rd += left;
			r->off = 0;
			r->stamp = msga__ring_stamp(++r->nrec);
			continue;
		}
		*rec_len = msga__ring_arrived(r, word);
		if (!*rec_len)
			return 0;
		*rec = r->buf + off;
		return 1;
	}
}

/*
 * The HELD mark: in the byte before a whole message's payload, which is
 * the short form's last head byte and the long form's flags.
 */
static int rec_held(const char *rec, uint32_t word)
{
	return rec[msga__ring_is_short(word) ? MSGA__RING_SHORT_HEAD - 1 :
				     MSGA__RING_FLAGS_OFF] &
	       MSGA__RING_HELD_MARK;
}

/* Records behind rd were verified when read, so their heads are sound. */
void msga__ring_free(struct msga__ring_reader *r)
{
	while (r->freed < r->rd) {
		uint32_t off = r->free_off, len;
		const char *rec = r->buf + off;
		uint32_t word = msga__get32((const uint8_t *)rec);

		if (word & MSGA__RING_PAD_BIT) {
			len = r->size - off;
		} else {
			if (rec_held(rec, word))
				return;
			len = msga__ring_rec_at(r->size, off, rec_size_of(word));
		}
		r->freed += len;
		r->free_off = off + len == r->size ? 0 : off + len;
	}
}

