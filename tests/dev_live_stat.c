/* SPDX-License-Identifier: MIT */
/*
 * dev_live_stat.c - the live-counters file of a context (issue 36 item 1)
 * read by `msga_stat -p PID` from another process, on real verbs: the
 * figures it prints match what this process delivered; the file goes
 * with msga_ctx_close(); a process that dies leaves a file msga_stat
 * calls stale; MSGA_CTX_NO_STATS makes none.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#ifndef MSGA_STAT_PATH
#error "MSGA_STAT_PATH must name the msga_stat program"
#endif

#define G_LIVE "mcast://239.255.10.50"

static char dir[64];

/* Each test's files in a directory of its own ($MSGA_STAT_DIR). */
static void dir_make(void)
{
	snprintf(dir, sizeof(dir), "/tmp/msga-stat-XXXXXX");
	cr_assert(mkdtemp(dir));
	cr_assert_eq(setenv("MSGA_STAT_DIR", dir, 1), 0);
}

static void dir_remove(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(live_stat, .init = dir_make, .fini = dir_remove);

/* Counters files in dir now. */
static int files_of(long pid)
{
	char prefix[64];
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	cr_assert(d);
	snprintf(prefix, sizeof(prefix), "msgaccel.%ld.", pid);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* msga_stat's output for args into out; its exit status. */
static int run_stat(const char *args, char *out, size_t n)
{
	char cmd[512];
	size_t got;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", MSGA_STAT_PATH, args);
	p = popen(cmd, "r");
	cr_assert(p);
	got = fread(out, 1, n - 1, p);
	out[got] = '\0';
	return WEXITSTATUS(pclose(p));
}

/* The number after "\"key\":" in s, the first after from. */
static unsigned long long json_num(const char *s, const char *from,
				   const char *key)
{
	char pat[64];
	const char *at = strstr(s, from);

	cr_assert(at, "no %s in %s", from, s);
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	at = strstr(at, pat);
	cr_assert(at, "no %s in %s", key, s);
	return strtoull(at + strlen(pat), NULL, 10);
}

/* The first record of kind in out has key == want. */
#define expect_num(out, kind, key, want)                                  \
	cr_assert_eq(json_num(out, "\"kind\":\"" kind "\"", key),          \
		     (unsigned long long)(want), "%s", out)

/* Poll ctxs for ms: the subscriber's tick refreshes its slots. */
static void poll_for(struct msga_ctx **ctxs, int n, int ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)ms;

	while (dp_now_ms() < end)
		for (int i = 0; i < n; i++)
			cr_assert_geq(msga_ctx_poll(ctxs[i], 64), 0);
}

Test(live_stat, msga_stat_p_matches_what_was_delivered, .timeout = 120)
{
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_pub *pub;
	struct msga_sub *sub;
	char args[64], out[16384];
	uint32_t t;

	cr_assert_eq(files_of(getpid()), 2);
	if (dp_iwarp_refuses(G_LIVE)) {
		/* (no multicast: the file and its reader, on an RC sub) */
		sub = dp_sub(ctxs[1], "live.*", &rec);
		poll_for(ctxs, 2, 300);
		snprintf(args, sizeof(args), "-p %d -n 1 --json", getpid());
		cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
		cr_assert(strstr(out, "\"pattern\":\"live.*\""), "%s", out);
		cr_assert(strstr(out, "\"stale\":false"), "%s", out);
		goto out;
	}
	pub = dp_pub_at(ctxs[0], G_LIVE, 0, &pe);
	cr_assert_eq(msga_pub_topic(pub, "live.t", &t), 0);
	cr_assert(dp_poll_until(ctxs, 2, &pe.connected, 1, 10000));
	sub = dp_sub(ctxs[1], "live.*", &rec);
	cr_assert_geq(msga_sub_connect(sub, G_LIVE, NULL), 0);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 1, 10000));
	for (uint64_t seq = 1; seq <= 200; seq++) {
		uint64_t want = rec.total + 1;

		dp_send(pub, t, seq, 100, ctxs, 2);
		cr_assert(dp_poll_until64(ctxs, 2, &rec.total, want, 10000));
	}
	poll_for(ctxs, 2, 300); /* (a refresh after the last message) */
	snprintf(args, sizeof(args), "-p %d -n 1 --json", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	expect_num(out, "sub", "msgs", rec.total);
	expect_num(out, "sub", "bytes", rec.bytes);
	expect_num(out, "stream", "msgs", 200);
	expect_num(out, "stream", "last_seq", 200);
	expect_num(out, "pub", "msgs", 200);
	/* The table form says the same, and the device. */
	snprintf(args, sizeof(args), "-p %d -n 1", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "msgs 200 "), "%s", out);
	/* (shown in the log: the README quotes a real run) */
	printf("msga_stat -p %d -n 1:\n%s", getpid(), out);
	fflush(stdout);
	cr_assert(strstr(out, devtest_env()->dev), "%s", out);
	msga_pub_destroy(pub);
