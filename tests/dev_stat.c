/* SPDX-License-Identifier: MIT */
/*
 * msga_stat(1) end to end on the device under test: msga_stat --json runs
 * as a child process and joins a multicast group; this test publishes on
 * that group with the library, then stops msga_stat with SIGINT and checks
 * that its final counters match what was sent (per stream and in total,
 * filtered topics, --no-local), that a reader stopped with SIGSTOP reports
 * and counts its losses (and with --stop-on-gap leaves and exits 1), that
 * -D ends a run by itself, that an invalid group is a usage error (exit 2)
 * and that iWARP, which has no multicast, is a failed membership (exit 1).
 * Sends are paced where loss is not wanted; no timing is asserted.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"

#ifndef MSGA_STAT_PATH
#error "MSGA_STAT_PATH must name the msga_stat program"
#endif

#define A_MSGS 300   /* on stat.a, 100 bytes each */
#define B_MSGS 200   /* on stat.b, 200 bytes each */
#define X_MSGS 50    /* on other.x: not matched by "stat.*" */
/* per stream in a run: 100 ms apart, and doubling, for a few seconds */
#define MAX_HEARTBEATS 20
#define OUT_MAX (1024 * 1024)

struct child {
	pid_t pid;
	char out_path[32], err_path[32];
	int status;
};

static int is_iwarp(void)
{
	return strcmp(devtest_env()->transport, "iWARP") == 0;
}

/* A group of its own per run and per call, so parallel runs do not mix. */
static const char *group_uri(void)
{
	static char uri[64];
	static int n;

	snprintf(uri, sizeof(uri), "mcast://239.255.%d.%d",
		 (int)(getpid() % 250) + 1, ++n);
	return uri;
}

static void child_start(struct child *c, const char *const *args)
{
	const char *argv[32] = { "msga_stat" };
	int n = 1, out, err;

	memset(c, 0, sizeof(*c));
	strcpy(c->out_path, "/tmp/dev_stat_o.XXXXXX");
	strcpy(c->err_path, "/tmp/dev_stat_e.XXXXXX");
	out = mkstemp(c->out_path);
	err = mkstemp(c->err_path);
	cr_assert(out >= 0 && err >= 0, "mkstemp: %s", strerror(errno));
	for (; *args && n < 31; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	c->pid = fork();
	cr_assert_geq(c->pid, 0, "fork: %s", strerror(errno));
	if (c->pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		execv(MSGA_STAT_PATH, (char *const *)argv);
		_exit(127);
	}
	close(out);
	close(err);
}

/*
 * Wait for the child to exit by itself; SIGKILL it after timeout_s. These
 * waits are stretched under valgrind (devtest_wait_s), as is every one
 * below.
 */
static void child_wait(struct child *c, int timeout_s)
{
	int limit = devtest_wait_s(timeout_s);
	time_t deadline = time(NULL) + limit;
	int st;

	while (waitpid(c->pid, &st, WNOHANG) == 0) {
		if (time(NULL) > deadline) {
			kill(c->pid, SIGKILL);
			waitpid(c->pid, &st, 0);
			cr_log_error("msga_stat killed after %d s", limit);
			break;
		}
		usleep(10000);
	}
	c->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * The buffers slurp() handed out that the test has not given back. A
 * failed assertion leaves the test at once, past its slurp_free(); kept
 * here, such a buffer is still reachable at exit instead of a definite
 * leak, which would add a valgrind report to a test that already failed
 * for its own reason.
 */
#define SLURP_LIVE 4
static char *slurped[SLURP_LIVE];

/* The whole of a file, NUL-terminated; give it back with slurp_free(). */
static char *slurp(const char *path)
{
	char *buf = calloc(1, OUT_MAX + 1);
	FILE *f;
	int i;

	cr_assert_not_null(buf);
	for (i = 0; i < SLURP_LIVE && slurped[i]; i++)
		;
	if (i == SLURP_LIVE) {
		free(buf);
		cr_assert_fail("more than %d slurped files at once", SLURP_LIVE);
	}
	slurped[i] = buf;
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	fread(buf, 1, OUT_MAX, f);
	fclose(f);
	return buf;
}

static void slurp_free(char *buf)
{
	for (int i = 0; i < SLURP_LIVE; i++)
		if (slurped[i] == buf)
			slurped[i] = NULL;
	free(buf);
}

static void child_free(struct child *c)
{
	unlink(c->out_path);
	unlink(c->err_path);
}

/* Poll the child's stderr until it holds text; 0 if it exited first. */
static int child_says(struct child *c, const char *text, int timeout_s)
{
	time_t deadline = time(NULL) + devtest_wait_s(timeout_s);

	while (time(NULL) <= deadline) {
		char *err = slurp(c->err_path);
		int found = strstr(err, text) != NULL;

		slurp_free(err);
		if (found)
			return 1;
		if (waitpid(c->pid, &c->status, WNOHANG) == c->pid) {
			c->pid = -1;
			return 0;
		}
		usleep(20000);
	}
	return 0;
}

/* ------------------------------------------------------------ JSON lines */

static uint64_t field(const char *line, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), "\"%s\":", name);
	p = strstr(line, key);
	cr_assert_not_null(p, "no %s in %s", name, line);
	return strtoull(p + strlen(key), NULL, 0);
}

