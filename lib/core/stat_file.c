/* SPDX-License-Identifier: MIT */
/*
 * stat_file.c - a context's live-counters file (stat_shm.h): made at
 * msga_ctx_open() in /dev/shm (or $MSGA_STAT_DIR), mode 600, unlinked at
 * msga_ctx_close(); slots handed to the objects that export into it
 * (lib/api/stat_export.c). A file left by a process that died is known
 * as stale by its reader: its pid is gone, or is another process's now
 * (start_ticks differs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "stat_file.h"

struct msga__stat_file {
	struct msga__shm_hdr *hdr;   /* the whole file, mapped */
	uint32_t hint;               /* where to look for a free slot */
	char path[128];
};

static unsigned stat_files_made; /* (atomic: contexts open in any thread) */

static void hdr_fill(struct msga_ctx *ctx, struct msga__shm_hdr *h)
{
	struct timespec ts;

	memcpy(h->magic, MSGA__SHM_MAGIC, sizeof(h->magic));
	h->hdr_bytes = MSGA__SHM_HDR_BYTES;
	h->slot_bytes = MSGA__SHM_SLOT_BYTES;
	h->nslots = MSGA__SHM_SLOTS;
	h->pid = getpid();
	h->start_ticks = msga__shm_pid_start(0);
	clock_gettime(CLOCK_REALTIME, &ts);
	h->opened_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	h->interval_ns = MSGA__STAT_INTERVAL_NS;
	h->updated_ns = msga__now_ns();
	snprintf(h->dev_name, sizeof(h->dev_name), "%s", ctx->dev_name);
	snprintf(h->lib_version, sizeof(h->lib_version), "%s", msga_version());
	snprintf(h->comm, sizeof(h->comm), "%s", program_invocation_short_name);
	/* (last: a reader takes nothing without the version) */
	__atomic_store_n(&h->version, MSGA__SHM_VERSION, __ATOMIC_RELEASE);
}

int msga__stat_file_open(struct msga_ctx *ctx)
{
	struct msga__stat_file *sf = calloc(1, sizeof(*sf));
	unsigned n = __atomic_fetch_add(&stat_files_made, 1, __ATOMIC_RELAXED);
	void *map;
	int fd, err;

	if (!sf)
		return -ENOMEM;
	snprintf(sf->path, sizeof(sf->path), "%s/%s%d.%u", msga__shm_dir(),
		 MSGA__SHM_PREFIX, (int)getpid(), n);
	fd = open(sf->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0 && errno == EEXIST) {
		/* A file of a dead process that had our pid: stale, ours. */
		unlink(sf->path);
		fd = open(sf->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
			  O_NOFOLLOW, 0600);
	}
	if (fd < 0) {
		err = errno;
		goto fail;
	}
	map = ftruncate(fd, MSGA__SHM_FILE_BYTES) ? MAP_FAILED :
	      mmap(NULL, MSGA__SHM_FILE_BYTES, PROT_READ | PROT_WRITE,
		   MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (map == MAP_FAILED) {
		unlink(sf->path);
		goto fail;
	}
	sf->hdr = map;
	hdr_fill(ctx, sf->hdr);
	ctx->stat_file = sf;
	return 0;
fail:
	msga__ctx_fail(ctx, -err, "live counters: %s: %s (the context works "
		       "without them)", sf->path, strerror(err));
	free(sf);
	return -err;
}

void msga__stat_file_close(struct msga_ctx *ctx)
{
	struct msga__stat_file *sf = ctx->stat_file;

	if (!sf)
		return;
	unlink(sf->path);
	munmap(sf->hdr, MSGA__SHM_FILE_BYTES);
	free(sf);
	ctx->stat_file = NULL;
}

static struct msga__shm_slot *slot_at(struct msga__stat_file *sf, uint32_t i)
{
	return (struct msga__shm_slot *)((char *)sf->hdr +
					 MSGA__SHM_HDR_BYTES +
					 (size_t)i * MSGA__SHM_SLOT_BYTES);
}

struct msga__shm_slot *msga__stat_slot_get(struct msga_ctx *ctx, uint32_t kind,
					   uint32_t id, uint32_t owner,
					   const char *name)
{
	struct msga__stat_file *sf = ctx->stat_file;
	struct msga__shm_slot *s;

	if (!sf)
		return NULL;
	for (uint32_t k = 0; k < MSGA__SHM_SLOTS; k++) {
		uint32_t i = (sf->hint + k) % MSGA__SHM_SLOTS;

		s = slot_at(sf, i);
		if (s->kind != MSGA__SHM_FREE)
			continue;
		sf->hint = i + 1;
		msga__shm_write_begin(s);
		s->kind = kind;
		s->id = id;
		s->owner = owner;
		s->len = 0;
		snprintf(s->name, sizeof(s->name), "%s", name ? name : "");
		msga__shm_write_end(s);
		sf->hdr->slots_used++;
		return s;
	}
	sf->hdr->slots_short++;
	return NULL;
}

void msga__stat_slot_put(struct msga_ctx *ctx, struct msga__shm_slot *s)
{
	if (!s || !ctx->stat_file)
		return;
	msga__shm_write_begin(s);
	s->kind = MSGA__SHM_FREE;
	s->len = 0;
	msga__shm_write_end(s);
	ctx->stat_file->hdr->slots_used--;
}

void msga__stat_slot_set(struct msga__shm_slot *s, const void *rec,
			 uint32_t len)
{
	if (len > MSGA__SHM_PAYLOAD_MAX)
		len = 0; /* (a record that does not fit is not shown) */
	msga__shm_write_begin(s);
	memcpy(s + 1, rec, len);
	s->len = len;
	msga__shm_write_end(s);
}

void msga__stat_file_touch(struct msga_ctx *ctx, uint64_t now)
{
	if (ctx->stat_file)
		__atomic_store_n(&ctx->stat_file->hdr->updated_ns, now,
				 __ATOMIC_RELEASE);
}
