/* SPDX-License-Identifier: MIT */
#ifndef FIX_ENGINE_H
#define FIX_ENGINE_H
#include "fix.h"
int engine_schedule(int n);
#endif
