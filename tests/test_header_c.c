/* SPDX-License-Identifier: MIT */
/* The public header must compile alone, first, in C. */
#include "msgaccel.h"

int header_c_compiled(void);
int header_c_compiled(void)
{
	return MSGA_VERSION_MAJOR >= 0 && sizeof(struct msga_ctx_attr) > 0;
}
