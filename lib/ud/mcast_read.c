/* SPDX-License-Identifier: MIT */
/*
 * mcast_read.c - a multicast subscriber repairs its losses by reading
 * them straight out of the publisher's retention ring with one-sided
 * RDMA READ (the publisher's side: mcast_serve.c), so that a repair costs
 * the publisher no CPU and does not queue behind its live stream. Used
 * for the streams of a MSGA_PUB_RELIABLE publisher that announces a READ
 * endpoint (ud_wire.h, RPOS), unless the subscriber chose
 * MSGA_SUB_REPAIR_BY_NAK; whatever READ cannot serve is NAKed
 * (mcast_repair.c), so READ is a faster path, never the only one.
 *
 * Where to read: every datagram of such a stream says where its message's
 * record starts in the ring, and the records lie there in the order sent.
 * So the numbers missing between two messages that arrived lie between
 * the end of the first's record and the start of the second's (or, for
 * a lost tail, a heartbeat's ring end): one READ of that span, which holds
 * the publisher's other topics' records too, walked and checked record by
 * record (retain_scan.h). The span is remembered when the gap is seen,
 * MSGA__UD_READ_SPANS per stream; a gap with no span (a late joiner's
 * history, an evicted span), or a span over MSGA__UD_READ_MAX, is NAKed.
 *
 * A torn copy: the publisher goes on writing its ring while it is read.
 * A fenced READ of the ring's head follows the span's; a head past the
 * span's start means some of it may have been written over, and the whole
 * range is NAKed (the publisher answers LOST for what it no longer has).
 *
 * Connections: one RC connection per publisher, made when its first
 * datagram announces a READ endpoint (its address is the datagram's
 * sender), at most MSGA__UD_RCONN_MAX (least recently used idle one
 * replaced); a failed one is tried again after MSGA__UD_RCONN_RETRY_NS.
 * Its completions are polled like any endpoint's.
 */
#include <string.h>

#include <infiniband/ib.h>

#include "cq_drain.h"
#include "mcast.h"
#include "pubsub.h"
#include "read_wire.h"
#include "auth_wire.h"
#include "retain.h"
#include "retain_scan.h"

static const struct msga__ep_ops rconn_ops;

/* Landing area of batch i: the span's bytes, then the ring's head. */
#define LAND_SLOT (MSGA__UD_READ_MAX + 64u)

static struct msga__rconn *rconn_of(struct msga__ep *e)
{
	return msga__container_of(e, struct msga__rconn, eng);
}

int msga__mread_init(struct msga_sub *sub)
{
	if (sub->ud.rstreams)
		return 0;
	sub->ud.rstreams = calloc(MSGA__UD_STREAMS_ALL, sizeof(*sub->ud.rstreams));
	sub->ud.rconns = calloc(MSGA__UD_RCONN_MAX, sizeof(*sub->ud.rconns));
	if (!sub->ud.rstreams || !sub->ud.rconns) {
		msga__mread_fini(sub);
		return -ENOMEM;
	}
	return 0;
}

static void rconn_teardown(struct msga__rconn *rc)
{
	if (rc->id && rc->id->qp)
		rdma_destroy_qp(rc->id);
	if (rc->cq)
		ibv_destroy_cq(rc->cq);
	rc->cq = NULL;
	if (rc->id)
		rdma_destroy_id(rc->id);
	rc->id = NULL;
	if (rc->land_mr)
		ibv_dereg_mr(rc->land_mr);
	rc->land_mr = NULL;
	free(rc->land);
	rc->land = NULL;
}

static void rconn_free(struct msga__rconn *rc)
{
	rconn_teardown(rc);
	msga__ep_del(&rc->eng);
	free(rc);
}

void msga__mread_fini(struct msga_sub *sub)
{
	for (uint32_t i = 0; sub->ud.rconns && i < MSGA__UD_RCONN_MAX; i++)
		if (sub->ud.rconns[i])
			rconn_free(sub->ud.rconns[i]);
	free(sub->ud.rconns);
	free(sub->ud.rstreams);
	sub->ud.rconns = NULL;
	sub->ud.rstreams = NULL;
}