/* The last line of type t (and, for totals, final) in out, or NULL. */
static const char *last_line(const char *out, const char *topic, char *line,
			     size_t cap)
{
	const char *p = out, *found = NULL;
	char want[96];

	if (topic)
		snprintf(want, sizeof(want), "\"topic\":\"%s\"", topic);
	else
		snprintf(want, sizeof(want), "\"final\":true");
	for (; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len < cap && memmem(p, len, want, strlen(want)))
			found = p;
	}
	if (!found)
		return NULL;
	snprintf(line, cap, "%.*s", (int)strcspn(found, "\n"), found);
	return line;
}

/* ------------------------------------------------------------ publisher */

static uint32_t topic(struct msga_pub *pub, const char *name)
{
	uint32_t id;

	cr_assert_eq(msga_pub_topic(pub, name, &id), 0, "topic %s", name);
	return id;
}

/* One message; polls while the group is not joined yet or queues are full. */
static void send_one(struct msga_ctx *ctx, struct msga_pub *pub, uint32_t id,
		     size_t len)
{
	static const char payload[256];
	time_t deadline = time(NULL) + 20;
	int ret;

	while ((ret = msga_pub_send(pub, id, payload, len)) == -EAGAIN) {
		cr_assert_leq(time(NULL), deadline, "-EAGAIN for 20 s: %s",
			      msga_ctx_last_error(ctx));
		msga_ctx_poll(ctx, 16);
	}
	cr_assert_eq(ret, 1, "msga_pub_send = %d (%s): %s", ret,
		     msga_strerror(ret), msga_ctx_last_error(ctx));
	msga_ctx_poll(ctx, 16);
}

struct feed {
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	uint32_t a, b, x; /* stat.a, stat.b, other.x */
};

static void feed_open(struct feed *f, const char *uri)
{
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri };
	int ret;

	f->ctx = devtest_open_ctx();
	ret = msga_pub_create(f->ctx, &pa, &f->pub);
	cr_assert_eq(ret, 0, "msga_pub_create(%s) = %d: %s", uri, ret,
		     msga_ctx_last_error(f->ctx));
	f->a = topic(f->pub, "stat.a");
	f->b = topic(f->pub, "stat.b");
	f->x = topic(f->pub, "other.x");
}

static void feed_close(struct feed *f)
{
	for (int i = 0; i < 100; i++)
		msga_ctx_poll(f->ctx, 64);
	msga_pub_destroy(f->pub);
	msga_ctx_close(f->ctx);
}

/*
 * n messages of 100 bytes on stat.a; paced at about 2000 per second, since
 * UD has no flow control and most tests check counting, not speed.
 */
static void feed_a(struct feed *f, int n, int paced)
{
	struct timespec pace = { 0, 500 * 1000 };

	for (int i = 0; i < n; i++) {
		send_one(f->ctx, f->pub, f->a, 100);
		if (paced)
			nanosleep(&pace, NULL);
	}
}

