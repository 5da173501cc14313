/* SPDX-License-Identifier: MIT */
/*
 * rdma_lat and rdma_bw end to end on the device under test: a server bound
 * to MSGA_TEST_ADDR and a client, both spawned as processes with time
 * limits (tests/tooltest.c). Checks that every verb runs, that --json
 * parses and its numbers agree with each other and with the command line,
 * that UD and multicast (-M) run and count their losses, that iWARP
 * refuses what it cannot do, that a server outlives a client killed
 * mid-run, and that a bad option is one line on stderr and exit status 2.
 * No timing thresholds: soft RDMA latency varies too much from run to run.
 *
 * It runs in the device loops, at the same time as the other device's
 * (tests/vm/device-tests.sh): its ports and groups are per device
 * (next_port()), and its one host-wide port, the old OFED default, is
 * taken under a lock (old_pair()). What measures the CPUs, --pin auto and
 * msga_cpu, is tests/dev_cpu_pin.c, which runs alone.
 */
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "tooltest.h"

/* ------------------------------------------------------------ checks */

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

static void check_header(struct json *j, const char *tool, const char *conn,
			 const char *verb)
{
	cr_expect_str_eq(jstr(j, "tool"), tool);
	cr_expect_str_eq(jstr(j, "device"), devtest_env()->dev);
	cr_expect_str_eq(jstr(j, "transport"), devtest_env()->transport);
	cr_expect_str_eq(jstr(j, "connection"), conn);
	cr_expect_str_eq(jstr(j, "verb"), verb);
	if (is_iwarp())
		cr_expect_str_eq(jstr(j, "cm"), "rdma_cm",
				 "iWARP must connect through rdma_cm");
}

static void lat_json_case(const char *const *extra, const char *conn,
			  const char *verb)
{
	const char *cl[MAXARG] = { "--json", "-n", "300", "-s", "64" };
	struct proc c;
	struct json *j;
	int n = 5;

	for (; extra && *extra; extra++)
		cl[n++] = *extra;
	cl[n] = NULL;
	run_pair("rdma_lat", NULL, cl, &c);
	j = json_parse(c.out);
	check_header(j, "rdma_lat", conn, verb);
	cr_expect_eq(jrows(j), 1);
	check_lat_row(j, 0, 64, 300);
	free(j);
	proc_free(&c);
}

/* Run a client that must be refused: exit 2, exactly one stderr line. */
static void expect_usage_error(const char *tool, const char *const *extra,
			       const char *word, int with_server)
{
	struct args sa, ca;
	struct proc s, c;
	int port = next_port();

	server_args(&sa, tool, port, (const char *const[]){ "--once", NULL });
	client_args(&ca, tool, port, extra);
	if (with_server)
		proc_start(&s, sa.v);
	proc_start(&c, ca.v);
	proc_wait(&c, TOOL_TIMEOUT_S);
	if (with_server) {
		kill(s.pid, SIGTERM);
		proc_wait(&s, 10);
		proc_free(&s);
	}
	cr_expect_eq(c.status, 2, "exit %d, stderr: %s", c.status, c.err);
	cr_expect_eq(c.out_len, 0, "stdout: %s", c.out);
	cr_expect(c.err_len > 0 && strchr(c.err, '\n') == c.err + c.err_len - 1,
		  "stderr is not exactly one line: '%s'", c.err);
	cr_expect(!strncmp(c.err, tool, strlen(tool)) &&
		  !strncmp(c.err + strlen(tool), ": ", 2),
		  "stderr does not start '%s: ': %s", tool, c.err);
	cr_expect_not_null(strstr(c.err, word), "stderr lacks '%s': %s", word,
			   c.err);
	proc_free(&c);
}

/* ------------------------------------------------------------ tests */

TestSuite(tools, .timeout = 300);

Test(tools, lat_rc_send_json)
{
	lat_json_case(NULL, "RC", "send");
}

Test(tools, lat_rc_write_json)
{
	lat_json_case((const char *const[]){ "-V", "write", NULL }, "RC", "write");
}

Test(tools, lat_rc_read_json)
{
	lat_json_case((const char *const[]){ "-V", "read", NULL }, "RC", "read");
}

