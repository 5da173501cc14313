/* SPDX-License-Identifier: MIT */
/* list.h - a circular doubly linked list with a sentinel, kernel style. */
#ifndef MSGA_LIST_H
#define MSGA_LIST_H

#include <stddef.h>

struct msga__list {
	struct msga__list *next, *prev;
};

#define msga__container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))

static inline void msga__list_init(struct msga__list *h)
{
	h->next = h->prev = h;
}

static inline int msga__list_empty(const struct msga__list *h)
{
	return h->next == h;
}

static inline void msga__list_add_tail(struct msga__list *h,
				       struct msga__list *n)
{
	n->prev = h->prev;
	n->next = h;
	h->prev->next = n;
	h->prev = n;
}

static inline void msga__list_del(struct msga__list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

/* Iterate where the body deletes nothing. */
#define msga__list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

/* Iterate where the body may delete the current node. */
#define msga__list_for_each_safe(pos, tmp, head) \
	for ((pos) = (head)->next, (tmp) = (pos)->next; (pos) != (head); \
	     (pos) = (tmp), (tmp) = (pos)->next)

#endif
