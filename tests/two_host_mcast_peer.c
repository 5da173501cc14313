/* SPDX-License-Identifier: MIT */
/*
 * two_host_mcast_peer - one side of the two-VM multicast test
 * (tests/vm/two-host-mcast.sh): a MSGA_PUB_RELIABLE publisher in VM A,
 * subscribers in VM B, real loss on the link between them (netem on A's
 * NIC), and then A's whole VM killed mid-stream.
 *
 *   two_host_mcast_peer pub [OPTIONS]
 *       Wait for --go FILE, then publish --count messages, round robin
 *       over --topics topics "mc.0", "mc.1", ..., at --rate messages a
 *       second. Phase 1 (messages 1 .. --phase2-at - 1) runs with netem
 *       on --netem NIC dropping --loss-pct percent at random; the
 *       publisher checks that netem dropped some. Phase 2 sets it to 0%,
 *       then every --burst-every messages sends a window of --burst
 *       messages with netem at 100%: it polls for --drain-ms first (what
 *       went before leaves), then sends the window's datagrams and
 *       nothing else (no polling, so no resend or heartbeat) and waits
 *       until netem's drop counter has grown by --burst (at most 10 s),
 *       before switching back: a burst of --burst datagrams lost, every
 *       one of them. Each message sent in a window is flagged in its
 *       payload. Then it goes on at --tail-rate until killed. DIR/pub
 *       marks that it has joined, DIR/tail that the counted messages are
 *       out.
 *   two_host_mcast_peer sub [OPTIONS]
 *       --procs subscriber processes (each its own context on --dev),
 *       each of which marks DIR/subI.ready once joined, checks every
 *       message (per topic: each number the next, from 1, exactly once,
 *       carrying the right payload; no MSGA_EVENT_LOSS or GAP, no end of
 *       membership or stream), marks DIR/subI.done once it has all
 *       --count, with at least as many recovered as it got messages
 *       flagged as sent in a drop window, more than that (the random
 *       loss), and nothing given up; then waits for each stream's
 *       MSGA_EVENT_DISCONNECTED: -ETIMEDOUT after --timeout-ms of
 *       silence (less 100 ms, plus at most --slack-ms), the event's last
 *       known number being the last one delivered (a gap-free prefix).
 *       Each prints its counts; a failure is one line, "sub I: FAIL:
 *       why", and stops the other subscribers. Exit 0 only if all
 *       passed.
 *
 * Options (both roles unless said): --dev DEV, --uri URI (mcast://GROUP),
 * --timeout-ms MS (msga_ctx_attr.peer_timeout_ms), --dir DIR, --topics K,
 * --count N (divisible by K); pub: --go FILE, --netem NIC, --rate,
 * --tail-rate, --loss-pct, --phase2-at (default: half way), --burst,
 * --burst-every, --drain-ms, --retransmit-bytes; sub: --procs,
 * --recovery-ms, --slack-ms, --deadline-s (bounds each subscriber's
 * run), --no-recovery (MSGA_SUB_NO_RECOVERY: the test must then fail),
 * --repair-by-nak (MSGA_SUB_REPAIR_BY_NAK for all; without it, the
 * last of several subscribers repairs by NAK and the others by RDMA READ
 * first, so that both paths cross the link).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "msgaccel.h"
#include "two_host_util.h"

#define TOPICS_MAX 16
#define PAYLOAD 64 /* bytes a message: a market-data-sized record */
#define IN_WINDOW 1u /* payload flag: sent while the link dropped all */

struct opts {
	const char *role, *dev, *uri, *dir, *go, *netem;
	uint32_t timeout_ms, topics, procs, recovery_ms, burst, drain_ms;
	uint32_t loss_pct;
	uint64_t count, phase2_at, burst_every, retransmit_bytes;
	uint64_t slack_ms, deadline_s;
	double rate, tail_rate;
	int no_recovery, repair_by_nak;
};

/* What each message carries: its number over all topics, and flags. */
struct payload {
	uint64_t n;
	uint32_t flags;
	uint32_t phase;
	uint8_t pad[PAYLOAD - 16];
};

static char who[32] = "two_host_mcast_peer";