void msga__mread_forget(struct msga_sub *sub, uint32_t idx)
{
	if (sub->ud.rstreams && idx < MSGA__UD_STREAMS_ALL)
		memset(&sub->ud.rstreams[idx], 0, sizeof(sub->ud.rstreams[idx]));
}

static struct msga__rconn *rconn_find(struct msga_sub *sub, uint64_t origin)
{
	for (uint32_t i = 0; i < MSGA__UD_RCONN_MAX; i++)
		if (sub->ud.rconns[i] && sub->ud.rconns[i]->origin == origin)
			return sub->ud.rconns[i];
	return NULL;
}

/*
 * The ranges of every READ in flight go to NAKs: the connection failed,
 * or a READ did not come back whole.
 */
static void batch_to_nak(struct msga__rconn *rc, struct msga__rbatch *b)
{
	struct msga_sub *sub = rc->sub;
	struct msga__ustream *s = &sub->ud.streams.streams[b->idx];

	b->busy = 0;
	sub->ud.st.read_fallbacks++;
	if (b->idx < sub->ud.streams.top && s->used && s->repaired &&
	    s->origin == b->origin)
		msga__mrep_nak(sub, s, b->seq, b->count);
}

static void rconn_fail(struct msga__rconn *rc)
{
	for (uint32_t i = 0; i < MSGA__UD_READ_BATCHES; i++)
		if (rc->b[i].busy)
			batch_to_nak(rc, &rc->b[i]);
	rconn_teardown(rc);
	rc->inflight = 0;
	rc->state = MSGA__R_FAILED;
	rc->since_ns = msga__now_ns();
}

/*
 * The publisher's address for rdma_cm, from its GID and port: an
 * IPv4-mapped GID (RoCE v2 over IPv4) is that IPv4 address; on
 * InfiniBand the GID itself, as AF_IB with the service ID rdma_cm gives
 * a TCP port (untested here: no InfiniBand in the test bed); otherwise
 * the GID as an IPv6 address (RoCE over IPv6).
 */
static void publisher_addr(const struct msga_ctx *ctx, const union ibv_gid *gid,
			   uint16_t port, struct sockaddr_storage *ss)
{
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };

	memset(ss, 0, sizeof(*ss));
	if (!memcmp(gid->raw, v4mapped, sizeof(v4mapped))) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, &gid->raw[12], 4);
		in->sin_port = htons(port);
	} else if (ctx->port_attr.link_layer == IBV_LINK_LAYER_INFINIBAND) {
		struct sockaddr_ib *ib = (struct sockaddr_ib *)ss;

		ib->sib_family = AF_IB;
		ib->sib_pkey = htobe16(0xffff);
		memcpy(&ib->sib_addr, gid->raw, 16);
		ib->sib_sid = htobe64(RDMA_IB_IP_PS_TCP | port);
		ib->sib_sid_mask = htobe64(RDMA_IB_IP_PS_MASK |
					   RDMA_IB_IP_PORT_MASK);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, gid->raw, 16);
		in6->sin6_port = htons(port);
	}
}

/* Start connecting rc to the publisher at gid, port. */
static int rconn_start(struct msga__rconn *rc, const union ibv_gid *gid,
		       uint16_t port)
{
	struct msga_ctx *ctx = rc->sub->ctx;
	struct sockaddr_storage to, from;
	int ret = msga__ctx_cm_channel(ctx);

	if (ret)
		return ret;
	publisher_addr(ctx, gid, port, &to);
	if (rdma_create_id(ctx->cm_ch, &rc->id, &rc->eng, RDMA_PS_TCP))
		return -ENOMEM;
	rc->state = MSGA__R_RESOLVING;
	rc->since_ns = msga__now_ns();
	/* from our device's address, so that the route uses our device */
	if (to.ss_family != AF_IB && !msga__ctx_local_addr(ctx, &from) &&
	    from.ss_family == to.ss_family)
		ret = rdma_resolve_addr(rc->id, (struct sockaddr *)&from,
					(struct sockaddr *)&to,
					MSGA__UD_RCONN_RESOLVE_MS);
	else
		ret = rdma_resolve_addr(rc->id, NULL, (struct sockaddr *)&to,
					MSGA__UD_RCONN_RESOLVE_MS);
	if (ret)
		return -EHOSTUNREACH;
	msga__ctx_cm_soon(ctx);
	return 0;
}

