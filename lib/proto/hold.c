// SPDX-License-Identifier: MIT
/*
 * hold.c - a receive buffer's held messages, by delivery stamp (hold.h).
 */
#include <errno.h>

#include "hold.h"

/* The bit of stamp in this fill: 1 and *bit, or 0 if it has none. */
static int bit_of(const struct msga__holds *h, uint64_t stamp, uint32_t *bit)
{
	if (!h->n || stamp < h->since ||
	    stamp - h->since >= MSGA__HOLD_RECS_MAX)
		return 0;
	*bit = (uint32_t)(stamp - h->since);
	return 1;
}

static int bit_set(const struct msga__holds *h, uint32_t bit)
{
	return h->map[bit / 64] >> bit % 64 & 1;
}

int msga__holds_has(const struct msga__holds *h, uint64_t stamp)
{
	uint32_t bit;

	return bit_of(h, stamp, &bit) && bit_set(h, bit);
}

int msga__holds_take(struct msga__holds *h, uint64_t stamp)
{
	uint32_t bit;

	if (msga__holds_has(h, stamp))
		return -EALREADY;
	if (!h->n) { /* a new fill: the buffer was re-posted since */
		*h = (struct msga__holds){ .since = stamp };
	} else if (stamp < h->since ||
		   stamp - h->since >= MSGA__HOLD_RECS_MAX) {
		return -EINVAL;
	}
	bit = (uint32_t)(stamp - h->since);
	h->map[bit / 64] |= 1ull << bit % 64;
	h->n++;
	return 0;
}

int msga__holds_give(struct msga__holds *h, uint64_t stamp)
{
	uint32_t bit;

	if (!bit_of(h, stamp, &bit) || !bit_set(h, bit))
		return 0;
	h->map[bit / 64] &= ~(1ull << bit % 64);
	h->n--;
	return 1;
}
