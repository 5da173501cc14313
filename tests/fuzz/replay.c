/* SPDX-License-Identifier: MIT */
/*
 * replay.c - run a fuzz harness over its committed seed corpus without
 * libFuzzer, so `make check` exercises every harness on every build (gcc
 * or clang, with or without --enable-sanitizers). Each file is read into
 * a buffer of exactly its size, as libFuzzer does, and handed to
 * LLVMFuzzerTestOneInput; an invariant failure aborts, which fails the
 * test.
 *
 *   replay_<name> [FILE|DIR]...
 *
 * With no argument it replays $FUZZ_CORPUS_ROOT/<name>, <name> being the
 * program's own name after "replay_" (make check sets FUZZ_CORPUS_ROOT):
 * automake runs tests without arguments.
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* Replay one file; 1 if it ran, -1 if it could not be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long size = -1;
	int ret = -1;

	if (f && !fseek(f, 0, SEEK_END))
		size = ftell(f);
	if (size >= 0 && !fseek(f, 0, SEEK_SET))
		buf = malloc(size ? (size_t)size : 1);
	if (buf && fread(buf, 1, (size_t)size, f) == (size_t)size) {
		LLVMFuzzerTestOneInput(buf, (size_t)size);
		ret = 1;
	} else {
		fprintf(stderr, "replay: cannot read %s\n", path);
	}
	free(buf);
	if (f)
		fclose(f);
	return ret;
}

/* Replay a file, or every regular file of a directory in name order. */
static int replay_path(const char *path, unsigned int *files)
{
	struct dirent **ents;
	struct stat st;
	int n, ret = 0;

	if (stat(path, &st)) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		ret = replay_file(path);
		*files += ret > 0;
		return ret < 0 ? -1 : 0;
	}
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char sub[4096];

		snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name);
		if (ents[i]->d_name[0] != '.' && !stat(sub, &st) &&
		    S_ISREG(st.st_mode) && replay_path(sub, files))
			ret = -1;
		free(ents[i]);
	}
	free(ents);
	return ret;
}

/* $FUZZ_CORPUS_ROOT/<name> for a program called replay_<name>. */
static int default_corpus(const char *argv0, char *dir, size_t size)
{
	const char *root = getenv("FUZZ_CORPUS_ROOT");
	char self[4096];
	const char *base;

	snprintf(self, sizeof(self), "%s", argv0);
	base = basename(self);
	if (!root || strncmp(base, "replay_", 7)) {
		fprintf(stderr, "usage: replay_<name> [FILE|DIR]... "
				"(or set FUZZ_CORPUS_ROOT)\n");
		return -1;
	}
	snprintf(dir, size, "%s/%s", root, base + 7);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int files = 0;
	char dir[4096];
	int ret = 0;

	if (argc < 2) {
		if (default_corpus(argv[0], dir, sizeof(dir)))
			return 2;
		ret = replay_path(dir, &files);
	}
	for (int i = 1; i < argc; i++)
		if (replay_path(argv[i], &files))
			ret = -1;
	printf("%s: replayed %u inputs\n", argv[0], files);
	/* An empty corpus proves nothing: fail rather than pass vacuously. */
	if (!files) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	return ret ? 1 : 0;
}
