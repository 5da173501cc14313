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
	f->stale = !f->h.start_ticks || msga__shm_pid_start(f->h.pid) != f->h.start_ticks;
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
	DIR *d = opendir(msga__shm_dir());
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		char path[512];
		long p = name_pid(e->d_name);

		if (p < 0 || (pid && p != pid))
			continue;
		snprintf(path, sizeof(path), "%s/%s", msga__shm_dir(), e->d_name);
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

/*
 * What is printed of each kind of record: its fields, by offset, from the
 * public stats struct the slot holds (a field the writer's smaller struct
 * lacks prints as 0), as JSON members and table columns alike.
 */
struct field {
	const char *json;        /* member name */
	const char *text;        /* column label; NULL: JSON only */
	uint16_t off, size;      /* in the struct; size 4 or 8 */
	int hex;                 /* printed in hex in the table */
};

#define F(type, f, label) \
	{ #f, label, offsetof(type, f), sizeof(((type *)0)->f), 0 }
#define FH(type, f, label) \
	{ #f, label, offsetof(type, f), sizeof(((type *)0)->f), 1 }

#define SUB struct msga_sub_stats
static const struct field sub_fields[] = {
	F(SUB, msgs, "msgs"), F(SUB, bytes, "bytes"), F(SUB, gaps, "gaps"),
	F(SUB, missing, "missing"), F(SUB, dups, "dups"),
	F(SUB, recovered, "recovered"), F(SUB, unrecoverable, "lost"),
	F(SUB, naks, "naks"), F(SUB, reads, "reads"),
	F(SUB, reasm_drops, NULL), F(SUB, filtered, NULL),
	F(SUB, forged, "forged"), F(SUB, spoofed, "spoofed"),
	F(SUB, streams, NULL), F(SUB, rc_conns, "conns"),
	F(SUB, rc_msgs, "rc_msgs"), F(SUB, rc_bytes, "rc_bytes"),
	F(SUB, rc_gone_clean, NULL), F(SUB, rc_gone_reset, NULL),
	F(SUB, rc_gone_timeout, NULL), F(SUB, rc_gone_other, NULL),
	F(SUB, rc_retries, "retries"), F(SUB, unmatched, "unmatched"),
};
#undef SUB

#define STREAM struct msga_stream_stats
static const struct field stream_fields[] = {
	FH(STREAM, origin, "origin"), F(STREAM, last_seq, "seq"),
	F(STREAM, msgs, "msgs"), F(STREAM, bytes, NULL),
	F(STREAM, gaps, "gaps"), F(STREAM, missing, "missing"),
	F(STREAM, recovered, "recovered"),
	F(STREAM, unrecoverable, "lost"),
};
#undef STREAM

#define PUB struct msga_pub_stats
static const struct field pub_fields[] = {
	F(PUB, msgs, "msgs"), F(PUB, bytes, "bytes"),
	F(PUB, deliveries, NULL), F(PUB, eagain, "eagain"),
	F(PUB, blocked_ns, NULL), F(PUB, stalls, "stalls"),
	F(PUB, keepalives, NULL), F(PUB, subscribers, "subs"),
	F(PUB, unmatched, "unmatched"), F(PUB, gone_clean, "gone_clean"),
	F(PUB, gone_reset, "gone_reset"),
	F(PUB, gone_timeout, "gone_timeout"), F(PUB, gone_slow, "gone_slow"),
	F(PUB, refused_keys, NULL), F(PUB, refused_allow, NULL),
	F(PUB, refused_limits, NULL), F(PUB, refused_timeout, NULL),
	F(PUB, naks, "naks"), F(PUB, retransmits, "resent"),
	F(PUB, lost_sent, NULL), F(PUB, forged, NULL),
};
#undef PUB

#define CONN struct msga_pub_conn_stats
static const struct field conn_fields[] = {
	F(CONN, msgs, "msgs"), F(CONN, bytes, "bytes"),
	F(CONN, stalls, "stalls"), F(CONN, held_ns, "held_ns"),
};
#undef CONN

#define LINE struct msga_line_stats
static const struct field line_fields[] = {
	F(LINE, conn_id, "id"), F(LINE, up, "up"), F(LINE, msgs, "msgs"),
	F(LINE, bytes, "bytes"), F(LINE, topics, "topics"),
};
#undef LINE

/*
 * Each kind: its JSON name, its owner's kind (NULL: it has none; it is
 * listed by its own id), what its name is, its fields.
 */
struct kind {
	const char *json, *owner, *name, *indent;
	const struct field *f;
	size_t n;
};

#define K(j, o, nm, ind, tab) { j, o, nm, ind, tab, sizeof(tab) / sizeof(tab[0]) }
static const struct kind kinds[MSGA__SHM_KIND_MAX + 1] = {
	[MSGA__SHM_SUB] = K("sub", NULL, "pattern", "  ", sub_fields),
	[MSGA__SHM_STREAM] = K("stream", "sub", "topic", "    ", stream_fields),
	[MSGA__SHM_PUB] = K("pub", NULL, "uri", "  ", pub_fields),
	[MSGA__SHM_PUB_CONN] = K("conn", "pub", "peer", "    ", conn_fields),
	[MSGA__SHM_SUB_CONN] = K("rc_conn", "sub", "peer", "    ",
				 line_fields),
};

/* A record's field if the writer's struct has it, else 0. */
static unsigned long long field_get(const void *rec, size_t len,
				    const struct field *f)
{
	uint64_t v64 = 0;
	uint32_t v32 = 0;

	if ((size_t)f->off + f->size > len)
		return 0;
	if (f->size == sizeof(v32)) {
		memcpy(&v32, (const char *)rec + f->off, sizeof(v32));
		return v32;
	}
	memcpy(&v64, (const char *)rec + f->off, sizeof(v64));
	return v64;
}

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

static void print_json(const struct kind *k, const struct msga__shm_slot *s,
		       const void *rec)
{
	printf("{\"kind\":\"%s\",\"%s\":%u,\"%s\":", k->json,
	       k->owner ? k->owner : "id", k->owner ? s->owner : s->id,
	       k->name);
	json_str(s->name);
	for (size_t i = 0; i < k->n; i++)
		printf(",\"%s\":%llu", k->f[i].json,
		       field_get(rec, s->len, &k->f[i]));
	putchar('}');
}

static void print_text(const struct kind *k, const struct msga__shm_slot *s,
		       const void *rec)
{
	printf("%s%s", k->indent, k->json);
	if (!k->owner)
		printf(" %-3u", s->id);
	printf(" %-24s", s->name);
	for (size_t i = 0; i < k->n; i++) {
		const struct field *f = &k->f[i];

		if (f->text)
			printf(f->hex ? " %s %016llx" : " %s %llu", f->text,
			       field_get(rec, s->len, f));
	}
	putchar('\n');
}

static void print_slot(const struct msga__shm_slot *s, const void *payload,
		       int json, int *first)
{
	const struct kind *k = &kinds[s->kind]; /* (checked: 1 to KIND_MAX) */

	if (json) {
		printf("%s", *first ? "" : ",");
		print_json(k, s, payload);
	} else {
		print_text(k, s, payload);
	}
	*first = 0;
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
				o->pid, msga__shm_dir());
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
