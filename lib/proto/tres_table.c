/* SPDX-License-Identifier: MIT */
/* tres_table.c - see tres_table.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tres_table.h"

#define NIL UINT32_MAX

int msga__tres_table_init(struct msga__tres_table *t, uint32_t pub_max,
			  uint32_t ent_max)
{
	uint32_t nb = 1;

	memset(t, 0, sizeof(*t));
	if (!pub_max || pub_max > MSGA__TRES_PUBS_MAX || !ent_max ||
	    ent_max > MSGA__TRES_ENTS_MAX)
		return -EINVAL;
	while (nb < ent_max)
		nb <<= 1;
	t->pub = calloc(pub_max, sizeof(*t->pub));
	t->ent = calloc(ent_max, sizeof(*t->ent));
	t->bucket = malloc((size_t)nb * sizeof(*t->bucket));
	if (!t->pub || !t->ent || !t->bucket) {
		msga__tres_table_fini(t);
		return -ENOMEM;
	}
	t->pub_max = pub_max;
	t->ent_max = ent_max;
	t->nbucket = nb;
	for (uint32_t i = 0; i < nb; i++)
		t->bucket[i] = NIL;
	for (uint32_t i = 0; i < ent_max; i++)
		t->ent[i].next = i + 1 < ent_max ? i + 1 : NIL;
	t->free_ent = 0;
	return 0;
}

void msga__tres_table_fini(struct msga__tres_table *t)
{
	free(t->pub);
	free(t->ent);
	free(t->bucket);
	memset(t, 0, sizeof(*t));
}

/* FNV-1a of the origin and the name: a peer chooses both, so a chain
 * can be made long, but never longer than the table's bound. */
static uint32_t bucket_of(const struct msga__tres_table *t, uint64_t origin,
			  const char *topic)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 8; i++) {
		h ^= (uint8_t)(origin >> (8 * i));
		h *= 0x100000001b3ull;
	}
	for (; *topic; topic++) {
		h ^= (uint8_t)*topic;
		h *= 0x100000001b3ull;
	}
	return (uint32_t)(h ^ (h >> 32)) & (t->nbucket - 1);
}

/* Which line record a is of: 1 for line B, 0 for line A (or none). */
static uint8_t line_of(const struct msga__trw_advert *a)
{
	return (a->flags & MSGA__TRW_F_LINE_B) != 0;
}

/* The entry of a's (origin, topic, line), its chain link in *link; NIL if
 * none. (A topic's two lines share a chain.) */
static uint32_t ent_find(const struct msga__tres_table *t,
			 const struct msga__trw_advert *a, uint32_t **link)
{
	uint32_t *l = &t->bucket[bucket_of(t, a->origin, a->topic)];

	for (; *l != NIL; l = &t->ent[*l].next) {
		const struct msga__tres_ent *e = &t->ent[*l];

		if (e->origin == a->origin && e->line == line_of(a) &&
		    !strcmp(e->topic, a->topic))
			break;
	}
	if (link)
		*link = l;
	return *l;
}

/* The slot of origin, or NIL; a free slot in *spare (NIL if none). */
static uint32_t pub_find(const struct msga__tres_table *t, uint64_t origin,
			 uint32_t *spare)
{
	*spare = NIL;
	for (uint32_t i = 0; i < t->pub_max; i++) {
		const struct msga__tres_pub *p = &t->pub[i];

		if (p->topics && p->origin == origin)
			return i;
		if (!p->topics && *spare == NIL)
			*spare = i;
	}
	return NIL;
}

/* A multicast publisher's topics may be on different groups (a range),
 * and on two lines. */
static int same_endpoint(const struct msga__tres_pub *p,
			 const struct msga__trw_advert *a)
{
	return p->kind == a->kind &&
	       p->flags == (a->flags & ~MSGA__TRW_F_LINE_B) &&
	       p->port == a->port &&
	       (a->kind == MSGA__TRW_MCAST || !memcmp(p->addr, a->addr, 16));
}

int msga__tres_heard(struct msga__tres_table *t,
		     const struct msga__trw_advert *a, uint64_t now,
		     uint64_t ttl_ns, uint32_t *pub)
{
	uint32_t *link, e, p, spare;
	int fresh;

	p = pub_find(t, a->origin, &spare);
	if (p != NIL && !same_endpoint(&t->pub[p], a)) {
		t->conflicts++;
		return MSGA__TRES_CONFLICT;
	}
	e = ent_find(t, a, &link);
	if (e != NIL) {
		if (memcmp(t->ent[e].addr, a->addr, 16)) {
			t->conflicts++; /* (a topic's group never moves) */
			return MSGA__TRES_CONFLICT;
		}
		t->ent[e].heard_ns = now;
		t->ent[e].ttl_ns = ttl_ns;
		*pub = t->ent[e].pub;
		return MSGA__TRES_KNOWN;
	}
	fresh = p == NIL;
	if (t->free_ent == NIL || (fresh && spare == NIL)) {
		t->full++;
		return MSGA__TRES_FULL;
	}
	if (fresh) {
		p = spare;
		t->pub[p] = (struct msga__tres_pub){ .origin = a->origin,
						     .kind = a->kind,
						     .flags = a->flags &
							 ~MSGA__TRW_F_LINE_B,
						     .port = a->port };
		memcpy(t->pub[p].addr, a->addr, 16);
	}
	e = t->free_ent;
	t->free_ent = t->ent[e].next;
	t->ent[e].origin = a->origin;
	t->ent[e].heard_ns = now;
	t->ent[e].ttl_ns = ttl_ns;
	memcpy(t->ent[e].addr, a->addr, 16);
	t->ent[e].pub = p;
	t->ent[e].line = line_of(a);
	strcpy(t->ent[e].topic, a->topic); /* (checked: fits) */
	t->ent[e].next = NIL;
	*link = e;
	t->nent++;
	t->pub[p].topics++;
	*pub = p;
	return fresh ? MSGA__TRES_NEW_PUB : MSGA__TRES_NEW_TOPIC;
}

/* Unlink entry e (at *link); 1, or 2 if its publisher has no topic left. */
static int ent_drop(struct msga__tres_table *t, uint32_t *link, uint32_t e)
{
	struct msga__tres_pub *p = &t->pub[t->ent[e].pub];

	*link = t->ent[e].next;
	t->ent[e].topic[0] = '\0'; /* (free: msga_resolver_topic skips it) */
	t->ent[e].next = t->free_ent;
	t->free_ent = e;
	t->nent--;
	return --p->topics ? 1 : 2;
}

int msga__tres_withdrawn(struct msga__tres_table *t,
			 const struct msga__trw_advert *a, uint32_t *pub)
{
	uint32_t *link, e = ent_find(t, a, &link);

	if (e == NIL)
		return 0;
	if (!same_endpoint(&t->pub[t->ent[e].pub], a) ||
	    memcmp(t->ent[e].addr, a->addr, 16)) {
		t->conflicts++;
		return 0;
	}
	*pub = t->ent[e].pub;
	return ent_drop(t, link, e);
}

uint32_t msga__tres_expire(struct msga__tres_table *t, uint64_t now,
			   void (*gone)(void *user, uint32_t pub),
			   void *user)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b < t->nbucket; b++) {
		uint32_t *link = &t->bucket[b];

		while (*link != NIL) {
			uint32_t e = *link, p = t->ent[e].pub;

			if (now - t->ent[e].heard_ns <= t->ent[e].ttl_ns) {
				link = &t->ent[e].next;
				continue;
			}
			n++;
			if (ent_drop(t, link, e) == 2 && gone)
				gone(user, p);
		}
	}
	return n;
}
