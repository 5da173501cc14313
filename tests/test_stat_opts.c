/* SPDX-License-Identifier: MIT */
/*
 * msga_stat(1) usage errors, on the host (no RDMA device needed): every
 * rejection the man page documents is one line on stderr that names the
 * culprit, and exit status 2; -h is exit status 0. The options are checked
 * before any device is opened, which is why this can run here.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config.h"

#ifndef MSGA_STAT_PATH
#error "MSGA_STAT_PATH must name the msga_stat program"
#endif

extern char **environ;

struct outcome {
	int status;       /* exit status, or 128 + signal */
	char err[4096];   /* stderr */
	size_t out_len;   /* bytes on stdout */
};

static size_t slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

/* Run msga_stat with args (NULL-terminated), stdout and stderr to files. */
static void run_stat(const char *const *args, struct outcome *res)
{
	char out_path[] = "/tmp/stat_out.XXXXXX";
	char err_path[] = "/tmp/stat_err.XXXXXX";
	char *argv[32] = { "msga_stat" }, scratch[4096];
	posix_spawn_file_actions_t fa;
	int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path), n = 1, st;
	pid_t pid;

	cr_assert(out_fd >= 0 && err_fd >= 0);
	for (; *args && n < 31; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	st = posix_spawn(&pid, MSGA_STAT_PATH, &fa, NULL, argv, environ);
	cr_assert_eq(st, 0, "cannot run %s: %s", MSGA_STAT_PATH, strerror(st));
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	slurp(err_path, res->err, sizeof(res->err));
	res->out_len = slurp(out_path, scratch, sizeof(scratch));
	close(out_fd);
	close(err_fd);
	unlink(out_path);
	unlink(err_path);
}

/* Exit status 2, nothing on stdout, and one stderr line containing what. */
static void expect_usage_error(const char *const *args, const char *what)
{
	struct outcome res;
	char *nl;

	run_stat(args, &res);
	cr_expect_eq(res.status, 2, "exit %d, stderr: %s", res.status, res.err);
	cr_expect_eq(res.out_len, 0, "nothing on stdout for a usage error");
	nl = strchr(res.err, '\n');
	cr_expect(nl && nl[1] == '\0', "not exactly one line: '%s'", res.err);
	cr_expect_not_null(strstr(res.err, "msga_stat: "), "%s", res.err);
	cr_expect_not_null(strstr(res.err, what), "'%s' not in: %s", what,
			   res.err);
}

#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define GROUP "mcast://239.255.7.7"

Test(stat_opts, help_exits_0_and_names_every_option)
{
	static const char *const opts[] = { "-d", "-b", "-t", "-i", "-D",
		"--json", "--no-local", "--stop-on-gap", "--busy-poll", "-v",
		"--topics", "-g", "-k" };
	char out_path[] = "/tmp/stat_help.XXXXXX", cmd[512], buf[4096];
	int fd = mkstemp(out_path);

	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s -h > %s", MSGA_STAT_PATH, out_path);
	cr_assert_eq(system(cmd), 0, "msga_stat -h did not exit 0");
	slurp(out_path, buf, sizeof(buf));
	unlink(out_path);
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		cr_expect_not_null(strstr(buf, opts[i]), "-h lacks %s: %s",
				   opts[i], buf);
}

Test(stat_opts, version_exits_0_and_names_both_versions)
{
	char out_path[] = "/tmp/stat_version.XXXXXX", cmd[512], buf[256];
	char want[128];
	int fd = mkstemp(out_path);

	cr_assert(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s --version > %s", MSGA_STAT_PATH,
		 out_path);
	cr_assert_eq(system(cmd), 0, "msga_stat --version did not exit 0");
	slurp(out_path, buf, sizeof(buf));
	unlink(out_path);
	snprintf(want, sizeof(want), "msga_stat (msgaccel) %s, libmsgaccel %s\n",
		 PACKAGE_VERSION, PACKAGE_VERSION);
	cr_expect_str_eq(buf, want);
}

Test(stat_opts, unknown_option)
{
	expect_usage_error(ARGS("--bogus", GROUP), "unknown option '--bogus'");
	expect_usage_error(ARGS("-x", GROUP), "unknown option");
}