Test(tools, lat_rc_send_events_json)
{
	lat_json_case((const char *const[]){ "-e", NULL }, "RC", "send");
}

Test(tools, lat_rc_send_rdma_cm_json)
{
	struct proc c;
	struct json *j;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "-R", "-n",
			 "100", "-s", "32", NULL }, &c);
	j = json_parse(c.out);
	cr_expect_str_eq(jstr(j, "cm"), "rdma_cm");
	check_lat_row(j, 0, 32, 100);
	free(j);
	proc_free(&c);
}

Test(tools, lat_monotonic_clock_reported)
{
	struct proc c;
	struct json *j;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "--clock",
			 "monotonic", "-n", "100", NULL }, &c);
	j = json_parse(c.out);
	cr_expect_str_eq(jstr(j, "clock"), "monotonic");
	cr_assert(jget(j, "clock_read_ns") && jget(j, "clock_read_ns")->is_num,
		  "no clock_read_ns");
	cr_expect_gt(jget(j, "clock_read_ns")->num, 0.0);
	check_lat_row(j, 0, 2, 100);
	free(j);
	proc_free(&c);
}

Test(tools, lat_write_imm)
{
	if (is_iwarp()) {
		expect_usage_error("rdma_lat", (const char *const[]){ "-V",
				   "write_imm", NULL }, "write_imm", 1);
		return;
	}
	lat_json_case((const char *const[]){ "-V", "write_imm", NULL }, "RC",
		      "write_imm");
}

Test(tools, lat_ud_send_on_roce_refused_on_iwarp)
{
	if (is_iwarp()) {
		expect_usage_error("rdma_lat", (const char *const[]){ "-c", "UD",
				   NULL }, "UD", 1);
		return;
	}
	lat_json_case((const char *const[]){ "-c", "UD", NULL }, "UD", "send");
}

Test(tools, lat_uc_refused_on_iwarp)
{
	if (is_iwarp()) {
		expect_usage_error("rdma_lat", (const char *const[]){ "-c", "UC",
				   NULL }, "UC", 1);
		return;
	}
	lat_json_case((const char *const[]){ "-c", "UC", "-V", "write", NULL },
		      "UC", "write");
}

Test(tools, lat_histogram_counts_match)
{
	struct proc c;
	struct json *j;
	double sum = 0;
	char path[96];

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "--histogram",
			 "-n", "200", "-s", "64", NULL }, &c);
	j = json_parse(c.out);
	for (int b = 0;; b++) {
		struct jfield *f;

		snprintf(path, sizeof(path), "results.0.histogram.%d.count", b);
		f = jget(j, path);
		if (!f)
			break;
		sum += f->num;
	}
	cr_expect_eq(sum, 200.0, "histogram holds %.0f of 200 samples", sum);
	free(j);
	proc_free(&c);
}

Test(tools, lat_all_sizes_small_run)
{
	struct proc c;
	struct json *j;
	int rows;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "-a", "-V",
			 "write", "-n", "3", "--warmup", "1", NULL }, &c);
	j = json_parse(c.out);
	rows = jrows(j);
	cr_expect_eq(rows, 23, "-a gives 2 .. 8 MiB: %d rows", rows);
	for (int r = 0; r < rows; r++)
		check_lat_row(j, r, (double)(2u << r), 3);
	free(j);
	proc_free(&c);
}

Test(tools, lat_duration_mode)
{
	struct proc c;
	struct json *j;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "-D", "1",
			 "-s", "64", NULL }, &c);
	j = json_parse(c.out);
	cr_expect_gt(jnum(j, 0, "iterations"), 0);
	check_lat_row(j, 0, 64, -1);
	free(j);
	proc_free(&c);
}

Test(tools, lat_under_load_samples_replies)
{
	struct proc c;
	struct json *j;
	double it, sent, lost;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "--rate",
			 "2000", "--sample", "10", "-n", "1000", "--warmup",
			 "100", "-s", "64", NULL }, &c);
	j = json_parse(c.out);
	it = jnum(j, 0, "iterations");
	sent = jnum(j, 0, "sent");
	lost = jnum(j, 0, "lost");
	cr_expect_eq(sent, 1100, "warm-up + -n messages are sent");
	cr_expect_eq(it + lost, 100, "1000 measured messages, every 10th "
		     "replied: %.0f replies + %.0f lost", it, lost);
	cr_expect_gt(it, 0);
	check_lat_row(j, 0, 64, -1);
	free(j);
	proc_free(&c);
}

