/* SPDX-License-Identifier: MIT */
/*
 * stat_attach.c - msga_stat -p PID and -a: read the live-counters files
 * of running msgaccel processes (lib/proto/stat_shm.h), read-only, and
 * print them every interval, as a table or JSON lines. It joins nothing
 * and the process it watches does not know it is watched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "msgaccel.h"
#include "stat_attach.h"
#include "stat_shm.h"

#define FILES_MAX 64
#define READ_TRIES 64

struct cfile {
	char path[512];
	const void *map;
	size_t len;
	struct msga__shm_hdr h;
	int stale;
};

static const char *stat_dir(void)
{
	const char *d = getenv("MSGA_STAT_DIR");

	return d && d[0] ? d : MSGA__SHM_DIR;
}

/* Field 22 of /proc/PID/stat, or 0 if the process is gone. */
static uint64_t proc_start(int64_t pid)
{
	char path[64], buf[1024];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%" PRId64 "/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return msga__shm_proc_start(buf);
}

static int cfile_open(struct cfile *f, const char *path)
{
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(struct msga__shm_hdr)) {
		close(fd);
		return -EINVAL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	f->map = map;
	f->len = (size_t)st.st_size;
	snprintf(f->path, sizeof(f->path), "%s", path);
	if (msga__shm_hdr_check(map, f->len, &f->h)) {
		munmap(map, f->len);
		return -EINVAL;
	}
	f->stale = !f->h.start_ticks || proc_start(f->h.pid) != f->h.start_ticks;
	return 0;
}

static void cfile_close(struct cfile *f)
{
	munmap((void *)f->map, f->len);
}

/* "msgaccel.PID.N": its pid, or -1 for another name. */
static long name_pid(const char *name)
{
	size_t plen = strlen(MSGA__SHM_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, MSGA__SHM_PREFIX, plen))
		return -1;
	pid = strtol(name + plen, &end, 10);
	return end != name + plen && *end == '.' && pid > 0 ? pid : -1;
}

/* The files of pid (every process: pid 0), up to max; how many. */
static int files_find(long pid, struct cfile *files, int max)
{
	DIR *d = opendir(stat_dir());
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char path[512];
		long p = name_pid(e->d_name);

		if (p < 0 || (pid && p != pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", stat_dir(), e->d_name);
		if (!cfile_open(&files[n], path))
			n++;
	}
	closedir(d);
	return n;
}

static double age_s(const struct cfile *f)
{
	struct timespec ts;
	uint64_t now, upd = __atomic_load_n(
		&((const struct msga__shm_hdr *)f->map)->updated_ns,
		__ATOMIC_ACQUIRE);

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	return now > upd ? (double)(now - upd) / 1e9 : 0;
}

/* ------------------------------------------------------------ printing */

/* A record's field if the writer's struct has it, else 0. */
#define FIELD(rec, len, type, f) \
	(offsetof(type, f) + sizeof(((type *)0)->f) <= (len) ? (rec)->f : 0)

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	putchar('"');
}

static void print_sub(const struct msga__shm_slot *s,
		      const struct msga_sub_stats *st, int json)
{
	size_t len = s->len;
#define S(f) ((unsigned long long)FIELD(st, len, struct msga_sub_stats, f))
	if (json) {
		printf("{\"kind\":\"sub\",\"id\":%u,\"pattern\":", s->id);
		json_str(s->name);
		printf(",\"msgs\":%llu,\"bytes\":%llu,\"gaps\":%llu,"
		       "\"missing\":%llu,\"dups\":%llu,\"recovered\":%llu,"
		       "\"unrecoverable\":%llu,\"naks\":%llu,\"reads\":%llu,"
		       "\"reasm_drops\":%llu,\"forged\":%llu,\"spoofed\":%llu,"
		       "\"streams\":%llu}",
		       S(msgs), S(bytes), S(gaps), S(missing), S(dups),
		       S(recovered), S(unrecoverable), S(naks), S(reads),
		       S(reasm_drops), S(forged), S(spoofed), S(streams));
		return;
	}
	printf("  sub %-3u %-24s msgs %llu bytes %llu gaps %llu missing %llu "
	       "dups %llu recovered %llu lost %llu naks %llu reads %llu "
	       "forged %llu spoofed %llu\n", s->id, s->name, S(msgs),
	       S(bytes), S(gaps), S(missing), S(dups), S(recovered),
	       S(unrecoverable), S(naks), S(reads), S(forged), S(spoofed));
#undef S
}

static void print_stream(const struct msga__shm_slot *s,
			 const struct msga_stream_stats *st, int json)
{
	size_t len = s->len;
#define S(f) ((unsigned long long)FIELD(st, len, struct msga_stream_stats, f))
	if (json) {
		printf("{\"kind\":\"stream\",\"sub\":%u,\"topic\":", s->owner);
		json_str(s->name);
		printf(",\"origin\":%llu,\"last_seq\":%llu,\"msgs\":%llu,"
		       "\"bytes\":%llu,\"gaps\":%llu,\"missing\":%llu,"
		       "\"recovered\":%llu,\"unrecoverable\":%llu}",
		       S(origin), S(last_seq), S(msgs), S(bytes), S(gaps),
		       S(missing), S(recovered), S(unrecoverable));
		return;
	}
	printf("    stream %-24s origin %016llx seq %llu msgs %llu gaps %llu "
	       "missing %llu recovered %llu lost %llu\n", s->name, S(origin),
	       S(last_seq), S(msgs), S(gaps), S(missing), S(recovered),
	       S(unrecoverable));
#undef S
}

