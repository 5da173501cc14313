/* SPDX-License-Identifier: MIT */
/*
 * Credit flow control (lib/credit.c), checked against a model of two
 * endpoints joined by two in-order links: a SEND that reaches a side with
 * no receive posted is an RNR (fails the test); random schedules must
 * never produce one, never deadlock, and deliver every data message.
 */
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "credit.h"

#define LINK_MAX 4096

struct msg {
	int data;
	uint32_t credit;
};

struct end {
	struct msga__credit cr;
	uint32_t posted;          /* receives really posted */
	struct msg arrived[LINK_MAX];
	uint32_t arr_head, arr_tail;
	uint32_t held;            /* processed but not re-posted */
	uint64_t data_sent, data_got;
};

struct link {
	struct msg q[LINK_MAX];
	uint32_t head, tail;
};

static struct end A, B;
static struct link AB, BA;
static uint64_t rng = 88172645463325252ull;
/* Percent of steps in which a side may try a keepalive (rc_keepalive.c). */
static int keepalive_pct;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void setup(uint32_t depth_a, uint32_t depth_b)
{
	memset(&A, 0, sizeof(A));
	memset(&B, 0, sizeof(B));
	memset(&AB, 0, sizeof(AB));
	memset(&BA, 0, sizeof(BA));
	msga__credit_init(&A.cr, depth_a, depth_b);
	msga__credit_init(&B.cr, depth_b, depth_a);
	A.posted = depth_a;
	B.posted = depth_b;
}

static void send(struct end *e, struct link *l, int data)
{
	struct msg m = { .data = data };

	m.credit = msga__credit_on_send(&e->cr);
	l->q[l->tail++ % LINK_MAX] = m;
	if (data)
		e->data_sent++;
}

/* The wire: a SEND consumes a posted receive or it is an RNR. */
static int deliver(struct link *l, struct end *to)
{
	if (l->head == l->tail)
		return 0;
	cr_assert_gt(to->posted, 0, "RNR: a SEND arrived with no receive");
	to->posted--;
	to->arrived[to->arr_tail++ % LINK_MAX] = l->q[l->head++ % LINK_MAX];
	return 1;
}

static void repost(struct end *e)
{
	e->posted++;
	msga__credit_on_repost(&e->cr);
}

static void maybe_update(struct end *e, struct link *out)
{
	if (msga__credit_need_update(&e->cr) && msga__credit_can_ctl(&e->cr))
		send(e, out, 0);
}

static int process(struct end *e, struct link *out, int hold_pct)
{
	struct msg m;

	if (e->arr_head == e->arr_tail)
		return 0;
	m = e->arrived[e->arr_head++ % LINK_MAX];
	msga__credit_on_recv(&e->cr, m.credit);
	if (m.data)
		e->data_got++;
	if ((int)rnd(100) < hold_pct)
		e->held++;
	else
		repost(e);
	maybe_update(e, out);
	return 1;
}

static int release(struct end *e, struct link *out)
{
	if (!e->held)
		return 0;
	e->held--;
	repost(e);
	maybe_update(e, out);
	return 1;
}

/*
 * A keepalive is a CREDIT message sent only where data could go, so that
 * it never takes the credit kept for a CREDIT report.
 */
static int keepalive(struct end *e, struct link *out)
{
	if (!msga__credit_can_data(&e->cr))
		return 0;
	send(e, out, 0);
	return 1;
}

/*
 * What a side believes about its peer's room must not be optimistic: a
 * peer out of credit for a keepalive is one liveness may not time out. A
 * side cannot see what is on the wire (messages of the peer's on their
 * way to it, its own reports on their way to the peer), which settles
 * within microseconds, so the belief is checked when nothing is.
 */
static void check_peer_may_wait(void)
{
	if (AB.head != AB.tail || BA.head != BA.tail ||
	    A.arr_head != A.arr_tail || B.arr_head != B.arr_tail)
		return;
	if (!msga__credit_can_data(&A.cr))
		cr_assert(msga__credit_peer_may_wait(&B.cr),
			  "B thinks A can speak, A has %u credits",
			  msga__credit_avail(&A.cr));
	if (!msga__credit_can_data(&B.cr))
		cr_assert(msga__credit_peer_may_wait(&A.cr),
			  "A thinks B can speak, B has %u credits",
			  msga__credit_avail(&B.cr));
}

/* One random step; A wants to send want_a data, B want_b. */
static int step(uint64_t want_a, uint64_t want_b, int hold_pct)
{
	check_peer_may_wait();
	if ((int)rnd(100) < keepalive_pct)
		return rnd(2) ? keepalive(&A, &AB) : keepalive(&B, &BA);
	switch (rnd(7)) {
	case 0:
		if (A.data_sent < want_a && msga__credit_can_data(&A.cr)) {
			send(&A, &AB, 1);
			return 1;
		}
		return 0;
	case 1:
		if (B.data_sent < want_b && msga__credit_can_data(&B.cr)) {
			send(&B, &BA, 1);
			return 1;
		}
		return 0;
	case 2:
		return deliver(&AB, &B);
	case 3:
		return deliver(&BA, &A);
	case 4:
		return process(&A, &AB, 0);
	case 5:
		return process(&B, &BA, hold_pct);
	default:
		return release(&B, &BA);
	}
}

