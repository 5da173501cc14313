/* SPDX-License-Identifier: MIT */
/*
 * rdma_lat/rdma_bw option parsing: defaults, accepted values, and every
 * rejection the man pages document (each one a single-line reason).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "perf_opts.h"

#define MAXARGS 40

static int parse(struct perf_opts *o, enum perf_tool tool, char *err,
		 const char *line)
{
	static char buf[512];
	char *argv[MAXARGS + 2];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = tool == PERF_TOOL_LAT ? "rdma_lat" : "rdma_bw";
	for (char *t = strtok(buf, " "); t && argc <= MAXARGS; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	return perf_opts_parse(o, tool, argc, argv, err, 256);
}

Test(tool_opts, defaults_make_a_server)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, ""), 0, "%s", err);
	cr_expect_null(o.server);
	cr_expect_eq(o.conn, PERF_RC);
	cr_expect_eq(o.verb, PERF_SEND);
	cr_expect_eq(o.tcp_port, 18515);
	cr_expect_eq(o.gid_index, -1);
	cr_expect_eq(o.inline_size, -1);
	cr_expect_eq(o.format, PERF_FMT_TEXT);
	cr_expect_leq(o.cq_mod, o.tx_depth);
	cr_expect_eq(o.clients, 0);
}

Test(tool_opts, address_makes_a_client_and_values_land)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err,
			   "-d rxe0 -i 1 -x 3 -c UC -V write -s 64 -n 77 -I 0 "
			   "-t 32 -r 16 -Q 8 -p 20000 --json 198.18.0.1"), 0,
		     "%s", err);
	cr_expect_str_eq(o.server, "198.18.0.1");
	cr_expect_str_eq(o.dev, "rxe0");
	cr_expect_eq(o.gid_index, 3);
	cr_expect_eq(o.conn, PERF_UC);
	cr_expect_eq(o.verb, PERF_WRITE);
	cr_expect_eq(o.size, 64);
	cr_expect_eq(o.iters, 77);
	cr_expect_eq(o.inline_size, 0);
	cr_expect_eq(o.tx_depth, 32);
	cr_expect_eq(o.rx_depth, 16);
	cr_expect_eq(o.cq_mod, 8);
	cr_expect_eq(o.tcp_port, 20000);
	cr_expect_eq(o.format, PERF_FMT_JSON);
}

Test(tool_opts, long_options_and_rate)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err,
			   "--connection=UD --size=128 --rate 50000 --sample 10 "
			   "--warmup 5 --pin 0 --clock monotonic --timeout 3 "
			   "--histogram 10.0.0.1"), 0, "%s", err);
	cr_expect_eq(o.conn, PERF_UD);
	cr_expect_eq(o.rate, 50000);
	cr_expect_eq(o.sample, 10);
	cr_expect_eq(o.warmup, 5);
	cr_expect_eq(o.pin_cpu, 0);
	cr_expect_eq(o.clock, PERF_CLOCK_MONO);
	cr_expect_eq(o.timeout_s, 3);
	cr_expect(o.histogram);
}

/* --pin auto: no CPU number, the choice made at start; the last --pin
 * given wins. */
Test(tool_opts, pin_auto)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "--pin 1 --pin auto"), 0,
		     "%s", err);
	cr_expect(o.pin_auto);
	cr_expect_eq(o.pin_cpu, -1);
	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "--pin auto --pin 1"), 0,
		     "%s", err);
	cr_expect(!o.pin_auto);
	cr_expect_eq(o.pin_cpu, 1);
}

Test(tool_opts, rate_without_sample_replies_every_hundredth)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-s 64 --rate 1000 ::1"), 0,
		     "%s", err);
	cr_expect_eq(o.sample, 100);
}

Test(tool_opts, once_means_one_client)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "--once -B 198.18.0.1"), 0,
		     "%s", err);
	cr_expect_eq(o.clients, 1);
	cr_expect_str_eq(o.bind_addr, "198.18.0.1");
}

Test(tool_opts, all_sizes_are_powers_of_two_to_8m)
{
	struct perf_opts o;
	uint32_t sizes[32];
	char err[256];
	size_t n;

	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "-a -b -l 4 -V write 10.1.2.3"), 0,
		     "%s", err);
	n = perf_opts_sizes(&o, sizes, 32);
	cr_expect_eq(n, 23);
	cr_expect_eq(sizes[0], 2);
	cr_expect_eq(sizes[n - 1], 8u << 20);
	for (size_t i = 1; i < n; i++)
		cr_expect_eq(sizes[i], sizes[i - 1] * 2);
	cr_expect(o.bidir);
	cr_expect_eq(o.post_list, 4);
}

