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
 * a lost tail, a heartbeat's ring end). That span, which holds the
 * publisher's other topics' records too, goes to the connection's READ
 * schedule (repair_sched.h) when the gap is seen: spans of one ring are
 * merged (the topics of one outage share one), read in chunks of at most
 * MSGA__UD_READ_MAX, the oldest first, MSGA__UD_READ_BATCHES in flight,
 * and each chunk is walked record by record (retain_scan.h) from where
 * the one before stopped. A record is handed to whichever of our streams
 * of that publisher its topic is, if its number is still missing there;
 * what READ did not find (a late joiner's history, which has no span; a
 * message too large to keep; a span READ dropped) is NAKed.
 *
 * A torn copy: the publisher goes on writing its ring while it is read.
 * A fenced READ of the ring's head follows each chunk's; a head past
 * where the chunk's walk begins means some of it may have been written
 * over: the span is dropped from the schedule, and its numbers still
 * missing are NAKed (the publisher answers LOST for what it no longer
 * has).
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

/* Landing area of chunk id: its bytes, then the ring's head. */
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
	msga__rsched_clear(&rc->sched);
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
	msga__rsched_fini(&rc->sched);
	free(rc->topics);
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
 * The connection failed (or a READ did not come back whole, which puts
 * the QP in error): everything scheduled is dropped, and NAKs repair it.
 */
static void rconn_fail(struct msga__rconn *rc)
{
	if (rc->sched.nreg)
		rc->sub->ud.st.read_fallbacks++;
	rconn_teardown(rc);
	rc->state = MSGA__R_FAILED;
	rc->since_ns = msga__now_ns();
	rc->broke_ns = rc->since_ns;
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

/*
 * Start connecting rc to the publisher at gid, port, from bind (the
 * membership's ?bind= address, 0.10) or else the context's address.
 */
static int rconn_start(struct msga__rconn *rc, const union ibv_gid *gid,
		       uint16_t port, const struct sockaddr_storage *bind)
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
	/* from our device's address, so that the route uses our device;
	 * a membership bound elsewhere reads from there, as it joined */
	if (bind)
		from = *bind;
	if (to.ss_family != AF_IB &&
	    (bind || !msga__ctx_local_addr(ctx, &from)) &&
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
		idle = !rc->sched.inflight && !rc->sched.nreg;
		if (idle && (!pick || rc->used_ns < (*pick)->used_ns))
			pick = &sub->ud.rconns[i];
	}
	if (pick) {
		rconn_free(*pick);
		*pick = NULL;
	}
	return pick;
}

/*
 * The READ schedule of a connection: chunks no larger than the landing
 * slot; successive chunks overlap by the largest record, so that one the
 * chunk's end cuts lies whole in the next.
 */
