/* SPDX-License-Identifier: MIT */
#ifndef FIX_FIX_H
#define FIX_FIX_H
/* The fixture's public header. */
int fix_run(void);
#endif
