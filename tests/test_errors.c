/* SPDX-License-Identifier: MIT */
/*
 * Host unit tests for the parts of the API that need no device: error text,
 * version, and argument checks that come before any device is touched.
 */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "config.h"
#include "msgaccel.h"

Test(errors, strerror_accepts_negative_and_positive_codes)
{
	cr_expect_str_eq(msga_strerror(-EINVAL), strerror(EINVAL));
	cr_expect_str_eq(msga_strerror(EAGAIN), strerror(EAGAIN));
	cr_expect_str_eq(msga_strerror(0), "Success");
	cr_expect_not_null(msga_strerror(-99999));
	cr_expect(strstr(msga_strerror(-99999), "99999") != NULL);
	cr_expect_not_null(msga_strerror(INT_MIN));
}

Test(errors, version_matches_header_and_package)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", MSGA_VERSION_MAJOR,
		 MSGA_VERSION_MINOR, MSGA_VERSION_PATCH);
	cr_expect_str_eq(msga_version(), want);
	cr_expect_str_eq(msga_version(), PACKAGE_VERSION);
}

Test(errors, transport_names)
{
	cr_expect_str_eq(msga_transport_name(MSGA_TRANSPORT_ROCE), "RoCE");
	cr_expect_str_eq(msga_transport_name(MSGA_TRANSPORT_IWARP), "iWARP");
	cr_expect_str_eq(msga_transport_name(MSGA_TRANSPORT_IB), "InfiniBand");
	cr_expect_str_eq(msga_transport_name((enum msga_transport)77), "unknown");
}

Test(errors, ctx_open_null_ctxp_is_einval)
{
	cr_expect_eq(msga_ctx_open(NULL, NULL), -EINVAL);
	cr_expect(strstr(msga_open_error(), "ctxp") != NULL);
}

Test(errors, ctx_open_bad_attr_size_is_einval)
{
	struct msga_ctx_attr attr = { .size = 3 };
	struct msga_ctx *ctx = (struct msga_ctx *)&attr;

	cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL);
	cr_expect_null(ctx);
}

Test(errors, ctx_open_unknown_flags_is_einval)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr), .flags = 0x80 };
	struct msga_ctx *ctx;

	cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL);
}

/* 0.10: a reserved field that is not 0 is refused, not ignored. */
Test(errors, ctx_open_reserved_not_zero_is_einval)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct msga_ctx *ctx;

	for (size_t i = 0; i < sizeof(attr.reserved); i++) {
		attr.reserved[i] = 1;
		cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL, "[%zu]", i);
		cr_expect(strstr(msga_open_error(), "reserved") != NULL);
		attr.reserved[i] = 0;
	}
	attr.reserved2 = 1;
	cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL);
	cr_expect(strstr(msga_open_error(), "reserved") != NULL);
}

/*
 * 0.10 (soname 10), the settled layout: every struct the library fills
 * or reads starts with its size; priv_ is the last member; no enum type
 * sits in a struct (a uint32_t holds its values).
 */
#define LAST_MEMBER(type, m) \
	(offsetof(type, m) + sizeof(((type *)0)->m) + _Alignof(type) > \
	 sizeof(type))

Test(abi, size_first_and_priv_last)
{
	cr_expect_eq(offsetof(struct msga_msg, size), 0);
	cr_expect_eq(offsetof(struct msga_event, size), 0);
	cr_expect_eq(offsetof(struct msga_claim, size), 0);
	cr_expect(LAST_MEMBER(struct msga_msg, priv_));
	cr_expect(LAST_MEMBER(struct msga_claim, priv_));
	cr_expect_eq(sizeof(((struct msga_event *)0)->type), 4);
	cr_expect_eq(sizeof(((struct msga_event *)0)->status), 4);
	cr_expect_eq(sizeof(((struct msga_dev_info *)0)->transport), 4);
}

Test(errors, ctx_open_peer_timeout_out_of_range_is_einval)
{
	uint32_t bad[] = { 1, MSGA_PEER_TIMEOUT_MIN_MS - 1,
			   MSGA_PEER_TIMEOUT_MAX_MS + 1, UINT32_MAX };

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct msga_ctx_attr attr = { .size = sizeof(attr),
					      .peer_timeout_ms = bad[i] };
		struct msga_ctx *ctx = (struct msga_ctx *)&attr;

		cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL, "%u ms",
			     bad[i]);
		cr_expect_null(ctx);
		cr_expect(strstr(msga_open_error(), "peer_timeout_ms") != NULL,
			  "%s", msga_open_error());
	}
}

/*
 * A 0.2 caller's struct ends before peer_timeout_ms: what lies past its
 * size is not read. A bad value there passes this check (the open then
 * goes on to look for a device, and what it finds does not matter here).
 */
Test(errors, ctx_open_reads_peer_timeout_only_within_size)
{
	struct msga_ctx_attr attr = { .size = offsetof(struct msga_ctx_attr,
						       peer_timeout_ms),
				      .dev_name = "no_such_dev9",
				      .peer_timeout_ms = 1 };
	struct msga_ctx *ctx = NULL;
	int ret = msga_ctx_open(&attr, &ctx);

	cr_expect_neq(ret, 0, "no device of that name");
	cr_expect(strstr(msga_open_error(), "peer_timeout_ms") == NULL,
		  "refused for a field past its size: %s", msga_open_error());
	attr.size = sizeof(attr);
	cr_expect_eq(msga_ctx_open(&attr, &ctx), -EINVAL);
	cr_expect(strstr(msga_open_error(), "peer_timeout_ms") != NULL,
		  "%s", msga_open_error());
}

Test(errors, ctx_query_and_close_tolerate_null)
{
	struct msga_dev_info info = { .size = sizeof(info) };

	cr_expect_eq(msga_ctx_query(NULL, &info), -EINVAL);
	cr_expect_str_eq(msga_ctx_last_error(NULL), "");
	msga_ctx_close(NULL);
}

Test(errors, pub_stats_null_is_einval)
{
	struct msga_pub_stats st = { .size = sizeof(st) };
	struct msga_pub_conn_stats cs = { .size = sizeof(cs) };

	cr_expect_eq(msga_pub_stats(NULL, &st), -EINVAL);
	cr_expect_eq(msga_pub_conn_stats(NULL, 0, &cs), -EINVAL);
}
