/* SPDX-License-Identifier: MIT */
/*
 * rc_ring.c - the verbs side of the RDMA WRITE ring (ring.h): the
 * subscriber registers a ring for remote writes and offers it in its
 * connect hello; the publisher turns each record (data, topic name or
 * credit report) into one RDMA WRITE that carries the payload straight
 * from the claimed send buffer (zero copy, inline when small); the
 * subscriber finds records by reading memory and delivers them in place
 * (rc_sub_rx.c), and reports freed bytes back here with a CREDIT SEND
 * once a quarter of the ring is free again.
 *
 * Why a ring: the receiver polls one cache line instead of a CQ, and
 * posts no receive per message. In the test VM, perftest's ib_write_lat
 * (the same primitive) beats ib_send_lat by 5-30 %.
 *
 * A WRITE raises no completion at the receiver, so a subscriber that
 * sleeps on msga_ctx_fd() cannot use it: connections made in event mode,
 * or with MSGA_SUB_NO_RING, stay on SEND/RECV.
 */
#include <string.h>

#include "byteorder.h"
#include "rc.h"

/*
 * The ring is registered for remote writes WITHOUT
 * IBV_ACCESS_RELAXED_ORDERING, and must stay so: the reader takes a
 * record as whole when its trailer, the WRITE's last bytes, is visible,
 * which holds only if the device places a WRITE's bytes in ascending
 * address order (ring.h, ORDERING). Relaxed ordering lets the PCIe root
 * complex reorder those stores. The ring starts MSGA__RING_BASE_SKEW
 * bytes into a page-aligned buffer, so that every payload is 16-byte
 * aligned (ring.h).
 */
#define RING_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
_Static_assert(!(RING_ACCESS & IBV_ACCESS_RELAXED_ORDERING),
	       "the ring relies on a WRITE's bytes landing in order");

/*
 * The subscriber's side. This is the one place that makes the ring's
 * struct msga__peer_mem (peer_mem.h): from here on the publisher writes
 * these bytes, and the reader sees them only through its accessors.
 *
 * Isolation (internal.h): the registration covers the ring and the
 * MSGA__RING_BASE_SKEW bytes before it in its page (never read), and
 * nothing else, zero-based (ring.h: MSGA__RING_REMOTE; the hello carries
 * offset 0, never our address), in
 * the connection's own protection domain (rc_setup.c), so its rkey opens
 * these bytes to this connection's QP only: another peer of ours that
 * learns it, or guesses it, gets a remote access error.
 */
int msga__ring_rx_setup(struct msga__conn *c)
{
	char *buf = msga__page_alloc(MSGA__SUB_RING_SIZE + MSGA__RING_ALIGN);
	int ret;

	c->ring_buf = buf;
	if (!buf)
		return -ENOMEM;
	c->ring_mr = msga__reg_zero_based(c->ctx, c->pd, buf,
					  MSGA__RING_REMOTE(MSGA__SUB_RING_SIZE),
					  RING_ACCESS);
	if (!c->ring_mr)
		return msga__neg_errno(ENOMEM);
	ret = msga__ring_reader_init(&c->rr,
				     msga__peer_mem_of(buf + MSGA__RING_BASE_SKEW,
						       MSGA__SUB_RING_SIZE));
	if (ret)
		return ret;
	c->ring_slot = (struct msga__rxslot){ .conn = c, .idx = MSGA__SLOT_RING };
	return 0;
}

/*
 * The publisher's side: the ring it writes, and the two work requests
 * every record is posted with, set up once so that a send only fills in
 * what changes (building a whole ibv_send_wr per message is measurable).
 */
void msga__ring_tx_setup(struct msga__conn *c, uint32_t rkey, uint32_t size)
{
	msga__ring_writer_init(&c->rw, rkey, size);
	for (int i = 0; i < 2; i++)
		c->ring_wr[i] = (struct ibv_send_wr){
			.opcode = IBV_WR_RDMA_WRITE,
			.sg_list = &c->ring_sge[i],
			.num_sge = 1,
			.wr.rdma.rkey = rkey,
		};
	c->ring_wr[0].next = &c->ring_wr[1];
}