/* A_MSGS, B_MSGS and X_MSGS messages, interleaved and paced. */
static void publish(const char *uri)
{
	struct timespec pace = { 0, 500 * 1000 };
	struct feed f;

	feed_open(&f, uri);
	for (int i = 0; i < A_MSGS; i++) {
		send_one(f.ctx, f.pub, f.a, 100);
		if (i < B_MSGS)
			send_one(f.ctx, f.pub, f.b, 200);
		if (i < X_MSGS)
			send_one(f.ctx, f.pub, f.x, 50);
		nanosleep(&pace, NULL);
	}
	feed_close(&f);
}

/* Poll msga_stat's stdout until it holds text; fails after timeout_s. */
static void wait_output(struct child *c, const char *text, int timeout_s)
{
	time_t deadline = time(NULL) + devtest_wait_s(timeout_s);
	char *out;

	for (;;) {
		out = slurp(c->out_path);
		if (strstr(out, text) || time(NULL) > deadline)
			break;
		slurp_free(out);
		usleep(50000);
	}
	cr_assert_not_null(strstr(out, text), "no '%s' in: %s", text, out);
	slurp_free(out);
}

/* Start msga_stat on a fresh group and wait until it joined. */
static const char *start_joined(struct child *c, const char *extra)
{
	const char *uri = group_uri();
	const char *args[] = { "-b", devtest_env()->addr, "-t", "stat.*",
			       "-i", "0.2", "-D", "120", "--json", "-v",
			       extra ? extra : uri, extra ? uri : NULL, NULL };
	char *err;

	child_start(c, args);
	if (!child_says(c, "msga_stat: connected", 30)) {
		err = slurp(c->err_path);
		if (c->pid > 0)
			kill(c->pid, SIGKILL);
		cr_assert_fail("msga_stat did not join %s: %s", uri, err);
	}
	return uri;
}

/* SIGINT, then exit status 0 and the final totals line in *line. */
static char *stop_and_collect(struct child *c, char *line, size_t cap)
{
	char *out, *err;

	cr_assert_eq(kill(c->pid, SIGINT), 0);
	child_wait(c, 30);
	out = slurp(c->out_path);
	err = slurp(c->err_path);
	cr_expect_eq(c->status, 0, "exit %d, stderr: %s", c->status, err);
	cr_assert_not_null(last_line(out, NULL, line, cap),
			   "no final line after SIGINT: %s", out);
	slurp_free(err);
	return out;
}

/* ------------------------------------------------------------ the tests */

static void expect_exit(const char *const *args, int status, const char *what)
{
	struct child c;
	char *err;

	child_start(&c, args);
	child_wait(&c, 60);
	err = slurp(c.err_path);
	cr_expect_eq(c.status, status, "exit %d, stderr: %s", c.status, err);
	cr_expect_not_null(strstr(err, what), "'%s' not in: %s", what, err);
	slurp_free(err);
	child_free(&c);
}

/*
 * iWARP has no multicast: whatever a test would do with a group, msga_stat
 * must fail the membership there, say why, and exit 1.
 */
static void expect_iwarp_refusal(void)
{
	expect_exit((const char *const[]){ "-b", devtest_env()->addr, "-D", "5",
		    "-v", group_uri(), NULL }, 1, "iWARP");
}

static void expect_stream(const char *out, const char *name, uint64_t n,
			  uint64_t len, const char *uri, uint64_t *origin)
{
	char line[1024], want[96];

	cr_assert_not_null(last_line(out, name, line, sizeof(line)),
			   "no %s stream: %s", name, out);
	cr_expect_eq(field(line, "first_seq"), 1, "%s", line);
	cr_expect_eq(field(line, "last_seq"), n, "%s", line);
	/* Every number is delivered or counted missing, never both. */
	cr_expect_eq(field(line, "msgs") + field(line, "missing"), n, "%s",
		     line);
	cr_expect_eq(field(line, "msgs"), n, "loss at a paced rate: %s", line);
	cr_expect_eq(field(line, "bytes"), field(line, "msgs") * len, "%s",
		     line);
	cr_expect_eq(field(line, "dups"), 0, "%s", line);
	snprintf(want, sizeof(want), "\"uri\":\"%s\"", uri);
	cr_expect_not_null(strstr(line, want), "%s", line);
	*origin = strtoull(strstr(line, "\"origin\":\"") + 10, NULL, 16);
}

