/* SPDX-License-Identifier: MIT */
/* Topic names and subscription patterns (lib/topic.c). */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"
#include "topic.h"

Test(topic, valid_names_pass)
{
	char max[MSGA_TOPIC_MAX + 1];

	memset(max, 'a', MSGA_TOPIC_MAX);
	max[MSGA_TOPIC_MAX] = '\0';
	cr_expect_eq(msga__topic_check("md.AAPL"), 0);
	cr_expect_eq(msga__topic_check("a"), 0);
	cr_expect_eq(msga__topic_check("fx/EUR-USD_spot.1"), 0);
	cr_expect_eq(msga__topic_check(max), 0);
}

Test(topic, bad_names_are_einval)
{
	char long_name[MSGA_TOPIC_MAX + 2];

	memset(long_name, 'a', MSGA_TOPIC_MAX + 1);
	long_name[MSGA_TOPIC_MAX + 1] = '\0';
	cr_expect_eq(msga__topic_check(NULL), -EINVAL);
	cr_expect_eq(msga__topic_check(""), -EINVAL);
	cr_expect_eq(msga__topic_check(long_name), -EINVAL);
	cr_expect_eq(msga__topic_check("has space"), -EINVAL);
	cr_expect_eq(msga__topic_check("star*"), -EINVAL);
	cr_expect_eq(msga__topic_check("colon:x"), -EINVAL);
	cr_expect_eq(msga__topic_check("tab\t"), -EINVAL);
	cr_expect_eq(msga__topic_check("\xc3\xa9"), -EINVAL);
}

Test(topic, patterns)
{
	char max[MSGA_TOPIC_MAX + 2];

	memset(max, 'p', MSGA_TOPIC_MAX);
	max[MSGA_TOPIC_MAX] = '*';
	max[MSGA_TOPIC_MAX + 1] = '\0';
	cr_expect_eq(msga__pattern_check("*"), 0);
	cr_expect_eq(msga__pattern_check("md.*"), 0);
	cr_expect_eq(msga__pattern_check("md.AAPL"), 0);
	cr_expect_eq(msga__pattern_check(max), 0);
	cr_expect_eq(msga__pattern_check(NULL), -EINVAL);
	cr_expect_eq(msga__pattern_check(""), -EINVAL);
	cr_expect_eq(msga__pattern_check("**"), -EINVAL);
	cr_expect_eq(msga__pattern_check("md.*.x"), -EINVAL);
	cr_expect_eq(msga__pattern_check("*md"), -EINVAL);
	cr_expect_eq(msga__pattern_check("m d*"), -EINVAL);
	max[MSGA_TOPIC_MAX] = 'p';
	max[MSGA_TOPIC_MAX + 1] = '*';
	cr_expect_eq(msga__pattern_check(max), -EINVAL, "prefix too long");
}

Test(topic, matching)
{
	cr_expect(msga__topic_match("*", "anything"));
	cr_expect(msga__topic_match("md.*", "md.AAPL"));
	cr_expect(msga__topic_match("md.*", "md."));
	cr_expect_not(msga__topic_match("md.*", "md"));
	cr_expect_not(msga__topic_match("md.*", "fx.EUR"));
	cr_expect(msga__topic_match("md.AAPL", "md.AAPL"));
	cr_expect_not(msga__topic_match("md.AAPL", "md.AAPL2"));
	cr_expect_not(msga__topic_match("md.AAPL2", "md.AAPL"));
}
