/* SPDX-License-Identifier: MIT */
#include "fix.h"

int main(void)
{
	return fix_run();
}