static void nap_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000,
			       .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/*
 * The one line a failure is reported with, then exit 1. One write: the
 * subscriber processes share the console.
 */
static _Noreturn __attribute__((format(printf, 1, 2))) void fail(
	const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	fflush(stdout);
	n = snprintf(line, sizeof(line), "%s: FAIL: ", who);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	fputs(line, stderr);
	exit(1);
}

/* Create DIR/name: the host script waits for it. */
static void mark(const char *dir, const char *name)
{
	int ret = th_mark(dir, name);

	if (ret)
		fail("cannot create %s/%s: %s", dir, name, strerror(-ret));
}

static struct msga_ctx *open_ctx(const struct opts *o)
{
	struct msga_ctx *ctx = th_open_ctx(o->dev, o->timeout_ms);

	if (!ctx)
		fail("%s", msga_open_error());
	return ctx;
}

/* ------------------------------------------------------------ publisher */

/*
 * Set netem on NIC's egress (root qdisc) to drop `pct` percent of the
 * packets, at random: what `tc qdisc replace|change dev NIC root netem
 * loss PCT%` does, over rtnetlink. The drop windows switch it twice
 * each, and under TCG a fork and exec of tc took seconds: long enough
 * for the stream to be silent past the peer timeout. The kernel has
 * applied the change when it acknowledges it.
 */
static void set_netem(const char *nic, uint32_t pct, int create)
{
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
		char attrs[64];
	} req = { 0 };
	struct {
		struct nlmsghdr n;
		struct nlmsgerr e;
		char more[256];
	} ack;
	struct tc_netem_qopt q = { .limit = 1000, /* tc's default */
				   .loss = pct >= 100 ? UINT32_MAX :
					   (uint32_t)((double)UINT32_MAX *
						      pct / 100) };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct rtattr *a;
	ssize_t n;
	int fd;

	req.n.nlmsg_type = RTM_NEWQDISC;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
			    (create ? NLM_F_CREATE | NLM_F_REPLACE : 0);
	req.n.nlmsg_len = NLMSG_LENGTH(sizeof(req.t));
	req.t.tcm_family = AF_UNSPEC;
	req.t.tcm_ifindex = (int)if_nametoindex(nic);
	req.t.tcm_parent = TC_H_ROOT;
	if (!req.t.tcm_ifindex)
		fail("netem: no NIC %s", nic);
	a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
	a->rta_type = TCA_KIND;
	a->rta_len = RTA_LENGTH(sizeof("netem"));
	memcpy(RTA_DATA(a), "netem", sizeof("netem"));
	req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(a->rta_len);
	a = (struct rtattr *)((char *)&req + req.n.nlmsg_len);
	a->rta_type = TCA_OPTIONS;
	a->rta_len = RTA_LENGTH(sizeof(q));
	memcpy(RTA_DATA(a), &q, sizeof(q));
	req.n.nlmsg_len += RTA_ALIGN(a->rta_len);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || sendto(fd, &req, req.n.nlmsg_len, 0,
			     (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		fail("netem on %s: %s", nic, strerror(errno));
	n = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(ack.e)) ||
	    ack.n.nlmsg_type != NLMSG_ERROR)
		fail("netem on %s: no acknowledgement", nic);
	if (ack.e.error)
		fail("netem on %s, loss %u%%: %s (sch_netem loaded?)", nic,
		     pct, strerror(-ack.e.error));
}

/*
 * The packets netem on NIC's root has dropped so far (its qdisc's drops:
 * what `tc -s qdisc show dev NIC` says), over rtnetlink.
 */