Test(tool_opts, mcast_group_lands_in_network_order)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err,
			   "-c UD --mcast 239.255.1.1 198.18.0.1"), 0, "%s",
		     err);
	cr_expect_str_eq(o.mcast, "239.255.1.1");
	cr_expect_eq(o.mcast_group, htonl(0xefff0101));
	/* rdma_bw needs no reply group: the top address is fine. */
	cr_assert_eq(parse(&o, PERF_TOOL_BW, err,
			   "-c UD -M 239.255.255.255 198.18.0.1"), 0, "%s",
		     err);
	cr_expect_eq(o.mcast_group, htonl(0xefffffff));
}

Test(tool_opts, bw_ud_defaults_to_one_kib)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "-c UD 198.18.0.1"), 0, "%s",
		     err);
	cr_expect_eq(o.size, 1024);
	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "-c UD -s 64 198.18.0.1"), 0,
		     "%s", err);
	cr_expect_eq(o.size, 64);
	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "198.18.0.1"), 0, "%s", err);
	cr_expect_eq(o.size, 65536);
}

Test(tool_opts, cq_mod_defaults_shrink_to_tx_depth)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "-t 8"), 0, "%s", err);
	cr_expect_eq(o.cq_mod, 8);
}

/* The Chelsio T5 report's command lines, exactly as printed. */
Test(tool_opts, old_ofed_rdma_lat_client_and_server)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c -I 64 198.18.1.1"), 0,
		     "%s", err);
	cr_expect_str_eq(o.server, "198.18.1.1");
	cr_expect(o.old_cli);
	cr_expect(o.old_output);
	cr_expect(o.use_cm);
	cr_expect_eq(o.conn, PERF_RC);
	cr_expect_eq(o.verb, PERF_WRITE);
	cr_expect_eq(o.inline_size, 64);
	cr_expect_eq(o.size, 1, "the old rdma_lat's default size");
	cr_expect_eq(o.iters, 1000);
	cr_expect_eq(o.tx_depth, 50);
	cr_expect_eq(o.format, PERF_FMT_TEXT);

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c -I 64"), 0, "%s", err);
	cr_expect_null(o.server);
	cr_expect(o.old_cli);
	cr_expect_eq(o.inline_size, 64);
	cr_expect_eq(o.clients, 1, "the old server served one run");
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c --clients 3"), 0, "%s",
		     err);
	cr_expect_eq(o.clients, 3);
}

Test(tool_opts, old_ofed_rdma_bw)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "-c -b -s 4096 -t 100 10.0.0.1"),
		     0, "%s", err);
	cr_expect(o.old_cli && o.old_output && o.use_cm && o.bidir);
	cr_expect_eq(o.verb, PERF_WRITE);
	cr_expect_eq(o.size, 4096);
	cr_expect_eq(o.tx_depth, 100);
	cr_assert_eq(parse(&o, PERF_TOOL_BW, err, "10.0.0.1 --cma"), 0, "%s",
		     err);
	cr_expect(o.old_cli);
	cr_expect_eq(o.size, 65536);
	cr_expect_eq(o.iters, 1000, "the old rdma_bw's default");
	cr_expect_eq(o.tx_depth, 100, "the old rdma_bw's default");
}

/* Where the old -c is told apart from -c TYPE (rdma_lat(1)). */
Test(tool_opts, old_c_or_connection_type)
{
	struct perf_opts o;
	char err[256];

	cr_expect(perf_opts_old_c(NULL));
	cr_expect(perf_opts_old_c("-I"));
	cr_expect(perf_opts_old_c("--"));
	cr_expect(perf_opts_old_c("198.18.1.1"));
	cr_expect(perf_opts_old_c("fe80::1"));
	cr_expect_not(perf_opts_old_c("RC"));
	cr_expect_not(perf_opts_old_c("ud"));
	cr_expect_not(perf_opts_old_c("XRC"));
	cr_expect_not(perf_opts_old_c(""));

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c"), 0, "%s", err);
	cr_expect(o.old_cli);
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c 198.18.1.1"), 0, "%s",
		     err);
	cr_expect(o.old_cli);
	cr_expect_str_eq(o.server, "198.18.1.1");
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c ud 198.18.1.1"), 0,
		     "%s", err);
	cr_expect_not(o.old_cli);
	cr_expect_not(o.old_output);
	cr_expect_eq(o.conn, PERF_UD);
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-cUC -I 64"), 0, "%s", err);
	cr_expect_not(o.old_cli);
	cr_expect_eq(o.conn, PERF_UC);
	/* Both forms at once: the old flag and RC agree. */
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-c -c RC"), 0, "%s", err);
	cr_expect(o.old_cli);
	/* A "-c" that is another option's value is that value. */
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "-d -c 10.0.0.1"), 0, "%s",
		     err);
	cr_expect_str_eq(o.dev, "-c");
	cr_expect_not(o.old_cli);
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err, "--ib-d -c 10.0.0.1"), 0,
		     "%s", err);
	cr_expect_str_eq(o.dev, "-c");
	cr_expect_not(o.old_cli);
	/* After "--" no word is an option. */
	cr_expect_eq(parse(&o, PERF_TOOL_LAT, err, "-- -c"), -EINVAL);
}