Test(stat, counts_match_what_was_published, .timeout = 180)
{
	struct child c;
	char line[1024], last[32], *out;
	uint64_t oa, ob;
	const char *uri;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	uri = start_joined(&c, NULL);
	publish(uri);
	/* stat.a's last message (stat.b's went before it) is in a report:
	 * not a fixed sleep, which a slow host (or valgrind) can outrun */
	snprintf(last, sizeof(last), "\"last_seq\":%d,", A_MSGS);
	wait_output(&c, last, 30);
	out = stop_and_collect(&c, line, sizeof(line));
	cr_expect_eq(field(line, "streams"), 2, "%s", line);
	cr_expect_eq(field(line, "msgs"), A_MSGS + B_MSGS, "%s", line);
	cr_expect_eq(field(line, "bytes"), A_MSGS * 100 + B_MSGS * 200, "%s",
		     line);
	cr_expect_eq(field(line, "gaps"), 0, "%s", line);
	/* other.x's heartbeats and ENDs are filtered too (0.6) */
	cr_expect_geq(field(line, "filtered"), X_MSGS, "%s", line);
	cr_expect_eq(field(line, "local"), 0, "%s", line);
	cr_expect_eq(field(line, "foreign"), 0, "%s", line);
	cr_expect_eq(field(line, "memberships_up"), 1, "%s", line);
	expect_stream(out, "stat.a", A_MSGS, 100, uri, &oa);
	expect_stream(out, "stat.b", B_MSGS, 200, uri, &ob);
	cr_expect_neq(oa, 0, "origin 0 is RC's");
	cr_expect_eq(oa, ob, "one publisher, one origin");
	cr_expect_null(strstr(out, "other.x"), "filtered topic has a stream");
	slurp_free(out);
	child_free(&c);
}

Test(stat, no_local_drops_this_hosts_publishers, .timeout = 180)
{
	struct child c;
	char line[1024], *out;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	publish(start_joined(&c, "--no-local"));
	usleep(500 * 1000);
	out = stop_and_collect(&c, line, sizeof(line));
	cr_expect_eq(field(line, "msgs"), 0, "%s", line);
	cr_expect_eq(field(line, "streams"), 0, "%s", line);
	cr_expect_geq(field(line, "local"), A_MSGS + B_MSGS, "%s", line);
	/* every datagram is local or filtered; since 0.6 a stream's
	 * heartbeats and ENDs are datagrams too */
	cr_expect_geq(field(line, "local") + field(line, "filtered"),
		      A_MSGS + B_MSGS + X_MSGS, "%s", line);
	cr_expect_leq(field(line, "local") + field(line, "filtered"),
		      A_MSGS + B_MSGS + X_MSGS + 3 * (2 + MAX_HEARTBEATS),
		      "%s", line);
	slurp_free(out);
	child_free(&c);
}

Test(stat, duration_ends_the_run_with_a_final_report, .timeout = 60)
{
	const char *args[] = { "-b", devtest_env()->addr, "-D", "1", "--json",
			       group_uri(), NULL };
	struct child c;
	char line[1024], *out;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	child_start(&c, args);
	child_wait(&c, 30);
	out = slurp(c.out_path);
	cr_expect_eq(c.status, 0, "exit %d", c.status);
	cr_assert_not_null(last_line(out, NULL, line, sizeof(line)), "%s", out);
	cr_expect_eq(field(line, "msgs"), 0, "%s", line);
	cr_expect_eq(field(line, "memberships_up"), 1, "%s", line);
	cr_expect_geq(strtod(strstr(line, "\"time_s\":") + 9, NULL), 1.0, "%s",
		      line);
	slurp_free(out);
	child_free(&c);
}