static uint64_t netem_drops(const char *nic)
{
	struct {
		struct nlmsghdr n;
		struct tcmsg t;
	} req = { .n = { .nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg)),
			 .nlmsg_type = RTM_GETQDISC,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		  .t = { .tcm_family = AF_UNSPEC } };
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	static char buf[32768] __attribute__((aligned(4)));
	int ifindex = (int)if_nametoindex(nic), fd, found = 0;
	uint32_t drops = 0;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0 || sendto(fd, &req, req.n.nlmsg_len, 0,
			     (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		fail("qdisc stats of %s: %s", nic, strerror(errno));
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (len < 0)
			fail("qdisc stats of %s: %s", nic, strerror(errno));
		for (; NLMSG_OK(n, (size_t)len); n = NLMSG_NEXT(n, len)) {
			struct tcmsg *t = NLMSG_DATA(n);
			struct rtattr *a = (struct rtattr *)((char *)t +
				NLMSG_ALIGN(sizeof(*t)));
			int alen = (int)(n->nlmsg_len -
					 NLMSG_LENGTH(sizeof(*t)));

			if (n->nlmsg_type == NLMSG_DONE) {
				close(fd);
				if (!found)
					fail("no root qdisc stats on %s", nic);
				return drops;
			}
			if (n->nlmsg_type == NLMSG_ERROR)
				fail("qdisc stats of %s: refused", nic);
			if (t->tcm_ifindex != ifindex ||
			    t->tcm_parent != TC_H_ROOT)
				continue;
			for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
				if (a->rta_type != TCA_STATS ||
				    RTA_PAYLOAD(a) < offsetof(struct tc_stats,
							      drops) + 4)
					continue;
				memcpy(&drops, (char *)RTA_DATA(a) +
				       offsetof(struct tc_stats, drops), 4);
				found = 1;
			}
		}
	}
}

struct pacer {
	uint64_t start_ms, base; /* messages already out at start_ms */
	double rate;
};

static void pace_from(struct pacer *p, uint64_t sent, double rate)
{
	p->start_ms = th_now_ms();
	p->base = sent;
	p->rate = rate;
}

/* May message number sent + 1 go now? Naps and polls until it may. */
static void pace_wait(struct pacer *p, uint64_t sent, struct msga_ctx *ctx)
{
	for (;;) {
		uint64_t due = p->base +
			       (uint64_t)((double)(th_now_ms() - p->start_ms) *
					  p->rate / 1000.0);

		msga_ctx_poll(ctx, 64);
		if (sent < due)
			return;
		nap_us(200);
	}
}

/* Poll (NAKs get answered) while the device sends what it was given. */
static void drain(struct msga_ctx *ctx, uint32_t ms)
{
	for (uint64_t end = th_now_ms() + ms; th_now_ms() < end;) {
		if (msga_ctx_poll(ctx, 64) <= 0)
			nap_us(200);
	}
}

static void send_one(struct msga_pub *pub, struct msga_ctx *ctx,
		     const uint32_t *topic, const struct opts *o, uint64_t n,
		     uint32_t flags, uint32_t phase)
{
	struct payload p = { .n = n, .flags = flags, .phase = phase };
	uint64_t end = th_now_ms() + 10000;
	int ret;

	/* UD has no flow control: only a full send queue says -EAGAIN */
	while ((ret = msga_pub_send(pub, topic[(n - 1) % o->topics], &p,
				    sizeof(p))) == -EAGAIN) {
		if (th_now_ms() > end)
			fail("message %" PRIu64 ": send queue full for 10 s",
			     n);
		msga_ctx_poll(ctx, 64);
	}
	if (ret < 0)
		fail("msga_pub_send of message %" PRIu64 ": %s", n,
		     msga_strerror(ret));
}