static int sched_init(struct msga__rsched *sched)
{
	struct msga__rsched_cfg cfg = {
		.chunk_max = MSGA__UD_READ_MAX,
		.overlap = msga__retain_rec_size(MSGA_FRAG_MAX),
		.max_inflight = MSGA__UD_READ_BATCHES,
		.max_regions = MSGA__UD_READ_REGIONS,
	};

	return msga__rsched_init(sched, &cfg);
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
	msga__ud_sender_gid(ep->rx_grh, &gid);
	if (!rc) {
		slot = rconn_slot(sub);
		if (!slot)
			return; /* all busy reading: NAKs serve meanwhile */
		rc = calloc(1, sizeof(*rc));
		if (!rc)
			return;
		if (sched_init(&rc->sched)) {
			free(rc);
			return;
		}
		rc->sub = sub;
		rc->origin = origin;
		msga__ep_add(sub->ctx, &rc->eng, &rconn_ops, 1);
		*slot = rc;
	}
	rc->used_ns = now;
	if (rconn_start(rc, &gid, port, ep->has_bind ? &ep->bind : NULL))
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
		/* (a chunk never holds more than the ring) */
		if (rc->cap < rc->sched.cfg.chunk_max) {
			if (rc->cap <= rc->sched.cfg.overlap) {
				rconn_fail(rc); /* too small to read: NAK */
				return;
			}
			rc->sched.cfg.chunk_max = rc->cap & ~7ull;
		}
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

/* Post the READs of chunk id, [lo, hi): the bytes (one or two pieces
 * where the ring wraps), then, fenced, the ring's head. */
static int post_chunk(struct msga__rconn *rc, uint32_t id, uint64_t lo,
		      uint64_t hi)
{
	char *land = rc->land + (size_t)id * LAND_SLOT;
	uint64_t off = lo % rc->cap, n = hi - lo;
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
	/* after the chunk's READs have completed (fence): the head then */
	wr[k].sg_list = &sge[2];
	wr[k].wr.rdma.remote_addr = offsetof(struct msga__retain_ctrl, head);
	wr[k].send_flags = IBV_SEND_FENCE | IBV_SEND_SIGNALED;
	k++;
	for (uint32_t j = 0; j < k; j++) {
		wr[j].wr_id = id;
		wr[j].opcode = IBV_WR_RDMA_READ;
		wr[j].num_sge = 1;
		wr[j].wr.rdma.rkey = rc->rkey;
		wr[j].next = j + 1 < k ? &wr[j + 1] : NULL;
	}
	return ibv_post_send(rc->id->qp, wr, &bad) ? -EIO : 0;
}

/* As many chunks out as the schedule has and the connection allows. */
static void pump(struct msga__rconn *rc)
{
	uint64_t lo, hi;
	uint32_t id;

	while (rc->state == MSGA__R_READY &&
	       msga__rsched_next(&rc->sched, &id, &lo, &hi)) {
		if (post_chunk(rc, id, lo, hi)) {
			rconn_fail(rc);
			return;
		}
		rc->used_ns = msga__now_ns();
		rc->sub->ud.st.reads++;
	}
}

/*
 * Whether READ is still to look for number seq of stream s (index idx):
 * its span was scheduled, and the schedule has not yet walked past it,
 * and READ has dropped nothing lately. Then its NAK waits (1).
 */
int msga__mread_covers(struct msga_sub *sub, const struct msga__ustream *s,
		       uint32_t idx, uint64_t seq, uint64_t now_ns)
{
	const struct msga__rstream *rs;
	struct msga__rconn *rc;

	if (!sub->ud.rstreams || (sub->flags & MSGA_SUB_REPAIR_BY_NAK) ||
	    idx >= MSGA__UD_STREAMS_ALL)
		return 0;
	rs = &sub->ud.rstreams[idx];
	if (!rs->read_last || seq > rs->read_last)
		return 0;
	rc = rconn_find(sub, s->origin);
	if (!rc || rc->state != MSGA__R_READY ||
	    (rc->broke_ns && !msga__time_reached(now_ns, rc->broke_ns +
					      2 * MSGA__UD_NAK_RETRY_NS)))
		return 0;
	return msga__rsched_low(&rc->sched) < rs->read_hi;
}

static int topic_cmp(const void *a, const void *b)
{
	const struct msga__rtopic *x = a, *y = b;

	return x->topic_id < y->topic_id ? -1 : x->topic_id > y->topic_id;
}

/*
 * Our streams of rc's publisher now, by its topic ids, for a chunk's
 * walk (a stream may have come or gone since the last).
 */
static int topics_load(struct msga__rconn *rc)
{
	struct msga_sub *sub = rc->sub;

	if (!rc->topics) {
		rc->topics = calloc(MSGA__UD_STREAMS_ALL, sizeof(*rc->topics));
		if (!rc->topics)
			return -ENOMEM;
	}
	rc->ntopics = 0;
	for (uint32_t i = 0; i < sub->ud.streams.top && i < MSGA__UD_STREAMS_ALL;
	     i++) {
		const struct msga__ustream *s = &sub->ud.streams.streams[i];
		struct msga__udep *ep;

		if (!s->used || !s->repaired || s->origin != rc->origin ||
		    !sub->ud.rstreams[i].top)
			continue;
		ep = sub->ud.up->mship(sub, s->conn_id);
		if (!ep || msga__udep_dead(ep))
			continue;
		rc->topics[rc->ntopics++] = (struct msga__rtopic){
			.topic_id = sub->ud.rstreams[i].topic_id, .idx = i,
			.ep = ep };
	}
	qsort(rc->topics, rc->ntopics, sizeof(*rc->topics), topic_cmp);
	return 0;
}

static struct msga__rtopic *topic_find(struct msga__rconn *rc, uint32_t id)
{
	struct msga__rtopic key = { .topic_id = id };

	return bsearch(&key, rc->topics, rc->ntopics, sizeof(*rc->topics),
		       topic_cmp);
}

struct walk_ctx {
	struct msga__rconn *rc;
	uint64_t now_ns;
};

/*
 * A record of the chunk: the peer's bytes, checked by the walk. Handed
 * on if its topic is one of our streams of that publisher and its number
 * is still missing there (the rest of a chunk is other topics', or what
 * arrived meanwhile).
 */
static int on_record(void *arg, const struct msga__rscan_rec *rec)
{
	struct walk_ctx *w = arg;
	struct msga_sub *sub = w->rc->sub;
	struct msga__rtopic *t = topic_find(w->rc, rec->topic_id);
	struct msga__ustream *s;

	if (!t || !t->ep ||
	    !msga__repair_missing(&sub->ud.repair, t->idx, rec->seq))
		return 0;
	s = &sub->ud.streams.streams[t->idx];
	t->took = 1;
	sub->ud.up->repaired(t->ep, s, rec->seq, rec->data, rec->len,
			     w->now_ns);
	if (sub->dead)
		return 1;
	/* a callback may have ended the membership or the stream */
	if (msga__udep_dead(t->ep) || !s->used || !s->repaired)
		t->ep = NULL;
	return 0;
}

/* The chunk lost its region, or could not be walked: NAKs take over. */
static void chunk_drop(struct msga__rconn *rc, uint32_t id, uint64_t now_ns)
{
	msga__rsched_fail(&rc->sched, id);
	rc->sub->ud.st.read_fallbacks++;
	rc->broke_ns = now_ns;
}

/*
 * Chunk id came back: not torn (the head read after it is not past where
 * its walk begins), then its records, from where the walk of the chunk
 * before stopped; then the next chunks out.
 */
static void chunk_done(struct msga__rconn *rc, uint32_t id, uint64_t now_ns)
{
	const struct msga__rsched_chunk *c = &rc->sched.ch[id];
	const char *land = rc->land + (size_t)id * LAND_SLOT;
	struct walk_ctx w = { .rc = rc, .now_ns = now_ns };
	uint64_t head, from = 0, stopped, lo = c->lo, hi = c->hi;
	int ret;

	memcpy(&head, land + MSGA__UD_READ_MAX, sizeof(head));
	ret = msga__rsched_walk_from(&rc->sched, id, &from);
	if (!ret && head > from) {
		/*
		 * Written over while read: what lies above the head is
		 * read again from there; what lies below is gone, and
		 * NAKs, answered LOST, say so.
		 */
		msga__rsched_retained(&rc->sched, head);
		ret = -ESPIPE;
	}
	if (!ret)
		ret = topics_load(rc);
	if (ret == -ENOENT) {
		msga__rsched_fail(&rc->sched, id); /* its region went */
	} else if (ret) {
		chunk_drop(rc, id, now_ns);
	} else {
		ret = msga__retain_walk(land, lo, from, hi, rc->cap,
					MSGA_FRAG_MAX, on_record, &w, &stopped);
		if (ret == 1)
			return; /* the subscriber is closing */
		if (ret || msga__rsched_done(&rc->sched, id, stopped) < 0)
			chunk_drop(rc, id, now_ns);
		for (uint32_t i = 0; i < rc->ntopics; i++)
			if (rc->topics[i].took)
				rc->sub->ud.streams.streams[rc->topics[i].idx]
					.reads++;
	}
	/* what the publisher no longer holds is not read: NAK says LOST */
	msga__rsched_retained(&rc->sched, head);
	pump(rc);
}

static int rconn_poll(struct msga__ep *e, int budget, uint64_t *now)
{
	struct msga__rconn *rc = rconn_of(e);
	struct ibv_wc wc[4];
	int n, done = 0;

	/* (nothing to poll while no READ is out: most polls) */
	if (!rc->sched.inflight || !rc->cq || rc->state != MSGA__R_READY)
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
			/* (only a chunk's last READ is signaled) */
			chunk_done(rc, (uint32_t)wc[k].wr_id, *now);
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
 * Ring positions [lo, hi) of origin's ring hold the numbers of rs up to
 * last that are missing: to the READ schedule, the oldest first. (The
 * positions are the peer's word: what they do not hold, the walk finds
 * torn or not valid.)
 */
static void schedule(struct msga_sub *sub, struct msga__rstream *rs,
		     uint64_t origin, uint64_t lo, uint64_t hi, uint64_t last)
{
	struct msga__rconn *rc = rconn_find(sub, origin);

	/*
	 * (A span longer than the ring starts below what it still holds:
	 * the first chunk finds the head past it and starts again there.)
	 */
	if (!rc || rc->state != MSGA__R_READY || lo % 8 || hi % 8)
		return; /* no READ: the gap is NAKed */
	if (msga__rsched_add(&rc->sched, lo, hi))
		return;
	rs->read_last = last;
	rs->read_hi = hi;
	pump(rc);
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
	if (rs->top && rs->topic_id == h->topic_id && h->rpos > rs->end &&
	    (h->seq > rs->top + 1 || h->type != MSGA__UDW_DATA))
		/* the numbers after top and before this one lie here */
		schedule(sub, rs, h->origin, rs->end, h->rpos,
			 h->type == MSGA__UDW_DATA ? h->seq - 1 : h->seq);
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
