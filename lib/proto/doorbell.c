/* SPDX-License-Identifier: MIT */
/*
 * doorbell.c - the rule of doorbell.h: hold a send back only when asked
 * or while the queue is busy, and never past MSGA__DB_HOLD_MAX.
 */
#include "doorbell.h"

uint32_t msga__db_busy_mark(uint32_t sq_depth, uint32_t sig_every)
{
	uint32_t mark = 2u * sig_every;

	if (mark > sq_depth / 2)
		mark = sq_depth / 2;
	return mark ? mark : 1u;
}

int msga__db_hold(int more, int adaptive, uint64_t outstanding,
		  uint32_t held, uint32_t sq_depth, uint32_t sig_every)
{
	/* (full: this one goes with the ones that wait) */
	if (held + 1u >= MSGA__DB_HOLD_MAX)
		return 0;
	if (more)
		return 1;
	return adaptive &&
	       outstanding >= msga__db_busy_mark(sq_depth, sig_every);
}