static _Noreturn void publish(const struct opts *o)
{
	struct msga_ctx *ctx = open_ctx(o);
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = o->uri,
				    /* each send on the wire at once: a drop
				     * window sends without polling, and the
				     * default coalescing (0.10) would hold
				     * sends back until the next poll */
				    .flags = MSGA_PUB_RELIABLE |
					     MSGA_PUB_NO_COALESCE,
				    .retransmit_bytes = o->retransmit_bytes };
	uint32_t topic[TOPICS_MAX];
	struct msga_pub *pub;
	struct pacer pc;
	uint64_t n, windows = 0, in_window = 0, end, drops, most = 0;
	struct stat sb;
	int ret = msga_pub_create(ctx, &pa, &pub);

	if (ret)
		fail("msga_pub_create: %s", msga_ctx_last_error(ctx));
	for (uint32_t i = 0; i < o->topics; i++) {
		char name[16];

		snprintf(name, sizeof(name), "mc.%u", i);
		ret = msga_pub_topic(pub, name, &topic[i]);
		if (ret)
			fail("msga_pub_topic %s: %s", name, msga_strerror(ret));
	}
	mark(o->dir, "pub");
	printf("%s: joined %s; waiting for %s\n", who, o->uri, o->go);
	fflush(stdout);
	/* the subscribers join in the other VM (the host script says when) */
	for (end = th_now_ms() + 900000; stat(o->go, &sb);) {
		if (th_now_ms() > end)
			fail("no %s after 900 s: the subscribers never joined",
			     o->go);
		drain(ctx, 100);
	}
	set_netem(o->netem, o->loss_pct, 1);
	drops = netem_drops(o->netem);
	printf("%s: phase 1: messages 1..%" PRIu64 ", %u%% random loss, "
	       "%.0f/s\n", who, o->phase2_at - 1, o->loss_pct, o->rate);
	fflush(stdout);
	pace_from(&pc, 0, o->rate);
	for (n = 1; n <= o->count; n++) {
		int window_start = n >= o->phase2_at &&
				   (n - o->phase2_at) % o->burst_every ==
					   o->burst_every / 2 &&
				   n + o->burst - 1 <= o->count;

		if (n == o->phase2_at) {
			drain(ctx, o->drain_ms);
			set_netem(o->netem, 0, 0);
			drops = netem_drops(o->netem) - drops;
			printf("%s: phase 1: netem dropped %" PRIu64
			       " datagrams\n", who, drops);
			if (!drops && o->loss_pct)
				fail("netem dropped nothing in phase 1");
			printf("%s: phase 2: messages %" PRIu64 "..%" PRIu64
			       ", a burst of %u lost every %" PRIu64 "\n", who,
			       n, o->count, o->burst, o->burst_every);
			fflush(stdout);
			pace_from(&pc, n - 1, o->rate); /* no catching up */
		}
		if (window_start) {
			/* what went before has left (a later one would only
			 * lengthen the burst); then the window's datagrams,
			 * and nothing else (no polling: no resend, no
			 * heartbeat), until netem has dropped each one */
			drain(ctx, o->drain_ms);
			set_netem(o->netem, 100, 0);
			drops = netem_drops(o->netem);
			for (uint64_t i = 0; i < o->burst; i++, n++)
				send_one(pub, ctx, topic, o, n, IN_WINDOW, 2);
			for (end = th_now_ms() + 10000;
			     netem_drops(o->netem) - drops < o->burst;
			     nap_us(1000))
				if (th_now_ms() > end)
					fail("drop window %" PRIu64 ": netem "
					     "dropped %" PRIu64 " of its %u "
					     "datagrams in 10 s", windows + 1,
					     netem_drops(o->netem) - drops,
					     o->burst);
			drops = netem_drops(o->netem) - drops;
			most = drops > most ? drops : most;
			set_netem(o->netem, 0, 0);
			windows++;
			in_window += o->burst;
			pace_from(&pc, n - 1, o->rate);
			n--;
			continue;
		}
		pace_wait(&pc, n - 1, ctx);
		send_one(pub, ctx, topic, o, n, 0, n < o->phase2_at ? 1 : 2);
	}
	printf("%s: %" PRIu64 " messages out, %" PRIu64 " in %" PRIu64
	       " drop windows, netem dropping %u to %" PRIu64 " datagrams "
	       "in each; now %.0f/s until killed\n", who, o->count,
	       in_window, windows, o->burst, most, o->tail_rate);
	fflush(stdout);
	mark(o->dir, "tail");
	pace_from(&pc, o->count, o->tail_rate);
	for (;; n++) {
		pace_wait(&pc, n - 1, ctx);
		send_one(pub, ctx, topic, o, n, 0, 3);
	}
}

/* ----------------------------------------------------------- subscriber */

struct stream {
	uint64_t next;          /* the number expected next, from 1 */
	uint64_t last_ms;       /* when the last one was delivered */
	int gone, status;
	uint64_t gone_seq, gone_after_ms;
};

