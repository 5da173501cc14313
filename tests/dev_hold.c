/* SPDX-License-Identifier: MIT */
/*
 * Issue 33: hold and release name the message, not its receive buffer, on
 * every path: the RDMA WRITE ring, SEND/RECV on the subscriber's shared
 * receive queue and on receives of its own, BATCH records, reassembled
 * messages, multicast and unicast UD. On each, the application
 *   - holds message A, releases it; the buffer (or ring place) is used
 *     again, by message M, which it holds;
 *   - inside M's callback, holding its old copy of A is -EINVAL; so is
 *     holding a copy of the message before M (a BATCH's earlier record);
 *   - releases A twice more: M must stay held, its bytes unchanged while
 *     hundreds more messages pass, and its buffer not re-posted (on the
 *     ring: the publisher is pushed back once the ring fills behind M);
 *   - releases M: the stream goes on, nothing lost.
 * On siw (iWARP) the ring cases check that the connection took SEND/RECV
 * (siw offers no ring) and the UD cases the documented -EOPNOTSUPP.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"
#include "msgaccel.h"

enum phase { ARM, HOLDING_A, HUNT, GOT_M };

struct hold_case {
	struct dp_rec rec;
	enum phase phase;
	struct msga_msg a, m, prev;
	int have_prev;
	uint64_t hunt_from;     /* seq after which A's place is hunted */
	int a_hold, m_hold, stale_a_in_m, prev_tries, prev_not_einval;
	int a_held, m_held;     /* held now (a copy of one: -EALREADY) */
	int ring;               /* on the WRITE ring (M pins it) */
	uint64_t batch_pairs;   /* records right behind the one before */
	int conn;               /* only this connection's messages (or -1) */
	uint64_t arm_seq;       /* A: this seq, or (0) the first message
				 * at a lower address than the one before:
				 * where the buffers (or the ring) begin
				 * again, a place later messages come to */
};

static void on_msg(const struct msga_msg *m, void *user)
{
	struct hold_case *hc = user;
	int mine = hc->conn < 0 || (int)m->conn_id == hc->conn;

	if (mine && hc->have_prev && hc->prev.len <= MSGA_FRAG_MAX &&
	    (uintptr_t)m->data - (uintptr_t)hc->prev.data ==
		    ((24 + hc->prev.len + 7) & ~(size_t)7))
		hc->batch_pairs++;
	if (mine && hc->phase == ARM &&
	    (hc->arm_seq ? m->seq == hc->arm_seq :
			   hc->have_prev && m->data < hc->prev.data)) {
		hc->a_hold = msga_msg_hold(m);
		hc->a_held = !hc->a_hold;
		hc->a = *m;
		hc->phase = HOLDING_A;
	} else if (mine && hc->phase == HUNT && m->data == hc->a.data &&
		   m->seq > hc->hunt_from) {
		/* A's place, a new message: the old copy is not it */
		hc->stale_a_in_m = msga_msg_hold(&hc->a);
		hc->m_hold = msga_msg_hold(m);
		hc->m_held = !hc->m_hold;
		hc->m = *m;
		hc->phase = GOT_M;
	}
	/* a copy of the message before this one: -EINVAL, or -EALREADY
	 * if it is A or M and held */
	if (mine && hc->have_prev && hc->phase != ARM) {
		int held = (hc->a_held && hc->prev.seq == hc->a.seq) ||
			   (hc->m_held && hc->prev.seq == hc->m.seq);
		int ret = msga_msg_hold(&hc->prev);

		hc->prev_tries++;
		if (ret != (held ? -EALREADY : -EINVAL)) {
			hc->prev_not_einval++;
			if (!ret)
				msga_msg_release(&hc->prev);
		}
	}
	if (mine) {
		hc->prev = *m;
		hc->have_prev = 1;
		dp_on_msg(m, &hc->rec);
	}
}

static int on_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

static struct msga_sub *sub_for(struct msga_ctx *ctx, uint32_t flags,
				struct hold_case *hc)
{
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "hold",
				   .flags = flags, .on_msg = on_msg,
				   .on_event = dp_on_event, .user = hc };
	struct msga_sub *sub = NULL;

	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	return sub;
}

/*
 * Publish n messages of len: one at a time, each polled until delivered
 * (a UD receive ring is not overrun), or, burst, without polling the
 * subscriber until the publisher is pushed back (BATCH records).
 */