/*
 * One record as one WRITE: the head (and a control payload) from this send
 * slot, the payload from ext, then zeros and the trailer from the slot
 * again. A record that would cross the ring's end is preceded by a PAD, a
 * 16-byte WRITE chained in front of it (one doorbell for both). Only a
 * CREDIT record carries the credit for our receives.
 */
int msga__ring_send(struct msga__conn *c, const struct msga__send_desc *m)
{
	struct msga__wire_hdr *h = m->hdr;
	uint32_t plen = m->ctl_len + m->ext_len, lkey = c->ctl_mr->lkey;
	uint32_t head, pad;
	char *hb = c->ctl_buf + msga__sq_slot(c, c->tx_seq) * MSGA__CTL_SLOT;
	struct ibv_send_wr *wr = c->ring_wr;
	struct ibv_sge *sge = &c->ring_sge[1];
	struct msga__ring_place p;
	int n = 0;

	if (h->type == MSGA__W_CREDIT)
		h->credit = msga__credit_on_send(&c->cr);
	/* (a control payload, a TOPIC's name, sits after a long head) */
	head = msga__ring_head_len(&c->rw, h, plen);
	msga__ring_place(&c->rw, head, plen, &p);
	pad = p.len - head - plen - MSGA__RING_TRAILER;
	msga__ring_head_put(hb, head, plen, h);
	msga__put64((uint8_t *)hb + MSGA__CTL_RING_TRAILER, p.stamp);
	sge[n++] = (struct ibv_sge){ (uintptr_t)hb, head + m->ctl_len, lkey };
	if (m->ext_len)
		sge[n++] = (struct ibv_sge){ (uintptr_t)m->ext, m->ext_len,
					     m->ext_lkey };
	sge[n++] = (struct ibv_sge){ (uintptr_t)hb + MSGA__CTL_RING_TRAILER -
				     pad, pad + MSGA__RING_TRAILER, lkey };
	/* (msga__conn_post sets wr_id and adds its flags) */
	wr[1].num_sge = n;
	wr[1].send_flags = 0;
	wr[1].wr.rdma.remote_addr = MSGA__RING_REMOTE(p.off);
	if (!p.pad_len)
		return msga__conn_post(c, &wr[1], 1, p.len, m->tag,
				       m->signal);
	msga__put64((uint8_t *)hb + MSGA__CTL_RING_PAD,
		    MSGA__RING_PAD_BIT | p.pad_len);
	msga__put64((uint8_t *)hb + MSGA__CTL_RING_PAD + 8, p.pad_stamp);
	c->ring_sge[0] = (struct ibv_sge){ (uintptr_t)hb + MSGA__CTL_RING_PAD,
					   MSGA__RING_PAD_LEN, lkey };
	wr[0].send_flags = 0;
	wr[0].wr.rdma.remote_addr = MSGA__RING_REMOTE(p.pad_off);
	return msga__conn_post(c, wr, 2, p.len, m->tag, m->signal);
}

/*
 * Tell the writer what is free once a quarter of the ring is; a report
 * that finds no room to go stays due, and idle polls retry it. It goes
 * straight to the SEND path: a ring's reader sends everything by SEND.
 */
void msga__ring_report(struct msga__conn *c)
{
	struct msga__wire_hdr h = { .type = MSGA__W_CREDIT };
	struct msga__send_desc m = { .hdr = &h, .tag = MSGA__TAG_NONE };

	if (msga__ring_need_report(&c->rr) && msga__conn_can_ctl(c))
		msga__conn_send_recv(c, &m);
	c->ring_report_due = msga__ring_need_report(&c->rr);
}

/* The ring's key is void from here (its bytes stay, for held messages). */
void msga__ring_unregister(struct msga__conn *c)
{
	if (c->ring_mr)
		ibv_dereg_mr(c->ring_mr);
	c->ring_mr = NULL;
}

/*
 * The publisher did not take the ring we offered: its key goes at once,
 * so that it opens nothing for the life of a SEND/RECV connection.
 */
void msga__ring_refused(struct msga__conn *c)
{
	c->ring = MSGA__C_RING_NONE;
	msga__ring_unregister(c);
}

void msga__ring_released(struct msga__conn *c)
{
	msga__ring_free(&c->rr);
	msga__ring_report(c);
}
