/* SPDX-License-Identifier: MIT */
/*
 * mcast_serve.c - a reliable multicast publisher's READ endpoint: its
 * subscribers repair losses by reading the retention ring (retain.h)
 * with one-sided RDMA READ, so a repair costs the publisher no CPU and
 * no send-queue slot, and cannot delay the live stream.
 *
 * It is an rdma_cm listener on the publisher's address, on a port of its
 * own that every datagram announces (ud_wire.h, RPOS). A subscriber that
 * connects gets an RC queue pair that only answers its READs: nothing is
 * posted on it and nothing completes (one CQ for all, never polled). The
 * accept's private data gives the key of the retention block, registered
 * zero-based for remote read only (read_wire.h): the block holds nothing
 * but what the publisher already sent to the group. The block and the
 * readers' QPs have a protection domain of their own, so its key reads
 * nothing through any other QP of the context (an RC connection's).
 *
 * It is not an endpoint of the engine's lists: it has no completions to
 * poll, and it lives exactly as long as its publisher (made by
 * msga__mpub_create, freed by the publisher's free), so no engine walk
 * can hold it when it goes. Its timer runs in the publisher's
 * (msga__mpub_tick, from the publisher's UD endpoint's tick); its
 * struct msga__ep is only the context of its rdma_cm ids, so that the
 * engine hands their events to serve_on_cm.
 *
 * Bounded: at most MSGA__UD_READERS_MAX connections (more are rejected,
 * and those subscribers NAK instead), each handshake finished within
 * MSGA__UD_READER_HANDSHAKE_NS or dropped; each QP takes at most
 * MSGA__UD_READER_DEPTH READs at once.
 */
#include <string.h>

#include "mcast.h"
#include "pubsub.h"
#include "read_wire.h"
#include "auth_wire.h"

static const struct msga__ep_ops serve_ops;

static struct msga__rserve *serve_of(struct msga__ep *e)
{
	return msga__container_of(e, struct msga__rserve, eng);
}

static void reader_drop(struct msga__rserve *sv, struct msga__rreader *r)
{
	if (r->id->qp)
		rdma_destroy_qp(r->id);
	rdma_destroy_id(r->id);
	memset(r, 0, sizeof(*r));
	sv->nreaders--;
}

static struct msga__rreader *reader_of(struct msga__rserve *sv,
				       const struct rdma_cm_id *id)
{
	for (uint32_t i = 0; i < MSGA__UD_READERS_MAX; i++)
		if (sv->readers[i].id == id)
			return &sv->readers[i];
	return NULL;
}

/* A reader without the key: refused before anything is made for it. */
static void refuse(struct msga__rserve *sv, struct rdma_cm_id *id)
{
	struct msga_pub *pub = sv->pub;
	char peer[64];

	sv->refused++;
	msga__cm_reject(id, EACCES, peer, sizeof(peer));
	msga__reject_report(&pub->rejects, msga__now_ns(), -EACCES, peer, pub,
			    pub->on_event, pub->user);
}

/* A subscriber asks to read: a QP that answers READs, and the offer. */
static void on_request(struct msga__rserve *sv, struct rdma_cm_id *id,
		       const void *pdata, size_t plen)
{
	struct msga_ctx *ctx = sv->ctx;
	struct ibv_qp_init_attr qia = {
		.qp_type = IBV_QPT_RC,
		.send_cq = sv->cq, .recv_cq = sv->cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct rdma_conn_param cp = { .rnr_retry_count = 7 };
	uint8_t offer[MSGA__RDW_LEN + MSGA__AUTH_TAG_LEN];
	uint8_t nonce[MSGA__AUTH_NONCE_LEN];
	struct msga__rreader *r = NULL;
	const struct msga__key *key;

	if (msga__read_auth_request(sv, pdata, plen, &key, nonce))
		return refuse(sv, id);

	for (uint32_t i = 0; i < MSGA__UD_READERS_MAX && !r; i++)
		if (!sv->readers[i].id)
			r = &sv->readers[i];
	/* another device's request, or no room: it NAKs instead */
	if (!r || id->verbs != ctx->verbs ||
	    rdma_create_qp(id, sv->pd, &qia)) {
		sv->refused++;
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	r->id = id;
	r->since_ns = msga__now_ns();
	sv->nreaders++;
	msga__rdw_put(offer, &(struct msga__rdw_offer){
		.rkey = sv->mr->rkey, .len = sv->len, .cap = sv->cap });
	cp.private_data = offer;
	cp.private_data_len = (uint8_t)msga__read_auth_accept(key, nonce,
							      offer);
	/* READs it may have in flight at once: it asks for up to 16 */
	cp.responder_resources = ctx->dev_attr.max_qp_rd_atom < 16 ?
				 (uint8_t)ctx->dev_attr.max_qp_rd_atom : 16;
	cp.initiator_depth = 0;
	if (rdma_accept(id, &cp)) {
		sv->refused++;
		reader_drop(sv, r);
		return;
	}
	msga__ctx_cm_soon(ctx);
}

static void serve_on_cm(struct msga__ep *e, const struct rdma_cm_event *ev)
{
	struct msga__rserve *sv = serve_of(e);
	struct msga__rreader *r;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(sv, ev->id, ev->param.conn.private_data,
			   ev->param.conn.private_data_len);
		return;
	}
	r = reader_of(sv, ev->id);
	if (!r)
		return; /* the listener's own (a device removal: see below) */
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		r->established = 1;
		sv->served++;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		rdma_disconnect(r->id);
		reader_drop(sv, r);
		break;
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		reader_drop(sv, r);
		break;
	default:
		break;
	}
}