static void publish(struct hold_case *hc, uint64_t base, struct msga_pub *pub,
		    uint32_t t, uint64_t *seq, size_t len, int n, int burst,
		    struct msga_ctx **both)
{
	for (int i = 0; i < n; i++) {
		struct msga_claim c = { .size = sizeof(c) };

		if (burst && !msga_pub_claim(pub, t, len, &c)) {
			dp_fill(c.data, len, t, ++*seq);
			cr_assert_geq(msga_pub_commit(pub, &c), 0);
			continue;
		}
		dp_send(pub, t, ++*seq, len, both, 2);
		if (!burst)
			cr_assert(dp_poll_until64(both, 2, &hc->rec.total,
						  base + *seq, 10000),
				  "seq %llu not delivered",
				  (unsigned long long)*seq);
	}
}

/*
 * A held ring message keeps the ring from being freed past it: with M
 * held, publishing (the subscriber polled all along) must stall once the
 * rest of the ring has filled. Were M released by a stale copy, the ring
 * would be freed and the publisher never pushed back. 1 if it stalled.
 */
static int ring_stays_pinned(struct msga_pub *pub, uint32_t t, uint64_t *seq,
			     size_t len, struct msga_ctx **both)
{
	uint64_t stall_ms = 0;

	for (int n = 0; n < 1000;) {
		struct msga_claim c = { .size = sizeof(c) };
		int ret = msga_pub_claim(pub, t, len, &c);

		if (ret == -EAGAIN) {
			if (!stall_ms)
				stall_ms = dp_now_ms();
			if (dp_now_ms() - stall_ms > 1500)
				return 1;
			msga_ctx_poll(both[1], 64);
			msga_ctx_poll(both[0], 64);
			continue;
		}
		cr_assert_eq(ret, 0);
		stall_ms = 0;
		dp_fill(c.data, len, t, ++*seq);
		cr_assert_geq(msga_pub_commit(pub, &c), 0);
		msga_ctx_poll(both[1], 64);
		n++;
	}
	return 0;
}

/*
 * The scenario above on pub's topic t, its messages len bytes; the
 * subscriber's context is both[1]. burst: BATCH records.
 */
static void stale_copies(struct hold_case *hc, struct msga_pub *pub,
			 uint32_t t, size_t len, int burst,
			 struct msga_ctx **both)
{
	uint64_t seq = 0, base = hc->rec.total;

	for (int i = 0; i < 100 && hc->phase == ARM; i++) {
		publish(hc, base, pub, t, &seq, len, hc->arm_seq ? 2 : 20,
			burst, both);
		cr_assert(dp_poll_until64(both, 2, &hc->rec.total, base + seq,
					  30000));
	}
	cr_assert_eq(hc->phase, HOLDING_A, "no message to hold as A");
	cr_assert_eq(hc->a_hold, 0, "hold A: %d", hc->a_hold);
	msga_msg_release(&hc->a);
	hc->a_held = 0;
	hc->hunt_from = seq;
	hc->phase = HUNT;
	for (int i = 0; i < 100 && hc->phase != GOT_M; i++) {
		publish(hc, base, pub, t, &seq, len, 40, burst, both);
		cr_assert(dp_poll_until64(both, 2, &hc->rec.total, base + seq,
					  30000), "got %llu of %llu",
			  (unsigned long long)(hc->rec.total - base),
			  (unsigned long long)seq);
	}
	cr_assert_eq(hc->phase, GOT_M, "no message came to A's place");
	cr_assert_eq(hc->stale_a_in_m, -EINVAL,
		     "holding A's copy in M's callback: %d", hc->stale_a_in_m);
	cr_assert_eq(hc->m_hold, 0, "hold M: %d", hc->m_hold);
	/* the double (and late) release of A */
	msga_msg_release(&hc->a);
	msga_msg_release(&hc->a);
	cr_assert_eq(msga_msg_hold(&hc->m), -EALREADY, "M is still held");
	cr_assert_eq(msga_msg_hold(&hc->a), -EINVAL);
	/* many more pass; M's buffer is not given back meanwhile */
	if (hc->ring)
		cr_assert(ring_stays_pinned(pub, t, &seq, len, both),
			  "the ring was freed past the held message M");
	else
		for (int i = 0; i < 10; i++)
			publish(hc, base, pub, t, &seq, len, 40, burst, both);
	if (!hc->ring)
		cr_assert(dp_poll_until64(both, 2, &hc->rec.total, base + seq,
					  30000));
	cr_assert_eq(dp_check(hc->m.data, hc->m.len, t, hc->m.seq), 0,
		     "the held message M (seq %llu) changed under us",
		     (unsigned long long)hc->m.seq);
	msga_msg_release(&hc->m);
	msga_msg_release(&hc->m);
	hc->m_held = 0;
	publish(hc, base, pub, t, &seq, len, 100, burst, both);
	cr_assert(dp_poll_until64(both, 2, &hc->rec.total, base + seq, 30000),
		  "after the release: %llu of %llu",
		  (unsigned long long)(hc->rec.total - base),
		  (unsigned long long)seq);
	cr_assert_eq(hc->rec.bad, 0, "%s", hc->rec.first_bad);
	cr_assert_gt(hc->prev_tries, 0);
	cr_assert_eq(hc->prev_not_einval, 0,
		     "%d stale copies of the message before were not -EINVAL",
		     hc->prev_not_einval);
}