Test(stat, invalid_groups_are_usage_errors, .timeout = 60)
{
	const char *addr = devtest_env()->addr;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	expect_exit((const char *const[]){ "-b", addr, "-D", "1",
		    "mcast://10.1.2.3", NULL }, 2, "mcast://10.1.2.3");
	expect_exit((const char *const[]){ "-b", addr, "-D", "1",
		    "mcast://224.0.0.0/24", NULL }, 2, "mcast://224.0.0.0/24");
	expect_exit((const char *const[]){ "-b", addr, "-D", "1",
		    "mcast://224.0.0.5", NULL }, 2, "mcast://224.0.0.5");
	/* A prefix pattern has no one group inside a range. */
	expect_exit((const char *const[]){ "-b", addr, "-D", "1", "-t", "md.*",
		    "mcast://239.255.0.0/16", NULL }, 2, "239.255.0.0/16");
}


/*
 * Make msga_stat lose messages for sure: it reads the first 10, is stopped
 * (SIGSTOP) while 1000 more go out, far more than a UD receive ring holds,
 * then resumes and gets 10 more. Seq 1..1020 went out on stat.a.
 */
#define LOSSY_TOTAL 1020

static void lossy_run(struct child *c, const char *uri)
{
	struct feed f;

	feed_open(&f, uri);
	feed_a(&f, 10, 1);
	wait_output(c, "\"last_seq\":10,", 30);
	cr_assert_eq(kill(c->pid, SIGSTOP), 0);
	feed_a(&f, 1000, 0);
	for (int i = 0; i < 100; i++)
		msga_ctx_poll(f.ctx, 64);
	usleep(200 * 1000); /* let the device drop what has no buffer */
	cr_assert_eq(kill(c->pid, SIGCONT), 0);
	usleep(300 * 1000);
	feed_a(&f, 10, 1);
	feed_close(&f);
}

Test(stat, a_stalled_reader_reports_and_counts_its_losses, .timeout = 180)
{
	struct child c;
	char line[1024], *out, *err;
	const char *uri;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	uri = start_joined(&c, NULL);
	lossy_run(&c, uri);
	usleep(500 * 1000);
	out = stop_and_collect(&c, line, sizeof(line));
	err = slurp(c.err_path);
	cr_expect_geq(field(line, "gaps"), 1, "%s", line);
	cr_expect_gt(field(line, "missing"), 0, "%s", line);
	cr_assert_not_null(last_line(out, "stat.a", line, sizeof(line)), "%s",
			   out);
	cr_expect_eq(field(line, "first_seq"), 1, "%s", line);
	cr_expect_eq(field(line, "last_seq"), LOSSY_TOTAL, "%s", line);
	/* Loss tolerant: every number is delivered or counted missing. */
	cr_expect_eq(field(line, "msgs") + field(line, "missing"), LOSSY_TOTAL,
		     "%s", line);
	cr_expect_gt(field(line, "msgs"), 20, "%s", line);
	cr_expect_not_null(strstr(err, "msga_stat: gap stat.a origin "),
			   "-v shows no gap: %s", err);
	slurp_free(err);
	slurp_free(out);
	child_free(&c);
}

Test(stat, stop_on_gap_ends_the_membership_and_exits_1, .timeout = 180)
{
	struct child c;
	char line[1024], *out, *err;

	if (is_iwarp()) {
		expect_iwarp_refusal();
		return;
	}
	lossy_run(&c, start_joined(&c, "--stop-on-gap"));
	child_wait(&c, 30); /* ends by itself: no membership is left */
	out = slurp(c.out_path);
	err = slurp(c.err_path);
	cr_expect_eq(c.status, 1, "exit %d, stderr: %s", c.status, err);
	cr_expect_not_null(strstr(err, "msga_stat: left "), "%s", err);
	cr_expect_not_null(strstr(err, msga_strerror(-EPIPE)), "%s", err);
	cr_assert_not_null(last_line(out, NULL, line, sizeof(line)), "%s", out);
	cr_expect_eq(field(line, "gaps"), 1, "%s", line);
	cr_expect_eq(field(line, "memberships_up"), 0, "%s", line);
	/* The message that revealed the gap was not delivered. */
	cr_expect_lt(field(line, "msgs") + field(line, "missing"), LOSSY_TOTAL,
		     "%s", line);
	slurp_free(err);
	slurp_free(out);
	child_free(&c);
}