/* A slot for origin's connection: free, or the least recently used idle. */
static struct msga__rconn **rconn_slot(struct msga_sub *sub)
{
	struct msga__rconn **pick = NULL;

	for (uint32_t i = 0; i < MSGA__UD_RCONN_MAX; i++) {
		struct msga__rconn *rc = sub->ud.rconns[i];
		int idle = 1;

		if (!rc)
			return &sub->ud.rconns[i];
		for (uint32_t j = 0; j < MSGA__UD_READ_BATCHES; j++)
			idle &= !rc->b[j].busy;
		if (idle && (!pick || rc->used_ns < (*pick)->used_ns))
			pick = &sub->ud.rconns[i];
	}
	if (pick) {
		rconn_free(*pick);
		*pick = NULL;
	}
	return pick;
}

/* A datagram of origin announces a READ endpoint: connect, once. */
static void rconn_want(struct msga__udep *ep, uint64_t origin, uint16_t port)
{
	struct msga_sub *sub = ep->sub;
	struct msga__rconn *rc = rconn_find(sub, origin), **slot;
	union ibv_gid gid;
	uint64_t now;

	if (rc && rc->state != MSGA__R_FAILED)
		return;
	now = msga__now_ns();
	if (rc && !msga__time_reached(now, rc->since_ns +
				      MSGA__UD_RCONN_RETRY_NS))
		return;
	if (!ep->rx_wc || !(ep->rx_wc->wc_flags & IBV_WC_GRH))
		return;
	msga__mrep_sender_gid(ep->rx_grh, &gid);
	if (!rc) {
		slot = rconn_slot(sub);
		if (!slot)
			return; /* all busy reading: NAKs serve meanwhile */
		rc = calloc(1, sizeof(*rc));
		if (!rc)
			return;
		rc->sub = sub;
		rc->origin = origin;
		msga__ep_add(sub->ctx, &rc->eng, &rconn_ops, 1);
		*slot = rc;
	}
	rc->used_ns = now;
	if (rconn_start(rc, &gid, port))
		rconn_fail(rc);
}

/* Route known: the QP, the landing area, and the connect. */
static int rconn_connect(struct msga__rconn *rc)
{
	struct msga_ctx *ctx = rc->sub->ctx;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 3 * MSGA__UD_READ_BATCHES,
			 .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = { .retry_count = 7, .rnr_retry_count = 7 };
	uint8_t pdata[MSGA__AUTH_RREQ_LEN];

	if (rc->id->verbs != ctx->verbs)
		return -ENODEV; /* the publisher is reached on another device */
	rc->cq = msga__cq_open(ctx, (int)qia.cap.max_send_wr + 1, &rc->armed);
	if (!rc->cq)
		return -ENOMEM;
	qia.send_cq = rc->cq;
	qia.recv_cq = rc->cq;
	/* (ctx->pd, like the landing area its READs write: it holds no
	 * memory a peer may reach, internal.h) */
	if (rdma_create_qp(rc->id, ctx->pd, &qia))
		return -ENOMEM;
	rc->land = msga__reg_buf(ctx, (size_t)MSGA__UD_READ_BATCHES * LAND_SLOT,
				 &rc->land_mr);
	if (!rc->land)
		return -ENOMEM;
	cp.initiator_depth = ctx->dev_attr.max_qp_init_rd_atom < 16 ?
			     (uint8_t)ctx->dev_attr.max_qp_init_rd_atom : 16;
	cp.responder_resources = 0;
	cp.private_data = pdata;
	cp.private_data_len = (uint8_t)msga__read_auth_connect(rc, pdata);
	if (rdma_connect(rc->id, &cp))
		return -ECONNREFUSED;
	rc->state = MSGA__R_CONNECTING;
	rc->since_ns = msga__now_ns();
	return 0;
}