struct sub_state {
	const struct opts *o;
	struct msga_sub *sub;
	struct stream s[TOPICS_MAX];
	uint64_t got, in_window, gone;
	int joined, done;
};

static struct stream *stream_of(struct sub_state *st, const char *topic)
{
	char *end;
	unsigned long i;

	if (!topic || strncmp(topic, "mc.", 3))
		fail("message or event on topic %s", topic ? topic : "(none)");
	i = strtoul(topic + 3, &end, 10);
	if (*end || i >= st->o->topics)
		fail("message or event on unknown topic %s", topic);
	return &st->s[i];
}

static void on_msg(const struct msga_msg *m, void *user)
{
	struct sub_state *st = user;
	struct stream *s = stream_of(st, m->topic);
	uint64_t idx = (uint64_t)(s - st->s);
	struct payload p;

	if (s->gone)
		fail("%s: message %" PRIu64 " after its stream was reported "
		     "gone", m->topic, m->seq);
	if (m->len != sizeof(p))
		fail("%s #%" PRIu64 ": %zu bytes, not %zu", m->topic, m->seq,
		     m->len, sizeof(p));
	memcpy(&p, m->data, sizeof(p));
	if (m->seq < s->next)
		fail("%s: #%" PRIu64 " delivered again (expected #%" PRIu64
		     "): a duplicate", m->topic, m->seq, s->next);
	if (m->seq > s->next)
		fail("%s: #%" PRIu64 " delivered, expected #%" PRIu64
		     ": %" PRIu64 " lost or out of order", m->topic, m->seq,
		     s->next, m->seq - s->next);
	if (p.n != (m->seq - 1) * st->o->topics + idx + 1)
		fail("%s #%" PRIu64 " carries message %" PRIu64 ", expected "
		     "%" PRIu64, m->topic, m->seq, p.n,
		     (m->seq - 1) * st->o->topics + idx + 1);
	if (p.flags & IN_WINDOW)
		st->in_window++;
	s->next++;
	s->last_ms = th_now_ms();
	st->got++;
}

static void on_event(const struct msga_event *ev, void *user)
{
	struct sub_state *st = user;
	struct stream *s;

	switch (ev->type) {
	case MSGA_EVENT_CONNECTED:
		st->joined = 1;
		return;
	case MSGA_EVENT_LOSS:
	case MSGA_EVENT_GAP:
		fail("%s on %s: #%" PRIu64 "..#%" PRIu64 " lost, after %" PRIu64
		     " messages", ev->type == MSGA_EVENT_LOSS ?
		     "MSGA_EVENT_LOSS" : "MSGA_EVENT_GAP", ev->topic, ev->seq,
		     ev->seq + ev->count - 1, st->got);
	case MSGA_EVENT_DISCONNECTED:
		if (!ev->topic)
			fail("the membership ended (%s) after %" PRIu64
			     " messages", msga_strerror(ev->status), st->got);
		s = stream_of(st, ev->topic);
		if (!st->done)
			fail("%s reported gone (%s) after %" PRIu64 " of %" PRIu64
			     " messages, before the publisher's VM was killed",
			     ev->topic, msga_strerror(ev->status), st->got,
			     st->o->count);
		if (s->gone)
			fail("%s reported gone twice", ev->topic);
		s->gone = 1;
		s->status = ev->status;
		s->gone_seq = ev->seq;
		s->gone_after_ms = th_now_ms() - s->last_ms;
		st->gone++;
		return;
	default:
		/* DUPLICATE, REORDER: not raised with recovery; what the
		 * application is handed is checked in on_msg */
		return;
	}
}

/* Has every stream delivered its share of --count (each from 1)? */
static int all_in(const struct sub_state *st)
{
	for (uint32_t t = 0; t < st->o->topics; t++)
		if (st->s[t].next <= st->o->count / st->o->topics)
			return 0;
	return 1;
}

static void sub_stats(const struct sub_state *st, struct msga_sub_stats *ss)
{
	ss->size = sizeof(*ss);
	if (msga_sub_stats(st->sub, ss))
		fail("msga_sub_stats failed");
}

