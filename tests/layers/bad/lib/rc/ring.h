/* SPDX-License-Identifier: MIT */
#ifndef FIX_RING_H
#define FIX_RING_H
int ring_poll(void);
#endif