static void rconn_on_cm(struct msga__ep *e, const struct rdma_cm_event *ev)
{
	struct msga__rconn *rc = rconn_of(e);
	struct msga__rdw_offer offer;

	if (ev->id != rc->id)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(rc->id, MSGA__UD_RCONN_RESOLVE_MS))
			rconn_fail(rc);
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (rconn_connect(rc))
			rconn_fail(rc);
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* the offer is the publisher's word: checked, then kept */
		if (msga__rdw_get(ev->param.conn.private_data,
				  ev->param.conn.private_data_len, &offer) ||
		    msga__read_auth_established(rc,
						ev->param.conn.private_data,
						ev->param.conn.private_data_len)) {
			rconn_fail(rc);
			return;
		}
		rc->rkey = offer.rkey;
		rc->cap = offer.cap;
		rc->state = MSGA__R_READY;
		return;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		rconn_fail(rc);
		return;
	default:
		return;
	}
}

/* The span of s's ring that holds [seq, seq + count), or NULL. */
static const struct msga__rspan *span_of(const struct msga__rstream *rs,
					 uint64_t seq, uint64_t count)
{
	for (uint32_t i = 0; i < MSGA__UD_READ_SPANS; i++) {
		const struct msga__rspan *sp = &rs->spans[i];

		if (sp->hi && sp->first <= seq && seq - sp->first < 1 +
		    sp->last - sp->first && count - 1 <= sp->last - seq)
			return sp;
	}
	return NULL;
}

/* Post the READs of batch i: the span (one or two pieces), then head. */
static int post_batch(struct msga__rconn *rc, uint32_t i)
{
	struct msga__rbatch *b = &rc->b[i];
	char *land = rc->land + (size_t)i * LAND_SLOT;
	uint64_t off = b->lo % rc->cap, n = b->hi - b->lo;
	uint64_t first = n < rc->cap - off ? n : rc->cap - off;
	struct ibv_sge sge[3] = {
		{ (uintptr_t)land, (uint32_t)first, rc->land_mr->lkey },
		{ (uintptr_t)land + first, (uint32_t)(n - first),
		  rc->land_mr->lkey },
		{ (uintptr_t)land + MSGA__UD_READ_MAX, 8, rc->land_mr->lkey },
	};
	struct ibv_send_wr wr[3], *bad;
	uint32_t k = 0;

	memset(wr, 0, sizeof(wr));
	/* (addresses are offsets: the block is registered zero-based) */
	wr[k].sg_list = &sge[0];
	wr[k].wr.rdma.remote_addr = MSGA__RETAIN_CTRL + off;
	k++;
	if (n > first) { /* past the ring's end: the rest from its start */
		wr[k].sg_list = &sge[1];
		wr[k].wr.rdma.remote_addr = MSGA__RETAIN_CTRL;
		k++;
	}
	/* after the span's READs have completed (fence): the head then */
	wr[k].sg_list = &sge[2];
	wr[k].wr.rdma.remote_addr = offsetof(struct msga__retain_ctrl, head);
	wr[k].send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
	k++;
	for (uint32_t j = 0; j < k; j++) {
		wr[j].wr_id = i;
		wr[j].opcode = IBV_WR_RDMA_READ;
		wr[j].num_sge = 1;
		wr[j].wr.rdma.rkey = rc->rkey;
		wr[j].next = j + 1 < k ? &wr[j + 1] : NULL;
	}
	return ibv_post_send(rc->id->qp, wr, &bad) ? -EIO : 0;
}

/*
 * Repair [seq, seq + count) of stream s (index idx) by READ: 0 if a READ
 * went out, or -errno and the caller NAKs.
 */
int msga__mread_request(struct msga_sub *sub, struct msga__ustream *s,
			uint32_t idx, uint64_t seq, uint64_t count)
{
	struct msga__rconn *rc;
	const struct msga__rspan *sp;
	struct msga__rbatch *b = NULL;
	uint32_t i;

	if (!sub->ud.rstreams || (sub->flags & MSGA_SUB_REPAIR_BY_NAK))
		return -EOPNOTSUPP;
	rc = rconn_find(sub, s->origin);
	if (!rc || rc->state != MSGA__R_READY)
		return -ENOTCONN;
	sp = span_of(&sub->ud.rstreams[idx], seq, count);
	for (i = 0; i < MSGA__UD_READ_BATCHES && !b; i++)
		if (!rc->b[i].busy)
			b = &rc->b[i];
	if (!sp || !b || sp->hi - sp->lo > MSGA__UD_READ_MAX ||
	    sp->hi - sp->lo > rc->cap) {
		sub->ud.st.read_fallbacks++;
		return -ENOSPC;
	}
	i = (uint32_t)(b - rc->b);
	*b = (struct msga__rbatch){ .busy = 1, .idx = idx, .origin = s->origin,
				    .seq = seq, .count = count, .lo = sp->lo,
				    .hi = sp->hi };
	rc->inflight++;
	if (post_batch(rc, i)) {
		b->busy = 0;
		rc->inflight--;
		rconn_fail(rc);
		sub->ud.st.read_fallbacks++;
		return -EIO;
	}
	rc->used_ns = msga__now_ns();
	s->reads++;
	sub->ud.st.reads++;
	return 0;
}