/* Small queues under load: on iWARP credits must pace both directions. */
Test(tools, lat_under_load_small_queues)
{
	struct proc c;
	struct json *j;

	run_pair("rdma_lat", NULL, (const char *const[]){ "--json", "--rate",
			 "5000", "--sample", "2", "-n", "3000", "--warmup", "0",
			 "-s", "64", "-r", "16", "-t", "16", "-Q", "4", NULL }, &c);
	j = json_parse(c.out);
	cr_expect_eq(jnum(j, 0, "sent"), 3000);
	cr_expect_eq(jnum(j, 0, "iterations") + jnum(j, 0, "lost"), 1500);
	cr_expect_gt(jnum(j, 0, "iterations"), 0);
	check_lat_row(j, 0, 64, -1);
	free(j);
	proc_free(&c);
}

/* Run a client with --csv; check the header line, return the first row. */
static const char *csv_run(struct proc *c, const char *tool,
			   const char *const *args, const char *header)
{
	const char *row;

	run_pair(tool, NULL, args, c);
	cr_expect(!strncmp(c->out, header, strlen(header)), "CSV header: %s",
		  c->out);
	row = strchr(c->out, '\n');
	cr_assert_not_null(row);
	return row + 1;
}

Test(tools, lat_csv_output)
{
	struct proc c;
	const char *row;
	int commas = 0;

	row = csv_run(&c, "rdma_lat", (const char *const[]){ "--csv", "-n",
		      "50", "-s", "16", NULL }, "bytes,iterations,t_min_us,"
		      "t_max_us,t_median_us,t_avg_us,t_stdev_us,p99_us,p999_us,"
		      "p9999_us\n");
	cr_expect(!strncmp(row, "16,50,", 6), "CSV row: %s", row);
	for (const char *p = row; *p && *p != '\n'; p++)
		commas += *p == ',';
	cr_expect_eq(commas, 9);
	proc_free(&c);
}

Test(tools, lat_text_has_perftest_columns)
{
	struct proc c;
	const char *hdr = " #bytes #iterations    t_min[usec]    t_max[usec]  "
			  "t_typical[usec]    t_avg[usec]    t_stdev[usec]   "
			  "99% percentile[usec]   99.9% percentile[usec]   "
			  "99.99% percentile[usec]\n";
	char *row;

	run_pair("rdma_lat", NULL, (const char *const[]){ "-n", "50", "-s",
			 "128", NULL }, &c);
	row = strstr(c.out, hdr);
	cr_assert_not_null(row, "no perftest column header in: %s", c.out);
	row += strlen(hdr);
	cr_expect(!strncmp(row, " 128     50 ", 12), "row: %.60s", row);
	proc_free(&c);
}

Test(tools, bw_text_report_gbits)
{
	struct proc c;

	run_pair("rdma_bw", NULL, (const char *const[]){ "-n", "500", "-s",
			 "1024", "--report_gbits", NULL }, &c);
	cr_expect_not_null(strstr(c.out, "#bytes     #iterations    BW peak[Gb/sec]"
				  "    BW average[Gb/sec]   MsgRate[Mpps]\n 1024 "),
			   "text: %s", c.out);
	proc_free(&c);
}

static void bw_case(const char *const *extra, const char *verb)
{
	const char *cl[MAXARG] = { "--json", "-n", "3000", "-s", "1024" };
	struct proc c;
	struct json *j;
	double avg, peak, rate;
	int n = 5;

	for (; extra && *extra; extra++)
		cl[n++] = *extra;
	cl[n] = NULL;
	run_pair("rdma_bw", NULL, cl, &c);
	j = json_parse(c.out);
	check_header(j, "rdma_bw", "RC", verb);
	avg = jnum(j, 0, "bw_avg_mbps");
	peak = jnum(j, 0, "bw_peak_mbps");
	rate = jnum(j, 0, "msg_rate_mpps");
	cr_expect_eq(jnum(j, 0, "bytes"), 1024);
	cr_expect_eq(jnum(j, 0, "iterations"), 3000);
	cr_expect_gt(avg, 0.0);
	cr_expect_geq(peak, avg, "peak %.3f < average %.3f", peak, avg);
	/* MB/s = Mpps * bytes * 1e6 / 2^20, up to the printed rounding. */
	cr_expect(fabs(avg - rate * 1024 * 1e6 / 1048576.0) <= 0.01 * avg + 0.01,
		  "average %.3f MB/s disagrees with %.6f Mpps", avg, rate);
	free(j);
	proc_free(&c);
}

