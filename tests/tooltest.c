/* SPDX-License-Identifier: MIT */
/*
 * tooltest.c - the bench tools as child processes, and their --json read
 * back (tooltest.h says what each call promises).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "tooltest.h"

#ifndef MSGA_BENCH_DIR
#error "MSGA_BENCH_DIR must name the directory with the bench tools"
#endif

#define OUT_MAX (256 * 1024)

/* ------------------------------------------------------------ processes */

static void tool_path(char *buf, size_t len, const char *tool)
{
	snprintf(buf, len, "%s/%s", MSGA_BENCH_DIR, tool);
}

void proc_start(struct proc *p, const char *const *argv)
{
	int out[2], err[2];
	char path[512];

	memset(p, 0, sizeof(*p));
	cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
	cr_assert_eq(pipe2(err, O_CLOEXEC), 0);
	tool_path(path, sizeof(path), argv[0]);
	p->pid = fork();
	cr_assert_geq(p->pid, 0, "fork: %s", strerror(errno));
	if (p->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		execv(path, (char *const *)argv);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	p->out_fd = out[0];
	p->err_fd = err[0];
	p->out = calloc(1, OUT_MAX + 1);
	p->err = calloc(1, OUT_MAX + 1);
	cr_assert(p->out && p->err);
}

static void drain(int *fd, char *buf, size_t *len)
{
	ssize_t n;

	if (*fd < 0)
		return;
	n = read(*fd, buf + *len, OUT_MAX - *len);
	if (n > 0) {
		*len += (size_t)n;
		return;
	}
	if (n == 0 || *len >= OUT_MAX) {
		close(*fd);
		*fd = -1;
	}
}

/* Take in what the process wrote, waiting up to ms for some. */
static void proc_read(struct proc *p, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = p->out_fd, .events = POLLIN },
		{ .fd = p->err_fd, .events = POLLIN },
	};

	if (poll(pfd, 2, ms) > 0) {
		if (pfd[0].revents)
			drain(&p->out_fd, p->out, &p->out_len);
		if (pfd[1].revents)
			drain(&p->err_fd, p->err, &p->err_len);
	}
}

/*
 * Collect output until the process exits; kill it after timeout_s
 * (stretched under valgrind: devtest_wait_s).
 */
void proc_wait(struct proc *p, int timeout_s)
{
	int limit = devtest_wait_s(timeout_s);
	time_t deadline = time(NULL) + limit;
	int st;

	while (p->out_fd >= 0 || p->err_fd >= 0) {
		if (time(NULL) > deadline) {
			kill(p->pid, SIGKILL);
			cr_log_error("%s timed out after %d s", "tool", limit);
			deadline = time(NULL) + 5;
		}
		proc_read(p, 500);
	}
	waitpid(p->pid, &st, 0);
	p->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int proc_says(struct proc *p, const char *text, int timeout_s)
{
	time_t deadline = time(NULL) + devtest_wait_s(timeout_s);

	while (!strstr(p->out, text)) {
		if (time(NULL) > deadline || p->out_fd < 0)
			return 0;
		proc_read(p, 200);
	}
	return 1;
}

void proc_free(struct proc *p)
{
	free(p->out);
	free(p->err);
}

/*
 * Servers bind to the test address only (-B), but dev_tools makes its
 * multicast groups from these numbers, and a group is heard on every
 * interface, while the two devices' loops run at once
 * (tests/vm/device-tests.sh): devtest_salt() keeps the devices' ranges
 * apart (19016 to 23015, below the ephemeral ports). Sixteen ports per
 * salt; a test takes at most eleven (bad_options_exit_2_with_one_line),
 * and each Criterion test is a process of its own, counting from 0.
 */
int next_port(void)
{
	static int n;

	return 19000 + (int)devtest_salt() * 16 + n++ % 16;
}

/* ------------------------------------------------------------ arguments */

void args_add(struct args *a, const char *s)
{
	cr_assert_lt(a->n, MAXARG - 1);
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

void args_list(struct args *a, const char *const *extra)
{
	for (; extra && *extra; extra++)
		args_add(a, *extra);
}

void server_args(struct args *a, const char *tool, int port,
		 const char *const *extra)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->port, sizeof(a->port), "%d", port);
	args_add(a, tool);
	args_add(a, "-B");
	args_add(a, devtest_env()->addr);
	args_add(a, "-p");
	args_add(a, a->port);
	args_list(a, extra);
}

void client_args(struct args *a, const char *tool, int port,
		 const char *const *extra)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->port, sizeof(a->port), "%d", port);
	args_add(a, tool);
	args_add(a, "-p");
	args_add(a, a->port);
	args_list(a, extra);
	args_add(a, devtest_env()->addr);
}

void run_argvs(const char *const *sv, const char *const *cl,
	       struct proc *client)
{
	struct proc server;

	proc_start(&server, sv);
	proc_start(client, cl);
	proc_wait(client, TOOL_TIMEOUT_S);
	proc_wait(&server, 30);
	cr_assert_eq(client->status, 0, "client exit %d; stderr: %s; server stderr: %s",
		     client->status, client->err, server.err);
	cr_assert_eq(server.status, 0, "server exit %d; stderr: %s",
		     server.status, server.err);
	proc_free(&server);
}

void run_pair(const char *tool, const char *const *sv_extra,
	      const char *const *cl_extra, struct proc *client)
{
	static const char *const once[] = { "--once", NULL };
	struct args sa, ca;
	int port = next_port();

	server_args(&sa, tool, port, sv_extra ? sv_extra : once);
	if (sv_extra)
		args_add(&sa, "--once");
	client_args(&ca, tool, port, cl_extra);
	run_argvs(sa.v, ca.v, client);
}