struct found_ctx {
	struct msga__rconn *rc;
	struct msga__rbatch *b;
	struct msga__ustream *s;
	struct msga__udep *ep;
	uint32_t topic_id;
	uint64_t now_ns;
};

/* A record of the span: one of the numbers asked for is delivered. */
static int on_record(void *arg, const struct msga__rscan_rec *rec)
{
	struct found_ctx *f = arg;
	struct msga__rbatch *b = f->b;
	struct msga__udw_hdr h = {
		.type = MSGA__UDW_DATA,
		.flags = MSGA__UDW_FIRST | MSGA__UDW_LAST | MSGA__UDW_RETX,
		.seq = rec->seq, .msg_len = rec->len, .origin = b->origin,
	};

	if (rec->topic_id != f->topic_id || rec->seq < b->seq ||
	    rec->seq - b->seq >= b->count)
		return 0; /* another topic's, or not asked for */
	b->found++;
	msga__mrep_deliver(f->ep, f->s, NULL, &h, rec->data, rec->len,
			   f->now_ns);
	/* a callback may have ended the membership or the subscriber */
	return f->ep->dead || f->rc->sub->dead || !f->s->used ? 1 : 0;
}

/* Batch i came back: check it was not torn, then take its records. */
static void batch_done(struct msga__rconn *rc, uint32_t i, uint64_t now_ns)
{
	struct msga_sub *sub = rc->sub;
	struct msga__rbatch *b = &rc->b[i];
	const char *land = rc->land + (size_t)i * LAND_SLOT;
	struct msga__ustream *s = &sub->ud.streams.streams[b->idx];
	struct found_ctx f = { .rc = rc, .b = b, .s = s, .now_ns = now_ns };
	uint64_t head;
	int ret;

	if (b->idx >= sub->ud.streams.top || !s->used || !s->repaired ||
	    s->origin != b->origin) {
		b->busy = 0; /* the stream went meanwhile */
		return;
	}
	f.ep = msga__msub_mship(sub, s->conn_id);
	f.topic_id = sub->ud.rstreams[b->idx].topic_id;
	memcpy(&head, land + MSGA__UD_READ_MAX, sizeof(head));
	if (!f.ep || head > b->lo) {
		batch_to_nak(rc, b); /* may be torn: the publisher decides */
		return;
	}
	ret = msga__retain_scan(land, b->lo, b->hi, rc->cap, MSGA_FRAG_MAX,
				on_record, &f);
	b->busy = 0;
	if (ret == 1)
		return; /* stopped by a callback */
	if (b->found < b->count) {
		/* what the span did not hold (or a bad record hid): NAK */
		sub->ud.st.read_fallbacks++;
		msga__mrep_nak(sub, s, b->seq, b->count);
	}
}

static int rconn_poll(struct msga__ep *e, int budget, uint64_t *now)
{
	struct msga__rconn *rc = rconn_of(e);
	struct ibv_wc wc[4];
	int n, done = 0;

	/* (nothing to poll while no READ is out: most polls) */
	if (!rc->inflight || !rc->cq || rc->state != MSGA__R_READY)
		return 0;
	while (done < budget && rc->cq &&
	       (n = msga__cq_drain(rc->cq, &rc->armed, rc->sub->ctx->evmode,
				   wc, 4)) > 0) {
		if (!*now)
			*now = msga__now_ns();
		for (int k = 0; k < n && rc->cq; k++) {
			if (wc[k].wr_id >= MSGA__UD_READ_BATCHES)
				continue;
			if (wc[k].status != IBV_WC_SUCCESS) {
				rconn_fail(rc); /* the QP is in error */
				break;
			}
			rc->inflight--; /* (only a batch's last is signaled) */
			batch_done(rc, (uint32_t)wc[k].wr_id, *now);
			if (rc->sub->dead)
				return done + n;
		}
		done += n;
	}
	return done;
}

