/* SPDX-License-Identifier: MIT */
/* The index-linked LRU list and free stack (lib/proto/idx_lru.h). */
#include <string.h>

#include <criterion/criterion.h>

#include "idx_lru.h"

/* An entry with the link in the middle, as the tables have it. */
struct ent {
	uint64_t before;
	struct msga__idx_link link;
	uint32_t after;
};

static struct ent arr[8];
static struct msga__idx_list l;

static struct msga__idx_array a(void)
{
	return MSGA__IDX_ARRAY(arr, link);
}

/* The list from head to tail, checked backwards too; its length. */
static int walk(uint32_t *out)
{
	int n = 0;
	uint32_t prev = 0;

	for (uint32_t p = l.head; p; p = arr[p - 1].link.next) {
		cr_assert_eq(arr[p - 1].link.prev, prev);
		out[n++] = p;
		prev = p;
	}
	cr_assert_eq(l.tail, prev);
	return n;
}

static void expect(const uint32_t *want, int n)
{
	uint32_t got[8];

	cr_assert_eq(walk(got), n);
	for (int i = 0; i < n; i++)
		cr_assert_eq(got[i], want[i], "at %d: %u, expected %u", i,
			     got[i], want[i]);
}

static void fresh(void)
{
	memset(arr, 0, sizeof(arr));
	memset(&l, 0, sizeof(l));
}

TestSuite(idx_lru, .init = fresh);

Test(idx_lru, append_keeps_oldest_first)
{
	expect(NULL, 0);
	msga__idx_append(&l, a(), 3);
	msga__idx_append(&l, a(), 1);
	msga__idx_append(&l, a(), 8);
	expect((uint32_t[]){ 3, 1, 8 }, 3);
	for (int i = 0; i < 8; i++)
		cr_assert(arr[i].before == 0 && arr[i].after == 0,
			  "only the link is written");
}

Test(idx_lru, unlink_head_middle_tail_and_last)
{
	for (uint32_t p = 1; p <= 5; p++)
		msga__idx_append(&l, a(), p);
	msga__idx_unlink(&l, a(), 3);
	expect((uint32_t[]){ 1, 2, 4, 5 }, 4);
	msga__idx_unlink(&l, a(), 1);
	expect((uint32_t[]){ 2, 4, 5 }, 3);
	msga__idx_unlink(&l, a(), 5);
	expect((uint32_t[]){ 2, 4 }, 2);
	cr_assert_eq(arr[4].link.prev + arr[4].link.next, 0, "unlinked");
	msga__idx_unlink(&l, a(), 2);
	msga__idx_unlink(&l, a(), 4);
	expect(NULL, 0);
	cr_assert_eq(l.head + l.tail, 0);
}

Test(idx_lru, touching_moves_to_the_tail)
{
	for (uint32_t p = 1; p <= 3; p++)
		msga__idx_append(&l, a(), p);
	msga__idx_unlink(&l, a(), 1);
	msga__idx_append(&l, a(), 1);
	expect((uint32_t[]){ 2, 3, 1 }, 3);
}

Test(idx_lru, free_stack_is_last_in_first_out)
{
	uint32_t top = 0;

	cr_assert_eq(msga__idx_pop(&top, a()), 0, "empty");
	msga__idx_push(&top, a(), 4);
	msga__idx_push(&top, a(), 7);
	cr_assert_eq(msga__idx_pop(&top, a()), 7);
	cr_assert_eq(msga__idx_pop(&top, a()), 4);
	cr_assert_eq(msga__idx_pop(&top, a()), 0);
	cr_assert_eq(top, 0);
}