static void rc_case(uint32_t flags, size_t len, int burst, uint64_t arm_seq)
{
	static struct hold_case hc;
	static struct dp_rec ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	struct msga_sub *sub;
	uint32_t t;

	memset(&hc, 0, sizeof(hc));
	memset(&ev, 0, sizeof(ev));
	hc.conn = -1;
	hc.arm_seq = arm_seq;
	hc.ring = !(flags & MSGA_SUB_NO_RING) && !on_iwarp();
	cr_assert_eq(msga_pub_topic(pub, "hold", &t), 0);
	sub = sub_for(cs, flags, &hc);
	dp_connect(sub, pub, both, 2, 1);
	if (!(flags & MSGA_SUB_NO_RING) && on_iwarp())
		/* siw offers no ring: a ring connection refuses the fd */
		cr_assert_geq(msga_ctx_fd(cs), 0, "siw took a ring: %s",
			      msga_ctx_last_error(cs));
	stale_copies(&hc, pub, t, len, burst, both);
	if (burst)
		cr_assert_gt(hc.batch_pairs, 0, "no BATCH was delivered");
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

Test(hold, ring_stale_copies_hold_and_release_nothing, .timeout = 240)
{
	rc_case(0, 1000, 0, 0);
}

Test(hold, srq_stale_copies_hold_and_release_nothing, .timeout = 240)
{
	rc_case(MSGA_SUB_NO_RING, 200, 0, 0);
}

Test(hold, batch_records_stale_copies_hold_and_release_nothing,
     .timeout = 240)
{
	rc_case(MSGA_SUB_NO_RING, 64, 1, 0);
}

Test(hold, reassembled_stale_copies_hold_and_release_nothing,
     .timeout = 240)
{
	/* (the hold takes A's buffer over; the next large message after
	 * its release reuses it) */
	rc_case(MSGA_SUB_NO_RING, 3 * MSGA_FRAG_MAX + 5, 0, 2);
}

/* Past 16 connections a subscriber's receives are its own (no SRQ). */
Test(hold, own_receives_stale_copies_hold_and_release_nothing,
     .timeout = 300)
{
	static struct hold_case hc;
	static struct dp_rec ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	struct msga_sub *sub;
	uint32_t t = 0;

	memset(&hc, 0, sizeof(hc));
	cr_assert_eq(msga_pub_topic(pub, "hold", &t), 0);
	sub = sub_for(cs, MSGA_SUB_NO_RING, &hc);
	/* 17 connections to one publisher; the scenario watches the last */
	for (int i = 0; i < 17; i++) {
		dp_connect(sub, pub, both, 2, i + 1);
		cr_assert(dp_poll_until(both, 2, &hc.rec.connected, i + 1,
					10000), "connection %d", i);
	}
	hc.conn = (int)hc.rec.last_conn;
	stale_copies(&hc, pub, t, 200, 0, both);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

/*
 * Multicast (mcast://) or unicast UD (ud://): the same receive buffers,
 * the same rules. iWARP has no UD: both refuse, as documented.
 */
static void ud_case(int unicast)
{
	static const char *group = "mcast://239.255.10.33";
	static struct hold_case hc;
	static struct dp_rec ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub_attr pa = { .size = sizeof(pa),
				    .uri = unicast ? dp_ud_uri(0) : group };
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint32_t t;

	memset(&hc, 0, sizeof(hc));
	memset(&ev, 0, sizeof(ev));
	hc.conn = -1;
	sub = sub_for(cs, 0, &hc);
	if (on_iwarp()) {
		cr_assert_eq(msga_pub_create(cp, &pa, &pub), -EOPNOTSUPP);
		cr_assert_eq(msga_sub_connect(sub, unicast ? dp_ud_uri(18999) :
							     group, NULL),
			     -EOPNOTSUPP);
		msga_ctx_close(cs);
		msga_ctx_close(cp);
		return;
	}
	pub = dp_pub_at(cp, pa.uri, 0, &ev);
	cr_assert_eq(msga_pub_topic(pub, "hold", &t), 0);
	if (!unicast)
		cr_assert(dp_poll_until(both, 2, &ev.connected, 1, 10000),
			  "the publisher's group join");
	cr_assert_geq(msga_sub_connect(sub, unicast ?
				       dp_ud_uri(msga_pub_port(pub)) : group, NULL),
		      0);
	cr_assert(dp_poll_until(both, 2, &hc.rec.connected, 1, 15000),
		  "not joined (failed %d, status %d)", hc.rec.failed,
		  hc.rec.last_status);
	for (uint64_t end = dp_now_ms() + 5000;
	     unicast && msga_pub_subscribers(pub) < 1;) {
		cr_assert_lt(dp_now_ms(), end, "the publisher sees none");
		msga_ctx_poll(cp, 64);
		msga_ctx_poll(cs, 64);
	}
	stale_copies(&hc, pub, t, 64, 0, both);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}

Test(hold, mcast_stale_copies_hold_and_release_nothing, .timeout = 240)
{
	ud_case(0);
}

Test(hold, ud_stale_copies_hold_and_release_nothing, .timeout = 240)
{
	ud_case(1);
}

/*
 * Before 0.8.1 a SEND/RECV message's hold was a bit of the header in
 * front of its data, in the receive buffer: bytes the publisher wrote.
 * Here those bytes say the opposite of the truth (as a publisher's SEND
 * could, had the decoder let it through): holds and releases do not care.
 */
struct poke_rec {
	struct dp_rec rec;
	struct msga_msg held[8];
	int nheld, hold_not_ok, again_not_ealready;
	int released, back[8];    /* a later message in its buffer */
};

static void poke_on_msg(const struct msga_msg *m, void *user)
{
	struct poke_rec *p = user;
	uint8_t *flags = (uint8_t *)m->data - 24 + 1; /* its header's */

	if (p->nheld < 8 && m->len <= MSGA_FRAG_MAX) {
		*flags |= 0x20;       /* "held", before it is */
		if (msga_msg_hold(m))
			p->hold_not_ok++;
		*flags &= (uint8_t)~0x20; /* "not held", while it is */
		if (msga_msg_hold(m) != -EALREADY)
			p->again_not_ealready++;
		p->held[p->nheld++] = *m;
	}
	for (int i = 0; p->released && i < 8; i++)
		p->back[i] |= m->data == p->held[i].data;
	dp_on_msg(m, &p->rec);
}

Test(hold, the_bytes_in_front_of_a_message_do_not_say_it_is_held,
     .timeout = 240)
{
	static struct poke_rec p;
	static struct dp_rec ev;
	struct msga_ctx *cp = devtest_open_ctx(), *cs = devtest_open_ctx();
	struct msga_ctx *both[2] = { cp, cs };
	struct msga_pub *pub = dp_pub(cp, 0, &ev);
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "hold",
				   .flags = MSGA_SUB_NO_RING,
				   .on_msg = poke_on_msg,
				   .on_event = dp_on_event, .user = &p };
	struct msga_sub *sub = NULL;
	uint64_t seq = 0;
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "hold", &t), 0);
	cr_assert_eq(msga_sub_create(cs, &a, &sub), 0);
	dp_connect(sub, pub, both, 2, 1);
	for (int i = 0; i < 8; i++)
		dp_send(pub, t, ++seq, 100, both, 2);
	cr_assert(dp_poll_until64(both, 2, &p.rec.total, seq, 20000));
	cr_assert_eq(p.nheld, 8);
	cr_assert_eq(p.hold_not_ok, 0, "a set bit refused a hold");
	cr_assert_eq(p.again_not_ealready, 0, "a clear bit let a hold twice");
	for (int i = 0; i < 8; i++)
		cr_assert_eq(dp_check(p.held[i].data, p.held[i].len, t,
				      p.held[i].seq), 0);
	for (int i = 0; i < 8; i++)
		msga_msg_release(&p.held[i]);
	p.released = 1;
	/* every buffer came back: later messages land in each */
	for (int i = 0; i < 600; i++)
		dp_send(pub, t, ++seq, 100, both, 2);
	cr_assert(dp_poll_until64(both, 2, &p.rec.total, seq, 30000),
		  "%llu of %llu: a release was lost",
		  (unsigned long long)p.rec.total, (unsigned long long)seq);
	cr_assert_eq(p.rec.bad, 0, "%s", p.rec.first_bad);
	for (int i = 0; i < 8; i++)
		cr_assert(p.back[i], "held buffer %d never came back", i);
	msga_ctx_close(cs);
	msga_ctx_close(cp);
}
