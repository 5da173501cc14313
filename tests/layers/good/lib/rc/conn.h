/* SPDX-License-Identifier: MIT */
#ifndef FIX_CONN_H
#define FIX_CONN_H
int conn_poll(void);
#endif
