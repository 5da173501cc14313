/* SPDX-License-Identifier: MIT */
/*
 * The authenticated handshake's bytes (lib/proto/auth_wire.c): the
 * subscriber's request and the publisher's response after the hello in
 * rdma_cm private data, the reject, and the two RC messages it adds to
 * wire.c (AUTH, the subscriber's proof; REFUSE, a SUBSCRIBE refused).
 * A peer sends all of them, and IB pads private data with zeros.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "auth_wire.h"
#include "byteorder.h"
#include "wire.h"

/* The largest private data of a connect request on IB and RoCE. */
#define CONNECT_PDATA 56u
#define HELLO MSGA__WIRE_HELLO_LEN

static uint8_t pd[256];

static const struct msga__auth_req req = {
	.key_id = 0x0807060504030201ull,
	.nonce = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
		   0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf },
};

static void fill_rsp(struct msga__auth_rsp *r)
{
	for (unsigned int i = 0; i < MSGA__AUTH_NONCE_LEN; i++)
		r->nonce[i] = (uint8_t)(0x10 + i);
	for (unsigned int i = 0; i < MSGA__AUTH_TAG_LEN; i++)
		r->tag[i] = (uint8_t)(0xf0 - i);
}

Test(auth_wire, request_fits_an_ib_connect)
{
	cr_expect_leq(HELLO + MSGA__AUTH_REQ_LEN, CONNECT_PDATA);
}

Test(auth_wire, request_layout)
{
	static const uint8_t want[MSGA__AUTH_REQ_LEN] = {
		1, 2, 3, 4, 5, 6, 7, 8,
		0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7,
		0xa8, 0xa9, 0xaa, 0xab, 0xac, 0xad, 0xae, 0xaf,
	};

	memset(pd, 0xee, sizeof(pd));
	msga__auth_req_put(pd, &req);
	cr_assert_arr_eq(pd, want, sizeof(want));
	cr_expect_eq(pd[MSGA__AUTH_REQ_LEN], 0xee, "24 bytes, no more");
}

Test(auth_wire, request_round_trip)
{
	struct msga__auth_req got;
	size_t hellos[] = { 0, MSGA__WIRE_HELLO_V1_LEN, HELLO };

	for (size_t i = 0; i < sizeof(hellos) / sizeof(hellos[0]); i++) {
		size_t h = hellos[i];

		memset(pd, 0x5a, sizeof(pd));
		msga__auth_req_put(pd + h, &req);
		memset(&got, 0, sizeof(got));
		cr_assert_eq(msga__auth_req_get(pd, h + MSGA__AUTH_REQ_LEN, h,
						&got), 1, "hello %zu", h);
		cr_expect_eq(got.key_id, req.key_id);
		cr_expect_arr_eq(got.nonce, req.nonce, MSGA__AUTH_NONCE_LEN);
		/* longer private data (the CM's padding) is fine */
		cr_expect_eq(msga__auth_req_get(pd, sizeof(pd), h, &got), 1);
	}
}

Test(auth_wire, no_request)
{
	struct msga__auth_req got;

	memset(pd, 0, sizeof(pd));
	msga__auth_req_put(pd + HELLO, &req);
	/* short: a hello alone, or a request cut by one byte */
	cr_expect_eq(msga__auth_req_get(pd, HELLO, HELLO, &got), 0);
	cr_expect_eq(msga__auth_req_get(pd, HELLO + MSGA__AUTH_REQ_LEN - 1,
					HELLO, &got), 0);
	cr_expect_eq(msga__auth_req_get(pd, 0, HELLO, &got), 0);
	cr_expect_eq(msga__auth_req_get(NULL, 0, HELLO, &got), 0);
	cr_expect_eq(msga__auth_req_get(NULL, CONNECT_PDATA, HELLO, &got), 0);
	/* an unauthenticated subscriber's hello, padded with zeros by IB */
	memset(pd + HELLO, 0, sizeof(pd) - HELLO);
	cr_expect_eq(msga__auth_req_get(pd, CONNECT_PDATA, HELLO, &got), 0);
	/* key_id 0 is no key, whatever the nonce */
	msga__auth_req_put(pd + HELLO, &(struct msga__auth_req){
					       .key_id = 0,
					       .nonce = { 1, 2, 3 } });
	cr_expect_eq(msga__auth_req_get(pd, CONNECT_PDATA, HELLO, &got), 0);
	/* any one bit of key_id makes it one */
	for (unsigned int bit = 0; bit < 64; bit++) {
		msga__put64(pd + HELLO, 1ull << bit);
		cr_expect_eq(msga__auth_req_get(pd, CONNECT_PDATA, HELLO, &got),
			     1, "bit %u", bit);
		cr_expect_eq(got.key_id, 1ull << bit);
	}
}

Test(auth_wire, response_layout_and_round_trip)
{
	struct msga__auth_rsp r, got;
	uint8_t want[MSGA__AUTH_RSP_LEN];

	fill_rsp(&r);
	memcpy(want, r.nonce, MSGA__AUTH_NONCE_LEN);
	memcpy(want + MSGA__AUTH_NONCE_LEN, r.tag, MSGA__AUTH_TAG_LEN);
	memset(pd, 0xee, sizeof(pd));
	msga__auth_rsp_put(pd + HELLO, &r);
	cr_assert_arr_eq(pd + HELLO, want, sizeof(want));
	cr_expect_eq(pd[HELLO + MSGA__AUTH_RSP_LEN], 0xee, "32 bytes");
	memset(&got, 0, sizeof(got));
	cr_assert_eq(msga__auth_rsp_get(pd, HELLO + MSGA__AUTH_RSP_LEN, HELLO,
					&got), 1);
	cr_expect_arr_eq(got.nonce, r.nonce, MSGA__AUTH_NONCE_LEN);
	cr_expect_arr_eq(got.tag, r.tag, MSGA__AUTH_TAG_LEN);
	cr_expect_eq(msga__auth_rsp_get(pd, sizeof(pd), HELLO, &got), 1);
	cr_expect_eq(msga__auth_rsp_get(pd + HELLO, MSGA__AUTH_RSP_LEN, 0,
					&got), 1);
}

