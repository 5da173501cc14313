/* SPDX-License-Identifier: MIT */
/*
 * idx_lru.h - a doubly linked list threaded through an array by index, for
 * tables that keep their entries in one fixed array and must find the
 * least recently used one in O(1): the reassembly slots (reasm.c) and the
 * multicast stream table (ud_stream.c). Links are 1 + index, 0 for none,
 * so a zeroed entry is unlinked and a zeroed list is empty.
 *
 * The same link can instead chain free entries (a stack through next),
 * while the entry is on no list.
 */
#ifndef MSGA_IDX_LRU_H
#define MSGA_IDX_LRU_H

#include <stddef.h>
#include <stdint.h>

/* In each entry. */
struct msga__idx_link {
	uint32_t prev, next;
};

/* Oldest first. */
struct msga__idx_list {
	uint32_t head, tail;
};

/* The array: entries of stride bytes, each with its link at link_off. */
struct msga__idx_array {
	void *base;
	size_t stride, link_off;
};

#define MSGA__IDX_ARRAY(arr, member)                                         \
	((struct msga__idx_array){ .base = (arr), .stride = sizeof(*(arr)),  \
				   .link_off = offsetof(__typeof__(*(arr)),  \
							member) })

/* The link of the entry at pos (1 + index). */
static inline struct msga__idx_link *msga__idx_link_at(
	struct msga__idx_array a, uint32_t pos)
{
	return (struct msga__idx_link *)((char *)a.base +
					 (size_t)(pos - 1) * a.stride +
					 a.link_off);
}

static inline void msga__idx_unlink(struct msga__idx_list *l,
				    struct msga__idx_array a, uint32_t pos)
{
	struct msga__idx_link *me = msga__idx_link_at(a, pos);

	if (me->prev)
		msga__idx_link_at(a, me->prev)->next = me->next;
	else
		l->head = me->next;
	if (me->next)
		msga__idx_link_at(a, me->next)->prev = me->prev;
	else
		l->tail = me->prev;
	me->prev = me->next = 0;
}

/* pos becomes the newest. It must be on no list. */
static inline void msga__idx_append(struct msga__idx_list *l,
				    struct msga__idx_array a, uint32_t pos)
{
	struct msga__idx_link *me = msga__idx_link_at(a, pos);

	me->prev = l->tail;
	me->next = 0;
	if (l->tail)
		msga__idx_link_at(a, l->tail)->next = pos;
	else
		l->head = pos;
	l->tail = pos;
}

/* pos becomes the oldest, the first to go. It must be on no list. */
static inline void msga__idx_prepend(struct msga__idx_list *l,
				     struct msga__idx_array a, uint32_t pos)
{
	struct msga__idx_link *me = msga__idx_link_at(a, pos);

	me->prev = 0;
	me->next = l->head;
	if (l->head)
		msga__idx_link_at(a, l->head)->prev = pos;
	else
		l->tail = pos;
	l->head = pos;
}

/* Free entries: a stack through next; *top is 1 + index, 0 empty. */
static inline void msga__idx_push(uint32_t *top, struct msga__idx_array a,
				  uint32_t pos)
{
	msga__idx_link_at(a, pos)->next = *top;
	*top = pos;
}

/* The last pushed entry's pos, or 0 if none. */
static inline uint32_t msga__idx_pop(uint32_t *top, struct msga__idx_array a)
{
	uint32_t pos = *top;

	if (pos)
		*top = msga__idx_link_at(a, pos)->next;
	return pos;
}

#endif