Test(stat_opts, option_without_value)
{
	expect_usage_error(ARGS(GROUP, "-t"), "'-t' needs a value");
}

Test(stat_opts, no_uri)
{
	expect_usage_error(ARGS("-D", "1"),
			   "expected at least one mcast:// uri");
}

Test(stat_opts, uri_not_multicast_scheme)
{
	expect_usage_error(ARGS("rdma://198.18.0.1:5000"),
			   "'rdma://198.18.0.1:5000' is not mcast://");
	expect_usage_error(ARGS(GROUP, "mcast://"), "'mcast://'");
}

Test(stat_opts, bad_interval)
{
	expect_usage_error(ARGS("-i", "0", GROUP), "invalid -i '0'");
	expect_usage_error(ARGS("-i", "abc", GROUP), "invalid -i 'abc'");
	expect_usage_error(ARGS("-i", "1x", GROUP), "invalid -i '1x'");
	expect_usage_error(ARGS("-i", "nan", GROUP), "invalid -i 'nan'");
}

Test(stat_opts, bad_duration)
{
	expect_usage_error(ARGS("-D", "-1", GROUP), "invalid -D '-1'");
	expect_usage_error(ARGS("-D", "100000", GROUP), "invalid -D '100000'");
}

Test(stat_opts, bad_pattern)
{
	expect_usage_error(ARGS("-t", "md.*.x", GROUP), "invalid -t 'md.*.x'");
	expect_usage_error(ARGS("-t", "md eq", GROUP), "invalid -t 'md eq'");
	expect_usage_error(ARGS("-t", "", GROUP), "invalid -t ''");
	expect_usage_error(ARGS("-t", "**", GROUP), "invalid -t '**'");
	/* 64 characters: one more than MSGA_TOPIC_MAX */
	expect_usage_error(ARGS("-t", "0123456789012345678901234567890123456789"
				"012345678901234567890123", GROUP),
			   "invalid -t");
}

Test(stat_opts, bad_local_address)
{
	expect_usage_error(ARGS("-b", "rxe0", GROUP), "'rxe0'");
	expect_usage_error(ARGS("-b", "198.18.0.256", GROUP), "'198.18.0.256'");
}

/*
 * Valid options get past the parser: without a usable device the run fails
 * with status 1 (a runtime error), never 2; with one it ends after -D.
 */
Test(stat_opts, valid_options_are_not_usage_errors)
{
	struct outcome res;

	run_stat(ARGS("-b", "198.18.0.1", "-t", "md.eq.AAPL", "-i", "0.5",
		      "-D", "0.5", "--json", "--no-local", "--stop-on-gap",
		      "--busy-poll", "-v", GROUP, "mcast://239.255.0.0/16"),
		 &res);
	cr_expect_neq(res.status, 2, "stderr: %s", res.err);
	cr_expect_lt(res.status, 128, "killed by a signal: %d", res.status);
	run_stat(ARGS("-t", "*", "-D", "0.5", "mcast://ff15::1:0/112"), &res);
	cr_expect_neq(res.status, 2, "stderr: %s", res.err);
	run_stat(ARGS("-t", "md.*", "-D", "0.5", GROUP), &res);
	cr_expect_neq(res.status, 2, "stderr: %s", res.err);
}

Test(stat_opts, topics_mode_options)
{
	expect_usage_error(ARGS("--topics", GROUP), "--topics takes no uri");
	expect_usage_error(ARGS("--topics", "-p", "1"), "does not go with");
	expect_usage_error(ARGS("--topics", "-n", "2"), "does not go with");
	expect_usage_error(ARGS("-g", "239.1.1.1:5", GROUP), "go with --topics");
	expect_usage_error(ARGS("-k", "/etc/keys", GROUP), "go with --topics");
	expect_usage_error(ARGS("--topics", "-g", "198.18.0.1:5"),
			   "-g wants IPv4-group:PORT");
	expect_usage_error(ARGS("--topics", "-g", "239.1.1.1"),
			   "-g wants IPv4-group:PORT");
	expect_usage_error(ARGS("--topics", "-g", "239.1.1.1:0"),
			   "-g wants IPv4-group:PORT");
	expect_usage_error(ARGS("--topics", "-t", "a*b"), "invalid -t");
}
