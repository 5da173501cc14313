/* SPDX-License-Identifier: MIT */
/* Deliberately wrong: the engine calls the transport, which calls the
 * engine back: a call loop across core and rc. */
#include "engine.h"
#include "codec.h"

int engine_schedule(int n)
{
	return n > 0 ? codec_len(n) : conn_poll();
}
