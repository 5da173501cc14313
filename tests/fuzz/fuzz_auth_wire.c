/* SPDX-License-Identifier: MIT */
/*
 * fuzz_auth_wire.c - the authenticated handshake's decoders
 * (lib/proto/auth_wire.c) fed any rdma_cm private data: a connect's
 * request (msga__auth_req_get), an accept's response (msga__auth_rsp_get),
 * a reject's reason (msga__auth_rej_get) and a READ endpoint's request
 * (msga__auth_rreq_get, at the start of the private data). The first input byte is the
 * hello's length (0 to 63; the library passes 32), the rest the private
 * data, in an exact-size heap copy so AddressSanitizer sees a read past
 * it. Each verdict must equal a reference written here from auth_wire.h,
 * and what is accepted re-encodes to the bytes it came from.
 */
#include <string.h>

#include "auth_wire.h"
#include "fuzz.h"

static uint64_t ref_le(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

/* auth_wire.h: 24 bytes after the hello, key_id first, never 0. */
static int ref_req(const uint8_t *p, size_t n, size_t hello)
{
	return n >= hello + 24 && ref_le(p + hello, 8) != 0;
}

/* "MSGA", version 1, a reason below 4096 (a positive errno) or 0. */
static int ref_rej(const uint8_t *p, size_t n)
{
	uint64_t reason;

	if (n < 8 || memcmp(p, "MSGA", 4) || ref_le(p + 4, 2) != 1)
		return 0;
	reason = ref_le(p + 6, 2);
	return reason < 4096 ? (int)reason : 0;
}

static void check_req(const uint8_t *p, size_t n, size_t hello)
{
	struct msga__auth_req r;
	uint8_t again[MSGA__AUTH_REQ_LEN];
	int ret;

	memset(&r, 0xa5, sizeof(r));
	ret = msga__auth_req_get(p, n, hello, &r);
	FUZZ_CHECK(ret == 0 || ret == 1);
	FUZZ_CHECK(ret == ref_req(p, n, hello));
	if (!ret)
		return;
	FUZZ_CHECK(r.key_id == ref_le(p + hello, 8));
	msga__auth_req_put(again, &r);
	FUZZ_CHECK(!memcmp(again, p + hello, sizeof(again)));
}

/* A READ request: 48 bytes from the start, key_id first, never 0. */
static void check_rreq(const uint8_t *p, size_t n)
{
	struct msga__auth_rreq r;
	uint8_t again[MSGA__AUTH_RREQ_LEN];
	int ret;

	memset(&r, 0xa5, sizeof(r));
	ret = msga__auth_rreq_get(p, n, &r);
	FUZZ_CHECK(ret == (n >= 48 && ref_le(p, 8) != 0));
	if (!ret)
		return;
	FUZZ_CHECK(r.ts_ms == ref_le(p + 8, 8));
	msga__auth_rreq_put(again, &r);
	FUZZ_CHECK(!memcmp(again, p, sizeof(again)));
}

static void check_rsp(const uint8_t *p, size_t n, size_t hello)
{
	struct msga__auth_rsp r;
	uint8_t again[MSGA__AUTH_RSP_LEN];
	int ret;

	memset(&r, 0xa5, sizeof(r));
	ret = msga__auth_rsp_get(p, n, hello, &r);
	FUZZ_CHECK(ret == 0 || ret == 1);
	FUZZ_CHECK(ret == (n >= hello + 32));
	if (!ret)
		return;
	FUZZ_CHECK(!memcmp(r.nonce, p + hello, MSGA__AUTH_NONCE_LEN));
	msga__auth_rsp_put(again, &r);
	FUZZ_CHECK(!memcmp(again, p + hello, sizeof(again)));
}

static void check_rej(const uint8_t *p, size_t n)
{
	uint8_t again[MSGA__AUTH_REJ_LEN];
	int ret = msga__auth_rej_get(p, n);

	FUZZ_CHECK(ret >= 0 && ret < 4096);
	FUZZ_CHECK(ret == ref_rej(p, n));
	if (!ret)
		return;
	msga__auth_rej_put(again, ret);
	FUZZ_CHECK(!memcmp(again, p, sizeof(again)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t hello = size ? data[0] & 63u : 0;
	size_t n = size ? size - 1 : 0;
	uint8_t *p = fuzz_dup(data + (size != 0), n);

	check_req(p, n, hello);
	check_rsp(p, n, hello);
	check_rej(p, n);
	check_rreq(p, n);
	free(p);
	return 0;
}
