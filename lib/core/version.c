/* SPDX-License-Identifier: MIT */
/* version.c - the library's version string, from configure. */
#include "config.h"
#include "internal.h"

MSGA_API const char *msga_version(void)
{
	return PACKAGE_VERSION;
}