Test(tool_opts, old_c_explicit_options_win)
{
	struct perf_opts o;
	char err[256];

	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err,
			   "-c -V send -s 64 --json 10.0.0.1"), 0, "%s", err);
	cr_expect(o.old_cli && o.use_cm);
	cr_expect_eq(o.verb, PERF_SEND);
	cr_expect_eq(o.size, 64);
	cr_expect_not(o.old_output, "--json wins over the old lines");
	/* The old lines with today's syntax. */
	cr_assert_eq(parse(&o, PERF_TOOL_LAT, err,
			   "-R -V write --old-output 10.0.0.1"), 0, "%s", err);
	cr_expect_not(o.old_cli);
	cr_expect(o.old_output);
	cr_expect_eq(o.size, 2);
}

/* Arrays, not pointers: Criterion copies parameters into a new process. */
struct bad_case {
	enum perf_tool tool;
	char args[64];
	char reason[32]; /* a word the reason must contain */
};

static struct bad_case bad_cases[] = {
	{ PERF_TOOL_LAT, "-s 0", "-s" },
	{ PERF_TOOL_LAT, "-s 8388609", "out of range" },
	{ PERF_TOOL_LAT, "-s 12k", "not a number" },
	{ PERF_TOOL_LAT, "-s -5", "not a number" },
	{ PERF_TOOL_LAT, "-n 0", "-n" },
	{ PERF_TOOL_LAT, "-n 99999999999999999999999", "not a number" },
	{ PERF_TOOL_LAT, "-D 0", "-D" },
	{ PERF_TOOL_LAT, "-c XRC", "-c" },
	{ PERF_TOOL_LAT, "-V atomic", "-V" },
	{ PERF_TOOL_LAT, "-x 256", "-x" },
	{ PERF_TOOL_LAT, "-i 0", "-i" },
	{ PERF_TOOL_LAT, "-p 0", "-p" },
	{ PERF_TOOL_LAT, "-p 65536", "-p" },
	{ PERF_TOOL_LAT, "-I 2000", "-I" },
	{ PERF_TOOL_LAT, "-t 0", "-t" },
	{ PERF_TOOL_LAT, "-r 9000", "-r" },
	{ PERF_TOOL_LAT, "-t 4 -Q 8", "-Q" },
	{ PERF_TOOL_BW, "-t 4 -l 8", "-l" },
	{ PERF_TOOL_LAT, "-a -s 64", "mutually exclusive" },
	{ PERF_TOOL_LAT, "-n 10 -D 1", "mutually exclusive" },
	{ PERF_TOOL_LAT, "--json --csv", "mutually exclusive" },
	{ PERF_TOOL_LAT, "--csv --histogram", "--histogram" },
	{ PERF_TOOL_LAT, "-c UD -V write", "UD" },
	{ PERF_TOOL_LAT, "-c UD -R", "-R" },
	{ PERF_TOOL_LAT, "-c UC -V read", "read" },
	{ PERF_TOOL_BW, "-c UD -b 10.0.0.1", "-b" },
	{ PERF_TOOL_LAT, "-M 239.255.1.1 10.0.0.1", "-c UD" },
	{ PERF_TOOL_BW, "-c RC -M 239.255.1.1 10.0.0.1", "-c UD" },
	{ PERF_TOOL_LAT, "-c UD -M 239.255.1 10.0.0.1", "not an IPv4" },
	{ PERF_TOOL_LAT, "-c UD -M ff02::1 10.0.0.1", "not an IPv4" },
	{ PERF_TOOL_BW, "-c UD -M group 10.0.0.1", "not an IPv4" },
	{ PERF_TOOL_LAT, "-c UD -M 198.18.0.1 10.0.0.1", "not a multicast" },
	{ PERF_TOOL_BW, "-c UD -M 240.0.0.1 10.0.0.1", "not a multicast" },
	{ PERF_TOOL_LAT, "-c UD -M 239.255.255.255 10.0.0.1", "reply group" },
	{ PERF_TOOL_LAT, "-c UD -M 239.255.1.1", "client option" },
	{ PERF_TOOL_LAT, "-c UD -M 239.255.1.1 -R 10.0.0.1", "-R" },
	{ PERF_TOOL_LAT, "-c UD --mcast=", "empty" },
	{ PERF_TOOL_LAT, "-b", "rdma_bw" },
	{ PERF_TOOL_LAT, "-l 4", "rdma_bw" },
	{ PERF_TOOL_BW, "--rate 100", "rdma_lat" },
	{ PERF_TOOL_BW, "--histogram", "rdma_lat" },
	{ PERF_TOOL_LAT, "-e -V write", "-e" },
	{ PERF_TOOL_LAT, "--sample 5", "--rate" },
	{ PERF_TOOL_LAT, "--rate 100 -V write -s 64", "send" },
	{ PERF_TOOL_LAT, "--rate 100 -s 4", "8 bytes" },
	{ PERF_TOOL_LAT, "--rate 100 -a", "8 bytes" },
	{ PERF_TOOL_LAT, "--rate 0", "--rate" },
	{ PERF_TOOL_LAT, "--rate 100 -s 64 -e", "-e" },
	{ PERF_TOOL_LAT, "--once 10.0.0.1", "server" },
	{ PERF_TOOL_LAT, "--once --clients 2", "mutually exclusive" },
	{ PERF_TOOL_LAT, "--clients 0", "--clients" },
	{ PERF_TOOL_LAT, "--clock hpet", "--clock" },
	{ PERF_TOOL_LAT, "--pin x", "--pin" },
	{ PERF_TOOL_LAT, "--pin autox", "--pin" },
	{ PERF_TOOL_BW, "--pin Auto", "--pin" },
	{ PERF_TOOL_LAT, "--timeout 0", "--timeout" },
	{ PERF_TOOL_LAT, "--warmup -1", "--warmup" },
	{ PERF_TOOL_LAT, "--bogus", "unknown option" },
	{ PERF_TOOL_LAT, "-z", "unknown option" },
	{ PERF_TOOL_LAT, "-s", "needs a value" },
	{ PERF_TOOL_LAT, "1.2.3.4 5.6.7.8", "unexpected argument" },
	{ PERF_TOOL_LAT, "server.example", "numeric IP" },
	{ PERF_TOOL_LAT, "--bind host", "numeric IP" },
	{ PERF_TOOL_LAT, "--bind 10.0.0.1 10.0.0.2", "server option" },
	{ PERF_TOOL_LAT, "-c UD -c 10.0.0.1", "does not combine" },
	{ PERF_TOOL_LAT, "-c -c UC", "does not combine" },
	{ PERF_TOOL_LAT, "-c -M 239.255.1.1 10.0.0.1", "-c UD" },
	{ PERF_TOOL_LAT, "-c -e 10.0.0.1", "-e" },
	{ PERF_TOOL_LAT, "-c -a 10.0.0.1", "one size" },
	{ PERF_TOOL_LAT, "--old-output -a", "one size" },
	{ PERF_TOOL_LAT, "-c --histogram", "--histogram" },
	{ PERF_TOOL_LAT, "--old-output --rate 100 -s 64", "--rate" },
	{ PERF_TOOL_BW, "-c --report_gbits", "--report_gbits" },
	{ PERF_TOOL_LAT, "--old-output --json", "mutually exclusive" },
	{ PERF_TOOL_BW, "--csv --old-output", "mutually exclusive" },
	{ PERF_TOOL_LAT, "-cI 64", "-c" },
	{ PERF_TOOL_LAT, "-c -I 2000 10.0.0.1", "-I" },
	{ PERF_TOOL_LAT, "-c -S 0 10.0.0.1", "unknown option -S" },
	{ PERF_TOOL_LAT, "-c 10.0.0.1 10.0.0.2", "unexpected argument" },
};

ParameterizedTestParameters(tool_opts, rejected)
{
	return cr_make_param_array(struct bad_case, bad_cases,
				   sizeof(bad_cases) / sizeof(bad_cases[0]));
}

ParameterizedTest(struct bad_case *c, tool_opts, rejected)
{
	struct perf_opts o;
	char err[256];
	int ret = parse(&o, c->tool, err, c->args);

	cr_expect_eq(ret, -EINVAL, "'%s' was accepted", c->args);
	cr_expect(strlen(err) > 0, "'%s': no reason", c->args);
	cr_expect_null(strchr(err, '\n'), "'%s': reason has a newline", c->args);
	cr_expect_not_null(strstr(err, c->reason), "'%s': reason '%s' lacks '%s'",
			   c->args, err, c->reason);
}