/* One subscriber process, number i; exits. */
static _Noreturn void subscriber(const struct opts *o, int i)
{
	static struct sub_state st;
	struct msga_ctx *ctx;
	struct msga_sub_attr sa = { .size = sizeof(sa), .pattern = "mc.*",
				    .on_msg = on_msg, .on_event = on_event,
				    .user = &st,
				    .recovery_ms = o->recovery_ms };
	struct msga_sub_stats ss;
	uint64_t end = th_now_ms() + o->deadline_s * 1000;
	char name[32];
	int ret, by_nak = o->repair_by_nak || (o->procs > 1 && (uint32_t)i == o->procs);

	snprintf(who, sizeof(who), "sub %d", i);
	st.o = o;
	for (uint32_t t = 0; t < o->topics; t++)
		st.s[t].next = 1;
	if (o->no_recovery)
		sa.flags |= MSGA_SUB_NO_RECOVERY;
	if (by_nak)
		sa.flags |= MSGA_SUB_REPAIR_BY_NAK;
	ctx = open_ctx(o);
	ret = msga_sub_create(ctx, &sa, &st.sub);
	if (ret)
		fail("msga_sub_create%s: %s", by_nak ?
		     " with MSGA_SUB_REPAIR_BY_NAK" : "", msga_strerror(ret));
	ret = msga_sub_connect(st.sub, o->uri, NULL);
	if (ret < 0)
		fail("msga_sub_connect %s: %s", o->uri, msga_strerror(ret));
	for (uint64_t j = th_now_ms() + 60000; !st.joined; nap_us(1000)) {
		if (th_now_ms() > j)
			fail("not joined to %s after 60 s", o->uri);
		msga_ctx_poll(ctx, 64);
	}
	snprintf(name, sizeof(name), "sub%d.ready", i);
	mark(o->dir, name);
	/*
	 * Poll, napping when idle: three subscribers share two vCPUs, and
	 * a spinning one would starve the others' receive queues.
	 */
	while (!all_in(&st)) {
		if (th_now_ms() > end)
			fail("%" PRIu64 " of %" PRIu64 " messages after %" PRIu64
			     " s", st.got, o->count, o->deadline_s);
		if (msga_ctx_poll(ctx, 256) <= 0)
			nap_us(100);
	}
	sub_stats(&st, &ss);
	printf("%s: all %" PRIu64 " messages (%" PRIu64 " by now), each once "
	       "and in order; recovered %" PRIu64 " (%" PRIu64 " sent in drop "
	       "windows), naks %" PRIu64 ", reads %" PRIu64 " (%" PRIu64
	       " fell back to NAK), lost 0\n", who, o->count, st.got,
	       ss.recovered, st.in_window, ss.naks, ss.reads,
	       ss.read_fallbacks);
	fflush(stdout);
	/* the repairs are counted as they arrive: a message of a window
	 * can only have come as one */
	if (ss.recovered < st.in_window)
		fail("recovered %" PRIu64 ", but %" PRIu64 " messages were sent "
		     "in drop windows", ss.recovered, st.in_window);
	if (ss.recovered == st.in_window)
		fail("nothing recovered but the bursts: no random loss");
	if (ss.unrecoverable)
		fail("unrecoverable %" PRIu64, ss.unrecoverable);
	/* each asked by the path it was given */
	if (by_nak && (!ss.naks || ss.reads))
		fail("repair by NAK: naks %" PRIu64 ", reads %" PRIu64,
		     ss.naks, ss.reads);
	if (!by_nak && !ss.reads)
		fail("no repair by READ (naks %" PRIu64 ", %" PRIu64
		     " READ fallbacks)", ss.naks, ss.read_fallbacks);
	st.done = 1;
	snprintf(name, sizeof(name), "sub%d.done", i);
	mark(o->dir, name);
	/* the publisher goes on until its VM is killed */
	while (st.gone < o->topics) {
		if (th_now_ms() > end)
			fail("%" PRIu64 " of %u streams reported gone after "
			     "%" PRIu64 " s (%" PRIu64 " messages)", st.gone,
			     o->topics, o->deadline_s, st.got);
		if (msga_ctx_poll(ctx, 256) <= 0)
			nap_us(100);
	}
	printf("%s: %" PRIu64 " messages in all; streams gone:", who, st.got);
	for (uint32_t t = 0; t < o->topics; t++)
		printf(" mc.%u %s after %" PRIu64 " ms silent (#%" PRIu64
		       " last known, #%" PRIu64 " last delivered)%s", t,
		       msga_strerror(st.s[t].status), st.s[t].gone_after_ms,
		       st.s[t].gone_seq, st.s[t].next - 1,
		       t + 1 < o->topics ? ";" : "\n");
	fflush(stdout);
	for (uint32_t t = 0; t < o->topics; t++) {
		struct stream *s = &st.s[t];

		if (s->status != -ETIMEDOUT)
			fail("mc.%u ended with %s, not -ETIMEDOUT", t,
			     msga_strerror(s->status));
		/* the library's limit is the peer timeout (heartbeats of a
		 * busy stream come every heartbeat_ms, well inside it) */
		if (s->gone_after_ms + 100 < o->timeout_ms ||
		    s->gone_after_ms > o->timeout_ms + o->slack_ms)
			fail("mc.%u reported gone %" PRIu64 " ms after its last "
			     "message: outside %u..%" PRIu64 " ms", t,
			     s->gone_after_ms, o->timeout_ms - 100,
			     o->timeout_ms + o->slack_ms);
		if (s->gone_seq != s->next - 1)
			fail("mc.%u: #%" PRIu64 " was known sent, #%" PRIu64
			     " delivered: not a gap-free prefix", t,
			     s->gone_seq, s->next - 1);
	}
	msga_ctx_close(ctx);
	printf("%s: PASS\n", who);
	fflush(stdout);
	exit(0);
}