Test(auth_wire, no_response)
{
	struct msga__auth_rsp r, got;

	fill_rsp(&r);
	msga__auth_rsp_put(pd + HELLO, &r);
	cr_expect_eq(msga__auth_rsp_get(pd, HELLO, HELLO, &got), 0);
	cr_expect_eq(msga__auth_rsp_get(pd, HELLO + MSGA__AUTH_RSP_LEN - 1,
					HELLO, &got), 0);
	cr_expect_eq(msga__auth_rsp_get(NULL, sizeof(pd), HELLO, &got), 0);
	/*
	 * Zeros are a response: an all-zero tag is refused by the check
	 * of the tag (auth.h), not here.
	 */
	memset(pd, 0, sizeof(pd));
	cr_expect_eq(msga__auth_rsp_get(pd, HELLO + MSGA__AUTH_RSP_LEN, HELLO,
					&got), 1);
}

Test(auth_wire, reject_layout)
{
	static const uint8_t want[MSGA__AUTH_REJ_LEN] = {
		'M', 'S', 'G', 'A', 1, 0, EACCES, 0,
	};

	memset(pd, 0xee, sizeof(pd));
	msga__auth_rej_put(pd, EACCES);
	cr_assert_arr_eq(pd, want, sizeof(want));
	cr_expect_eq(pd[MSGA__AUTH_REJ_LEN], 0xee, "8 bytes, no more");
}

Test(auth_wire, reject_round_trip)
{
	int reasons[] = { EACCES, ECONNREFUSED, EPERM, 1, 4095 };

	for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++) {
		memset(pd, 0, sizeof(pd));
		msga__auth_rej_put(pd, reasons[i]);
		cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN),
			     reasons[i]);
		/* IB pads a reject's private data too */
		cr_expect_eq(msga__auth_rej_get(pd, 148), reasons[i]);
	}
}

Test(auth_wire, reject_without_our_reason)
{
	msga__auth_rej_put(pd, EACCES);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN - 1), 0);
	cr_expect_eq(msga__auth_rej_get(pd, 0), 0);
	cr_expect_eq(msga__auth_rej_get(NULL, MSGA__AUTH_REJ_LEN), 0);
	/* foreign magic: another program's reject, or a hello's "MSGA" cut */
	for (unsigned int i = 0; i < 4; i++) {
		msga__auth_rej_put(pd, EACCES);
		pd[i] ^= 0x20;
		cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0,
			     "byte %u", i);
	}
	/* another version */
	msga__auth_rej_put(pd, EACCES);
	msga__put16(pd + 4, 0);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	msga__put16(pd + 4, 2);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	msga__put16(pd + 4, 0x0100);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	/* a reason that is no errno */
	msga__auth_rej_put(pd, 0);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	msga__put16(pd + 6, 4096);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	msga__put16(pd + 6, 0xffff);
	cr_expect_eq(msga__auth_rej_get(pd, MSGA__AUTH_REJ_LEN), 0);
	/* all zeros (a kernel reject with no private data, padded) */
	memset(pd, 0, sizeof(pd));
	cr_expect_eq(msga__auth_rej_get(pd, 148), 0);
}

/* wire.c: a header of type t with len, seq, and payload bytes after it. */
static int hdr(uint8_t t, uint32_t len, uint64_t seq, size_t payload)
{
	struct msga__wire_hdr h = { .type = t, .len = len, .seq = seq };
	int ret = msga__wire_hdr_check(&h, payload);
	uint8_t buf[MSGA__WIRE_HDR_LEN + 64] = { 0 };
	struct msga__wire_hdr got;

	cr_assert_leq(payload, 64);
	msga__wire_hdr_put(buf, &h);
	cr_expect_eq(msga__wire_hdr_get(buf, MSGA__WIRE_HDR_LEN + payload,
					&got), ret, "get agrees with check");
	return ret;
}

Test(auth_wire, wire_auth_message)
{
	cr_expect_eq(MSGA__W_AUTH, 6);
	cr_expect_eq(hdr(MSGA__W_AUTH, 16, 0, 16), 0);
	cr_expect_eq(hdr(MSGA__W_AUTH, 16, 0, 15), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 16, 0, 17), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 16, 0, 0), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 15, 0, 16), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 17, 0, 17), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 0, 0, 0), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_AUTH, 32, 0, 32), -EPROTO);
	cr_expect_eq(MSGA__AUTH_TAG_LEN, 16, "AUTH carries one tag");
}

Test(auth_wire, wire_refuse_message)
{
	cr_expect_eq(MSGA__W_REFUSE, 7);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, EPERM, 0), 0);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, EACCES, 0), 0);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, 1, 0), 0);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, 4095, 0), 0);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, 0, 0), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, 4096, 0), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, UINT64_MAX, 0), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 0, EPERM, 1), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_REFUSE, 1, EPERM, 1), -EPROTO);
	/* the type after REFUSE is still unknown */
	cr_expect_eq(hdr(MSGA__W_REFUSE + 1, 16, 1, 16), -EPROTO);
	cr_expect_eq(hdr(MSGA__W_REFUSE + 1, 0, 1, 0), -EPROTO);
}
