/* SPDX-License-Identifier: MIT */
/*
 * Loading a context's keys through msga_ctx_open() (lib/core/keyring.c),
 * on the host: every refusal comes before a device is chosen, so each
 * documented error of msga_ctx_attr.key_file, key and key_name is seen
 * here with its msga_open_error() text. With good keys the open goes on
 * to pick a device, which this host may not have: then the error must be
 * the device's, not a key's.
 *
 * Each test writes its key files in a fresh directory under $TMPDIR (or
 * /tmp), removed by its fini.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "msgaccel.h"

#define HEX_A "000102030405060708090a0b0c0d0e0f" \
	      "101112131415161718191a1b1c1d1e1f"
#define HEX_B "ffeeddccbbaa99887766554433221100" \
	      "f0e1d2c3b4a5968778695a4b3c2d1e0f"

static char dir[PATH_MAX / 2];
static char path[PATH_MAX];

static void dir_make(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/msga-keyring-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	cr_assert_not_null(mkdtemp(dir), "mkdtemp %s: %s", dir,
			   strerror(errno));
}

/* Remove what the tests put in dir: files, a symlink, one directory. */
static void dir_remove(void)
{
	static const char *const names[] = { "sub", "link" };
	char p[PATH_MAX + 8];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (unlink(p))
			rmdir(p);
	}
	if (path[0])
		unlink(path);
	rmdir(dir);
}

TestSuite(keyring, .init = dir_make, .fini = dir_remove);

/* A key file of the given text and mode (mkstemp in dir): its path. */
static const char *key_file(const char *text, mode_t mode)
{
	size_t n = strlen(text);
	int fd;

	snprintf(path, sizeof(path), "%s/keys-XXXXXX", dir);
	fd = mkstemp(path);
	cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
	cr_assert_eq(write(fd, text, n), (ssize_t)n);
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
	return path;
}

/* msga_ctx_open() with these keys: its return; ctx closed if opened. */
static int open_with(const char *file, const uint8_t *key, const char *name)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct msga_ctx *ctx = (struct msga_ctx *)&attr;
	int ret;

	attr.key_file = file;
	attr.key = key;
	attr.key_name = name;
	ret = msga_ctx_open(&attr, &ctx);
	if (!ret)
		msga_ctx_close(ctx);
	else
		cr_expect_null(ctx, "no context on failure");
	return ret;
}

static void expect_said(const char *what)
{
	cr_expect(strstr(msga_open_error(), what) != NULL,
		  "open error \"%s\" does not say \"%s\"", msga_open_error(),
		  what);
}

/* Good keys: the open succeeds, or fails for want of a device. */
static void expect_keys_taken(int ret)
{
	if (!ret)
		return;
	cr_expect_neq(ret, -EPERM, "%s", msga_open_error());
	cr_expect(strstr(msga_open_error(), "key") == NULL,
		  "a key error with good keys: %s", msga_open_error());
}

static const uint8_t key_a[MSGA_KEY_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };

Test(keyring, file_open_to_others_is_eperm)
{
	static const mode_t modes[] = { 0644, 0640, 0604, 0610, 0601, 0620 };
	const char *f;

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		f = key_file("a " HEX_A "\n", modes[i]);
		cr_expect_eq(open_with(f, NULL, NULL), -EPERM, "mode %03o",
			     (unsigned)modes[i]);
		expect_said("chmod 600");
		expect_said(f);
		unlink(path);
	}
	path[0] = '\0';
}

Test(keyring, missing_file_is_enoent)
{
	char p[PATH_MAX + 16];

	snprintf(p, sizeof(p), "%s/no-such-file", dir);
	cr_expect_eq(open_with(p, NULL, NULL), -ENOENT);
	expect_said("key_file");
	expect_said(p);
}

Test(keyring, symlink_is_eperm)
{
	char link[PATH_MAX + 8];
	const char *f = key_file("a " HEX_A "\n", 0600);

	snprintf(link, sizeof(link), "%s/link", dir);
	cr_assert_eq(symlink(f, link), 0, "symlink: %s", strerror(errno));
	cr_expect_eq(open_with(link, NULL, NULL), -EPERM);
	expect_said(link);
	/* the file it points to is fine */
	expect_keys_taken(open_with(f, NULL, NULL));
}

Test(keyring, directory_is_einval)
{
	char sub[PATH_MAX + 8];

	snprintf(sub, sizeof(sub), "%s/sub", dir);
	cr_assert_eq(mkdir(sub, 0700), 0);
	cr_expect_eq(open_with(sub, NULL, NULL), -EINVAL);
	expect_said("not a regular file");
}

/* A FIFO must not block msga_ctx_open() (O_NONBLOCK) but be refused. */
Test(keyring, fifo_is_einval, .timeout = 5)
{
	char fifo[PATH_MAX + 8];

	snprintf(fifo, sizeof(fifo), "%s/sub", dir);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	cr_expect_eq(open_with(fifo, NULL, NULL), -EINVAL);
	expect_said("not a regular file");
}

