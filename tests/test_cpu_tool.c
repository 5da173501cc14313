/* SPDX-License-Identifier: MIT */
/*
 * msga_cpu(1) on the host, no device: a short run's output has the shape
 * the man page documents (every allowed CPU once, ranks 1 to N, a polling
 * CPU chosen), in JSON and as a table, one CPU after another and all at
 * once; and every usage error is one line on stderr and exit status 2.
 * The figures themselves are timings of a shared machine, so nothing
 * here looks at their values.
 */
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#ifndef MSGA_CPU_PATH
#error "MSGA_CPU_PATH must name the msga_cpu program"
#endif

extern char **environ;

#define OUT_MAX (1 << 20)

struct result {
	int status;          /* exit status, or 128 + signal */
	char *out;           /* stdout, NUL-terminated */
	char err[4096];
};

static void slurp(int fd, char *buf, size_t cap)
{
	ssize_t n = pread(fd, buf, cap - 1, 0);

	cr_assert_geq(n, 0);
	buf[n] = '\0';
	close(fd);
}

/* Run msga_cpu with args (NULL-terminated). */
static void run(const char *const *args, struct result *res)
{
	char out_path[] = "/tmp/cpu_out.XXXXXX";
	char err_path[] = "/tmp/cpu_err.XXXXXX";
	char *argv[32] = { "msga_cpu" };
	posix_spawn_file_actions_t fa;
	int out_fd = mkstemp(out_path), err_fd = mkstemp(err_path), n = 1, st;
	pid_t pid;

	cr_assert(out_fd >= 0 && err_fd >= 0);
	unlink(out_path);
	unlink(err_path);
	while (*args && n < 31)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	st = posix_spawn(&pid, MSGA_CPU_PATH, &fa, NULL, argv, environ);
	cr_assert_eq(st, 0, "cannot run %s: %s", MSGA_CPU_PATH, strerror(st));
	posix_spawn_file_actions_destroy(&fa);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	res->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	res->out = malloc(OUT_MAX);
	cr_assert_not_null(res->out);
	slurp(out_fd, res->out, OUT_MAX);
	slurp(err_fd, res->err, sizeof(res->err));
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what))
		n++;
	return n;
}

static int allowed_cpus(void)
{
	cpu_set_t set;

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	return CPU_COUNT(&set);
}

/* One JSON object: every allowed CPU once, ranks 1..N, a CPU to poll on. */
static void check_json(const struct result *res, const char *mode)
{
	int n = allowed_cpus();
	char want[64];

	cr_assert_eq(res->status, 0, "stderr: %s", res->err);
	cr_assert_eq(strncmp(res->out, "{\"tool\":\"msga_cpu\",", 19), 0,
		     "%.200s", res->out);
	cr_assert_eq(count(res->out, "\n"), 1, "one line");
	snprintf(want, sizeof(want), "\"mode\":\"%s\"", mode);
	cr_assert(strstr(res->out, want), "%s", want);
	cr_assert_eq(count(res->out, "{\"cpu\":"), n);
	for (int k = 1; k <= n; k++) {
		snprintf(want, sizeof(want), "\"rank\":%d,", k);
		cr_assert_eq(count(res->out, want), 1, "%s", want);
	}
	cr_assert_eq(count(res->out, "\"measured\":true"), n);
	cr_assert_eq(count(res->out, "\"p99_999_ns\":"), n);
	cr_assert_eq(count(res->out, "\"why\":\""), n);
	cr_assert(strstr(res->out, "\"poll\":["));
	cr_assert_null(strstr(res->out, "\"poll\":[]"));
	cr_assert(strstr(res->out, "\"irqbalance\":"));
	cr_assert_str_eq(res->out + strlen(res->out) - 2, "}\n");
}

Test(msga_cpu, json_one_after_another)
{
	static const char *const args[] = {
		"--duration", "0.01", "--threshold", "2000", "--json", NULL,
	};
	struct result res;

	run(args, &res);
	check_json(&res, "sequential");
	cr_assert(strstr(res.out, "\"devices\":[]"));
	free(res.out);
}

Test(msga_cpu, json_all_at_once_with_device)
{
	static const char *const args[] = {
		"-d", "0.01", "-a", "-n", "2", "-D", "lo", "--json", NULL,
	};
	struct result res;

	run(args, &res);
	check_json(&res, "all");
	cr_assert(strstr(res.out, "\"devices\":[{\"name\":\"lo\",\"keys\":[\"lo\""),
		  "%.300s", strstr(res.out, "\"devices\"") ?
		  strstr(res.out, "\"devices\"") : res.out);
	free(res.out);
}

