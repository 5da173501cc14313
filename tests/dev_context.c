/* SPDX-License-Identifier: MIT */
/* Device tests for msga_ctx_open/close/query on a real (soft) device. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "internal.h"

static struct msga_dev_info query(struct msga_ctx *ctx)
{
	struct msga_dev_info info = { .size = sizeof(info) };
	int ret = msga_ctx_query(ctx, &info);

	cr_assert_eq(ret, 0, "msga_ctx_query = %d", ret);
	return info;
}

Test(context, open_by_name_reports_transport_and_limits)
{
	const struct devtest_env *env = devtest_env();
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_dev_info info = query(ctx);

	cr_expect_str_eq(info.dev_name, env->dev);
	cr_expect_str_eq(msga_transport_name(info.transport), env->transport,
			 "%s reports %s, expected %s", env->dev,
			 msga_transport_name(info.transport), env->transport);
	cr_expect_geq(info.port, 1);
	cr_expect_geq(info.active_mtu, 256);
	cr_expect_leq(info.active_mtu, 4096);
	cr_expect_geq(info.max_sge, 1);
	cr_expect_gt(info.max_qp_wr, 0);
	cr_expect_gt(info.max_cqe, 0);
	cr_expect_gt(info.max_mr_size, 0);
	cr_expect_str_eq(msga_ctx_last_error(ctx), "");
	cr_log_info("%s: %s port %u mtu %u max_inline %u max_sge %u",
		    info.dev_name, msga_transport_name(info.transport),
		    info.port, info.active_mtu, info.max_inline, info.max_sge);
	msga_ctx_close(ctx);
}

Test(context, open_by_address_finds_the_device)
{
	const struct devtest_env *env = devtest_env();
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .local_addr = env->addr };
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(&attr, &ctx);

	cr_assert_eq(ret, 0, "open by %s: %s", env->addr, msga_open_error());
	cr_expect_str_eq(query(ctx).dev_name, env->dev);
	msga_ctx_close(ctx);

	/* Name and address together must agree. */
	attr.dev_name = env->dev;
	ret = msga_ctx_open(&attr, &ctx);
	cr_assert_eq(ret, 0, "open by %s+%s: %s", env->dev, env->addr,
		     msga_open_error());
	msga_ctx_close(ctx);
}

Test(context, open_first_active_port)
{
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(NULL, &ctx);

	cr_assert_eq(ret, 0, "open(NULL attr): %s", msga_open_error());
	cr_expect_gt(query(ctx).port, 0);
	msga_ctx_close(ctx);
}

Test(context, busy_poll_only_context)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .flags = MSGA_CTX_NO_EVENTS,
				      .dev_name = devtest_env()->dev };
	struct msga_ctx *ctx;

	cr_assert_eq(msga_ctx_open(&attr, &ctx), 0, "%s", msga_open_error());
	msga_ctx_close(ctx);
}

Test(context, bad_device_name_is_enodev)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .dev_name = "no_such_dev9" };
	struct msga_ctx *ctx = (struct msga_ctx *)&attr;

	cr_assert_eq(msga_ctx_open(&attr, &ctx), -ENODEV);
	cr_expect_null(ctx, "*ctxp must be NULL after a failed open");
	cr_expect(strstr(msga_open_error(), "no_such_dev9") != NULL,
		  "message names the device: '%s'", msga_open_error());
}

Test(context, bad_address_is_einval)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .local_addr = "not-an-address" };
	struct msga_ctx *ctx;

	cr_assert_eq(msga_ctx_open(&attr, &ctx), -EINVAL);
	cr_expect(strstr(msga_open_error(), "not-an-address") != NULL);
}

Test(context, address_not_on_this_host_is_eaddrnotavail)
{
	/* 198.19.255.254: in the benchmark range, assigned to nothing here. */
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .local_addr = "198.19.255.254" };
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(&attr, &ctx);

	cr_assert_eq(ret, -EADDRNOTAVAIL, "got %d (%s): %s", ret,
		     msga_strerror(ret), msga_open_error());
}