Test(tools, bw_rc_send)
{
	bw_case(NULL, "send");
}

Test(tools, bw_rc_write)
{
	bw_case((const char *const[]){ "-V", "write", NULL }, "write");
}

Test(tools, bw_rc_write_post_list)
{
	bw_case((const char *const[]){ "-V", "write", "-l", "8", "-Q", "16",
		NULL }, "write");
}

Test(tools, bw_rc_read)
{
	bw_case((const char *const[]){ "-V", "read", NULL }, "read");
}

/*
 * Small queues: on iWARP (no RNR retry) the receiver's credit writes pace
 * the sender; hundreds of them must flow without the sender stalling.
 */
Test(tools, bw_rc_send_small_receive_queue)
{
	bw_case((const char *const[]){ "-r", "16", "-t", "16", "-Q", "4", NULL },
		"send");
}

Test(tools, bw_rc_send_bidirectional)
{
	struct proc c;
	struct json *j;

	/*
	 * On iWARP both directions are paced by credits: each side must keep
	 * reporting re-posted receives while its own send queue is full and
	 * after its own sending is over (this once stalled with "sent 512,
	 * completed 512, received 1000").
	 */
	run_pair("rdma_bw", NULL, (const char *const[]){ "--json", "-b", "-n",
			 "1000", "-s", "1024", NULL }, &c);
	j = json_parse(c.out);
	cr_expect_eq(jnum(j, 0, "iterations"), 2000, "both directions count");
	cr_expect_gt(jnum(j, 0, "bw_avg_mbps"), 0.0);
	free(j);
	proc_free(&c);
}

/* ------------------------------------------------------------ UD, -M */

/*
 * A group of our own per test (tests run in parallel, and a group shared
 * with another test would mix their messages): 239.255.H.L from the TCP
 * port, L even so that rdma_lat's reply group (+1) is ours too.
 */
static void test_group(char *buf, size_t len, int port)
{
	snprintf(buf, len, "239.255.%d.%d", (port >> 8) & 0xff, port & 0xfe);
}

/* iWARP has no UD and no multicast: exit 2, one line naming why. */
static void expect_iwarp_refusal(const char *tool, const char *const *extra,
				 const char *word)
{
	cr_assert(is_iwarp());
	expect_usage_error(tool, extra, word, 1);
}

Test(tools, lat_mcast_json)
{
	const char *cl[] = { "--json", "-c", "UD", "-M", NULL, "-n", "300",
			     "-s", "64", NULL };
	char group[32];
	struct proc c;
	struct json *j;

	test_group(group, sizeof(group), next_port());
	cl[4] = group;
	if (is_iwarp()) {
		expect_iwarp_refusal("rdma_lat", cl,
				     "-M is not supported on iWARP device");
		return;
	}
	run_pair("rdma_lat", NULL, cl, &c);
	j = json_parse(c.out);
	check_header(j, "rdma_lat", "UD", "send");
	cr_expect_str_eq(jstr(j, "cm"), "rdma_cm",
			 "multicast joins through rdma_cm");
	cr_expect_str_eq(jstr(j, "mcast_group"), group);
	cr_expect_eq(jrows(j), 1);
	check_lat_row(j, 0, 64, 300);
	free(j);
	proc_free(&c);
}

