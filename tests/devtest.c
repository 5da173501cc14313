/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include <criterion/criterion.h>

#include "devtest.h"

static const char *need(const char *name)
{
	const char *v = getenv(name);

	if (!v || !*v)
		cr_assert_fail("%s is not set: device tests run through "
			 "tests/vm/device-tests.sh (make check), which sets it",
			 name);
	return v;
}

const struct devtest_env *devtest_env(void)
{
	static struct devtest_env env;

	env.dev = need("MSGA_TEST_DEV");
	env.addr = need("MSGA_TEST_ADDR");
	env.transport = need("MSGA_TEST_TRANSPORT");
	return &env;
}

struct msga_ctx *devtest_open_ctx(void)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct msga_ctx *ctx = NULL;
	int ret;

	attr.dev_name = devtest_env()->dev;
	ret = msga_ctx_open(&attr, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open(%s) = %d (%s): %s", attr.dev_name,
		     ret, msga_strerror(ret), msga_open_error());
	return ctx;
}
