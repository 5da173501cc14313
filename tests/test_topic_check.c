/* SPDX-License-Identifier: MIT */
/*
 * msga_topic_check(3) and msga_pattern_check(3) through the installed
 * library: each documented error, and the valid cases at the edges.
 * tests/test_topic.c covers the rule itself in more depth.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"

Test(topic_check, valid_names)
{
	char max[MSGA_TOPIC_MAX + 1];

	memset(max, 'a', MSGA_TOPIC_MAX);
	max[MSGA_TOPIC_MAX] = '\0';
	cr_expect_eq(msga_topic_check("a"), 0);
	cr_expect_eq(msga_topic_check("fx/EUR-USD_spot.1"), 0);
	cr_expect_eq(msga_topic_check(max), 0);
}

Test(topic_check, null_empty_long_or_bad_char_is_einval)
{
	char long_name[MSGA_TOPIC_MAX + 2];

	memset(long_name, 'a', MSGA_TOPIC_MAX + 1);
	long_name[MSGA_TOPIC_MAX + 1] = '\0';
	cr_expect_eq(msga_topic_check(NULL), -EINVAL);
	cr_expect_eq(msga_topic_check(""), -EINVAL);
	cr_expect_eq(msga_topic_check(long_name), -EINVAL);
	cr_expect_eq(msga_topic_check("has space"), -EINVAL);
	cr_expect_eq(msga_topic_check("md.*"), -EINVAL);
}

Test(pattern_check, valid_patterns)
{
	char max_name[MSGA_TOPIC_MAX + 1];
	char max_prefix[MSGA_TOPIC_MAX + 2];

	memset(max_name, 'n', MSGA_TOPIC_MAX);
	max_name[MSGA_TOPIC_MAX] = '\0';
	memset(max_prefix, 'p', MSGA_TOPIC_MAX);
	max_prefix[MSGA_TOPIC_MAX] = '*';
	max_prefix[MSGA_TOPIC_MAX + 1] = '\0';
	cr_expect_eq(msga_pattern_check("*"), 0);
	cr_expect_eq(msga_pattern_check("md.*"), 0);
	cr_expect_eq(msga_pattern_check("md.AAPL"), 0);
	cr_expect_eq(msga_pattern_check(max_name), 0);
	cr_expect_eq(msga_pattern_check(max_prefix), 0);
}

Test(pattern_check, null_or_empty_is_einval)
{
	cr_expect_eq(msga_pattern_check(NULL), -EINVAL);
	cr_expect_eq(msga_pattern_check(""), -EINVAL);
}

Test(pattern_check, long_or_bad_char_is_einval)
{
	char long_prefix[MSGA_TOPIC_MAX + 3];

	memset(long_prefix, 'p', MSGA_TOPIC_MAX + 1);
	long_prefix[MSGA_TOPIC_MAX + 1] = '*';
	long_prefix[MSGA_TOPIC_MAX + 2] = '\0';
	cr_expect_eq(msga_pattern_check(long_prefix), -EINVAL);
	cr_expect_eq(msga_pattern_check("md AAPL"), -EINVAL);
	cr_expect_eq(msga_pattern_check("md:*"), -EINVAL);
}

Test(pattern_check, star_not_last_or_twice_is_einval)
{
	cr_expect_eq(msga_pattern_check("md*x"), -EINVAL);
	cr_expect_eq(msga_pattern_check("*md"), -EINVAL);
	cr_expect_eq(msga_pattern_check("md**"), -EINVAL);
	cr_expect_eq(msga_pattern_check("**"), -EINVAL);
}
