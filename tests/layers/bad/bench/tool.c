/* SPDX-License-Identifier: MIT */
/* Deliberately wrong: a tool includes a private header. */
#include "fix.h"
#include "codec.h"

int main(void)
{
	return fix_run() + codec_len(0);
}
