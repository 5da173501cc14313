/* SPDX-License-Identifier: MIT */
/*
 * two_host_peer - one side of the host-failure test (tests/vm/two-host.sh),
 * which runs it in two VMs joined by a network link and then kills the
 * publisher's whole VM: no process exit, no disconnect, no TCP reset,
 * nothing more on the wire. The subscriber must report it, not hang.
 *
 *   two_host_peer pub DEV URI TIMEOUT_MS DIR
 *       publish a message every 10 ms on topic "hb" until killed; DIR/pub
 *       is created once it listens.
 *   two_host_peer sub DEV URI TIMEOUT_MS DIR
 *       subscribe; once 50 messages came in order, create DIR/sub (the
 *       cue to kill the publisher's VM); then wait for the connection's
 *       end. Exit 0 if it was MSGA_EVENT_DISCONNECTED with -ETIMEDOUT
 *       within three peer timeouts of the last message; 1 otherwise, or
 *       after 120 s with no event.
 *
 * TIMEOUT_MS is msga_ctx_attr.peer_timeout_ms on both sides.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgaccel.h"
#include "two_host_util.h"

static _Noreturn void die(const char *what, int err)
{
	fprintf(stderr, "two_host_peer: %s: %s\n", what, msga_strerror(err));
	exit(1);
}

/* Create DIR/name: the other side of the test waits for it. */
static void mark(const char *dir, const char *name)
{
	int ret = th_mark(dir, name);

	if (ret) {
		fprintf(stderr, "two_host_peer: %s/%s: %s\n", dir, name,
			msga_strerror(ret));
		exit(1);
	}
}

static struct msga_ctx *open_ctx(const char *dev, uint32_t timeout_ms)
{
	struct msga_ctx *ctx = th_open_ctx(dev, timeout_ms);

	if (!ctx) {
		fprintf(stderr, "two_host_peer: %s\n", msga_open_error());
		exit(1);
	}
	return ctx;
}

static _Noreturn void publish(const char *dev, const char *uri,
			      uint32_t timeout_ms, const char *dir)
{
	struct msga_ctx *ctx = open_ctx(dev, timeout_ms);
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri };
	struct msga_pub *pub;
	uint64_t seq = 0, next = 0;
	uint32_t topic;
	int ret = msga_pub_create(ctx, &pa, &pub);

	if (ret)
		die(msga_ctx_last_error(ctx), ret);
	ret = msga_pub_topic(pub, "hb", &topic);
	if (ret)
		die("msga_pub_topic", ret);
	mark(dir, "pub");
	printf("two_host_peer: publishing at %s\n", uri);
	fflush(stdout);
	for (;;) {
		msga_ctx_poll(ctx, 64);
		if (th_now_ms() < next)
			continue;
		next = th_now_ms() + 10;
		ret = msga_pub_send(pub, topic, &seq, sizeof(seq));
		if (ret > 0)
			seq++;
		else if (ret < 0 && ret != -EAGAIN)
			die("msga_pub_send", ret);
	}
}

struct sub_state {
	uint64_t got, next_seq, last_ms;
	int bad, ended, status;
};

static void on_msg(const struct msga_msg *m, void *user)
{
	struct sub_state *s = user;
	uint64_t v;

	memcpy(&v, m->data, sizeof(v));
	if (s->got && v != s->next_seq)
		s->bad++;
	s->next_seq = v + 1;
	s->got++;
	s->last_ms = th_now_ms();
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct sub_state *s = user;

	if (ev->type == MSGA_EVENT_DISCONNECTED ||
	    ev->type == MSGA_EVENT_CONNECT_FAILED) {
		s->ended = ev->type;
		s->status = ev->status;
	}
}

static int subscribe(const char *dev, const char *uri, uint32_t timeout_ms,
		     const char *dir)
{
	static struct sub_state s;
	struct msga_ctx *ctx = open_ctx(dev, timeout_ms);
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "hb",
				    .on_msg = on_msg, .on_event = on_event,
				    .user = &s };
	struct msga_sub *sub;
	uint64_t end = th_now_ms() + 120000, silent;
	int marked = 0, ret = msga_sub_create(ctx, &sa, &sub);

	if (ret)
		die("msga_sub_create", ret);
	ret = msga_sub_connect(sub, uri, NULL);
	if (ret < 0)
		die("msga_sub_connect", ret);
	while (!s.ended && th_now_ms() < end) {
		msga_ctx_poll(ctx, 64);
		if (!marked && s.got >= 50) {
			mark(dir, "sub");
			marked = 1;
			printf("two_host_peer: %llu messages in, waiting\n",
			       (unsigned long long)s.got);
			fflush(stdout);
		}
	}
	silent = s.last_ms ? th_now_ms() - s.last_ms : 0;
	printf("two_host_peer: %s (%d: %s) %llu ms after the last of %llu "
	       "messages, %d out of order\n",
	       s.ended == MSGA_EVENT_DISCONNECTED ? "DISCONNECTED" :
	       s.ended ? "CONNECT_FAILED" : "no event in 120 s",
	       s.status, msga_strerror(s.status), (unsigned long long)silent,
	       (unsigned long long)s.got, s.bad);
	fflush(stdout);
	msga_ctx_close(ctx);
	return !(marked && s.ended == MSGA_EVENT_DISCONNECTED &&
		 s.status == -ETIMEDOUT && !s.bad &&
		 silent <= 3u * timeout_ms);
}

int main(int argc, char **argv)
{
	long timeout_ms;

	if (argc != 6 || (strcmp(argv[1], "pub") && strcmp(argv[1], "sub"))) {
		fprintf(stderr, "usage: two_host_peer pub|sub DEV URI "
			"TIMEOUT_MS DIR\n");
		return 2;
	}
	timeout_ms = strtol(argv[4], NULL, 10);
	if (timeout_ms < MSGA_PEER_TIMEOUT_MIN_MS ||
	    timeout_ms > MSGA_PEER_TIMEOUT_MAX_MS) {
		fprintf(stderr, "two_host_peer: TIMEOUT_MS out of range\n");
		return 2;
	}
	if (!strcmp(argv[1], "pub"))
		publish(argv[2], argv[3], (uint32_t)timeout_ms, argv[5]);
	return subscribe(argv[2], argv[3], (uint32_t)timeout_ms, argv[5]);
}
