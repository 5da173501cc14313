/* SPDX-License-Identifier: MIT */
/*
 * dev_goodbye.c - a clean end is not a crash (issue 36 item 5): over
 * rdma:// a subscriber that disconnects, is destroyed or whose context
 * closes says goodbye, and its publisher reports DISCONNECTED with status
 * 0; a publisher destroyed cleanly gives its subscribers status 0 too. A
 * subscriber that dies (a child process that _exit()s without cleaning
 * up) still gives -ECONNRESET, or -ETIMEDOUT when nothing tells its
 * publisher. Each clean case runs on both RC data paths.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

enum how { BY_DISCONNECT, BY_DESTROY, BY_CTX_CLOSE };

/* A subscriber (own context) ends by how; its publisher hears status 0. */
static void sub_leaves(uint32_t flags, enum how how)
{
	static struct dp_rec ev, rec;
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint32_t t;
	int id;

	memset(&ev, 0, sizeof(ev));
	memset(&rec, 0, sizeof(rec));
	pub = dp_pub(ctxs[0], 0, &ev);
	sub = dp_sub_flags(ctxs[1], "*", flags, &rec);
	cr_assert_eq(msga_pub_topic(pub, "g", &t), 0);
	id = dp_connect_id(sub, dp_uri((uint16_t)msga_pub_port(pub)));
	cr_assert_geq(id, 0);
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 1, 10000));
	dp_send(pub, t, 1, 100, ctxs, 2);
	dp_wait_total(ctxs, 2, &rec, sub, 1);
	if (how == BY_DISCONNECT) {
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)id), 0);
		msga_sub_destroy(sub);
	} else if (how == BY_DESTROY) {
		msga_sub_destroy(sub);
	} else {
		msga_ctx_close(ctxs[1]); /* (the subscriber with it) */
		ctxs[1] = NULL;
	}
	cr_assert(dp_poll_until(ctxs, 1, &ev.disconnected, 1, 10000),
		  "no DISCONNECTED at the publisher");
	cr_expect_eq(ev.last_status, 0, "a clean leave gave %d",
		     ev.last_status);
	cr_expect_eq(msga_pub_subscribers(pub), 0);
	msga_pub_destroy(pub);
	msga_ctx_close(ctxs[0]);
	if (ctxs[1])
		msga_ctx_close(ctxs[1]);
}

static void by_disconnect(uint32_t flags) { sub_leaves(flags, BY_DISCONNECT); }
static void by_destroy(uint32_t flags) { sub_leaves(flags, BY_DESTROY); }
static void by_ctx_close(uint32_t flags) { sub_leaves(flags, BY_CTX_CLOSE); }

DP_TEST_RC_PATHS(goodbye, sub_disconnect_ring, sub_disconnect_send_recv,
		 by_disconnect, 60)
DP_TEST_RC_PATHS(goodbye, sub_destroy_ring, sub_destroy_send_recv,
		 by_destroy, 60)
DP_TEST_RC_PATHS(goodbye, ctx_close_ring, ctx_close_send_recv,
		 by_ctx_close, 60)

/* A publisher destroyed cleanly: its subscriber hears status 0, after
 * every message it sent. */
static void pub_leaves(uint32_t flags)
{
	static struct dp_rec ev, rec;
	struct msga_ctx *ctxs[2] = { devtest_open_ctx(), devtest_open_ctx() };
	struct msga_pub *pub;
	struct msga_sub *sub;
	uint32_t t;

	memset(&ev, 0, sizeof(ev));
	memset(&rec, 0, sizeof(rec));
	rec.strict = 1;
	pub = dp_pub(ctxs[0], 0, &ev);
	sub = dp_sub_flags(ctxs[1], "*", flags, &rec);
	cr_assert_eq(msga_pub_topic(pub, "g", &t), 0);
	cr_assert_geq(msga_sub_connect(sub, dp_uri((uint16_t)
						   msga_pub_port(pub)), NULL),
		      0);
	cr_assert(dp_poll_until(ctxs, 2, &ev.connected, 1, 10000));
	for (uint64_t s = 1; s <= 20; s++)
		dp_send(pub, t, s, 64, ctxs, 2);
	dp_wait_total(ctxs, 2, &rec, sub, 20);
	msga_pub_destroy(pub);
	cr_assert(dp_poll_until(&ctxs[1], 1, &rec.disconnected, 1, 10000),
		  "no DISCONNECTED at the subscriber");
	cr_expect_eq(rec.last_status, 0, "a clean end gave %d",
		     rec.last_status);
	cr_expect_eq(rec.total, 20);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	msga_sub_destroy(sub);
	msga_ctx_close(ctxs[0]);
	msga_ctx_close(ctxs[1]);
}

DP_TEST_RC_PATHS(goodbye, pub_destroy_ring, pub_destroy_send_recv,
		 pub_leaves, 60)

/*
 * The child: reads the publisher's port, subscribes, says so, and dies
 * without a word (no disconnect, no destroy, no close).
 */
static void child_dies(int rfd, int wfd)
{
	static struct dp_rec rec;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	int port;
	char ok = 1;

	if (read(rfd, &port, sizeof(port)) != sizeof(port))
		_exit(2);
	ctx = devtest_open_ctx();
	sub = dp_sub(ctx, "*", &rec);
	if (msga_sub_connect(sub, dp_uri((uint16_t)port), NULL) < 0)
		_exit(3);
	for (int i = 0; i < 100000 && !rec.connected; i++)
		msga_ctx_poll(ctx, 64);
	if (!rec.connected || write(wfd, &ok, 1) != 1)
		_exit(4);
	_exit(0);
}

/* A subscriber that dies: -ECONNRESET (or -ETIMEDOUT, by silence). */
Test(goodbye, killed_subscriber_is_not_clean, .timeout = 60)
{
	static struct dp_rec ev;
	int to_child[2], from_child[2], port, status;
	struct msga_ctx *ctx;
	struct msga_pub *pub;
	struct pollfd pfd;
	char ok;
	pid_t pid;

	cr_assert_eq(pipe(to_child), 0);
	cr_assert_eq(pipe(from_child), 0);
	/* fork before this process opens any device */
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		child_dies(to_child[0], from_child[1]);
	}
	close(to_child[0]);
	close(from_child[1]);
	ctx = devtest_open_ctx_timeout(2000);
	pub = dp_pub(ctx, 0, &ev);
	port = msga_pub_port(pub);
	cr_assert_eq(write(to_child[1], &port, sizeof(port)), sizeof(port));
	cr_assert(dp_poll_until(&ctx, 1, &ev.connected, 1, 20000));
	pfd = (struct pollfd){ .fd = from_child[0], .events = POLLIN };
	cr_assert_eq(poll(&pfd, 1, 20000), 1, "the child never connected");
	cr_assert_eq(read(from_child[0], &ok, 1), 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "child status %d", status);
	cr_assert(dp_poll_until(&ctx, 1, &ev.disconnected, 1, 30000),
		  "no DISCONNECTED after the subscriber died");
	cr_expect(ev.last_status == -ECONNRESET ||
		  ev.last_status == -ETIMEDOUT,
		  "a death gave %d", ev.last_status);
	msga_pub_destroy(pub);
	msga_ctx_close(ctx);
	close(to_child[1]);
	close(from_child[0]);
}
