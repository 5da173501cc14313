/* SPDX-License-Identifier: MIT */
/*
 * dgram_auth.c - forged datagrams, in a context with keys (msgaccel(7),
 * SECURITY).
 *
 * The Q_Key. Every UD queue pair of such a context, and every datagram
 * it sends, uses ctx->qkey (msga__auth_qkey: derived from its own key,
 * bit 31 clear; after msga_ctx_reload_keys(), each endpoint keeps the
 * one it was made with) instead of rdma_cm's well-known RDMA_UDP_QKEY, so that
 * the HCA drops a datagram sent with the default Q_Key (anyone's who
 * joined the group, or who knows our QPN) before it costs us a CPU
 * cycle. rdma_cm sets RDMA_UDP_QKEY on the QPs it creates (librdmacm's
 * ucma_init_ud_qp asks the kernel, whose cma_set_qkey() gives every
 * RDMA_PS_UDP id that one) and reports it in ev->param.ud.qkey after a
 * join or a UD resolve (SIDR): both are overridden here.
 *
 * On InfiniBand a multicast group's MCMember record at the SA carries a
 * Q_Key too. The kernel's cma.c joins with id_priv->qkey, RDMA_UDP_QKEY
 * for an RDMA_PS_UDP id, and rdma_cm gives a user no way to choose
 * another; but nothing in the data path reads the record: a receiving
 * HCA checks a datagram's Q_Key against its QP's, and librdmacm's attach
 * (ibv_attach_mcast) takes only the MGID and MLID. So the group keeps
 * the default Q_Key in its record, and its members, ours, agree on
 * another one among themselves; a sender that believes the record is
 * dropped, as on RoCE. That is read from rdma-core and the kernel, not
 * tried: there is no InfiniBand here (rxe and siw only).
 *
 * The MAC (dgram_mac.h). A publisher with MSGA_PUB_MAC signs every
 * datagram it sends and takes none without a valid MAC (NAKs, ud://
 * control); a subscriber in a context with keys signs what it sends
 * (NAKs, SUBSCRIBE) and, with MSGA_SUB_REQUIRE_MAC, takes nothing
 * without a valid MAC. A datagram with the MAC flag but a wrong MAC is
 * dropped by anyone. All of it before the datagram touches any state.
 *
 * A ud:// connect in a context with keys is a mutual challenge-response
 * whatever the flags: its control datagrams are always signed and
 * always checked. The subscriber's SUBSCRIBE carries its fresh nonce,
 * the publisher's COOKIE and SUBACK echo it under the publisher's MAC
 * (the publisher proves the key on the subscriber's challenge); the
 * COOKIE carries the publisher's fresh cookie (time-stepped, ud_unicast.c)
 * that the subscriber's second SUBSCRIBE echoes under its MAC (it proves
 * the key on the publisher's challenge). A recorded echo is good only
 * from the same address and queue pair, for the cookie's few seconds,
 * and then adds nothing new: the same subscriber, again.
 */
#include <sodium.h>
#include <string.h>

#include "auth.h"
#include "dgram_mac.h"
#include "mcast.h"
#include "pubsub.h"

struct msga__dgram_auth {
	uint8_t key[MSGA__DGRAM_MAC_KEY_LEN];
	uint8_t scratch[];           /* a whole datagram, to hash in one piece */
};

uint32_t msga__ud_remote_qkey(const struct msga__udep *ep, uint32_t reported)
{
	/*
	 * Keyed: the peer's Q_Key is ours, the endpoint's own (what its QP
	 * took when it was made: a key reload since then changes the
	 * context's for new endpoints only).
	 */
	return ep->ctx->keys ? ep->qkey : reported;
}

/*
 * The QP rdma_create_qp() brought to ready-to-send with RDMA_UDP_QKEY
 * takes ctx->qkey instead (RTS to RTS may change a UD QP's Q_Key), before
 * any receive is posted; qp_restart() (udep.c) sets ep->qkey again.
 */
int msga__ud_qkey_apply(struct msga__udep *ep)
{
	struct ibv_qp_attr a = { .qkey = ep->ctx->qkey };

	if (!ep->ctx->keys)
		return 0;
	if (ibv_modify_qp(ep->qp, &a, IBV_QP_QKEY))
		return msga__ctx_fail(ep->ctx, -EIO, "ibv_modify_qp(UD, "
				      "Q_Key)");
	ep->qkey = ep->ctx->qkey;
	return 0;
}