/* ------------------------------------------------------------ tiny JSON */

static void jws(struct json *j)
{
	while (isspace((unsigned char)*j->p))
		j->p++;
}

static int jvalue(struct json *j, const char *path);

static int jstring(struct json *j, char *out, size_t len)
{
	size_t n = 0;

	if (*j->p != '"')
		return -1;
	for (j->p++; *j->p && *j->p != '"'; j->p++) {
		if (*j->p == '\\') {
			j->p++;
			if (!*j->p)
				return -1;
		}
		if ((unsigned char)*j->p < 0x20)
			return -1;
		if (n + 1 < len)
			out[n++] = *j->p;
	}
	if (*j->p != '"')
		return -1;
	j->p++;
	out[n] = '\0';
	return 0;
}

static struct jfield *jadd(struct json *j, const char *path)
{
	struct jfield *f;

	if (j->n >= JMAX)
		return NULL;
	f = &j->f[j->n++];
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	return f;
}

static int jcontainer(struct json *j, const char *path, int object)
{
	char close = object ? '}' : ']';
	int idx = 0;

	j->p++;
	jws(j);
	if (*j->p == close) {
		j->p++;
		return 0;
	}
	for (;;) {
		char key[64], sub[96];

		jws(j);
		if (object) {
			if (jstring(j, key, sizeof(key)))
				return -1;
			jws(j);
			if (*j->p++ != ':')
				return -1;
		} else {
			snprintf(key, sizeof(key), "%d", idx++);
		}
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", key);
		if (jvalue(j, sub))
			return -1;
		jws(j);
		if (*j->p == ',') {
			j->p++;
			continue;
		}
		if (*j->p++ != close)
			return -1;
		return 0;
	}
}

static int jnumber(struct json *j, const char *path)
{
	struct jfield *f;
	char *end;
	double d;

	/* JSON numbers: no leading '+', no hex, no inf/nan. */
	if (*j->p != '-' && !isdigit((unsigned char)*j->p))
		return -1;
	d = strtod(j->p, &end);
	if (end == j->p || !isfinite(d))
		return -1;
	for (const char *c = j->p; c < end; c++)
		if (!strchr("0123456789+-.eE", *c))
			return -1;
	j->p = end;
	f = jadd(j, path);
	if (f) {
		f->num = d;
		f->is_num = 1;
	}
	return 0;
}

static int jvalue(struct json *j, const char *path)
{
	jws(j);
	if (*j->p == '{' || *j->p == '[')
		return jcontainer(j, path, *j->p == '{');
	if (*j->p == '"') {
		struct jfield *f = jadd(j, path);
		char tmp[64];

		return jstring(j, f ? f->str : tmp, f ? sizeof(f->str) : sizeof(tmp));
	}
	if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4)) {
		j->p += 4;
		return 0;
	}
	if (!strncmp(j->p, "false", 5)) {
		j->p += 5;
		return 0;
	}
	return jnumber(j, path);
}

struct json *json_parse(const char *text)
{
	struct json *j = calloc(1, sizeof(*j));

	cr_assert_not_null(j);
	j->p = text;
	j->ok = jvalue(j, "") == 0;
	jws(j);
	j->ok = j->ok && *j->p == '\0';
	cr_assert(j->ok, "output is not valid JSON near '%.40s': %s", j->p, text);
	return j;
}

struct jfield *jget(struct json *j, const char *path)
{
	for (int i = 0; i < j->n; i++)
		if (!strcmp(j->f[i].path, path))
			return &j->f[i];
	return NULL;
}

double jnum(struct json *j, int row, const char *key)
{
	char path[96];
	struct jfield *f;

	snprintf(path, sizeof(path), "results.%d.%s", row, key);
	f = jget(j, path);
	cr_assert(f && f->is_num, "JSON has no number %s", path);
	return f->num;
}

const char *jstr(struct json *j, const char *path)
{
	struct jfield *f = jget(j, path);

	cr_assert(f && !f->is_num, "JSON has no string %s", path);
	return f->str;
}

int jrows(struct json *j)
{
	int rows = 0;
	char path[96];

	for (;; rows++) {
		snprintf(path, sizeof(path), "results.%d.bytes", rows);
		if (!jget(j, path))
			return rows;
	}
}

/* ------------------------------------------------------------ checks */

void check_lat_row(struct json *j, int row, double bytes, double iters)
{
	double min = jnum(j, row, "t_min_us"), med = jnum(j, row, "t_median_us");
	double p99 = jnum(j, row, "p99_us"), p999 = jnum(j, row, "p999_us");
	double p9999 = jnum(j, row, "p9999_us"), max = jnum(j, row, "t_max_us");
	double avg = jnum(j, row, "t_avg_us"), sd = jnum(j, row, "t_stdev_us");

	cr_expect_eq(jnum(j, row, "bytes"), bytes);
	if (iters > 0)
		cr_expect_eq(jnum(j, row, "iterations"), iters);
	cr_expect_gt(min, 0.0, "a latency of zero is a clock bug");
	cr_expect(min <= med && med <= p99 && p99 <= p999 && p999 <= p9999 &&
		  p9999 <= max, "order: min %.3f median %.3f p99 %.3f p99.9 %.3f "
		  "p99.99 %.3f max %.3f", min, med, p99, p999, p9999, max);
	cr_expect(min <= avg && avg <= max, "avg %.3f outside [%.3f, %.3f]",
		  avg, min, max);
	cr_expect(sd >= 0.0 && sd <= max - min, "stdev %.3f", sd);
}
