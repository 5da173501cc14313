/* SPDX-License-Identifier: MIT */
#include "engine.h"
#include "codec.h"

int engine_schedule(int n)
{
	return codec_len(n);
}
