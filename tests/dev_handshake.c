/* SPDX-License-Identifier: MIT */
/*
 * The subscribe handshake when the first message we send is left unread.
 *
 * soft-iWARP's accept sends its MPA reply before it gives the TCP socket
 * to the QP, and a SEND from the peer that lands in between stays in the
 * socket until more data arrives (lib/subscriber.c). The subscriber's
 * first message is its SUBSCRIBE: the publisher never counts it, sends it
 * nothing, and the subscriber had nothing more to send. The test bed's
 * siw carries a parameter that makes every accept wait 30 ms there
 * (tests/vm/siw-accept-delay.patch), so on siw each connect below hits
 * the race; only the subscriber's nudges get its SUBSCRIBE read. On RoCE
 * there is no such race, and the same handshakes must simply work.
 *
 * The publisher runs in a child process: its rdma_accept() is what waits,
 * and in one process that wait would hold back the SUBSCRIBE as well.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define DELAY_PARAM "/sys/module/siw/parameters/siw_test_accept_delay_ms"
#define TOPIC "hs.quotes"

/* ------------------------------------------------ the delay in siw */

static void set_accept_delay(int ms)
{
	FILE *f = fopen(DELAY_PARAM, "w");

	cr_assert(f, "%s: %s (the test bed's siw.ko has it: "
		  "tests/vm/build-siw.sh)", DELAY_PARAM, strerror(errno));
	fprintf(f, "%d\n", ms);
	cr_assert_eq(fclose(f), 0, "%s: %s", DELAY_PARAM, strerror(errno));
}

static int is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

static void delay_on(void)
{
	if (is_iwarp())
		set_accept_delay(30);
}

static void delay_off(void)
{
	FILE *f = fopen(DELAY_PARAM, "w");

	if (f) {
		fputs("0\n", f);
		fclose(f);
	}
}

/* ------------------------------------------------ child: the publisher */

/*
 * Publish one message on TOPIC once nsubs subscribers are counted, say 'y'
 * and keep polling until the parent closes the pipe; say 'n' and exit 1
 * if they are not counted within 15 s.
 */
static void child_main(int nsubs, int in, int out)
{
	struct msga_ctx_attr ca = { .size = sizeof(ca) };
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = dp_uri(0) };
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	uint64_t end = dp_now_ms() + 15000;
	uint32_t topic;
	uint16_t port;
	char msg[64];

	ca.dev_name = getenv("MSGA_TEST_DEV");
	if (!ca.dev_name || msga_ctx_open(&ca, &ctx) ||
	    msga_pub_create(ctx, &pa, &pub) ||
	    msga_pub_topic(pub, TOPIC, &topic))
		_exit(10);
	port = (uint16_t)msga_pub_port(pub);
	if (write(out, &port, sizeof(port)) != sizeof(port))
		_exit(11);
	while (msga_pub_subscribers(pub) < nsubs) {
		if (dp_now_ms() > end) {
			fprintf(stderr, "child: %d of %d subscribers counted\n",
				msga_pub_subscribers(pub), nsubs);
			if (write(out, "n", 1) != 1)
				_exit(12);
			_exit(1);
		}
		msga_ctx_poll(ctx, 64);
	}
	dp_fill(msg, sizeof(msg), topic, 1);
	if (msga_pub_send(pub, topic, msg, sizeof(msg)) < 1)
		_exit(13);
	if (write(out, "y", 1) != 1)
		_exit(14);
	fcntl(in, F_SETFL, O_NONBLOCK);
	while (read(in, msg, 1) != 0)
		msga_ctx_poll(ctx, 64);
	msga_ctx_close(ctx);
	_exit(0);
}

struct child {
	pid_t pid;
	int to, from;
	uint16_t port;
};

