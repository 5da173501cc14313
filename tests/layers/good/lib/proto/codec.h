/* SPDX-License-Identifier: MIT */
#ifndef FIX_CODEC_H
#define FIX_CODEC_H
int codec_len(int n);
#endif
