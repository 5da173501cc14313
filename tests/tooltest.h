/* SPDX-License-Identifier: MIT */
/*
 * tooltest.h - the bench tools (rdma_lat, rdma_bw, msga_cpu) run as child
 * processes by a device test, and their --json read back. Shared by
 * tests/dev_tools.c (the tools' options and output, in the device loops)
 * and tests/dev_cpu_pin.c (--pin auto and msga_cpu, which measure the
 * CPUs and so run alone: DEVICE_TESTS_ALONE in Makefile.am).
 *
 * Every call fails the current Criterion test on an error of its own
 * (fork, pipe, memory, JSON that does not parse): none returns one.
 * A program using this file is built with MSGA_BENCH_DIR naming the
 * directory that holds the tools.
 */
#ifndef MSGA_TOOLTEST_H
#define MSGA_TOOLTEST_H

#include <stddef.h>
#include <sys/types.h>

/* A tool's limit for one run (stretched under valgrind: devtest_wait_s). */
#define TOOL_TIMEOUT_S 120

/* ------------------------------------------------------------ processes */

struct proc {
	pid_t pid;
	int out_fd, err_fd;
	char *out, *err;	/* NUL-terminated, up to 256 KiB each */
	size_t out_len, err_len;
	int status;		/* exit status, or 128 + signal */
};

/*
 * Start MSGA_BENCH_DIR/argv[0] with argv, its stdout and stderr collected
 * into p. Free p with proc_free() once proc_wait() has returned.
 */
void proc_start(struct proc *p, const char *const *argv);
/*
 * Collect output until the process exits, then set p->status; kill it
 * (SIGKILL, status 128 + 9) after timeout_s, stretched by devtest_wait_s.
 */
void proc_wait(struct proc *p, int timeout_s);
/* 1 once the process's stdout holds text; 0 if it ends or times out first. */
int proc_says(struct proc *p, const char *text, int timeout_s);
void proc_free(struct proc *p);

/* ------------------------------------------------------------ arguments */

/*
 * A TCP control port for one server, different for the two devices whose
 * loops run at once (devtest_salt()) and for each call in a test process.
 * The multicast groups of dev_tools are made from it too.
 */
int next_port(void);

#define MAXARG 40

/* An argv under construction; port holds the text of its -p value. */
struct args {
	const char *v[MAXARG];
	int n;
	char port[16];
};

void args_add(struct args *a, const char *s);
/* Add every word of the NULL-terminated extra (which may be NULL). */
void args_list(struct args *a, const char *const *extra);
/* tool -B <test address> -p port, then extra. */
void server_args(struct args *a, const char *tool, int port,
		 const char *const *extra);
/* tool -p port, then extra, then the test address. */
void client_args(struct args *a, const char *tool, int port,
		 const char *const *extra);

/*
 * Start the server sv (which must serve one client) and the client cl;
 * both must exit 0. The client's output is left in *client, which the
 * caller frees with proc_free().
 */
void run_argvs(const char *const *sv, const char *const *cl,
	       struct proc *client);
/*
 * Run one server (--once, after sv_extra) and one client of tool on a
 * port of next_port()'s, as run_argvs() does.
 */
void run_pair(const char *tool, const char *const *sv_extra,
	      const char *const *cl_extra, struct proc *client);

/* ------------------------------------------------------------ tiny JSON */

/*
 * Just enough JSON for the tools' own output: a validating recursive
 * descent parser that records every scalar under a dotted path, e.g.
 * "results.0.t_min_us" or "device"; true, false and null are checked but
 * not recorded.
 */
#define JMAX 4096

struct jfield {
	char path[96];
	char str[64];
	double num;
	int is_num;
};

struct json {
	const char *p;
	struct jfield f[JMAX];
	int n;
	int ok;
};

/* Parse text whole; fails the test if it is not JSON. Free with free(). */
struct json *json_parse(const char *text);
/* The scalar at path, or NULL. */
struct jfield *jget(struct json *j, const char *path);
/* The number results.<row>.<key>; fails the test if there is none. */
double jnum(struct json *j, int row, const char *key);
/* The string at path; fails the test if there is none. */
const char *jstr(struct json *j, const char *path);
/* How many rows "results" holds (rows with a "bytes" field). */
int jrows(struct json *j);

/*
 * Expect results.<row> of rdma_lat --json to be a sane latency row: its
 * size, its iterations (when iters > 0), and min <= median <= p99 <=
 * p99.9 <= p99.99 <= max, with the average inside and a fitting stdev.
 */
void check_lat_row(struct json *j, int row, double bytes, double iters);

#endif
