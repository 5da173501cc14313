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
 *       subscribe twice: to URI, and by name ("topic://", through the
 *       topic resolver: issue 37); once 50 messages came in order on
 *       each, create DIR/sub (the cue to kill the publisher's VM); then
 *       wait for the ends. Exit 0 if URI's connection ended with
 *       MSGA_EVENT_DISCONNECTED, -ETIMEDOUT, within three peer timeouts
 *       of its last message, and the by-name subscription had found the
 *       publisher (MSGA_EVENT_PUBLISHER_FOUND) and reported it gone
 *       (MSGA_EVENT_PUBLISHER_GONE) within the resolver's TTL plus 10 s
 *       of its last message; 1 otherwise, or after 120 s.
 *
 * TIMEOUT_MS is msga_ctx_attr.peer_timeout_ms on both sides. The
 * publisher's context advertises its topic on the resolver's default
 * group, which both VMs join on the link.
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

static struct msga_ctx *open_ctx(const char *dev, uint32_t timeout_ms,
				 uint32_t resolver_flags)
{
	struct msga_ctx *ctx = th_open_ctx_resolver(dev, timeout_ms,
						    resolver_flags);

	if (!ctx) {
		fprintf(stderr, "two_host_peer: %s\n", msga_open_error());
		exit(1);
	}
	return ctx;
}

static _Noreturn void publish(const char *dev, const char *uri,
			      uint32_t timeout_ms, const char *dir)
{
	struct msga_ctx *ctx = open_ctx(dev, timeout_ms,
					MSGA_RESOLVER_ADVERTISE);
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
	uint64_t got, next_seq, last_ms, end_ms;
	int bad, ended, status;
	/* the by-name subscription's: PUBLISHER_FOUND, _GONE (ms) */
	int found;
	uint64_t gone_ms;
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

	/* (the first end: reconnecting, more failures follow it) */
	if (!s->ended && (ev->type == MSGA_EVENT_DISCONNECTED ||
			  ev->type == MSGA_EVENT_CONNECT_FAILED)) {
		s->ended = ev->type;
		s->status = ev->status;
		s->end_ms = th_now_ms();
	}
}

/*
 * By name: the child connection's own ends (it reconnects until the
 * advert expires) are not the verdict; the publisher's coming and going
 * is.
 */
static void on_byname_event(const struct msga_event *ev, void *user)
{
	struct sub_state *s = user;

	if (ev->type == MSGA_EVENT_PUBLISHER_FOUND && !ev->status) {
		s->found++;
		printf("two_host_peer: by name: found %s (origin %016llx)\n",
		       ev->peer, (unsigned long long)ev->origin);
	} else if (ev->type == MSGA_EVENT_PUBLISHER_GONE && !s->gone_ms) {
		s->gone_ms = th_now_ms();
	}
	fflush(stdout);
}

/*
 * On iWARP, no reconnecting: siw makes rdma_connect() a blocking TCP
 * connect in the kernel, so a reconnect to the dead host would hold this
 * process's poll loop until TCP gives up (tcp_syn_retries: about 127 s),
 * past the wait for PUBLISHER_GONE (msga_sub_connect(3), RECONNECT; an
 * iWARP RNIC connects in its firmware). RoCE's connect is a CM exchange
 * that never blocks: there the subscribers reconnect, as by default.
 */
static struct msga_sub *sub_create(struct msga_ctx *ctx, msga_event_cb cb,
				   struct sub_state *s)
{
	struct msga_dev_info info = { .size = sizeof(info) };
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "hb",
				    .on_msg = on_msg, .on_event = cb,
				    .user = s };

	if (msga_ctx_query(ctx, &info) == 0 &&
	    info.transport == MSGA_TRANSPORT_IWARP)
		sa.flags = MSGA_SUB_NO_RECONNECT;
	struct msga_sub *sub;
	int ret = msga_sub_create(ctx, &sa, &sub);

	if (ret)
		die("msga_sub_create", ret);
	return sub;
}

static int subscribe(const char *dev, const char *uri, uint32_t timeout_ms,
		     const char *dir)
{
	static struct sub_state s, n; /* by address, by name */
	struct msga_ctx *ctx = open_ctx(dev, timeout_ms, 0);
	struct msga_sub *sub = sub_create(ctx, on_event, &s);
	struct msga_sub *byname = sub_create(ctx, on_byname_event, &n);
	uint64_t end = th_now_ms() + 120000, silent, gone_after = 0;
	int marked = 0, ret = msga_sub_connect(sub, uri, NULL);

	if (ret < 0)
		die("msga_sub_connect", ret);
	ret = msga_sub_connect(byname, "topic://", NULL);
	if (ret < 0)
		die("msga_sub_connect topic://", ret);
	while (!(s.ended && n.gone_ms) && th_now_ms() < end) {
		msga_ctx_poll(ctx, 64);
		if (!marked && s.got >= 50 && n.got >= 50) {
			mark(dir, "sub");
			marked = 1;
			printf("two_host_peer: %llu messages in, %llu by name, "
			       "waiting\n", (unsigned long long)s.got,
			       (unsigned long long)n.got);
			fflush(stdout);
		}
	}
	silent = s.last_ms ? (s.ended ? s.end_ms : th_now_ms()) - s.last_ms :
			     0;
	printf("two_host_peer: %s (%d: %s) %llu ms after the last of %llu "
	       "messages, %d out of order\n",
	       s.ended == MSGA_EVENT_DISCONNECTED ? "DISCONNECTED" :
	       s.ended ? "CONNECT_FAILED" : "no event in 120 s",
	       s.status, msga_strerror(s.status), (unsigned long long)silent,
	       (unsigned long long)s.got, s.bad);
	if (n.gone_ms && n.last_ms)
		gone_after = n.gone_ms - n.last_ms;
	printf("two_host_peer: by name: %d found, %s %llu ms after the last "
	       "of %llu messages, %d out of order\n", n.found,
	       n.gone_ms ? "PUBLISHER_GONE" : "no PUBLISHER_GONE",
	       (unsigned long long)gone_after, (unsigned long long)n.got,
	       n.bad);
	fflush(stdout);
	msga_ctx_close(ctx);
	return !(marked && s.ended == MSGA_EVENT_DISCONNECTED &&
		 s.status == -ETIMEDOUT && !s.bad &&
		 silent <= 3u * timeout_ms &&
		 n.found >= 1 && n.gone_ms && !n.bad &&
		 gone_after <= MSGA_RESOLVER_TTL_MS + 10000u);
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
