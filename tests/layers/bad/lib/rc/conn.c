/* SPDX-License-Identifier: MIT */
#include "conn.h"
#include "engine.h"

int conn_poll(void)
{
	return engine_schedule(1);
}