/* Handshakes that never finished are dropped (the publisher's tick). */
uint64_t msga__mpub_serve_tick(struct msga_pub *pub, uint64_t now)
{
	struct msga__rserve *sv = pub->ud.serve;
	uint64_t next = UINT64_MAX;

	for (uint32_t i = 0; sv && i < MSGA__UD_READERS_MAX; i++) {
		struct msga__rreader *r = &sv->readers[i];
		uint64_t due = r->since_ns + MSGA__UD_READER_HANDSHAKE_NS;

		if (!r->id || r->established)
			continue;
		if (msga__time_reached(now, due)) {
			sv->refused++;
			reader_drop(sv, r);
		} else if (due < next) {
			next = due;
		}
	}
	return next;
}

static void serve_free(struct msga__rserve *sv)
{
	for (uint32_t i = 0; i < MSGA__UD_READERS_MAX; i++)
		if (sv->readers[i].id)
			reader_drop(sv, &sv->readers[i]);
	if (sv->listen)
		rdma_destroy_id(sv->listen);
	/* QPs first, then the key, then its PD: the publisher frees the
	 * block after this (msga__mpub_serve_fini). */
	if (sv->mr)
		ibv_dereg_mr(sv->mr);
	if (sv->pd)
		ibv_dealloc_pd(sv->pd);
	if (sv->cq)
		ibv_destroy_cq(sv->cq);
	free(sv);
}

/*
 * The READ endpoint of a reliable publisher whose UD endpoint is up: 0,
 * or -errno when it cannot be had (then subscribers NAK, and the
 * publisher works on without it).
 */
int msga__mpub_serve_init(struct msga_pub *pub)
{
	struct msga_ctx *ctx = pub->ctx;
	struct msga__rserve *sv;
	struct sockaddr_storage at;
	int ret;

	if (!pub->ud.reliable || pub->ud.unicast || ctx->transport ==
	    MSGA_TRANSPORT_IWARP)
		return -EOPNOTSUPP;
	sv = calloc(1, sizeof(*sv));
	if (!sv)
		return -ENOMEM;
	sv->ctx = ctx;
	sv->pub = pub;
	sv->len = pub->ud.retain.mem_len;
	sv->cap = pub->ud.retain.cap;
	msga__replay_guard_init(&sv->replay, MSGA__READ_AUTH_WINDOW_MS);
	/* on no list: only its ids' context (see the top) */
	msga__ep_init(ctx, &sv->eng, &serve_ops);
	ret = -ENOMEM;
	sv->cq = ibv_create_cq(ctx->verbs, 2, NULL, NULL, 0);
	sv->pd = sv->cq ? ibv_alloc_pd(ctx->verbs) : NULL;
	/* zero-based: offsets on the wire, never our addresses */
	if (sv->pd)
		sv->mr = msga__reg_zero_based(ctx, sv->pd, pub->ud.retain.mem,
					      sv->len, IBV_ACCESS_REMOTE_READ);
	if (sv->mr)
		ret = msga__ctx_cm_channel(ctx);
	if (!ret) {
		/* the address the UD endpoint is bound to, any port */
		at = *(struct sockaddr_storage *)rdma_get_local_addr(pub->ud.ep->cm);
		if (at.ss_family == AF_INET)
			((struct sockaddr_in *)&at)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&at)->sin6_port = 0;
		ret = -EADDRNOTAVAIL;
		if (!rdma_create_id(ctx->cm_ch, &sv->listen, &sv->eng,
				    RDMA_PS_TCP) &&
		    !rdma_bind_addr(sv->listen, (struct sockaddr *)&at) &&
		    !rdma_listen(sv->listen, MSGA__UD_READERS_MAX))
			ret = 0;
	}
	if (ret) {
		serve_free(sv);
		return ret;
	}
	sv->port = ntohs(rdma_get_src_port(sv->listen));
	pub->ud.serve = sv;
	pub->ud.rpos_flag = MSGA__UDW_RPOS;
	return 0;
}

void msga__mpub_serve_fini(struct msga_pub *pub)
{
	if (pub->ud.serve) {
		pub->ud.serve->pub = NULL;
		serve_free(pub->ud.serve);
	}
	pub->ud.serve = NULL;
	pub->ud.rpos_flag = 0;
}

/* Its ids' events only: it is polled, ticked, reaped by no one. */
static const struct msga__ep_ops serve_ops = {
	.on_cm = serve_on_cm,
};