/*
 * A file we may not read. Root reads any file, so as root (CI) the test
 * takes a path that open() refuses to anyone: a socket (ENXIO).
 */
Test(keyring, unreadable_file_is_eacces)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *f;
	int s = -1;

	if (geteuid() != 0) {
		f = key_file("a " HEX_A "\n", 0200);
	} else {
		size_t n = strlen(dir);

		cr_assert_lt(n + sizeof("/sock"), sizeof(sa.sun_path),
			     "%s: too long for a socket's path", dir);
		memcpy(sa.sun_path, dir, n);
		memcpy(sa.sun_path + n, "/sock", sizeof("/sock"));
		s = socket(AF_UNIX, SOCK_STREAM, 0);
		cr_assert_geq(s, 0);
		cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0,
			     "bind %s", sa.sun_path);
		f = sa.sun_path;
	}
	cr_expect_eq(open_with(f, NULL, NULL), -EACCES);
	expect_said(f);
	if (s >= 0)
		close(s);
}

Test(keyring, key_file_and_key_are_exclusive)
{
	const char *f = key_file("a " HEX_A "\n", 0600);

	cr_expect_eq(open_with(f, key_a, NULL), -EINVAL);
	expect_said("exclusive");
	cr_expect_eq(open_with(f, key_a, "a"), -EINVAL);
	expect_said("exclusive");
	cr_expect_eq(open_with(f, NULL, "a"), -EINVAL);
	expect_said("exclusive");
}

Test(keyring, key_name_without_key_is_einval)
{
	cr_expect_eq(open_with(NULL, NULL, "alice"), -EINVAL);
	expect_said("key_name without key");
}

Test(keyring, bad_key_name_is_einval)
{
	static const char *const names[] = {
		"", "a b", "a/b", "abcdefghijklmnopqrstuvwxyz012345",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		cr_expect_eq(open_with(NULL, key_a, names[i]), -EINVAL, "'%s'",
			     names[i]);
		expect_said("key_name");
	}
}

Test(keyring, bad_line_is_einval_and_named)
{
	const char *f = key_file("# keys\n"
				 "a " HEX_A "\n"
				 "b " HEX_B " trailing\n", 0600);

	cr_expect_eq(open_with(f, NULL, NULL), -EINVAL);
	expect_said("line 3");
	expect_said(f);
}

Test(keyring, name_twice_is_einval_and_named)
{
	const char *f = key_file("a " HEX_A "\n\na " HEX_B "\n", 0600);

	cr_expect_eq(open_with(f, NULL, NULL), -EINVAL);
	expect_said("line 3");
}

Test(keyring, same_key_under_two_names_is_einval)
{
	const char *f = key_file("alice " HEX_A "\nbob " HEX_A "\n", 0600);

	cr_expect_eq(open_with(f, NULL, NULL), -EINVAL);
	expect_said("'alice'");
	expect_said("'bob'");
}

Test(keyring, no_key_is_einval)
{
	const char *f = key_file("", 0600);

	cr_expect_eq(open_with(f, NULL, NULL), -EINVAL);
	expect_said("has no key");
	unlink(path);
	f = key_file("# only a comment\n\n", 0600);
	cr_expect_eq(open_with(f, NULL, NULL), -EINVAL);
	expect_said("has no key");
}

Test(keyring, too_big_file_is_einval)
{
	size_t n = 64 * 1024 + 1;
	char *text = malloc(n + 1);

	cr_assert_not_null(text);
	memset(text, '#', n);
	text[n] = '\0';
	memcpy(text, "a " HEX_A "\n", strlen("a " HEX_A "\n"));
	key_file(text, 0600);
	free(text);
	cr_expect_eq(open_with(path, NULL, NULL), -EINVAL);
	expect_said("bytes");
}

Test(keyring, good_keys_are_taken)
{
	const char *f = key_file("# ours first\r\n"
				 "me " HEX_A "\r\n"
				 "peer " HEX_B "\r\n", 0600);

	expect_keys_taken(open_with(f, NULL, NULL));
	expect_keys_taken(open_with(NULL, key_a, NULL)); /* "default" */
	expect_keys_taken(open_with(NULL, key_a, "me@host"));
}

Test(keyring, old_attr_size_has_no_keys)
{
	/*
	 * An attr from before 0.8 ends before key_file: whatever lies
	 * there (here a key file open to all) is not read.
	 */
	struct msga_ctx_attr old = {
		.size = offsetof(struct msga_ctx_attr, key_file),
	};
	struct msga_ctx *ctx = NULL;
	int ret;

	old.key_file = key_file("a " HEX_A "\n", 0644);
	ret = msga_ctx_open(&old, &ctx);
	if (!ret)
		msga_ctx_close(ctx);
	expect_keys_taken(ret);
}
