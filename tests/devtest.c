/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <criterion/hooks.h>

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

/*
 * MSGA_TEST_TIMEOUT_SCALE=K (a whole number; device-tests.sh passes it
 * into the VM) multiplies every suite's and test's timeout by K. Under
 * valgrind each process start costs tens of seconds in the VM, so a test
 * that spawns processes needs limits many times its native ones, while a
 * hang must still be caught at native speed in a plain run. Scaling here,
 * before any test forks, keeps the limits written once, at native speed.
 */
static unsigned long timeout_scale(void)
{
	const char *v = getenv("MSGA_TEST_TIMEOUT_SCALE");
	char *end;
	unsigned long k;

	if (!v || !*v)
		return 1;
	k = strtoul(v, &end, 10);
	if (*end || k == 0 || k > 100 || v[0] == '-') {
		fprintf(stderr, "devtest: MSGA_TEST_TIMEOUT_SCALE must be a "
			"whole number from 1 to 100, not '%s'\n", v);
		exit(2);
	}
	return k;
}

int devtest_wait_s(int native_s)
{
	return native_s * (int)timeout_scale();
}

uint64_t devtest_scale_ms(uint64_t native_ms)
{
	return native_ms * timeout_scale();
}

unsigned devtest_salt(void)
{
	unsigned a = 0, b = 0, c = 0, d = 0;

	sscanf(devtest_env()->addr, "%u.%u.%u.%u", &a, &b, &c, &d);
	return 1 + ((unsigned)getpid() % 125) * 2 + ((c + d) & 1);
}

struct msga_ctx *devtest_open_ctx_timeout(uint32_t peer_timeout_ms)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct msga_ctx *ctx = NULL;
	uint64_t ms = devtest_scale_ms(peer_timeout_ms);
	int ret;

	attr.dev_name = devtest_env()->dev;
	attr.peer_timeout_ms = ms > MSGA_PEER_TIMEOUT_MAX_MS ?
				       MSGA_PEER_TIMEOUT_MAX_MS : (uint32_t)ms;
	ret = msga_ctx_open(&attr, &ctx);
	cr_assert_eq(ret, 0, "msga_ctx_open(%s) = %d (%s): %s", attr.dev_name,
		     ret, msga_strerror(ret), msga_open_error());
	return ctx;
}

/*
 * The library's default peer timeout in a plain run; scaled (like every
 * limit here) under valgrind, where a side can go unpolled for seconds.
 */
struct msga_ctx *devtest_open_ctx(void)
{
	return devtest_open_ctx_timeout(timeout_scale() == 1 ? 0 :
					MSGA_PEER_TIMEOUT_DEFAULT_MS);
}

static void scale_suite(struct criterion_suite_set *ss, double k)
{
	if (ss->suite.data)
		ss->suite.data->timeout *= k;
	FOREACH_SET(struct criterion_test *t, ss->tests) {
		if (t->data)
			t->data->timeout *= k;
	}
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	double k = (double)timeout_scale();

	if (k == 1)
		return;
	FOREACH_SET(struct criterion_suite_set *ss, set->suites)
		scale_suite(ss, k);
}