Test(context, address_on_another_device_is_einval)
{
	const struct devtest_env *env = devtest_env();
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .local_addr = env->addr,
				      .dev_name = "no_such_dev9" };
	struct msga_ctx *ctx;

	cr_assert_eq(msga_ctx_open(&attr, &ctx), -EINVAL, "%s",
		     msga_open_error());
}

Test(context, port_out_of_range_is_einval)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr),
				      .dev_name = devtest_env()->dev,
				      .port = 200 };
	struct msga_ctx *ctx;

	cr_assert_eq(msga_ctx_open(&attr, &ctx), -EINVAL, "%s",
		     msga_open_error());
}

Test(context, query_rejects_bad_arguments)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_dev_info info = { .size = 4 };

	cr_expect_eq(msga_ctx_query(ctx, NULL), -EINVAL);
	cr_expect_eq(msga_ctx_query(ctx, &info), -EINVAL);
	cr_expect_eq(msga_ctx_query(NULL, &info), -EINVAL);
	msga_ctx_close(ctx);
}

/*
 * 0.10: msga_ctx_last_error() is set by a failure only, kept across
 * successes, and emptied by msga_ctx_clear_error() alone.
 */
Test(context, last_error_is_cleared_only_by_clear_error)
{
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = "rdma://x:1",
				    .reserved = 1 };
	struct msga_pub *pub;

	cr_expect_str_eq(msga_ctx_last_error(ctx), "");
	cr_expect_eq(msga_pub_create(ctx, &pa, &pub), -EINVAL);
	cr_expect_str_neq(msga_ctx_last_error(ctx), "");
	cr_expect_geq(msga_ctx_poll(ctx, 4), 0);
	cr_expect_str_neq(msga_ctx_last_error(ctx), "", "a success keeps it");
	msga_ctx_clear_error(ctx);
	cr_expect_str_eq(msga_ctx_last_error(ctx), "");
	msga_ctx_clear_error(NULL);
	cr_expect_str_eq(msga_ctx_last_error(NULL), "");
	msga_ctx_close(ctx);
}

/*
 * Whether the device honours a zero-based registration's iova is asked
 * of the device at open (lib/core/zero_based.c): the test devices are
 * one of each, rxe (RoCE: it does) and siw (iWARP: it ignores the iova).
 * Where it does not, msga__reg_zero_based refuses with EOPNOTSUPP, so
 * nothing is registered for a peer that could reach it only by our
 * address; where it does, a registration in a PD of its own is made, and
 * one in the context's PD (local access only) is refused.
 */
Test(context, zero_based_registration_is_probed)
{
	int honours = strcmp(devtest_env()->transport, "iWARP") != 0;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct ibv_pd *pd = ibv_alloc_pd(ctx->verbs);
	void *buf = aligned_alloc(4096, 4096);
	struct ibv_mr *mr;
	uint64_t t0;

	cr_assert(pd && buf);
	cr_assert_eq(ctx->zero_based, honours, "%s: zero_based %d",
		     devtest_env()->dev, ctx->zero_based);
	t0 = msga__now_ns();
	cr_assert_eq(msga__zero_based_probe(ctx), honours, "probed again");
	cr_log_info("%s: the probe took %.1f ms", devtest_env()->dev,
		    (double)(msga__now_ns() - t0) / 1e6);
	errno = 0;
	mr = msga__reg_zero_based(ctx, pd, buf, 4096, IBV_ACCESS_REMOTE_READ);
	if (honours) {
		cr_assert(mr, "errno %d", errno);
		ibv_dereg_mr(mr);
		errno = 0;
		cr_assert_null(msga__reg_zero_based(ctx, ctx->pd, buf, 4096,
						    IBV_ACCESS_REMOTE_READ));
		cr_assert_eq(errno, EINVAL);
	} else {
		cr_assert_null(mr);
		cr_assert_eq(errno, EOPNOTSUPP, "errno %d", errno);
	}
	ibv_dealloc_pd(pd);
	free(buf);
	msga_ctx_close(ctx);
}