Test(msga_cpu, table)
{
	static const char *const args[] = { "-d", "0.01", "-D", "lo", NULL };
	struct result res;
	int n = allowed_cpus();

	run(args, &res);
	cr_assert_eq(res.status, 0, "stderr: %s", res.err);
	cr_assert_eq(strncmp(res.out, "msga_cpu: ", 10), 0);
	cr_assert(strstr(res.out, "\nisolated: "));
	cr_assert(strstr(res.out, "\nrank  cpu core"));
	cr_assert_eq(count(res.out, "\n  cpu "), n);
	cr_assert_eq(count(res.out, ": quietest: "), 1);
	cr_assert(strstr(res.out, "\npoll on: "));
	cr_assert(strstr(res.out, "\ndevice lo (lo):"));
	free(res.out);
}

Test(msga_cpu, help_and_version)
{
	static const char *const help[] = { "-h", NULL };
	static const char *const version[] = { "--version", NULL };
	struct result res;

	run(help, &res);
	cr_assert_eq(res.status, 0);
	cr_assert_eq(strncmp(res.out, "usage: msga_cpu", 15), 0);
	free(res.out);
	run(version, &res);
	cr_assert_eq(res.status, 0);
	cr_assert_eq(strncmp(res.out, "msga_cpu ", 9), 0);
	free(res.out);
}

/* Exit status 2, nothing on stdout, one stderr line containing what. */
static void bad(const char *const *args, const char *what)
{
	struct result res;

	run(args, &res);
	cr_assert_eq(res.status, 2, "%s: status %d", args[0], res.status);
	cr_assert_str_eq(res.out, "");
	cr_assert_eq(count(res.err, "\n"), 1, "%s", res.err);
	cr_assert(strstr(res.err, what), "'%s' not in: %s", what, res.err);
	cr_assert_eq(strncmp(res.err, "msga_cpu: ", 10), 0);
	free(res.out);
}

Test(msga_cpu, usage_errors)
{
	bad((const char *const[]){ "-x", NULL }, "unknown option '-x'");
	bad((const char *const[]){ "--nope", NULL }, "unknown option");
	bad((const char *const[]){ "-d", NULL }, "needs a value");
	bad((const char *const[]){ "-d", "0", NULL }, "invalid duration '0'");
	bad((const char *const[]){ "-d", "3601", NULL }, "invalid duration");
	bad((const char *const[]){ "-d", "1s", NULL }, "invalid duration");
	bad((const char *const[]){ "-t", "0", NULL }, "invalid threshold");
	bad((const char *const[]){ "-t", "1.5", NULL }, "invalid threshold");
	bad((const char *const[]){ "-t", "1000000000", "-d", "0.5", NULL },
	    "not below the duration");
	bad((const char *const[]){ "-n", "0", NULL }, "invalid count '0'");
	bad((const char *const[]){ "-n", "-1", NULL }, "invalid count");
	bad((const char *const[]){ "-c", "1-", NULL }, "invalid CPU list");
	bad((const char *const[]){ "-c", "8191", NULL }, "may not run on");
	bad((const char *const[]){ "-D", "a/b", NULL }, "invalid device name");
	bad((const char *const[]){ "--pick", "x", NULL }, "invalid count 'x'");
	bad((const char *const[]){ "--duration", NULL }, "needs a value");
	bad((const char *const[]){ "-D", "a", "-D", "b", "-D", "c", "-D", "d",
				   "-D", "e", "-D", "f", "-D", "g", "-D", "h",
				   "-D", "i", NULL }, "more than 8 devices");
	bad((const char *const[]){ "extra", NULL }, "unexpected argument");
}

/*
 * --apply-irq-affinity writes /proc/irq: without -D it has nothing to
 * move, and not as root it is refused before anything is measured (the
 * run drops to nobody when the test runs as root, as the VM's does).
 */
Test(msga_cpu, apply_irq_affinity_refusals)
{
	char err_path[] = "/tmp/cpu_err.XXXXXX";
	char *argv[] = { "msga_cpu", "--apply-irq-affinity", "-D", "lo",
			 "-d", "0.01", NULL };
	int err_fd = mkstemp(err_path), st;
	char err[4096];
	pid_t pid;

	bad((const char *const[]){ "--apply-irq-affinity", NULL }, "needs -D");
	cr_assert_geq(err_fd, 0);
	unlink(err_path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		if (dup2(err_fd, 2) < 0 ||
		    (!geteuid() && (setgid(65534) || setuid(65534))))
			_exit(99);
		execv(MSGA_CPU_PATH, argv);
		_exit(98);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	slurp(err_fd, err, sizeof(err));
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d: %s", st,
		  err);
	cr_expect_eq(count(err, "\n"), 1, "%s", err);
	cr_expect(strstr(err, "needs root"), "%s", err);
}
