/* SPDX-License-Identifier: MIT */
/*
 * msga_feed end to end on the device under test: the pub/sub API carries a
 * ping-pong and a short rate-stepped feed between two processes, and the
 * JSON it writes parses (jq) and is self-consistent. No timing thresholds:
 * only orderings that hold for any honest measurement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"

static char json_path[64];

static int run(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const char *feed_bin(void)
{
	static char path[512];
	const char *b = getenv("MSGA_BUILDDIR");

	snprintf(path, sizeof(path), "%s/bench/msga_feed", b ? b : ".");
	return path;
}

/* jq -e EXPR on the JSON file: exit 0 only when EXPR is true. */
static void expect_json(const char *expr)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "jq -e '%s' %s >/dev/null", expr, json_path);
	cr_expect_eq(run(cmd), 0, "JSON check failed: %s", expr);
}

static void setup(void)
{
	snprintf(json_path, sizeof(json_path), "/tmp/msga-feed-%d.json",
		 (int)getpid());
}

static void teardown(void)
{
	unlink(json_path);
}

TestSuite(feed, .init = setup, .fini = teardown, .timeout = 300);

Test(feed, pingpong_json_is_consistent)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -n 300 -p 18610 "
		 "--json %s %s", feed_bin(), json_path, devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"pingpong\" and .size == 64");
	expect_json(".iterations == 300");
	expect_json(".t_min_us > 0 and .t_min_us <= .t_median_us");
	expect_json(".t_median_us <= .p99_us and .p99_us <= .p999_us");
	expect_json(".p999_us <= .t_max_us and .t_avg_us <= .t_max_us");
	expect_json(".t_stdev_us >= 0 and .consumer.peak_rss_kb > 0");
}

Test(feed, stepped_feed_json_is_consistent)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --base 100 --step 100 "
		 "--max-rate 200 --duration 0.5 --deadline 5 -p 18620 "
		 "--json %s %s", feed_bin(), json_path, devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"feed\" and .size == 232");
	expect_json("(.steps | length) >= 1");
	/* 100 msg/s for 0.5 s: every message echoed and sampled. */
	expect_json(".steps[0].rate == 100 and .steps[0].send_to_receive.count == 50");
	expect_json("all(.steps[]; .send_to_receive.median_us <= .send_to_receive.p99_us"
		    " and .send_to_receive.p99_us <= .send_to_receive.max_us)");
	/* Supply time is never later than send time. */
	expect_json("all(.steps[]; .supply_to_receive.mean_us >= .send_to_receive.mean_us - 0.001)");
	expect_json(".producer.cpu_pct > 0 and .consumer.cpu_pct > 0");
}

Test(feed, bad_option_exits_2_with_one_line)
{
	char cmd[1024];
	FILE *p;
	char line[512];
	int lines = 0, st;

	snprintf(cmd, sizeof(cmd), "%s --rate-typo 5 %s 2>&1 >/dev/null",
		 feed_bin(), devtest_env()->addr);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p))
		lines++;
	st = pclose(p);
	cr_expect_eq(WEXITSTATUS(st), 2);
	cr_expect_eq(lines, 1, "expected one line of error, got %d", lines);
}
