/* SPDX-License-Identifier: MIT */
/*
 * stat_shm.h - the layout of a context's live-counters file (msgaccel(7),
 * LIVE COUNTERS; msga_stat(1), -p), shared by the library that writes it
 * (lib/core/stat_file.c, lib/api/stat_export.c) and the tools that read
 * it (msga_stat -p), and the reader's checks (stat_shm.c).
 *
 * One file a context, /dev/shm/msgaccel.PID.N, made at msga_ctx_open()
 * and unlinked at msga_ctx_close(): a header page, then fixed-size slots.
 * A slot holds one object's counters as the public struct its stats call
 * fills (struct msga_sub_stats, msga_stream_stats, ...): size-first, so a
 * reader of any version takes what it knows. One thread writes (the one
 * polling the context); any number of processes read, without a lock and
 * without the writer knowing: each slot is a seqlock (an odd seq while it
 * is written; a reader copies, and keeps the copy only if seq was even
 * and unchanged around it). The writer refreshes the slots on its
 * context's timer tick, never on the message path, so counting costs the
 * fast path nothing.
 *
 * A reader trusts nothing in the file: another process wrote it. Every
 * size and index is checked against the file's length before use.
 */
#ifndef MSGA_STAT_SHM_H
#define MSGA_STAT_SHM_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__SHM_MAGIC "MSGASTAT"
#define MSGA__SHM_VERSION 1u
#define MSGA__SHM_DIR "/dev/shm"
#define MSGA__SHM_PREFIX "msgaccel."
#define MSGA__SHM_HDR_BYTES 4096u
#define MSGA__SHM_SLOT_BYTES 1024u
/* Slots a file has: 4 MiB of tmpfs at most, pages touched only if used. */
#define MSGA__SHM_SLOTS 4092u
#define MSGA__SHM_FILE_BYTES \
	(MSGA__SHM_HDR_BYTES + MSGA__SHM_SLOTS * MSGA__SHM_SLOT_BYTES)
#define MSGA__SHM_NAME_LEN 96u

/* What a slot holds. */
enum msga__shm_kind {
	MSGA__SHM_FREE = 0,
	MSGA__SHM_SUB = 1,      /* struct msga_sub_stats; name: the pattern */
	MSGA__SHM_STREAM = 2,   /* struct msga_stream_stats of owner's sub */
	MSGA__SHM_PUB = 3,      /* struct msga_pub_stats; name: the uri */
	MSGA__SHM_PUB_CONN = 4, /* struct msga_pub_conn_stats of owner's pub */
	MSGA__SHM_SUB_CONN = 5, /* struct msga_line_stats: an rdma://
				 * connection of owner's sub; name: peer */
	MSGA__SHM_KIND_MAX = 5,
};

/* The header: written once at open, but for updated_ns and the counts. */
struct msga__shm_hdr {
	char magic[8];
	uint32_t version;
	uint32_t hdr_bytes;      /* MSGA__SHM_HDR_BYTES */
	uint32_t slot_bytes;     /* MSGA__SHM_SLOT_BYTES */
	uint32_t nslots;
	int64_t pid;
	uint64_t start_ticks;    /* the process's start (/proc/PID/stat field
				  * 22): a reused pid is not this process */
	uint64_t opened_ns;      /* CLOCK_REALTIME at msga_ctx_open() */
	uint64_t interval_ns;    /* how often the slots are refreshed */
	uint64_t updated_ns;     /* CLOCK_MONOTONIC of the last refresh */
	uint32_t slots_used;
	uint32_t slots_short;    /* objects not shown: no slot was free */
	char dev_name[64];
	char lib_version[16];
	char comm[16];           /* the process's name */
};

/* A slot's fixed part; the payload follows, len bytes. */
struct msga__shm_slot {
	uint32_t seq;            /* even: stable; odd: being written */
	uint32_t kind;           /* enum msga__shm_kind */
	uint32_t id;             /* the object's (for owner links) */
	uint32_t owner;          /* the id of the object it belongs to */
	uint32_t len;            /* payload bytes */
	uint32_t reserved;
	char name[MSGA__SHM_NAME_LEN];
};

#define MSGA__SHM_PAYLOAD_MAX \
	(MSGA__SHM_SLOT_BYTES - sizeof(struct msga__shm_slot))

/*
 * What a reader makes of a mapped file of len bytes: 0 with *h a checked
 * copy of its header, or -EINVAL (not a counters file, a version we do
 * not read, sizes that do not fit len).
 */
int msga__shm_hdr_check(const void *map, size_t len, struct msga__shm_hdr *h);

/*
 * Copy slot i of a checked file into *slot and its payload into
 * payload[MSGA__SHM_PAYLOAD_MAX]: 1 if it holds a consistent record, 0 if
 * it is free, -EAGAIN if the writer kept changing it (tries times), or
 * -EINVAL if what it holds is malformed (a kind, len or payload size out
 * of bounds). The payload's first uint32 (its struct's size) equals len.
 */
int msga__shm_slot_read(const void *map, const struct msga__shm_hdr *h,
			uint32_t i, int tries, struct msga__shm_slot *slot,
			void *payload);

/*
 * Field 22 of a /proc/PID/stat text (NUL-terminated): when the process
 * started, in clock ticks; 0 if the text is not such a line.
 */
uint64_t msga__shm_proc_start(const char *stat_text);
/*
 * The same read from /proc/PID/stat (pid 0: this process's): the one I/O
 * in this file, which the writer (its header's start_ticks) and the
 * reader (is the writer still that process?) share. 0 if it is gone.
 */
uint64_t msga__shm_pid_start(int64_t pid);
/* The directory of the files: $MSGA_STAT_DIR, else /dev/shm. */
const char *msga__shm_dir(void);

/* The writer's side of a slot's seqlock, around a change of it. */
static inline void msga__shm_write_begin(struct msga__shm_slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
}

static inline void msga__shm_write_end(struct msga__shm_slot *s)
{
	__atomic_store_n(&s->seq, s->seq + 1, __ATOMIC_RELEASE);
}

#endif
