/* SPDX-License-Identifier: MIT */
/*
 * msga_ctx_fd() on the device under test, for a program that waits on
 * the descriptor before it polls at all: connections made in busy-poll
 * mode, then the descriptor, then poll(2) on it with no msga_ctx_poll()
 * in between. Data must wake it, and so must the context's own timer
 * (keepalives) when nothing arrives. The deadlines only catch a hang.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

static struct msga_ctx *ctxs[2]; /* [0] publisher's, [1] subscriber's */
static struct msga_pub *pub;
static struct msga_sub *sub;
static struct dp_rec rec, pub_rec;
static uint32_t topic;

/* A SEND/RECV subscriber connected in busy-poll mode, then the fd. */
static int setup(uint32_t sub_timeout_ms)
{
	int fd;

	ctxs[0] = devtest_open_ctx();
	ctxs[1] = devtest_open_ctx_timeout(sub_timeout_ms);
	pub = dp_pub(ctxs[0], 0, &pub_rec);
	cr_assert_eq(msga_pub_topic(pub, "t", &topic), 0);
	sub = dp_sub_flags(ctxs[1], "t", MSGA_SUB_NO_RING, &rec);
	dp_connect(sub, pub, ctxs, 2, 1);
	/* (settle: the subscriber learns the topic's name) */
	for (int i = 0; i < 1000; i++) {
		msga_ctx_poll(ctxs[0], 64);
		msga_ctx_poll(ctxs[1], 64);
	}
	fd = msga_ctx_fd(ctxs[1]);
	cr_assert_geq(fd, 0, "msga_ctx_fd = %d: %s", fd,
		      msga_ctx_last_error(ctxs[1]));
	return fd;
}

static void teardown(void)
{
	msga_sub_destroy(sub);
	msga_pub_destroy(pub);
	msga_ctx_close(ctxs[1]);
	msga_ctx_close(ctxs[0]);
}

static int wait_fd(int fd, uint64_t ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, (int)ms);
}

Test(event_fd, first_wait_wakes_for_data, .timeout = 120)
{
	/* Keepalives far beyond the wait: only the data can wake it. */
	int fd = setup(60000), n;
	char buf[64] = "x";

	cr_assert_eq(msga_pub_send(pub, topic, buf, sizeof(buf)), 1);
	for (int i = 0; i < 100; i++)
		msga_ctx_poll(ctxs[0], 64); /* (a batch goes out on a poll) */
	n = wait_fd(fd, devtest_scale_ms(5000));
	cr_assert_eq(n, 1, "poll(msga_ctx_fd) = %d: no wake-up for data", n);
	cr_assert(dp_poll_until64(&ctxs[1], 1, &rec.total, 1, 20000),
		  "the message never came");
	teardown();
}

Test(event_fd, first_wait_wakes_for_timers, .timeout = 120)
{
	/* Nothing arrives (the publisher is not polled): the keepalive
	 * timer, a fifth of the peer timeout, must wake it. */
	int fd = setup(1000), n;

	n = wait_fd(fd, devtest_scale_ms(20000));
	cr_assert_eq(n, 1, "poll(msga_ctx_fd) = %d: no wake-up for timers",
		     n);
	teardown();
}