static void print_pub(const struct msga__shm_slot *s,
		      const struct msga_pub_stats *st, int json)
{
	size_t len = s->len;
#define S(f) ((unsigned long long)FIELD(st, len, struct msga_pub_stats, f))
	if (json) {
		printf("{\"kind\":\"pub\",\"id\":%u,\"uri\":", s->id);
		json_str(s->name);
		printf(",\"msgs\":%llu,\"bytes\":%llu,\"deliveries\":%llu,"
		       "\"eagain\":%llu,\"blocked_ns\":%llu,\"stalls\":%llu,"
		       "\"subscribers\":%llu,\"unmatched\":%llu,"
		       "\"gone_clean\":%llu,\"gone_reset\":%llu,"
		       "\"gone_timeout\":%llu,\"gone_slow\":%llu,"
		       "\"refused\":%llu,\"naks\":%llu,\"retransmits\":%llu,"
		       "\"lost_sent\":%llu,\"forged\":%llu}",
		       S(msgs), S(bytes), S(deliveries), S(eagain),
		       S(blocked_ns), S(stalls), S(subscribers), S(unmatched),
		       S(gone_clean), S(gone_reset), S(gone_timeout),
		       S(gone_slow), S(refused_keys) + S(refused_allow) +
		       S(refused_limits) + S(refused_timeout), S(naks),
		       S(retransmits), S(lost_sent), S(forged));
		return;
	}
	printf("  pub %-3u %-24s msgs %llu bytes %llu eagain %llu stalls %llu "
	       "subs %llu unmatched %llu gone %llu/%llu/%llu/%llu "
	       "(clean/reset/timeout/slow) naks %llu resent %llu\n", s->id,
	       s->name, S(msgs), S(bytes), S(eagain), S(stalls),
	       S(subscribers), S(unmatched), S(gone_clean), S(gone_reset),
	       S(gone_timeout), S(gone_slow), S(naks), S(retransmits));
#undef S
}

static void print_conn(const struct msga__shm_slot *s,
		       const struct msga_pub_conn_stats *st, int json)
{
	size_t len = s->len;
#define S(f) ((unsigned long long)FIELD(st, len, struct msga_pub_conn_stats, f))
	if (json) {
		printf("{\"kind\":\"conn\",\"pub\":%u,\"peer\":", s->owner);
		json_str(s->name);
		printf(",\"msgs\":%llu,\"bytes\":%llu,\"stalls\":%llu,"
		       "\"held_ns\":%llu}", S(msgs), S(bytes), S(stalls),
		       S(held_ns));
		return;
	}
	printf("    conn %-24s msgs %llu bytes %llu stalls %llu held %llu ns\n",
	       s->name, S(msgs), S(bytes), S(stalls), S(held_ns));
#undef S
}

static void print_slot(const struct msga__shm_slot *s, const void *payload,
		       int json, int *first)
{
	if (json)
		printf("%s", *first ? "" : ",");
	*first = 0;
	if (s->kind == MSGA__SHM_SUB)
		print_sub(s, payload, json);
	else if (s->kind == MSGA__SHM_STREAM)
		print_stream(s, payload, json);
	else if (s->kind == MSGA__SHM_PUB)
		print_pub(s, payload, json);
	else
		print_conn(s, payload, json);
}

static void print_file(const struct cfile *f, int json)
{
	uint64_t payload[MSGA__SHM_PAYLOAD_MAX / 8 + 1];
	struct msga__shm_slot s;
	int first = 1, torn = 0;

	if (json) {
		printf("{\"pid\":%" PRId64 ",\"comm\":", f->h.pid);
		json_str(f->h.comm);
		printf(",\"dev\":");
		json_str(f->h.dev_name);
		printf(",\"lib\":");
		json_str(f->h.lib_version);
		printf(",\"stale\":%s,\"age_s\":%.3f,\"objects\":[",
		       f->stale ? "true" : "false", age_s(f));
	} else {
		printf("pid %" PRId64 " (%s) %s on %s, msgaccel %s, updated "
		       "%.2f s ago\n", f->h.pid, f->h.comm,
		       f->stale ? "STALE (process gone)" : "live",
		       f->h.dev_name, f->h.lib_version, age_s(f));
	}
	for (uint32_t i = 0; i < f->h.nslots; i++) {
		int r = msga__shm_slot_read(f->map, &f->h, i, READ_TRIES, &s,
					    payload);

		if (r == 1)
			print_slot(&s, payload, json, &first);
		else if (r < 0)
			torn++;
	}
	if (json)
		printf("],\"unreadable\":%d}\n", torn);
	else if (torn)
		printf("  (%d slots unreadable: changing or malformed)\n", torn);
}

int msga_stat_attach(const struct attach_opts *o)
{
	static struct cfile files[FILES_MAX];
	int rounds = 0;

	for (;;) {
		int n = files_find(o->pid, files, FILES_MAX);

		if (!n) {
			fprintf(stderr, "msga_stat: no msgaccel context %s%ld "
				"in %s\n", o->pid ? "of pid " : "",
				o->pid, stat_dir());
			return 1;
		}
		if (!o->json && o->clear)
			printf("\033[H\033[J");
		for (int i = 0; i < n; i++) {
			print_file(&files[i], o->json);
			cfile_close(&files[i]);
		}
		fflush(stdout);
		if (++rounds == o->count || *o->stop)
			return 0;
		{
			struct timespec ts = {
				(time_t)o->interval,
				(long)((o->interval - (long)o->interval) * 1e9) };

			nanosleep(&ts, NULL);
		}
		if (*o->stop)
			return 0;
	}
}
