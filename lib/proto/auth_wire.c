/* SPDX-License-Identifier: MIT */
/* auth_wire.c - see auth_wire.h. */
#include <string.h>

#include "auth_wire.h"
#include "byteorder.h"
#include "wire.h"

void msga__auth_req_put(void *buf, const struct msga__auth_req *r)
{
	uint8_t *p = buf;

	msga__put64(p, r->key_id);
	memcpy(p + 8, r->nonce, MSGA__AUTH_NONCE_LEN);
}

int msga__auth_req_get(const void *pdata, size_t n, size_t hello_len,
		       struct msga__auth_req *r)
{
	const uint8_t *p = pdata;

	if (!pdata || n < hello_len + MSGA__AUTH_REQ_LEN)
		return 0;
	p += hello_len;
	r->key_id = msga__get64(p);
	memcpy(r->nonce, p + 8, MSGA__AUTH_NONCE_LEN);
	return r->key_id != 0;
}

void msga__auth_rsp_put(void *buf, const struct msga__auth_rsp *r)
{
	uint8_t *p = buf;

	memcpy(p, r->nonce, MSGA__AUTH_NONCE_LEN);
	memcpy(p + MSGA__AUTH_NONCE_LEN, r->tag, MSGA__AUTH_TAG_LEN);
}

int msga__auth_rsp_get(const void *pdata, size_t n, size_t hello_len,
		       struct msga__auth_rsp *r)
{
	const uint8_t *p = pdata;

	if (!pdata || n < hello_len + MSGA__AUTH_RSP_LEN)
		return 0;
	p += hello_len;
	memcpy(r->nonce, p, MSGA__AUTH_NONCE_LEN);
	memcpy(r->tag, p + MSGA__AUTH_NONCE_LEN, MSGA__AUTH_TAG_LEN);
	return 1;
}

void msga__auth_rej_put(void *buf, int reason)
{
	uint8_t *p = buf;

	msga__put32(p, MSGA__WIRE_MAGIC);
	msga__put16(p + 4, 1);
	msga__put16(p + 6, (uint16_t)reason);
}

int msga__auth_rej_get(const void *pdata, size_t n)
{
	const uint8_t *p = pdata;
	uint16_t reason;

	if (!pdata || n < MSGA__AUTH_REJ_LEN ||
	    msga__get32(p) != MSGA__WIRE_MAGIC || msga__get16(p + 4) != 1)
		return 0;
	reason = msga__get16(p + 6);
	return reason < 4096 ? reason : 0;
}

void msga__auth_rreq_put(void *buf, const struct msga__auth_rreq *r)
{
	uint8_t *p = buf;

	msga__put64(p, r->key_id);
	msga__put64(p + 8, r->ts_ms);
	memcpy(p + 16, r->nonce, MSGA__AUTH_NONCE_LEN);
	memcpy(p + 32, r->tag, MSGA__AUTH_TAG_LEN);
}

int msga__auth_rreq_get(const void *pdata, size_t n,
			struct msga__auth_rreq *r)
{
	const uint8_t *p = pdata;

	if (!pdata || n < MSGA__AUTH_RREQ_LEN)
		return 0;
	r->key_id = msga__get64(p);
	r->ts_ms = msga__get64(p + 8);
	memcpy(r->nonce, p + 16, MSGA__AUTH_NONCE_LEN);
	memcpy(r->tag, p + 32, MSGA__AUTH_TAG_LEN);
	return r->key_id != 0;
}
