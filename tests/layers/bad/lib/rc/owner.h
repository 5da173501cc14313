/* SPDX-License-Identifier: MIT */
#ifndef FIX_OWNER_H
#define FIX_OWNER_H
int owner_on_recv(void);
int owner_send(void);
#endif