out:
	msga_sub_destroy(sub);
	msga_ctx_close(ctxs[1]);
	cr_assert_eq(files_of(getpid()), 1);
	msga_ctx_close(ctxs[0]);
	cr_assert_eq(files_of(getpid()), 0);
	snprintf(args, sizeof(args), "-p %d -n 1", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 1, "%s", out);
}

/* A process that dies without closing leaves a file: stale to a reader. */
Test(live_stat, a_crashed_process_is_stale, .timeout = 60)
{
	int sync[2], status;
	char args[64], out[4096], c;
	pid_t child;

	cr_assert_eq(pipe(sync), 0);
	child = fork();
	cr_assert_geq(child, 0);
	if (!child) {
		struct msga_ctx *ctx = devtest_open_ctx();
		struct dp_rec rec = { 0 };

		dp_sub(ctx, "crash.*", &rec);
		for (int i = 0; i < 1000; i++)
			msga_ctx_poll(ctx, 64);
		if (write(sync[1], "x", 1) != 1)
			_exit(3);
		pause(); /* killed here, the context open */
		_exit(0);
	}
	cr_assert_eq(read(sync[0], &c, 1), 1);
	snprintf(args, sizeof(args), "-p %d -n 1 --json", (int)child);
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"stale\":false"), "%s", out);
	cr_assert_eq(kill(child, SIGKILL), 0);
	cr_assert_eq(waitpid(child, &status, 0), child);
	cr_assert_eq(files_of(child), 1);
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"stale\":true"), "%s", out);
	snprintf(args, sizeof(args), "-p %d -n 1", (int)child);
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "STALE"), "%s", out);
}

Test(live_stat, no_stats_flag_makes_no_file, .timeout = 30)
{
	struct msga_ctx_attr a = { .size = sizeof(a),
				   .flags = MSGA_CTX_NO_STATS };
	struct msga_ctx *ctx = NULL;

	a.dev_name = devtest_env()->dev;
	cr_assert_eq(msga_ctx_open(&a, &ctx), 0, "%s", msga_open_error());
	cr_assert_eq(files_of(getpid()), 0);
	msga_ctx_close(ctx);
}

/* A directory the file cannot be made in: the context works without. */
Test(live_stat, no_file_is_not_fatal, .timeout = 30)
{
	struct msga_ctx *ctx;

	cr_assert_eq(setenv("MSGA_STAT_DIR", "/nonexistent-msga", 1), 0);
	ctx = devtest_open_ctx();
	cr_assert(strstr(msga_ctx_last_error(ctx), "live counters"), "%s",
		  msga_ctx_last_error(ctx));
	msga_ctx_close(ctx);
}

