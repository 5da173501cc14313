/* SPDX-License-Identifier: MIT */
/*
 * stat_file.h - a context's live-counters file, the writer's side
 * (stat_file.c; the layout is lib/proto/stat_shm.h).
 */
#ifndef MSGA_STAT_FILE_H
#define MSGA_STAT_FILE_H

#include <stdint.h>

#include "stat_shm.h"

struct msga_ctx;

/* How often an object refreshes its slots, on its context's ticks. */
#define MSGA__STAT_INTERVAL_NS 200000000u

/*
 * Make ctx's file (ctx->stat_file): 0, or a negative errno recorded on
 * ctx (the context goes on without live counters).
 */
int msga__stat_file_open(struct msga_ctx *ctx);
void msga__stat_file_close(struct msga_ctx *ctx);
/* A free slot for an object (NULL: no file, or none free: counted). */
struct msga__shm_slot *msga__stat_slot_get(struct msga_ctx *ctx, uint32_t kind,
					   uint32_t id, uint32_t owner,
					   const char *name);
void msga__stat_slot_put(struct msga_ctx *ctx, struct msga__shm_slot *s);
/* Publish rec (a size-first stats struct of len bytes) in s. */
void msga__stat_slot_set(struct msga__shm_slot *s, const void *rec,
			 uint32_t len);
/* The file's heartbeat: the context's objects were refreshed at now. */
void msga__stat_file_touch(struct msga_ctx *ctx, uint64_t now);

#endif