/* Fork the publisher before this process opens a device. */
static void child_spawn(struct child *ch, int nsubs)
{
	int to[2], from[2];

	devtest_env();
	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	ch->pid = fork();
	cr_assert_geq(ch->pid, 0);
	if (ch->pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(nsubs, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch->to = to[1];
	ch->from = from[0];
	cr_assert_eq(read(ch->from, &ch->port, sizeof(ch->port)),
		     (ssize_t)sizeof(ch->port), "the publisher did not start");
}

/* 'y' when the publisher counted every subscriber, 'n', or 0 for not yet. */
static char child_says(struct child *ch)
{
	struct pollfd pfd = { .fd = ch->from, .events = POLLIN };
	char c = 0;

	if (poll(&pfd, 1, 0) > 0)
		cr_assert_eq(read(ch->from, &c, 1), 1, "the publisher died");
	return c;
}

static void child_end(struct child *ch)
{
	int st = 0;

	close(ch->to);
	cr_assert_eq(waitpid(ch->pid, &st, 0), ch->pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "publisher child status %d", st);
	close(ch->from);
}

/* ------------------------------------------------ tests */

TestSuite(handshake, .init = delay_on, .fini = delay_off);

/*
 * Busy-polling: a ring subscriber whose pattern matches the topic (the
 * publisher answers with its name) and a SEND/RECV one that matches
 * nothing (it answers with a CREDIT). Both must be counted, and the
 * first must get the message.
 */
Test(handshake, busy_poll_subscribers_get_counted, .timeout = 60)
{
	static struct dp_rec rec_a, rec_b;
	struct child ch;
	struct msga_ctx *ctx;
	struct msga_sub *a, *b;
	struct msga_sub_attr attr = { .size = sizeof(attr),
				      .pattern = "hs.none.*",
				      .flags = MSGA_SUB_NO_RING,
				      .on_msg = dp_on_msg,
				      .on_event = dp_on_event, .user = &rec_b };
	uint64_t end;
	char said = 0;

	child_spawn(&ch, 2);
	ctx = devtest_open_ctx();
	a = dp_sub(ctx, TOPIC, &rec_a);
	cr_assert_eq(msga_sub_create(ctx, &attr, &b), 0);
	cr_assert_geq(msga_sub_connect(a, dp_uri(ch.port), NULL), 0);
	cr_assert_geq(msga_sub_connect(b, dp_uri(ch.port), NULL), 0);
	end = dp_now_ms() + 20000;
	while (!said || rec_a.total < 1) {
		cr_assert_lt(dp_now_ms(), end,
			     "publisher said '%c', subscriber got %llu "
			     "(connected %d + %d)", said ? said : '-',
			     (unsigned long long)rec_a.total,
			     rec_a.connected, rec_b.connected);
		if (!said)
			said = child_says(&ch);
		cr_assert_neq(said, 'n', "the publisher never counted both "
			      "subscribers: a SUBSCRIBE was left unread");
		cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
	}
	cr_expect_eq(rec_a.bad, 0, "%s", rec_a.first_bad);
	cr_expect_eq(rec_b.total, 0);
	child_end(&ch);
	msga_ctx_close(ctx);
}

/*
 * Event mode: the program sleeps in poll(2) on msga_ctx_fd(), so nothing
 * would run a nudge unless the descriptor wakes it for one.
 */
Test(handshake, event_mode_subscriber_gets_counted, .timeout = 60)
{
	static struct dp_rec rec;
	struct child ch;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	uint64_t end;
	char said = 0;
	int fd;

	child_spawn(&ch, 1);
	ctx = devtest_open_ctx();
	fd = msga_ctx_fd(ctx);
	cr_assert_geq(fd, 0, "msga_ctx_fd = %d", fd);
	sub = dp_sub(ctx, TOPIC, &rec);
	cr_assert_geq(msga_sub_connect(sub, dp_uri(ch.port), NULL), 0);
	end = dp_now_ms() + 20000;
	while (!said || rec.total < 1) {
		struct pollfd pfd[2] = { { .fd = fd, .events = POLLIN },
					 { .fd = ch.from, .events = POLLIN } };
		int n;

		cr_assert_lt(dp_now_ms(), end,
			     "publisher said '%c', subscriber got %llu "
			     "(connected %d)", said ? said : '-',
			     (unsigned long long)rec.total, rec.connected);
		/* Sleep as long as it takes: only the descriptor (or the
		 * child's answer) may wake us. */
		n = poll(pfd, said ? 1 : 2, (int)(end - dp_now_ms()));
		cr_assert_geq(n, 0);
		if (!said)
			said = child_says(&ch);
		cr_assert_neq(said, 'n', "the publisher never counted the "
			      "subscriber: its SUBSCRIBE was left unread");
		while ((n = msga_ctx_poll(ctx, 64)) > 0)
			;
		cr_assert_geq(n, 0);
	}
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	child_end(&ch);
	msga_ctx_close(ctx);
}
