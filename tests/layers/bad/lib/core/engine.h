/* SPDX-License-Identifier: MIT */
#ifndef FIX_ENGINE_H
#define FIX_ENGINE_H
/* Deliberately wrong: core includes an rc header, and conn.h below
 * includes this one back, so the include loop spans core and rc. */
#include "fix.h"
#include "conn.h"
int engine_schedule(int n);
#endif