/* An RC publisher, its subscriber's record, and the subscriber. */
Test(live_stat, rc_publisher_and_its_subscribers, .timeout = 90)
{
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_pub *pub = dp_pub(ctxs[0], 0, &pe);
	struct msga_sub *sub = dp_sub(ctxs[1], "rc.*", &rec);
	char args[64], out[16384];
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "rc.t", &t), 0);
	dp_connect(sub, pub, ctxs, 2, 1);
	for (uint64_t seq = 1; seq <= 50; seq++)
		dp_send(pub, t, seq, 64, ctxs, 2);
	cr_assert(dp_poll_until64(ctxs, 2, &rec.total, 50, 10000));
	poll_for(ctxs, 2, 300);
	snprintf(args, sizeof(args), "-p %d -n 1 --json", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	expect_num(out, "pub", "msgs", 50);
	expect_num(out, "pub", "subscribers", 1);
	expect_num(out, "conn", "msgs", 50);
	expect_num(out, "conn", "bytes", 50 * 64);
	cr_assert(strstr(out, "\"pattern\":\"rc.*\""), "%s", out);
	/* The subscriber's side (0.10): its connection and its totals. */
	expect_num(out, "rc_conn", "msgs", 50);
	expect_num(out, "rc_conn", "bytes", 50 * 64);
	expect_num(out, "rc_conn", "topics", 1);
	expect_num(out, "rc_conn", "up", 1);
	expect_num(out, "sub", "rc_msgs", 50);
	expect_num(out, "sub", "rc_conns", 1);
	expect_num(out, "sub", "unmatched", 0);
	snprintf(args, sizeof(args), "-p %d -n 1", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	printf("msga_stat -p %d -n 1:\n%s", getpid(), out);
	fflush(stdout);
	/* The publisher goes: a DISCONNECTED the totals count, and keep. */
	msga_pub_destroy(pub);
	cr_assert(dp_poll_until(ctxs, 2, &rec.disconnected, 1, 20000));
	{
		struct msga_sub_stats st = { .size = sizeof(st) };

		cr_assert_eq(msga_sub_stats(sub, &st), 0);
		cr_assert_eq(st.rc_msgs, 50);
		cr_assert_eq(st.rc_bytes, 50 * 64);
		cr_assert_eq(st.rc_gone_clean + st.rc_gone_reset +
			     st.rc_gone_timeout + st.rc_gone_other, 1);
	}
	msga_sub_destroy(sub);
	msga_ctx_close(ctxs[1]);
	msga_ctx_close(ctxs[0]);
}

/*
 * Issue 36 item 9: a pattern that matches none of its publisher's topics
 * is visible on the subscriber's side: msga_sub_stats' unmatched, the
 * connection's topics 0 (msga_sub_line_stats), and msga_stat's figures;
 * a topic that matches, added later, clears it.
 */
Test(live_stat, a_pattern_matching_nothing_is_visible, .timeout = 90)
{
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct dp_rec pe = { 0 }, rec = { 0 };
	struct msga_pub *pub = dp_pub(ctxs[0], 0, &pe);
	struct msga_sub *sub = dp_sub(ctxs[1], "wanted.*", &rec);
	struct msga_sub_stats st = { .size = sizeof(st) };
	struct msga_line_stats ls = { .size = sizeof(ls) };
	char args[64], out[16384];
	uint32_t t;

	cr_assert_eq(msga_pub_topic(pub, "other.t", &t), 0);
	dp_connect(sub, pub, ctxs, 2, 1);
	cr_assert(dp_poll_until(ctxs, 2, &rec.connected, 1, 10000));
	poll_for(ctxs, 2, 300);
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_assert_eq(st.rc_conns, 1);
	cr_assert_eq(st.unmatched, 1);
	cr_assert_eq(msga_sub_line_stats(sub, rec.last_conn, &ls), 0);
	cr_assert_eq(ls.up, 1);
	cr_assert_eq(ls.topics, 0);
	cr_assert(ls.peer[0]);
	/* (an id that is no connection of sub: the documented -ENOENT) */
	cr_assert_eq(msga_sub_line_stats(sub, rec.last_conn + 100, &ls),
		     -ENOENT);
	snprintf(args, sizeof(args), "-p %d -n 1 --json", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	expect_num(out, "sub", "unmatched", 1);
	expect_num(out, "rc_conn", "topics", 0);
	expect_num(out, "pub", "unmatched", 1);
	snprintf(args, sizeof(args), "-p %d -n 1", getpid());
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "unmatched 1"), "%s", out);
	/* A topic that matches: announced, no longer unmatched. */
	cr_assert_eq(msga_pub_topic(pub, "wanted.t", &t), 0);
	dp_send(pub, t, 1, 64, ctxs, 2);
	cr_assert(dp_poll_until64(ctxs, 2, &rec.total, 1, 10000));
	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	cr_assert_eq(st.unmatched, 0);
	cr_assert_eq(msga_sub_line_stats(sub, rec.last_conn, &ls), 0);
	cr_assert_eq(ls.topics, 1);
	cr_assert_eq(ls.msgs, 1);
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(ctxs[1]);
	msga_ctx_close(ctxs[0]);
}

/* The last line of fp that starts with prefix, into buf; 1 if found. */
static int read_until(FILE *fp, const char *prefix, char *buf, size_t n)
{
	while (fgets(buf, (int)n, fp))
		if (!strncmp(buf, prefix, strlen(prefix)))
			return 1;
	return 0;
}

/*
 * Issue 36's test: msga_stat -p against a running msga_feed (over RC,
 * ping-pong), its figures checked against the feed's own counts: the
 * feed prints what it sent and what came back, then keeps its context
 * open (--linger) while msga_stat reads it from outside. (20 s: two
 * msga_stat runs under ASan on a loaded TCG guest took more than 8.)
 */
Test(live_stat, msga_stat_p_of_a_running_msga_feed, .timeout = 180)
{
	unsigned long long sent, reflected;
	char cmd[512], line[512], args[64], out[16384];
	int pid, status;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "%s --pingpong -n 500 -p 18750 -d %s "
		 "--linger 20 %s", MSGA_FEED_PATH, devtest_env()->dev,
		 devtest_env()->addr);
	fp = popen(cmd, "r");
	cr_assert(fp);
	cr_assert(read_until(fp, "# counts:", line, sizeof(line)),
		  "msga_feed printed no counts");
	cr_assert_eq(sscanf(line, "# counts: sent %llu reflected %llu (pid %d",
			    &sent, &reflected, &pid), 3, "%s", line);
	cr_assert_geq(reflected, 500);
	/* (its producer's refresh after the last message: a tick or two) */
	usleep(600000);
	snprintf(args, sizeof(args), "-p %d -n 1 --json", pid);
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	cr_assert(strstr(out, "\"stale\":false"), "%s", out);
	expect_num(out, "pub", "msgs", sent);
	expect_num(out, "sub", "rc_msgs", reflected);
	snprintf(args, sizeof(args), "-p %d -n 1", pid);
	cr_assert_eq(run_stat(args, out, sizeof(out)), 0, "%s", out);
	printf("msga_feed counts: sent %llu reflected %llu\n"
	       "msga_stat -p %d -n 1:\n%s", sent, reflected, pid, out);
	fflush(stdout);
	/* The feed ends by itself, and its file goes with its context. */
	while (fgets(line, sizeof(line), fp))
		;
	status = pclose(fp);
	cr_assert(WIFEXITED(status) && !WEXITSTATUS(status), "status %d",
		  status);
	cr_assert_eq(files_of(pid), 0);
}