/* UD may drop: sent counts every send, received what the server got. */
static void check_ud_bw_row(struct json *j, double iters)
{
	double sent = jnum(j, 0, "sent"), rcvd = jnum(j, 0, "received");
	double lost = jnum(j, 0, "lost");

	cr_expect_eq(jnum(j, 0, "iterations"), iters);
	cr_expect_eq(sent, iters, "no warm-up: sent %.0f of %.0f", sent, iters);
	cr_expect_gt(rcvd, 0.0, "nothing arrived");
	cr_expect_leq(rcvd, sent, "received %.0f > sent %.0f", rcvd, sent);
	cr_expect_eq(lost, sent - rcvd, "lost %.0f != %.0f - %.0f", lost, sent,
		     rcvd);
	cr_expect_gt(jnum(j, 0, "bw_avg_mbps"), 0.0);
	cr_expect_geq(jnum(j, 0, "bw_peak_mbps"), jnum(j, 0, "bw_avg_mbps"));
}

static void bw_ud_case(const char *group)
{
	const char *cl[] = { "--json", "-c", "UD", "-n", "2000", "-s", "512",
			     group ? "-M" : NULL, group, NULL };
	struct proc c;
	struct json *j;

	if (is_iwarp()) {
		expect_iwarp_refusal("rdma_bw", cl, group ?
				     "-M is not supported on iWARP device" :
				     "-c UD is not supported on iWARP device");
		return;
	}
	run_pair("rdma_bw", NULL, cl, &c);
	j = json_parse(c.out);
	check_header(j, "rdma_bw", "UD", "send");
	cr_expect_str_eq(jstr(j, "mcast_group"), group ? group : "");
	cr_expect_str_eq(jstr(j, "cm"), group ? "rdma_cm" : "tcp");
	check_ud_bw_row(j, 2000);
	free(j);
	proc_free(&c);
}

Test(tools, bw_ud_counts_loss)
{
	bw_ud_case(NULL);
}

Test(tools, bw_mcast_counts_loss)
{
	char group[32];

	test_group(group, sizeof(group), next_port());
	bw_ud_case(group);
}

Test(tools, bw_ud_csv_has_loss_columns)
{
	struct proc c;
	const char *row;
	unsigned long long it, sent, rcvd, lost;
	double peak, avg, rate;
	int bytes;

	if (is_iwarp()) {
		expect_iwarp_refusal("rdma_bw", (const char *const[]){ "--csv",
				     "-c", "UD", NULL }, "iWARP has RC only");
		return;
	}
	row = csv_run(&c, "rdma_bw", (const char *const[]){ "--csv", "-c", "UD",
		      "-n", "500", NULL }, "bytes,iterations,bw_peak_mbps,"
		      "bw_avg_mbps,msg_rate_mpps,sent,received,lost\n");
	cr_assert_eq(sscanf(row, "%d,%llu,%lf,%lf,%lf,%llu,%llu,%llu", &bytes,
			    &it, &peak, &avg, &rate, &sent, &rcvd, &lost), 8,
		     "CSV row: %s", row);
	cr_expect_eq(it, 500);
	cr_expect_eq(bytes, 1024, "rdma_bw -c UD defaults to 1024 bytes");
	cr_expect_eq(sent, 500);
	cr_expect(rcvd > 0 && rcvd <= sent && lost == sent - rcvd,
		  "sent %llu received %llu lost %llu", sent, rcvd, lost);
	proc_free(&c);
}

Test(tools, server_survives_a_vanished_client)
{
	const char *cl_long[] = { "rdma_lat", "-p", NULL, "-D", "60", "-s", "64",
				  NULL, NULL };
	struct args sa, ca;
	struct proc s, c1, c2;
	int port = next_port();

	server_args(&sa, "rdma_lat", port, (const char *const[]){ "--clients",
		    "2", NULL });
	cl_long[2] = sa.port;
	cl_long[7] = devtest_env()->addr;
	proc_start(&s, sa.v);
	proc_start(&c1, cl_long);
	/* Its header comes once it is connected, so the server is serving it
	 * (a fixed sleep was too short under valgrind, and the server then
	 * never saw this client). */
	cr_assert(proc_says(&c1, "#bytes", 30),
		  "first client did not connect: %s", c1.err);
	kill(c1.pid, SIGKILL);
	proc_wait(&c1, 10);
	cr_expect_eq(c1.status, 128 + SIGKILL, "first client was not mid-run: "
		     "exit %d, stderr %s", c1.status, c1.err);
	client_args(&ca, "rdma_lat", port, (const char *const[]){ "--json", "-n",
		    "100", NULL });
	proc_start(&c2, ca.v);
	proc_wait(&c2, TOOL_TIMEOUT_S);
	proc_wait(&s, 30);
	cr_expect_eq(c2.status, 0, "second client: exit %d, stderr %s",
		     c2.status, c2.err);
	cr_expect_eq(s.status, 0, "server: exit %d, stderr %s", s.status, s.err);
	cr_expect_not_null(strstr(s.err, "rdma_lat: client "),
			   "server did not report the vanished client: %s",
			   s.err);
	free(json_parse(c2.out));
	proc_free(&s);
	proc_free(&c1);
	proc_free(&c2);
}

