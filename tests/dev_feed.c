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

/*
 * With --pin auto (issue 38): each side on a CPU of its own, the
 * consumer's chosen with the producer's avoided, each with its noise in
 * the report card (the VM's two vCPUs are two cores).
 */
Test(feed, pingpong_json_is_consistent)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -n 300 -p 18610 "
		 "--pin auto --json %s %s", feed_bin(), json_path,
		 devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"pingpong\" and .size == 64");
	expect_json(".iterations == 300");
	expect_json(".t_min_us > 0 and .t_min_us <= .t_median_us");
	expect_json(".t_median_us <= .p99_us and .p99_us <= .p999_us");
	expect_json(".p999_us <= .t_max_us and .t_avg_us <= .t_max_us");
	expect_json(".t_stdev_us >= 0 and .consumer.peak_rss_kb > 0");
	expect_json(".producer.pin == \"auto\" and .consumer.pin == \"auto\"");
	expect_json(".producer.cpu >= 0 and .consumer.cpu >= 0 and "
		    ".producer.cpu != .consumer.cpu");
	expect_json(".producer.cpu_noise.measured_cpus == 2 and "
		    ".consumer.cpu_noise.measured_cpus == 1");
	expect_json(".consumer.cpu_noise.shared_core == false and "
		    ".producer.cpu_noise.run_ns >= 300000000");
}

/*
 * The latency-stable rate (issue 39): present, one of the passed steps'
 * rates (or 0), never above the max rate without failure, and what the
 * steps' SupplyToReceive figures give by msga_feed(1)'s rule: the
 * reference is the lower of the first two passed steps' figures, and every
 * step up to the stable rate is within 1.5x / 3x of it.
 */
static void expect_stable_rate_consistent(const char *txt)
{
	char cmd[1024];

	expect_json(".stable_rate >= 0 and .stable_rate <= .max_rate");
	expect_json(".stable_rate as $k | $k == 0 or any(.steps[]; .rate == $k"
		    " and .failure == null)");
	expect_json(".stable.latency == \"supply_to_receive\" and "
		    ".stable.median_factor == 1.5 and .stable.p99_factor == 3");
	expect_json("[.steps[:2][] | select(.failure == null)] as $r | "
		    ".stable.ref_steps == ($r | length) and "
		    "(($r | length) == 0 or "
		    "((.stable.ref_median_us - ($r | map(.supply_to_receive"
		    ".median_us) | min) | fabs) < 0.001 and "
		    "(.stable.ref_p99_us - ($r | map(.supply_to_receive"
		    ".p99_us) | min) | fabs) < 0.001))");
	expect_json(".stable as $s | .stable_rate as $k | all(.steps[]; "
		    ".rate > $k or (.supply_to_receive.median_us <= "
		    "1.5 * $s.ref_median_us + 0.001 and "
		    ".supply_to_receive.p99_us <= 3 * $s.ref_p99_us + 0.001))");
	/* the step after it, if any, is the one named as breaking it */
	expect_json(".stable_rate as $k | [.steps[] | select(.rate > $k)] as "
		    "$up | ($up | length) == 0 or .stable.broken_at == "
		    "$up[0].rate");
	/* the text says the same rate */
	snprintf(cmd, sizeof(cmd), "grep -q \"^# latency-stable rate: "
		 "$(jq -r .stable_rate %s) msg/s\" %s", json_path, txt);
	cr_expect_eq(run(cmd), 0, "no latency-stable line matching the JSON");
}

Test(feed, stepped_feed_json_is_consistent)
{
	char cmd[1024], txt[64];

	snprintf(txt, sizeof(txt), "/tmp/msga-feed-%d.txt", (int)getpid());
	snprintf(cmd, sizeof(cmd), "timeout 240 %s --base 100 --step 100 "
		 "--max-rate 200 --duration 0.5 --deadline 5 -p 18620 "
		 "--json %s %s >%s", feed_bin(), json_path,
		 devtest_env()->addr, txt);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"feed\" and .size == 232");
	expect_json("(.steps | length) >= 1");
	/*
	 * The default warm-up: 1 s at the first rate, every message of it
	 * reflected (a failure would have ended the run before a step)...
	 */
	expect_json(".warmup.seconds == 1 and .warmup.rate == 100 and "
		    ".warmup.messages == 100 and .warmup.failure == null");
	/* ...and none counted: 100 msg/s for 0.5 s, every message echoed
	 * and sampled, no more. */
	expect_json(".steps[0].rate == 100 and .steps[0].send_to_receive.count == 50");
	expect_stable_rate_consistent(txt);
	unlink(txt);
	expect_json("all(.steps[]; .send_to_receive.median_us <= .send_to_receive.p99_us"
		    " and .send_to_receive.p99_us <= .send_to_receive.max_us)");
	/* Supply time is never later than send time. */
	expect_json("all(.steps[]; .supply_to_receive.mean_us >= .send_to_receive.mean_us - 0.001)");
	expect_json(".producer.cpu_pct > 0 and .consumer.cpu_pct > 0");
}

/*
 * --vs-write: pub/sub and the bare WRITE ping-pong alternate in the same
 * two processes; both paths must carry every round trip, and the ratios
 * must be the ones the medians give.
 */
