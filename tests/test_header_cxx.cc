// SPDX-License-Identifier: MIT
// The public header must compile alone, first, in C++, and link from C++.
#include "msgaccel.h"

#include <cerrno>
#include <cstring>
#include <criterion/criterion.h>

extern "C" int header_c_compiled(void);

Test(header, usable_from_cxx)
{
	msga_ctx_attr attr = {};
	attr.size = sizeof(attr);
	cr_expect(header_c_compiled());
	cr_expect_eq(msga_ctx_open(&attr, nullptr), -EINVAL);
	cr_expect(std::strlen(msga_version()) >= 5);
	cr_expect_eq(msga_topic_check("md.AAPL"), 0);
	cr_expect_eq(msga_pattern_check(nullptr), -EINVAL);
}