int msga__dgram_auth_init(struct msga__udep *ep)
{
	struct msga_ctx *ctx = ep->ctx;
	struct msga__dgram_auth *a;

	if (!ctx->keys)
		return 0;
	/* (locked out of swap and wiped when freed, as the keys are) */
	a = sodium_malloc(sizeof(*a) + ep->max_dgram + MSGA__UDW_MAC_LEN);
	if (!a)
		return -ENOMEM;
	msga__auth_derive(ctx->keys->keys[0].key, MSGA__DGRAM_MAC_LABEL,
			  a->key, sizeof(a->key));
	ep->auth = a;
	/*
	 * A MAC may be appended to any header: callers decide inline on the
	 * header they wrote, so the budget leaves room for it (udep_send).
	 */
	ep->max_inline = ep->max_inline > MSGA__UDW_MAC_LEN ?
			 ep->max_inline - MSGA__UDW_MAC_LEN : 0;
	return 0;
}

void msga__dgram_auth_free(struct msga__udep *ep)
{
	sodium_free(ep->auth);
	ep->auth = NULL;
}

/* A publisher's datagrams carry a MAC: that much less payload in each. */
uint32_t msga__dgram_auth_room(const struct msga_pub *pub)
{
	return (pub->flags & MSGA_PUB_MAC) ? MSGA__UDW_MAC_LEN : 0;
}

/* A ud:// connect's datagrams: SUBSCRIBE, SUBACK, UNSUBSCRIBE, COOKIE. */
static int ud_control(const struct msga__udep *ep, uint8_t type)
{
	return ep->unicast && type != MSGA__UDW_DATA &&
	       type != MSGA__UDW_HEARTBEAT && type != MSGA__UDW_END;
}

static int signs(const struct msga__udep *ep, uint8_t type)
{
	if (!ep->auth)
		return 0;
	return ep->pub ? (ep->pub->flags & MSGA_PUB_MAC) ||
				 ud_control(ep, type) : 1;
}

static int requires_mac(const struct msga__udep *ep, uint8_t type)
{
	if (ep->auth && ud_control(ep, type))
		return 1; /* (a keyed connect: both sides prove the key) */
	if (ep->pub)
		return (ep->pub->flags & MSGA_PUB_MAC) != 0;
	return ep->sub && (ep->sub->flags & MSGA_SUB_REQUIRE_MAC);
}

/* The type byte of a datagram (ud_wire.h), or DATA if it is too short. */
static uint8_t type_of(const char *dgram, size_t n)
{
	return n > MSGA__UDW_TYPE_OFF ? (uint8_t)dgram[MSGA__UDW_TYPE_OFF] :
					MSGA__UDW_DATA;
}

uint32_t msga__dgram_auth_send(struct msga__udep *ep, char *hdr,
			       uint32_t hdr_len, const void *data,
			       uint32_t len)
{
	if (!signs(ep, type_of(hdr, hdr_len)))
		return hdr_len;
	return msga__dgram_mac_sign(ep->auth->key, hdr, hdr_len, data, len,
				    ep->auth->scratch);
}

/*
 * At the top of the receive dispatch: 0 lets the datagram in, -EBADMSG
 * drops it (counted: the subscriber's forged, the publisher's).
 */
int msga__dgram_auth_recv(struct msga__udep *ep, struct msga__rxslot *slot,
			  const struct ibv_wc *wc)
{
	char *buf = ep->rx_buf + (size_t)slot->idx * ep->rx_slot;
	uint8_t type;
	int ret = 0;

	if (wc->byte_len < MSGA__UD_GRH)
		return 0; /* (foreign: the dispatch counts it) */
	type = type_of(buf + MSGA__UD_GRH, wc->byte_len - MSGA__UD_GRH);
	if (ep->auth)
		ret = msga__dgram_mac_check(ep->auth->key, buf + MSGA__UD_GRH,
					    wc->byte_len - MSGA__UD_GRH);
	else if (requires_mac(ep, type) ||
		 msga__dgram_mac_find(buf + MSGA__UD_GRH,
				      wc->byte_len - MSGA__UD_GRH,
				      &(size_t){ 0 }) == 1)
		ret = -EBADMSG; /* a MAC we cannot check (no keys) */
	if (ret == 1 || (!ret && !requires_mac(ep, type)))
		return 0;
	if (ep->sub)
		ep->sub->ud.st.forged++;
	else if (ep->pub)
		ep->pub->ud.forged++;
	return -EBADMSG;
}