/* ------------------------------------------------------------ old OFED */

/*
 * One old OFED pair exactly as a report printed it: the server is argv
 * words (default port 18515, every address), the client the same words
 * and the test address. Like the old server, ours ends after one client.
 */
static void old_pair(const char *const *sv, const char *const *cl,
		     struct proc *client)
{
	struct args ca;
	/*
	 * Port 18515 on every address is the host's, not the device's, and
	 * the other device's loop runs at the same time
	 * (tests/vm/device-tests.sh): its old pairs wait for this one. The
	 * lock's name is fixed on purpose, the same for both devices.
	 */
	int lock = open("/tmp/msga-dev-tools-old-ofed.lock",
			O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	cr_assert_geq(lock, 0);
	cr_assert_eq(flock(lock, LOCK_EX), 0);
	memset(&ca, 0, sizeof(ca));
	args_list(&ca, cl);
	args_add(&ca, devtest_env()->addr);
	run_argvs(sv, ca.v, client);
	close(lock);
}

/* The number after "label" on a line of its own in out, or -1. */
static double old_value(const char *out, const char *label, const char *unit)
{
	const char *l = strstr(out, label);
	char u[16];
	double v;

	if (!l || (l != out && l[-1] != '\n' && l[-1] != ' '))
		return -1.0;
	if (sscanf(l + strlen(label), "%lf %15s", &v, u) != 2 ||
	    strcmp(u, unit))
		return -1.0;
	return v;
}

/*
 * The Chelsio T5 report's lines, "rdma_lat -c -I 64" and "rdma_lat -c -I
 * 64 ADDR": an RDMA write ping-pong over rdma_cm, reported in the old
 * tool's three lines and nothing else.
 */
Test(tools, old_ofed_rdma_lat_command_line)
{
	static const char *const sv[] = { "rdma_lat", "-c", "-I", "64", NULL };
	double typ, best, worst;
	struct proc c;

	old_pair(sv, sv, &c);
	cr_log_info("rdma_lat -c -I 64 %s:\n%s", devtest_env()->addr, c.out);
	typ = old_value(c.out, "Latency typical:", "usec");
	best = old_value(c.out, "Latency best   :", "usec");
	worst = old_value(c.out, "Latency worst  :", "usec");
	cr_expect(best > 0.0 && best <= typ && typ <= worst,
		  "best %g typical %g worst %g: %s", best, typ, worst, c.out);
	cr_expect_null(strstr(c.out, "#bytes"), "new header in old output: %s",
		       c.out);
	cr_expect_eq(c.err_len, 0, "client stderr: %s", c.err);
	proc_free(&c);
}

/* What the old form measures, seen through --json on the same words. */
Test(tools, old_ofed_c_is_rdma_cm_write_rc)
{
	static const char *const sv[] = { "rdma_lat", "-c", "-I", "64", NULL };
	static const char *const cl[] = { "rdma_lat", "-c", "-I", "64",
					  "--json", "-n", "100", NULL };
	struct proc c;
	struct json *j;

	old_pair(sv, cl, &c);
	j = json_parse(c.out);
	check_header(j, "rdma_lat", "RC", "write");
	cr_expect_str_eq(jstr(j, "cm"), "rdma_cm");
	cr_assert_not_null(jget(j, "max_inline"));
	cr_expect_geq(jget(j, "max_inline")->num, 64,
		      "-I 64 must give at least 64 bytes inline");
	check_lat_row(j, 0, 1, 100);
	free(j);
	proc_free(&c);
}

Test(tools, old_ofed_rdma_bw_command_line)
{
	static const char *const sv[] = { "rdma_bw", "-c", NULL };
	static const char *const cl[] = { "rdma_bw", "-c", "-n", "200", NULL };
	double peak, avg;
	struct proc c;

	old_pair(sv, cl, &c);
	cr_log_info("rdma_bw -c -n 200 %s:\n%s", devtest_env()->addr, c.out);
	cr_expect_not_null(strstr(c.out, "| size=65536 | tx_depth=100 | sl=0 | iters=200 | duplex=0 | cma=1 |"),
			   "parameter line: %s", c.out);
	peak = old_value(c.out, "Bandwidth peak:", "MB/sec");
	avg = old_value(c.out, "Bandwidth average:", "MB/sec");
	cr_expect(avg > 0.0 && avg <= peak, "peak %g average %g: %s", peak,
		  avg, c.out);
	cr_expect_null(strstr(c.out, "#bytes"), "new header in old output: %s",
		       c.out);
	proc_free(&c);

	/* The old -b: both ways at once, the sum reported. */
	old_pair(sv, (const char *const[]){ "rdma_bw", "-c", "-b", "-n", "200",
		 NULL }, &c);
	cr_log_info("rdma_bw -c -b -n 200 %s:\n%s", devtest_env()->addr, c.out);
	cr_expect_not_null(strstr(c.out, "| duplex=1 | cma=1 |"),
			   "parameter line: %s", c.out);
	cr_expect_gt(old_value(c.out, "Bandwidth average:", "MB/sec"), 0.0,
		     "%s", c.out);
	proc_free(&c);
}

Test(tools, bad_options_exit_2_with_one_line)
{
	expect_usage_error("rdma_lat", (const char *const[]){ "-s", "0", NULL },
			   "-s", 0);
	expect_usage_error("rdma_lat", (const char *const[]){ "--bogus", NULL },
			   "unknown option", 0);
	expect_usage_error("rdma_bw", (const char *const[]){ "-c", "UD", "-b",
			   NULL }, "-b", 0);
	expect_usage_error("rdma_lat", (const char *const[]){ "-M",
			   "239.255.1.1", NULL }, "-c UD", 0);
	expect_usage_error("rdma_bw", (const char *const[]){ "-c", "UD", "-M",
			   "198.18.0.1", NULL }, "not a multicast", 0);
	expect_usage_error("rdma_bw", (const char *const[]){ "-t", "4", "-Q",
			   "9", NULL }, "-Q", 0);
	expect_usage_error("rdma_lat", (const char *const[]){ "-d", "nosuchdev0",
			   NULL }, "nosuchdev0", 0);
	expect_usage_error("rdma_lat", (const char *const[]){ "-c", "UD", "-c",
			   NULL }, "does not combine", 0);
	expect_usage_error("rdma_bw", (const char *const[]){ "-c", "-a", NULL },
			   "one size", 0);
	expect_usage_error("rdma_lat", (const char *const[]){ "--pin", "autox",
			   NULL }, "--pin", 0);
	expect_usage_error("rdma_bw", (const char *const[]){ "--pin", "-1",
			   NULL }, "--pin", 0);
}

Test(tools, ud_message_above_mtu_is_refused)
{
	if (is_iwarp()) {
		expect_usage_error("rdma_lat", (const char *const[]){ "-c", "UD",
				   NULL }, "iWARP", 0);
		return;
	}
	expect_usage_error("rdma_lat", (const char *const[]){ "-c", "UD", "-s",
			   "8192", NULL }, "MTU", 0);
}

Test(tools, unreachable_server_exits_1)
{
	struct args ca;
	struct proc c;

	client_args(&ca, "rdma_lat", next_port(), (const char *const[]){
		    "-n", "10", NULL });
	proc_start(&c, ca.v);
	proc_wait(&c, 60);
	cr_expect_eq(c.status, 1, "exit %d, stderr %s", c.status, c.err);
	cr_expect_not_null(strstr(c.err, "cannot reach"), "stderr: %s", c.err);
	proc_free(&c);
}
