/* SPDX-License-Identifier: MIT */
/* stat_export.h - objects' counters into the live-counters file. */
#ifndef MSGA_STAT_EXPORT_H
#define MSGA_STAT_EXPORT_H

#include <stdint.h>

struct msga_pub;
struct msga_sub;

/* On sub's tick: refresh its slots if the interval has passed. */
void msga__sub_export(struct msga_sub *sub, uint64_t now);
/* sub is freed: its slots go back. */
void msga__sub_export_free(struct msga_sub *sub);
/* The same for a publisher and its subscribers (rdma://, ud://). */
void msga__pub_export(struct msga_pub *pub, uint64_t now);
void msga__pub_export_free(struct msga_pub *pub);

#endif
