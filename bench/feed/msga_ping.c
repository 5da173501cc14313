/* SPDX-License-Identifier: MIT */
/*
 * msga_ping - open a device with libmsgaccel, print what it is, and ping
 * messages over an RC queue pair on it (client and server on the same
 * device, connected by rdma_cm), printing RTT/2 statistics. The README's
 * first "does my fabric work" command.
 *
 *   msga_ping [-n COUNT] [-s SIZE] ADDRESS
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "msgaccel.h"
#include "rc_pingpair.h"

static void usage_error(const char *why)
{
	fprintf(stderr, "msga_ping: %s\n", why);
	exit(2);
}

static long parse_count(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < lo || v > hi) {
		fprintf(stderr, "msga_ping: %s must be %ld..%ld, not '%s'\n", what,
			lo, hi, s);
		exit(2);
	}
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int print_device(const char *addr)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr), .local_addr = addr };
	struct msga_dev_info info = { .size = sizeof(info) };
	struct msga_ctx *ctx;
	int ret = msga_ctx_open(&attr, &ctx);

	if (ret) {
		fprintf(stderr, "msga_ping: %s\n", msga_open_error());
		return ret;
	}
	msga_ctx_query(ctx, &info);
	printf("device %s port %u: %s, mtu %u, max_inline %u, max_sge %u\n",
	       info.dev_name, info.port, msga_transport_name(info.transport),
	       info.active_mtu, info.max_inline, info.max_sge);
	msga_ctx_close(ctx);
	return 0;
}

int main(int argc, char **argv)
{
	long count = 2000, size = 64, warmup;
	struct rc_pingpair *pp;
	char err[256] = "";
	double *rtt2;
	char *msg, *reply;
	int opt, ret;

	while ((opt = getopt(argc, argv, "n:s:h")) != -1) {
		switch (opt) {
		case 'n':
			count = parse_count(optarg, 10, 10000000, "-n COUNT");
			break;
		case 's':
			size = parse_count(optarg, 1, 1 << 20, "-s SIZE");
			break;
		case 'h':
			printf("usage: msga_ping [-n COUNT] [-s SIZE] ADDRESS\n");
			return 0;
		default:
			usage_error("unknown option (see -h)");
		}
	}
	if (optind != argc - 1)
		usage_error("expected one ADDRESS, a local IP on an RDMA device");
	if (print_device(argv[optind]))
		return 1;
	ret = rc_pingpair_open(&pp, argv[optind], size, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "msga_ping: %s\n", err);
		return 1;
	}
	warmup = count / 10;
	rtt2 = calloc(count, sizeof(*rtt2));
	msg = calloc(1, size);
	reply = calloc(1, size);
	if (!rtt2 || !msg || !reply)
		return 1;
	for (long i = -warmup; i < count; i++) {
		double t0 = now_us();

		memcpy(msg, &i, size < (long)sizeof(i) ? size : (long)sizeof(i));
		ret = rc_pingpair_roundtrip(pp, msg, size, reply, 5000);
		if (ret || memcmp(msg, reply, size)) {
			fprintf(stderr, "msga_ping: round trip %ld failed: %s\n", i,
				ret ? strerror(-ret) : "echo differs");
			return 1;
		}
		if (i >= 0)
			rtt2[i] = (now_us() - t0) / 2;
	}
	qsort(rtt2, count, sizeof(*rtt2), cmp_double);
	printf("%ld x %ld B over RC on %s: RTT/2 min %.2f us, median %.2f us, "
	       "p99 %.2f us, max %.2f us\n", count, size, rc_pingpair_device(pp),
	       rtt2[0], rtt2[count / 2], rtt2[count * 99 / 100], rtt2[count - 1]);
	rc_pingpair_close(pp);
	free(rtt2);
	free(msg);
	free(reply);
	return 0;
}
