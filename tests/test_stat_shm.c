/* SPDX-License-Identifier: MIT */
/*
 * test_stat_shm.c - the live-counters file's reader checks and seqlock
 * (lib/proto/stat_shm.c): what msga_stat -p accepts from a file another
 * process wrote, and what it refuses.
 */
#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "stat_shm.h"

#define NSLOTS 4u
#define FILE_BYTES (MSGA__SHM_HDR_BYTES + NSLOTS * MSGA__SHM_SLOT_BYTES)

static _Alignas(8) char file[FILE_BYTES];
static uint64_t payload[MSGA__SHM_PAYLOAD_MAX / 8 + 1];

static struct msga__shm_hdr *hdr(void)
{
	return (struct msga__shm_hdr *)(void *)file;
}

static struct msga__shm_slot *slot(uint32_t i)
{
	return (struct msga__shm_slot *)(void *)(file + MSGA__SHM_HDR_BYTES +
						 i * MSGA__SHM_SLOT_BYTES);
}

/* A good file: slot 0 a record of len bytes, the others free. */
static void file_make(void)
{
	memset(file, 0, sizeof(file));
	memcpy(hdr()->magic, MSGA__SHM_MAGIC, 8);
	hdr()->version = MSGA__SHM_VERSION;
	hdr()->hdr_bytes = MSGA__SHM_HDR_BYTES;
	hdr()->slot_bytes = MSGA__SHM_SLOT_BYTES;
	hdr()->nslots = NSLOTS;
	memset(hdr()->comm, 'x', sizeof(hdr()->comm)); /* (no NUL) */
}

static void record(uint32_t i, uint32_t kind, uint32_t len, uint32_t size)
{
	struct msga__shm_slot *s = slot(i);

	msga__shm_write_begin(s);
	s->kind = kind;
	s->len = len;
	memset(s->name, 'n', sizeof(s->name)); /* (no NUL) */
	memcpy(s + 1, &size, sizeof(size));
	msga__shm_write_end(s);
}

TestSuite(stat_shm, .init = file_make);

Test(stat_shm, a_good_file_reads)
{
	struct msga__shm_hdr h;
	struct msga__shm_slot s;

	record(0, MSGA__SHM_SUB, 64, 64);
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), 0);
	cr_assert_eq(h.comm[sizeof(h.comm) - 1], '\0');
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 1, &s, payload), 1);
	cr_assert_eq(s.kind, MSGA__SHM_SUB);
	cr_assert_eq(s.len, 64);
	cr_assert_eq(s.seq, 2);
	cr_assert_eq(s.name[sizeof(s.name) - 1], '\0');
	cr_assert_eq(msga__shm_slot_read(file, &h, 1, 1, &s, payload), 0);
	cr_assert_eq(msga__shm_slot_read(file, &h, NSLOTS, 1, &s, payload),
		     -EINVAL);
}

Test(stat_shm, a_slot_being_written_is_eagain)
{
	struct msga__shm_hdr h;
	struct msga__shm_slot s;

	record(0, MSGA__SHM_SUB, 64, 64);
	msga__shm_write_begin(slot(0));
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), 0);
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 8, &s, payload),
		     -EAGAIN);
	msga__shm_write_end(slot(0));
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 8, &s, payload), 1);
}

Test(stat_shm, malformed_records_are_einval)
{
	struct msga__shm_hdr h;
	struct msga__shm_slot s;

	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), 0);
	record(0, MSGA__SHM_KIND_MAX + 1, 64, 64);
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 1, &s, payload), -EINVAL);
	record(0, MSGA__SHM_SUB, 64, 60); /* size field is not len */
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 1, &s, payload), -EINVAL);
	record(0, MSGA__SHM_SUB, (uint32_t)MSGA__SHM_PAYLOAD_MAX + 1,
	       (uint32_t)MSGA__SHM_PAYLOAD_MAX + 1);
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 1, &s, payload), -EINVAL);
	record(0, MSGA__SHM_SUB, 2, 2); /* shorter than its size field */
	cr_assert_eq(msga__shm_slot_read(file, &h, 0, 1, &s, payload), -EINVAL);
}

Test(stat_shm, bad_headers_are_einval)
{
	struct msga__shm_hdr h;

	cr_assert_eq(msga__shm_hdr_check(NULL, sizeof(file), &h), -EINVAL);
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(h) - 1, &h), -EINVAL);
	/* slots past the end of what was mapped */
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file) - 1, &h), -EINVAL);
	hdr()->nslots = UINT32_MAX;
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
	file_make();
	hdr()->version = MSGA__SHM_VERSION + 1;
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
	file_make();
	hdr()->magic[0] = 'X';
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
	file_make();
	hdr()->slot_bytes = MSGA__SHM_SLOT_BYTES * 2;
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
	file_make();
	hdr()->slot_bytes = 100; /* not a multiple of 8 */
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
	file_make();
	hdr()->hdr_bytes = 8;
	cr_assert_eq(msga__shm_hdr_check(file, sizeof(file), &h), -EINVAL);
}

Test(stat_shm, proc_start_is_field_22)
{
	cr_assert_eq(msga__shm_proc_start("42 (a) b) S 1 42 42 0 -1 4194560 "
					  "100 0 0 0 1 2 0 0 20 0 1 0 "
					  "98765 1000 10"), 98765);
	cr_assert_eq(msga__shm_proc_start("42 no paren"), 0);
	cr_assert_eq(msga__shm_proc_start("42 (a) S 1 2"), 0);
}