Test(feed, pingpong_vs_write_reports_both_paths)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -n 300 "
		 "--vs-write 50 -p 18630 --json %s %s", feed_bin(), json_path,
		 devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"pingpong\" and .iterations == 300");
	expect_json(".vs_write.block == 50 and .vs_write.blocks == 6");
	expect_json(".vs_write.inline | type == \"boolean\"");
	expect_json(".vs_write.write_median_us > 0");
	expect_json("(.vs_write.ratio_of_medians - .t_median_us / "
		    ".vs_write.write_median_us | fabs) < 0.001");
	expect_json(".vs_write.block_ratio_p25 > 0 and .vs_write.block_ratio_p25"
		    " <= .vs_write.block_ratio_median and "
		    ".vs_write.block_ratio_median <= .vs_write.block_ratio_p75");
	expect_json(".vs_write.blocks_at_or_below >= 0 and "
		    ".vs_write.blocks_at_or_below <= 6");
}

/*
 * --by-name: each side subscribes with topic:// and finds the other's
 * publisher through the topic resolver (on a group of the test's own),
 * on RoCE and iWARP alike; every round trip still comes back.
 */
Test(feed, pingpong_by_name)
{
	char cmd[1024];

	/* (a group of its own: the other device's loop may run this too) */
	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -n 200 "
		 "--by-name --resolver-group 239.255.78.%u:14960 -p 18640 "
		 "--json %s %s", feed_bin(), devtest_salt(), json_path,
		 devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"pingpong\" and .iterations == 200");
	expect_json(".by_name_connect_ms > 0");
}

/*
 * Issue 38's 12 B ping-pong: below msga_feed's 40-byte header, the
 * message carries only its sequence number and flags (bench/feed/
 * feed_wire.h) and the producer keeps the send time. Every round trip
 * must come back and be timed. EXTRA: the transport's options.
 */
static void expect_short_pingpong(const char *extra, int port)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -s 12 -n 200 "
		 "-p %d %s --json %s %s", feed_bin(), port, extra, json_path,
		 devtest_env()->addr);
	cr_assert_eq(run(cmd), 0, "%s failed", cmd);
	expect_json(".mode == \"pingpong\" and .size == 12");
	expect_json(".iterations == 200");
	expect_json(".t_min_us > 0 and .t_min_us <= .t_median_us and "
		    ".t_median_us <= .t_max_us");
}

/*
 * iWARP has no UD: msga_feed over it must fail (exit 1) and say why,
 * as msga_pub_create(3) documents, rather than hang or pass.
 */
static void expect_iwarp_refusal(const char *extra, int port)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "timeout 240 %s --pingpong -s 12 -n 200 "
		 "-p %d %s %s 2>&1 >/dev/null | grep -q iWARP", feed_bin(),
		 port, extra, devtest_env()->addr);
	cr_expect_eq(run(cmd), 0, "%s: no iWARP refusal", cmd);
}

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

Test(feed, pingpong_12_bytes_rc_ring)
{
	expect_short_pingpong("", 18650);
}

/* The compact layout's probes and stop must get through as well. */
Test(feed, pingpong_12_bytes_mcast)
{
	char extra[64];

	/* (a group of its own: the other device's loop may run this too) */
	snprintf(extra, sizeof(extra), "--mcast 239.255.80.%u",
		 devtest_salt());
	if (is_iwarp())
		return expect_iwarp_refusal(extra, 18655);
	expect_short_pingpong(extra, 18655);
}

/* The other ping-pong paths at 12 B: SEND/RECV, --vs-write, unicast UD. */
Test(feed, pingpong_12_bytes_other_paths)
{
	expect_short_pingpong("--no-ring", 18660);
	expect_short_pingpong("--vs-write 50", 18665);
	expect_json(".vs_write.block == 50 and .vs_write.blocks == 4");
	if (is_iwarp())
		return expect_iwarp_refusal("--ud", 18670);
	expect_short_pingpong("--ud", 18670);
}

/* A bad option: exit status 2 and one line on stderr. */
static void expect_usage_error(const char *args)
{
	char cmd[1024];
	FILE *p;
	char line[512];
	int lines = 0, st;

	snprintf(cmd, sizeof(cmd), "%s %s %s 2>&1 >/dev/null", feed_bin(),
		 args, devtest_env()->addr);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	while (fgets(line, sizeof(line), p))
		lines++;
	st = pclose(p);
	cr_expect_eq(WEXITSTATUS(st), 2, "%s", args);
	cr_expect_eq(lines, 1, "%s: expected one line of error, got %d", args,
		     lines);
}

/*
 * Eleven runs through the libtool wrapper's shell: a second each natively,
 * about 75 s each under scripts/valgrind.sh in the VM, which stretches the
 * suite's limit for that (MSGA_TEST_TIMEOUT_SCALE, tests/devtest.c).
 */
Test(feed, bad_option_exits_2_with_one_line)
{
	expect_usage_error("--rate-typo 5");
	expect_usage_error("--vs-write 100");            /* no --pingpong */
	expect_usage_error("--pingpong --ud --vs-write 100");
	expect_usage_error("--pingpong --vs-write 9");   /* below 10 */
	expect_usage_error("--pingpong --reliable");     /* no --mcast */
	expect_usage_error("--resolver-group 239.1.1.1:9"); /* no --by-name */
	expect_usage_error("--by-name --resolver-group 10.1.1.1:9");
	expect_usage_error("--pingpong --pin 1");        /* only auto */
	expect_usage_error("--pingpong -s 11");          /* below 12 */
	expect_usage_error("-s 12");          /* below 32: no time stamps */
	expect_usage_error("--publish every -s 31");
}