/*
 * The subscriber processes; the first to fail stops the others (one
 * waiting for a kill that will not come would hold the VM until its
 * deadline). 0 if all passed.
 */
static int subscribe(const struct opts *o)
{
	pid_t pid[16];
	uint32_t failed = 0, left = o->procs, stopped = 0;

	for (uint32_t i = 1; i <= o->procs; i++) {
		pid[i - 1] = fork();
		if (pid[i - 1] < 0)
			fail("fork: %s", strerror(errno));
		if (!pid[i - 1])
			subscriber(o, (int)i);
	}
	while (left) {
		uint32_t who_i = 0;
		int st;
		pid_t p = waitpid(-1, &st, 0);

		if (p < 0)
			fail("waitpid: %s", strerror(errno));
		left--;
		for (uint32_t i = 0; i < o->procs; i++)
			if (pid[i] == p) {
				pid[i] = 0;
				who_i = i + 1;
			}
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			continue;
		if (WIFSIGNALED(st) && !failed)
			fprintf(stderr, "sub %u: FAIL: killed by signal %d\n",
				who_i, WTERMSIG(st));
		if (!failed++)
			for (uint32_t i = 0; i < o->procs; i++)
				if (pid[i] && !kill(pid[i], SIGTERM))
					stopped++;
	}
	printf("%s: %u of %u subscribers passed", who, o->procs - failed,
	       o->procs);
	if (stopped)
		printf(" (%u stopped by the first failure)", stopped);
	printf("\n");
	fflush(stdout);
	return failed ? 1 : 0;
}

/* -------------------------------------------------------------- options */

