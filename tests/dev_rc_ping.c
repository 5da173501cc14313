/* SPDX-License-Identifier: MIT */
/*
 * The test bed's proof of life: messages really cross an RC queue pair
 * between two endpoints on the device under test, connected by rdma_cm.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "rc_pingpair.h"

#define MAX_MSG 4096

Test(rc_ping, messages_cross_an_rc_queue_pair_intact)
{
	const struct devtest_env *env = devtest_env();
	static uint8_t msg[MAX_MSG], reply[MAX_MSG];
	struct rc_pingpair *pp;
	char err[256] = "";
	int ret = rc_pingpair_open(&pp, env->addr, MAX_MSG, err, sizeof(err));

	cr_assert_eq(ret, 0, "rc_pingpair_open(%s): %s", env->addr, err);
	cr_expect_str_eq(rc_pingpair_device(pp), env->dev,
			 "rdma_cm put %s on %s", env->addr,
			 rc_pingpair_device(pp));
	for (uint32_t i = 0; i < 500; i++) {
		size_t len = 1 + (i * 37) % MAX_MSG;

		for (size_t b = 0; b < len; b++)
			msg[b] = (uint8_t)(i * 131 + b);
		memset(reply, 0, len);
		ret = rc_pingpair_roundtrip(pp, msg, len, reply, 5000);
		cr_assert_eq(ret, 0, "round trip %u: %d", i, ret);
		cr_assert_arr_eq(reply, msg, len, "echo %u differs", i);
	}
	rc_pingpair_close(pp);
}

Test(rc_ping, oversize_message_is_emsgsize)
{
	static uint8_t big[MAX_MSG * 2];
	struct rc_pingpair *pp;
	char err[256] = "";

	cr_assert_eq(rc_pingpair_open(&pp, devtest_env()->addr, MAX_MSG, err,
				      sizeof(err)), 0, "%s", err);
	cr_expect_eq(rc_pingpair_roundtrip(pp, big, sizeof(big), big, 1000),
		     -EMSGSIZE);
	rc_pingpair_close(pp);
}