static void run(uint32_t da, uint32_t db, uint64_t want_a, uint64_t want_b,
		int hold_pct)
{
	uint64_t idle = 0;
	int ka = keepalive_pct;

	setup(da, db);
	while (A.data_sent < want_a || B.data_sent < want_b ||
	       B.data_got < want_a || A.data_got < want_b) {
		idle = step(want_a, want_b, hold_pct) ? 0 : idle + 1;
		cr_assert_lt(idle, 100000, "deadlock: A sent %llu got %llu, "
			     "B sent %llu got %llu",
			     (unsigned long long)A.data_sent,
			     (unsigned long long)A.data_got,
			     (unsigned long long)B.data_sent,
			     (unsigned long long)B.data_got);
	}
	cr_expect_eq(B.data_got, want_a);
	cr_expect_eq(A.data_got, want_b);
	/* Then it must go quiet: no endless CREDIT ping-pong when idle. */
	keepalive_pct = 0;
	for (int i = 0; i < 100000; i++)
		step(want_a, want_b, 0);
	while (B.held)
		release(&B, &BA);
	for (int i = 0; i < 100000; i++)
		step(want_a, want_b, 0);
	{
		uint32_t sent = A.cr.tx_sent + B.cr.tx_sent;

		for (int i = 0; i < 100000; i++)
			step(want_a, want_b, 0);
		cr_expect_eq(A.cr.tx_sent + B.cr.tx_sent, sent,
			     "CREDIT messages keep flowing when idle");
	}
	keepalive_pct = ka;
}

Test(credit, one_way_stream_random_schedules)
{
	for (int i = 0; i < 20; i++)
		run(32, 256, 20000, 0, 0);
}

Test(credit, one_way_with_held_messages)
{
	for (int i = 0; i < 20; i++)
		run(32, 16, 5000, 0, 30);
}

Test(credit, both_ways_small_rings)
{
	for (uint32_t d = 4; d <= 9; d++)
		run(d, d, 3000, 3000, 10);
}

/* Keepalives from both sides, into held receives: no RNR, no deadlock. */
Test(credit, keepalives_keep_the_credit_rules)
{
	keepalive_pct = 20;
	for (uint32_t d = 4; d <= 9; d++)
		run(d, d, 3000, 3000, 30);
	for (int i = 0; i < 5; i++)
		run(32, 16, 5000, 0, 30);
	keepalive_pct = 0;
}

/* A side that holds every receive leaves its peer unable to speak. */
Test(credit, holding_receives_makes_the_peer_wait)
{
	setup(8, 8);
	cr_expect_not(msga__credit_peer_may_wait(&B.cr));
	while (msga__credit_can_data(&A.cr))
		send(&A, &AB, 1);
	while (deliver(&AB, &B))
		;
	for (int i = 0; i < 7; i++) {
		msga__credit_on_recv(&B.cr, 0);
		B.arr_head++;
		B.held++;
	}
	cr_expect(msga__credit_peer_may_wait(&B.cr), "A has %u credits",
		  msga__credit_avail(&A.cr));
	while (B.held)
		release(&B, &BA);
	while (deliver(&BA, &A))
		;
	process(&A, &AB, 0);
	cr_expect(msga__credit_can_data(&A.cr));
	cr_expect_not(msga__credit_peer_may_wait(&B.cr),
		      "B reported its receives: A may speak again");
}

Test(credit, last_credit_is_kept_for_credit_messages)
{
	setup(8, 8);
	while (msga__credit_can_data(&A.cr))
		send(&A, &AB, 1);
	cr_expect_eq(A.data_sent, 7, "data may use all but one credit");
	cr_expect(msga__credit_can_ctl(&A.cr));
	cr_expect_eq(msga__credit_avail(&A.cr), 1);
}

Test(credit, update_only_when_something_is_new)
{
	setup(64, 64);
	cr_expect_not(msga__credit_need_update(&B.cr));
	msga__credit_on_recv(&B.cr, 0);
	cr_expect_not(msga__credit_need_update(&B.cr), "nothing re-posted");
	repost(&B);
	cr_expect_not(msga__credit_need_update(&B.cr),
		      "1 of 64 and the peer has plenty");
	for (int i = 0; i < 15; i++) {
		msga__credit_on_recv(&B.cr, 0);
		repost(&B);
	}
	cr_expect(msga__credit_need_update(&B.cr), "a quarter is waiting");
	msga__credit_on_send(&B.cr);
	cr_expect_not(msga__credit_need_update(&B.cr), "reported");
}

Test(credit, stale_credit_values_do_not_go_back)
{
	setup(8, 8);
	msga__credit_on_recv(&A.cr, 5);
	msga__credit_on_recv(&A.cr, 3);
	cr_expect_eq(msga__credit_avail(&A.cr), 13);
	/* modulo 2^32 wrap */
	A.cr.peer_freed = UINT32_MAX - 1;
	A.cr.tx_sent = UINT32_MAX - 1;
	msga__credit_on_recv(&A.cr, 2);
	cr_expect_eq(msga__credit_avail(&A.cr), 8 + 4);
}