static uint64_t num(const char *opt, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || !*s || v < lo || v > hi) {
		fprintf(stderr, "%s: --%s %s: not a number in %" PRIu64
			"..%" PRIu64 "\n", who, opt, s, lo, hi);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", 1, 0, 'd' }, { "uri", 1, 0, 'u' },
		{ "timeout-ms", 1, 0, 't' }, { "dir", 1, 0, 'D' },
		{ "topics", 1, 0, 'k' }, { "count", 1, 0, 'n' },
		{ "rate", 1, 0, 'r' }, { "tail-rate", 1, 0, 'T' },
		{ "phase2-at", 1, 0, 'p' }, { "burst", 1, 0, 'b' },
		{ "burst-every", 1, 0, 'e' }, { "drain-ms", 1, 0, 'w' },
		{ "retransmit-bytes", 1, 0, 'R' }, { "go", 1, 0, 'g' },
		{ "netem", 1, 0, '1' }, { "loss-pct", 1, 0, '2' },
		{ "procs", 1, 0, 'P' },
		{ "recovery-ms", 1, 0, 'm' }, { "slack-ms", 1, 0, 's' },
		{ "deadline-s", 1, 0, 'x' }, { "no-recovery", 0, 0, 'N' },
		{ "repair-by-nak", 0, 0, 'K' }, { 0, 0, 0, 0 }
	};
	struct opts o = { .timeout_ms = 2000, .topics = 2, .count = 100000,
			  .rate = 1000, .tail_rate = 100, .burst = 50,
			  .burst_every = 2500, .drain_ms = 50, .procs = 3, .loss_pct = 1,
			  .slack_ms = 1500, .deadline_s = 600 };
	int c;

	if (argc < 2 || (strcmp(argv[1], "pub") && strcmp(argv[1], "sub"))) {
		fprintf(stderr, "usage: two_host_mcast_peer pub|sub --dev DEV "
			"--uri mcast://GROUP --dir DIR [OPTIONS] (see the "
			"source's header)\n");
		return 2;
	}
	o.role = argv[1];
	optind = 2;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'u': o.uri = optarg; break;
		case 'D': o.dir = optarg; break;
		case 'g': o.go = optarg; break;
		case '1': o.netem = optarg; break;
		case '2': o.loss_pct = (uint32_t)num("loss-pct", optarg, 0,
						     100); break;
		case 't':
			o.timeout_ms = (uint32_t)num("timeout-ms", optarg,
						     MSGA_PEER_TIMEOUT_MIN_MS,
						     MSGA_PEER_TIMEOUT_MAX_MS);
			break;
		case 'k': o.topics = (uint32_t)num("topics", optarg, 1,
						   TOPICS_MAX); break;
		case 'n': o.count = num("count", optarg, 1, 1ull << 40); break;
		case 'r': o.rate = (double)num("rate", optarg, 1, 1000000);
			break;
		case 'T': o.tail_rate = (double)num("tail-rate", optarg, 1,
						    1000000); break;
		case 'p': o.phase2_at = num("phase2-at", optarg, 2, 1ull << 40);
			break;
		case 'b': o.burst = (uint32_t)num("burst", optarg, 1, 100000);
			break;
		case 'e': o.burst_every = num("burst-every", optarg, 1,
					      1ull << 40); break;
		case 'w': o.drain_ms = (uint32_t)num("drain-ms", optarg, 0,
						     10000); break;
		case 'R': o.retransmit_bytes = num("retransmit-bytes", optarg,
						   MSGA_RETRANSMIT_MIN_BYTES,
						   MSGA_RETRANSMIT_MAX_BYTES);
			break;
		case 'P': o.procs = (uint32_t)num("procs", optarg, 1, 16);
			break;
		case 'm': o.recovery_ms = (uint32_t)num("recovery-ms", optarg,
							1,
							MSGA_RECOVERY_MAX_MS);
			break;
		case 's': o.slack_ms = num("slack-ms", optarg, 0, 600000);
			break;
		case 'x': o.deadline_s = num("deadline-s", optarg, 1, 86400);
			break;
		case 'N': o.no_recovery = 1; break;
		case 'K': o.repair_by_nak = 1; break;
		default: return 2;
		}
	}
	if (optind != argc || !o.dev || !o.uri || !o.dir ||
	    o.count % o.topics ||
	    (!strcmp(o.role, "pub") && (!o.go || !o.netem))) {
		fprintf(stderr, "%s: need --dev, --uri, --dir (and --go and "
			"--netem for pub), no other arguments, and --count divisible by "
			"--topics\n", who);
		return 2;
	}
	if (!o.phase2_at)
		o.phase2_at = o.count / 2 + 1;
	if (o.phase2_at > o.count || o.burst >= o.burst_every)
		fail("--phase2-at must be within --count, --burst below "
		     "--burst-every");
	if (!strcmp(o.role, "pub"))
		publish(&o);
	return subscribe(&o);
}
