/* SPDX-License-Identifier: MIT */
/*
 * auth_wire.h - the bytes of an authenticated RC handshake (msgaccel(7),
 * SECURITY). Little-endian, after the 32-byte hello (wire.h) in the
 * connection private data:
 *
 * connect (subscriber), 24 bytes, so that hello + request fit the 56
 * bytes InfiniBand and RoCE allow a connect request:
 *   32  u64 key_id    which key the subscriber will prove (never 0)
 *   40  u8  nonce[16] its fresh random challenge
 * accept (publisher), 32 bytes:
 *   32  u8  nonce[16] the publisher's fresh random challenge
 *   48  u8  tag[16]   its proof: a keyed hash over both nonces and
 *                     both hellos (auth.h)
 * reject (publisher), 8 bytes, alone:
 *   0   u32 magic     "MSGA"
 *   4   u16 version   1
 *   6   u16 reason    a positive errno: EACCES, ECONNREFUSED
 *
 * The subscriber's proof (a tag over the same, with another label) is
 * the payload of its first SEND, a MSGA__W_AUTH message (wire.h).
 *
 * A READ endpoint's reader (lib/ud/read_auth.c) proves its key in its
 * connect request alone, 48 bytes:
 *   0   u64 key_id
 *   8   u64 ts_ms     its CLOCK_REALTIME, milliseconds (replay_guard.h)
 *   16  u8  nonce[16]
 *   32  u8  tag[16]   over key_id, ts_ms, nonce and the publisher's origin
 * and the endpoint's accept appends its tag (over the nonce and the
 * offer) to the 32-byte offer (read_wire.h).
 *
 * IB and RoCE pad private data with zeros to the CM's size: a key_id of
 * 0 is "no key", and an all-zero accept tag never verifies.
 */
#ifndef MSGA_AUTH_WIRE_H
#define MSGA_AUTH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__AUTH_NONCE_LEN 16u
#define MSGA__AUTH_TAG_LEN 16u
#define MSGA__AUTH_REQ_LEN 24u
#define MSGA__AUTH_RSP_LEN 32u
#define MSGA__AUTH_REJ_LEN 8u
#define MSGA__AUTH_RREQ_LEN 48u

struct msga__auth_req {
	uint64_t key_id;
	uint8_t nonce[MSGA__AUTH_NONCE_LEN];
};

struct msga__auth_rsp {
	uint8_t nonce[MSGA__AUTH_NONCE_LEN];
	uint8_t tag[MSGA__AUTH_TAG_LEN];
};

void msga__auth_req_put(void *buf, const struct msga__auth_req *r);
/*
 * The request in private data pdata[0, n) after a hello of hello_len
 * bytes: 1 and *r filled when there is one, 0 when there is none (short,
 * or key_id 0).
 */
int msga__auth_req_get(const void *pdata, size_t n, size_t hello_len,
		       struct msga__auth_req *r);
void msga__auth_rsp_put(void *buf, const struct msga__auth_rsp *r);
/* The same for an accept's response: 1, or 0 when there is none. */
int msga__auth_rsp_get(const void *pdata, size_t n, size_t hello_len,
		       struct msga__auth_rsp *r);
struct msga__auth_rreq {
	uint64_t key_id;
	uint64_t ts_ms;
	uint8_t nonce[MSGA__AUTH_NONCE_LEN];
	uint8_t tag[MSGA__AUTH_TAG_LEN];
};

void msga__auth_rreq_put(void *buf, const struct msga__auth_rreq *r);
/* 1 and *r filled, or 0 when pdata[0, n) holds none (key_id 0: none). */
int msga__auth_rreq_get(const void *pdata, size_t n,
			struct msga__auth_rreq *r);
void msga__auth_rej_put(void *buf, int reason);
/* A reject's reason, a positive errno, or 0 when it carries none of ours. */
int msga__auth_rej_get(const void *pdata, size_t n);

#endif
