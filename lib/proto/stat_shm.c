/* SPDX-License-Identifier: MIT */
/*
 * stat_shm.c - reading a live-counters file (stat_shm.h): the checks a
 * reader makes on what another process wrote, and the seqlock's reader
 * side. No I/O but /proc/PID/stat's one line (msga__shm_pid_start): the
 * caller maps the file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stat_shm.h"

int msga__shm_hdr_check(const void *map, size_t len, struct msga__shm_hdr *h)
{
	if (!map || len < sizeof(*h))
		return -EINVAL;
	memcpy(h, map, sizeof(*h));
	if (memcmp(h->magic, MSGA__SHM_MAGIC, sizeof(h->magic)) ||
	    h->version != MSGA__SHM_VERSION ||
	    h->hdr_bytes < sizeof(*h) || h->hdr_bytes > len ||
	    h->slot_bytes < sizeof(struct msga__shm_slot) + sizeof(uint32_t) ||
	    h->slot_bytes > MSGA__SHM_SLOT_BYTES || h->slot_bytes % 8)
		return -EINVAL;
	/* (the slots must fit: in 64 bits, nslots times slot_bytes cannot
	 * wrap) */
	if ((uint64_t)h->nslots * h->slot_bytes > len - h->hdr_bytes)
		return -EINVAL;
	h->dev_name[sizeof(h->dev_name) - 1] = '\0';
	h->lib_version[sizeof(h->lib_version) - 1] = '\0';
	h->comm[sizeof(h->comm) - 1] = '\0';
	return 0;
}

static const char *slot_at(const void *map, const struct msga__shm_hdr *h,
			   uint32_t i)
{
	return (const char *)map + h->hdr_bytes + (size_t)i * h->slot_bytes;
}

/* The record read once is checked: the writer may be hostile or broken. */
static int slot_check(const struct msga__shm_hdr *h,
		      struct msga__shm_slot *slot, const void *payload)
{
	uint32_t size;

	if (slot->kind == MSGA__SHM_FREE)
		return 0;
	if (slot->kind > MSGA__SHM_KIND_MAX || slot->len < sizeof(size) ||
	    slot->len > h->slot_bytes - sizeof(*slot))
		return -EINVAL;
	memcpy(&size, payload, sizeof(size));
	if (size != slot->len)
		return -EINVAL;
	slot->name[sizeof(slot->name) - 1] = '\0';
	return 1;
}

int msga__shm_slot_read(const void *map, const struct msga__shm_hdr *h,
			uint32_t i, int tries, struct msga__shm_slot *slot,
			void *payload)
{
	const char *at;
	uint32_t s1, s2;

	if (i >= h->nslots)
		return -EINVAL;
	at = slot_at(map, h, i);
	while (tries-- > 0) {
		const uint32_t *seq = (const uint32_t *)(const void *)at;

		s1 = __atomic_load_n(seq, __ATOMIC_ACQUIRE);
		if (s1 & 1)
			continue;
		memcpy(slot, at, sizeof(*slot));
		memcpy(payload, at + sizeof(*slot),
		       h->slot_bytes - sizeof(*slot));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		s2 = __atomic_load_n(seq, __ATOMIC_RELAXED);
		if (s1 == s2)
			return slot_check(h, slot, payload);
	}
	return -EAGAIN;
}

uint64_t msga__shm_proc_start(const char *stat_text)
{
	/* (after the name's last ')': the name may hold spaces and parens) */
	const char *p = strrchr(stat_text, ')');
	unsigned long long t;

	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u "
			 "%*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", &t) != 1)
		return 0;
	return t;
}

uint64_t msga__shm_pid_start(int64_t pid)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return msga__shm_proc_start(buf);
}

const char *msga__shm_dir(void)
{
	const char *d = getenv("MSGA_STAT_DIR");

	return d && d[0] ? d : MSGA__SHM_DIR;
}