/* A handshake that hangs is given up (and tried again later). */
static uint64_t rconn_tick(struct msga__ep *e, uint64_t now)
{
	struct msga__rconn *rc = rconn_of(e);
	uint64_t due = rc->since_ns + 2 * MSGA__UD_READER_HANDSHAKE_NS;

	if (rc->state != MSGA__R_RESOLVING && rc->state != MSGA__R_CONNECTING)
		return UINT64_MAX;
	if (msga__time_reached(now, due)) {
		rconn_fail(rc);
		return UINT64_MAX;
	}
	return due;
}

static void rconn_arm(struct msga__ep *e)
{
	struct msga__rconn *rc = rconn_of(e);

	msga__cq_arm(rc->cq, &rc->armed);
}

/* The subscriber frees it (msga__mread_fini). */
static int rconn_reap(struct msga__ep *e, uint64_t now)
{
	(void)e;
	(void)now;
	return 0;
}

static void rconn_destroy(struct msga__ep *e)
{
	struct msga__rconn *rc = rconn_of(e);
	struct msga_sub *sub = rc->sub;

	for (uint32_t i = 0; sub->ud.rconns && i < MSGA__UD_RCONN_MAX; i++)
		if (sub->ud.rconns[i] == rc)
			sub->ud.rconns[i] = NULL;
	rconn_free(rc);
}

/*
 * A live datagram of a repaired stream with RPOS: where its record lies
 * (or, a heartbeat, where the ring ends), so that a gap it shows comes
 * with its span; and its publisher's READ endpoint, to connect to.
 */
void msga__mread_note(struct msga__udep *ep, struct msga__ustream *s,
		      const struct msga__udw_hdr *h)
{
	struct msga_sub *sub = ep->sub;
	struct msga__rstream *rs;
	uint64_t end;

	if (!sub->ud.rstreams || (h->flags & MSGA__UDW_RETX) ||
	    (sub->flags & MSGA_SUB_REPAIR_BY_NAK) || !s->nak_ok)
		return;
	rs = &sub->ud.rstreams[msga__ustreams_pos(&sub->ud.streams, s)];
	/*
	 * Connect on a stream's first datagram, and look again at each
	 * heartbeat (a failed connection is tried again then): not on every
	 * message, whose path this is.
	 */
	if (h->read_port && (!rs->top || h->type != MSGA__UDW_DATA))
		rconn_want(ep, h->origin, h->read_port);
	if (h->seq <= rs->top)
		return; /* known already (a fragment, a late copy) */
	/* a record's end; a message too large to keep has none */
	end = h->type != MSGA__UDW_DATA ? h->rpos :
	      h->msg_len <= MSGA_FRAG_MAX ?
	      h->rpos + msga__retain_rec_size(h->msg_len) : h->rpos;
	if (rs->top && rs->topic_id == h->topic_id && h->rpos >= rs->end &&
	    (h->seq > rs->top + 1 || h->type != MSGA__UDW_DATA)) {
		/* the numbers after top and before this one lie here */
		struct msga__rspan *sp = &rs->spans[rs->next_span++ %
						     MSGA__UD_READ_SPANS];

		sp->first = rs->top + 1;
		sp->last = h->type == MSGA__UDW_DATA ? h->seq - 1 : h->seq;
		sp->lo = rs->end;
		sp->hi = h->rpos;
	}
	rs->top = h->seq;
	rs->end = end;
	rs->topic_id = h->topic_id;
}

static const struct msga__ep_ops rconn_ops = {
	.poll = rconn_poll,
	.on_cm = rconn_on_cm,
	.tick = rconn_tick,
	.arm = rconn_arm,
	.reap = rconn_reap,
	.destroy = rconn_destroy,
};
