/* SPDX-License-Identifier: MIT */
/*
 * The subscriber's shared receive queue (lib/srq.h): many SEND/RECV
 * connections into one subscriber share one SRQ, the 17th and later fall
 * back to receives of their own, dying connections give back every
 * receive they took (reaped or not, held or not), and no peer ever finds
 * the SRQ empty: an RNR would kill the connection (rnr_retry is 0, and
 * iWARP has none), which these tests see as a disconnect and lost data.
 *
 * The publishers run in child processes: siw counts registered memory
 * against RLIMIT_MEMLOCK (8 MiB) per process, and a publisher alone pins
 * 0.5 MiB (1.5 MiB once it sends a large message), so eight of them and
 * the subscriber would not fit in one. The parent drives each child by
 * one-byte commands on a pipe; a child that fails exits non-zero. The
 * children are forked before the parent opens a device, so no registered
 * memory is shared across the fork.
 *
 * Leaks show up as RNR: in the fill phases every publisher is pushed back
 * while the subscriber is not polled, so 16 attached connections take
 * about 16 x 31 of the SRQ's 512 receives; tens of leaked receives
 * (one dead connection's unreaped completions, or its held messages)
 * leave too few.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define MAXC 128        /* connection ids of one subscriber in a test */
#define MAXP 4          /* publishers per child */
#define BIG_LEN (3 * MSGA_FRAG_MAX + 5)

/* ------------------------------------------------ child: publishers */

static size_t msg_len(int big, uint32_t k, uint64_t seq)
{
	static const size_t sizes[] = { 64, 64, 200, 64, 1000, 64, 4072, 300 };

	if (big && k % 2 == 0 && seq % 499 == 250)
		return BIG_LEN;
	return sizes[seq % 8];
}

struct pubs {
	struct msga_ctx *ctx;
	struct msga_pub *pub[MAXP];
	uint32_t topic[MAXP];
	uint64_t seq[MAXP];
	int n, big;
};

static void die(int code)
{
	_exit(code);
}

/*
 * What the publishers heard, to print when a count comes out wrong: the
 * peers that became subscribers and those that went away, with why.
 */
static char pub_log[4096];
static size_t pub_log_len;

static void on_pub_event(const struct msga_event *ev, void *user)
{
	int k = (int)(intptr_t)user;
	int n;

	if (pub_log_len >= sizeof(pub_log) - 64)
		pub_log_len = 0; /* keep the newest */
	n = snprintf(pub_log + pub_log_len, sizeof(pub_log) - pub_log_len,
		     " [pub %d conn %u %s: %s %d]", k, ev->conn_id, ev->peer,
		     ev->type == MSGA_EVENT_CONNECTED ? "up" : "down",
		     ev->status);
	if (n > 0)
		pub_log_len += (size_t)n;
}

/* One message on publisher k if it has subscribers: 0, or -EAGAIN. */
static int publish(struct pubs *p, int k)
{
	struct msga_claim c = { .size = sizeof(c) };
	size_t len = msg_len(p->big, (uint32_t)k, p->seq[k] + 1);
	int ret;

	if (msga_pub_subscribers(p->pub[k]) <= 0)
		return -ENOTCONN;
	ret = msga_pub_claim(p->pub[k], p->topic[k], len, &c);
	if (ret == -EAGAIN)
		return ret;
	if (ret)
		die(20);
	dp_fill(c.data, len, p->topic[k], ++p->seq[k]);
	if (msga_pub_commit(p->pub[k], &c) < 0)
		die(21);
	return 0;
}

static void put(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		die(22);
}

static void child_poll(struct pubs *p)
{
	if (msga_ctx_poll(p->ctx, 64) < 0)
		die(23);
}

static int subscribers(struct pubs *p)
{
	int n = 0;

	for (int k = 0; k < p->n; k++)
		n += msga_pub_subscribers(p->pub[k]);
	return n;
}

/* 'N' <int n>: wait until the publishers count n subscribers, say 'n'. */
static void child_wait_subs(struct pubs *p, int in, int out)
{
	uint64_t end = dp_now_ms() + 20000;
	int n;

	fcntl(in, F_SETFL, 0);
	if (read(in, &n, sizeof(n)) != sizeof(n))
		die(24);
	fcntl(in, F_SETFL, O_NONBLOCK);
	while (subscribers(p) != n) {
		if (dp_now_ms() > end) {
			fprintf(stderr, "child: %d subscribers, not %d; "
				"last error: %s; events:%s\n", subscribers(p),
				n, msga_ctx_last_error(p->ctx), pub_log);
			die(25);
		}
		child_poll(p);
	}
	put(out, "n", 1);
}

/* Publish until every publisher with subscribers stays pushed back. */
static int child_fill_step(struct pubs *p, uint64_t *since, uint64_t start)
{
	int blocked = 1;

	for (int k = 0; k < p->n; k++)
		if (publish(p, k) == 0)
			blocked = 0;
	child_poll(p);
	if (dp_now_ms() - start > 30000)
		die(26); /* never pushed back */
	if (!blocked) {
		*since = 0;
		return 0;
	}
	if (!*since)
		*since = dp_now_ms();
	return dp_now_ms() - *since > 300;
}

static void child_main(int npubs, int big, int in, int out)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr) };
	struct pubs p = { .n = npubs, .big = big };
	uint64_t since = 0, start = 0;
	char mode = 'I', cmd;
	ssize_t r;

	attr.dev_name = getenv("MSGA_TEST_DEV");
	if (!attr.dev_name || msga_ctx_open(&attr, &p.ctx))
		die(10);
	for (int k = 0; k < npubs; k++) {
		struct msga_pub_attr a = { .size = sizeof(a),
					   .uri = dp_uri(0),
					   .on_event = on_pub_event,
					   .user = (void *)(intptr_t)k };
		uint16_t port;

		if (msga_pub_create(p.ctx, &a, &p.pub[k]) ||
		    msga_pub_topic(p.pub[k], "srq", &p.topic[k]))
			die(11);
		port = (uint16_t)msga_pub_port(p.pub[k]);
		put(out, &port, sizeof(port));
	}
	fcntl(in, F_SETFL, O_NONBLOCK);
	for (;;) {
		r = read(in, &cmd, 1);
		if (r == 0)
			die(12); /* the parent is gone */
		if (r == 1 && cmd == 'N')
			child_wait_subs(&p, in, out);
		else if (r == 1 && cmd == 'Q')
			die(0);
		else if (r == 1 && cmd == 'S')
			put(out, p.seq, sizeof(p.seq[0]) * (size_t)npubs);
		if (r == 1 && cmd != 'N' && cmd != 'Q')
			mode = cmd == 'S' ? 'I' : cmd;
		if (r == 1 && cmd == 'F') {
			since = 0;
			start = dp_now_ms();
		}
		if (mode == 'R')
			for (int k = 0; k < npubs; k++)
				publish(&p, k);
		if (mode == 'F' && child_fill_step(&p, &since, start)) {
			put(out, "f", 1);
			mode = 'I';
		}
		child_poll(&p);
	}
}

/* ------------------------------------------------ parent: the subscriber */

struct child {
	pid_t pid;
	int to, from;
	int npubs;
	uint16_t port[MAXP];
	uint64_t count[MAXP];
};

struct srec {
	struct dp_rec ev;       /* first: dp_on_event() sees user as one */
	int pub[MAXC];          /* global publisher index, -1: none */
	int strict[MAXC];       /* stream starts at seq 1 */
	uint64_t next[MAXC], got[MAXC];
	uint64_t total, bad;
	uint64_t misaligned;    /* msg->data not 8-byte aligned (issue 23) */
	char first_bad[256];
	/* holding */
	int hold_conn, hold_max, nheld;
	struct msga_msg held[32];
	int hold_ret;
};

static struct srec rec;

static void on_msg(const struct msga_msg *m, void *user)
{
	struct srec *r = user;
	uint32_t c = m->conn_id;
	uint64_t want;

	if (c >= MAXC) {
		r->bad++;
		return;
	}
	want = r->next[c] ? r->next[c] : r->strict[c] ? 1 : 0;
	if ((want && m->seq != want) ||
	    dp_check(m->data, m->len, m->topic_id, m->seq)) {
		if (!r->bad++)
			snprintf(r->first_bad, sizeof(r->first_bad),
				 "conn %u: seq %llu len %zu, expected %llu", c,
				 (unsigned long long)m->seq, m->len,
				 (unsigned long long)want);
	}
	r->next[c] = m->seq + 1;
	r->got[c]++;
	r->total++;
	r->misaligned += (uintptr_t)m->data % 8 != 0;
	if ((int)c == r->hold_conn && r->nheld < r->hold_max &&
	    m->len <= MSGA_FRAG_MAX) {
		int ret = msga_msg_hold(m);

		if (ret)
			r->hold_ret = ret;
		else
			r->held[r->nheld++] = *m;
	}
}

static struct msga_sub *srq_sub(struct msga_ctx *ctx)
{
	struct msga_sub_attr a = { .size = sizeof(a), .pattern = "srq",
				   .flags = MSGA_SUB_NO_RING,
				   .on_msg = on_msg, .on_event = dp_on_event,
				   .user = &rec };
	struct msga_sub *sub = NULL;

	memset(&rec, 0, sizeof(rec));
	for (int i = 0; i < MAXC; i++)
		rec.pub[i] = -1;
	rec.hold_conn = -1;
	cr_assert_eq(msga_sub_create(ctx, &a, &sub), 0);
	return sub;
}

/* Where the test is, for failure messages. */
static char phase[64];

/* The child's exit status (see die() calls), or that it still runs. */
static const char *child_status(struct child *ch, int wait)
{
	static char buf[256];
	int st = 0;

	if (waitpid(ch->pid, &st, wait ? 0 : WNOHANG) == ch->pid)
		snprintf(buf, sizeof(buf), "%s: child exited, status %d; "
			 "subscriber saw %d disconnects, %d failures", phase,
			 WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st),
			 rec.ev.disconnected, rec.ev.failed);
	else
		snprintf(buf, sizeof(buf), "%s: child alive", phase);
	return buf;
}

/* Read n bytes from the child, polling ctx (if any) meanwhile. */
static void ch_read(struct child *ch, void *buf, size_t n,
		    struct msga_ctx *ctx, int timeout_ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)timeout_ms;
	size_t got = 0;

	while (got < n) {
		struct pollfd pfd = { .fd = ch->from, .events = POLLIN };
		ssize_t r;

		cr_assert_lt(dp_now_ms(), end, "child silent (%s)",
			     child_status(ch, 0));
		if (poll(&pfd, 1, ctx ? 0 : 1) > 0) {
			r = read(ch->from, (char *)buf + got, n - got);
			if (r <= 0)
				cr_assert_fail("child pipe closed (%s)",
					       child_status(ch, 1));
			got += (size_t)r;
		} else if (ctx) {
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		}
	}
}

static void ch_cmd(struct child *ch, char c)
{
	cr_assert_eq(write(ch->to, &c, 1), 1);
}

static void ch_expect(struct child *ch, char want, struct msga_ctx *ctx)
{
	char b = 0;

	ch_read(ch, &b, 1, ctx, 40000);
	cr_assert_eq(b, want, "child said %c, not %c", b, want);
}

static void ch_spawn(struct child *ch, int npubs, int big)
{
	int to[2], from[2];

	cr_assert_eq(pipe(to), 0);
	cr_assert_eq(pipe(from), 0);
	devtest_env(); /* fail here, in the parent, if it is missing */
	ch->npubs = npubs;
	ch->pid = fork();
	cr_assert_geq(ch->pid, 0);
	if (ch->pid == 0) {
		close(to[1]);
		close(from[0]);
		child_main(npubs, big, to[0], from[1]);
	}
	close(to[0]);
	close(from[1]);
	ch->to = to[1];
	ch->from = from[0];
	ch_read(ch, ch->port, sizeof(ch->port[0]) * (size_t)npubs, NULL,
		20000);
}

static void ch_subs(struct child *ch, int n, struct msga_ctx *ctx)
{
	ch_cmd(ch, 'N');
	cr_assert_eq(write(ch->to, &n, sizeof(n)), (ssize_t)sizeof(n));
	ch_expect(ch, 'n', ctx);
}

static void ch_stop(struct child *ch, struct msga_ctx *ctx)
{
	ch_cmd(ch, 'S');
	ch_read(ch, ch->count, sizeof(ch->count[0]) * (size_t)ch->npubs, ctx,
		20000);
}

static void ch_end(struct child *ch)
{
	int st = 0;

	ch_cmd(ch, 'Q');
	cr_assert_eq(waitpid(ch->pid, &st, 0), ch->pid);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		  "publisher child status %d", st);
}

/* Connect to publisher k of ch; pub_base + k is its global index. */
static int conn_to(struct msga_sub *sub, struct child *ch, int k,
		   int pub_base, int strict)
{
	int id = dp_connect_id(sub, dp_uri(ch->port[k]));

	cr_assert_geq(id, 0, "msga_sub_connect = %d", id);
	cr_assert_lt(id, MAXC);
	rec.pub[id] = pub_base + k;
	rec.strict[id] = strict;
	return id;
}

static void wait_connected(struct msga_ctx *ctx, int n)
{
	cr_assert(dp_poll_until(&ctx, 1, &rec.ev.connected, n, 20000),
		  "%d of %d connected (failed %d): %s", rec.ev.connected, n,
		  rec.ev.failed, msga_ctx_last_error(ctx));
}

/* Poll until every connection in ids got at least delta more messages. */
static void more_traffic(struct msga_ctx *ctx, const int *ids, int n,
			 uint64_t delta)
{
	uint64_t want[MAXC];
	uint64_t end = dp_now_ms() + 60000;

	for (int i = 0; i < n; i++)
		want[i] = rec.got[ids[i]] + delta;
	for (int i = 0; i < n; i++)
		while (rec.got[ids[i]] < want[i]) {
			cr_assert_lt(dp_now_ms(), end,
				     "conn %d: %llu of %llu messages (bad %llu"
				     ", disconnected %d)", ids[i],
				     (unsigned long long)rec.got[ids[i]],
				     (unsigned long long)want[i],
				     (unsigned long long)rec.bad,
				     rec.ev.disconnected);
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		}
}

/* Every child publishes until pushed back while we do not poll at all. */
static void fill(struct child *chs, int nch)
{
	for (int i = 0; i < nch; i++)
		ch_cmd(&chs[i], 'F');
	for (int i = 0; i < nch; i++)
		ch_expect(&chs[i], 'f', NULL);
}

/* Stop the children; strict connections must then get every message. */
static void drain_all(struct msga_ctx *ctx, struct child *chs, int nch,
		      const int *ids, int n)
{
	uint64_t count[MAXP * 4];
	uint64_t end = dp_now_ms() + 60000;

	for (int i = 0; i < nch; i++) {
		ch_stop(&chs[i], ctx);
		for (int k = 0; k < chs[i].npubs; k++)
			count[i * MAXP + k] = chs[i].count[k];
	}
	for (int i = 0; i < n; i++) {
		int c = ids[i], p = rec.pub[c];

		cr_assert(rec.strict[c]);
		while (rec.got[c] < count[p]) {
			cr_assert_lt(dp_now_ms(), end,
				     "conn %d: %llu of %llu (bad %llu: %s, "
				     "disconnected %d)", c,
				     (unsigned long long)rec.got[c],
				     (unsigned long long)count[p],
				     (unsigned long long)rec.bad,
				     rec.first_bad, rec.ev.disconnected);
			cr_assert_geq(msga_ctx_poll(ctx, 64), 0);
		}
		cr_expect_eq(rec.got[c], count[p], "conn %d: %llu, sent %llu",
			     c, (unsigned long long)rec.got[c],
			     (unsigned long long)count[p]);
	}
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	/* (past 16 connections, receives of their own: not in dev_align) */
	cr_expect_eq(rec.misaligned, 0, "%llu messages not 8-byte aligned",
		     (unsigned long long)rec.misaligned);
	cr_expect_eq(rec.ev.disconnected, 0, "a connection died (RNR?)");
}

/*
 * npubs_per x nchild publishers, conns_per connections from one subscriber
 * to each (global publisher index i * MAXP + k): publish, fill until every
 * publisher is pushed back with the subscriber not polled, publish again,
 * then every message must have arrived, in order.
 */
static void many_into_one(int nchild, int npubs_per, int conns_per,
			  int big)
{
	struct child chs[4];
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	int ids[MAXC], n = 0;

	for (int i = 0; i < nchild; i++)
		ch_spawn(&chs[i], npubs_per, big);
	ctx = devtest_open_ctx();
	sub = srq_sub(ctx);
	for (int i = 0; i < nchild; i++)
		for (int k = 0; k < npubs_per; k++)
			for (int j = 0; j < conns_per; j++)
				ids[n++] = conn_to(sub, &chs[i], k, i * MAXP,
						   1);
	wait_connected(ctx, n);
	for (int i = 0; i < nchild; i++) {
		ch_subs(&chs[i], npubs_per * conns_per, ctx);
		ch_cmd(&chs[i], 'R');
	}
	more_traffic(ctx, ids, n, 1500);
	for (int round = 0; round < 2; round++) {
		fill(chs, nchild);
		for (int i = 0; i < nchild; i++)
			ch_cmd(&chs[i], 'R');
		more_traffic(ctx, ids, n, 1000);
	}
	drain_all(ctx, chs, nchild, ids, n);
	for (int i = 0; i < nchild; i++)
		ch_end(&chs[i]);
	msga_ctx_close(ctx);
}

Test(srq, eight_publishers_into_one_subscriber, .timeout = 240)
{
	many_into_one(2, 4, 1, 1);
}

/* 18 connections: 16 share the SRQ, two have receives of their own. */
Test(srq, connections_past_sixteen_fall_back, .timeout = 240)
{
	many_into_one(2, 1, 9, 1);
}

/*
 * Two strict streams stay complete while pairs of connections come and go,
 * 24 times, each taken down with its CQ full of receives the subscriber
 * never polled: 24 x 2 x ~31 SRQ receives to give back. Then 16
 * connections fill the SRQ; any leak would run it dry.
 */
Test(srq, churn_gives_every_receive_back, .timeout = 300)
{
	struct child ch;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	int live[2], all[16], n = 0;

	ch_spawn(&ch, 4, 0);
	ctx = devtest_open_ctx();
	sub = srq_sub(ctx);
	live[0] = conn_to(sub, &ch, 0, 0, 1);
	live[1] = conn_to(sub, &ch, 1, 0, 1);
	wait_connected(ctx, 2);
	ch_subs(&ch, 2, ctx);
	ch_cmd(&ch, 'R');
	more_traffic(ctx, live, 2, 500);
	for (int cycle = 0; cycle < 24; cycle++) {
		int a = conn_to(sub, &ch, 2, 0, 0);
		int b = conn_to(sub, &ch, 3, 0, 0);
		int pair[2] = { a, b };

		snprintf(phase, sizeof(phase), "churn cycle %d", cycle);
		wait_connected(ctx, 4 + 2 * cycle);
		ch_subs(&ch, 4, ctx);
		more_traffic(ctx, pair, 2, 50);
		fill(&ch, 1);
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)a), 0);
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)b), 0);
		ch_cmd(&ch, 'R');
		more_traffic(ctx, live, 2, 100);
		ch_subs(&ch, 2, ctx);
	}
	all[n++] = live[0];
	all[n++] = live[1];
	for (; n < 16; n++)
		all[n] = conn_to(sub, &ch, 2 + n % 2, 0, 0);
	wait_connected(ctx, 2 + 2 * 24 + 14);
	ch_subs(&ch, 16, ctx);
	more_traffic(ctx, all, 16, 50);
	fill(&ch, 1);
	ch_cmd(&ch, 'R');
	more_traffic(ctx, all, 16, 500);
	drain_all(ctx, &ch, 1, live, 2);
	ch_end(&ch);
	msga_ctx_close(ctx);
}

static void check_held(int from, int to)
{
	for (int i = from; i < to; i++)
		cr_expect_eq(dp_check(rec.held[i].data, rec.held[i].len,
				      rec.held[i].topic_id, rec.held[i].seq),
			     0, "held message %d overwritten", i);
}

static void release_held(int from, int to)
{
	check_held(from, to);
	for (int i = from; i < to; i++)
		msga_msg_release(&rec.held[i]);
}

/*
 * Held SRQ messages: some released after more traffic, the rest after
 * their connection was disconnected (the connection lingers until then,
 * still counted on the SRQ, so a new connection falls back meanwhile).
 * Twice over, 20 receives each time must come back to the SRQ, or the
 * final fill with 16 connections runs it dry.
 */
Test(srq, held_messages_come_back_to_the_srq, .timeout = 300)
{
	struct child ch;
	struct msga_ctx *ctx;
	struct msga_sub *sub;
	int ids[16], holder, nconn = 16;

	ch_spawn(&ch, 1, 1);
	ctx = devtest_open_ctx();
	sub = srq_sub(ctx);
	for (int i = 0; i < 16; i++)
		ids[i] = conn_to(sub, &ch, 0, 0, 1);
	wait_connected(ctx, 16);
	ch_subs(&ch, 16, ctx);
	holder = ids[0];
	for (int round = 0; round < 2; round++) {
		int q;

		rec.nheld = 0;
		rec.hold_max = 24;
		rec.hold_conn = holder;
		ch_cmd(&ch, 'R');
		more_traffic(ctx, &holder, 1, 200);
		cr_assert_eq(rec.nheld, 24, "held %d (hold: %d)", rec.nheld,
			     rec.hold_ret);
		more_traffic(ctx, ids + 1, 15, 300);
		release_held(0, 4);
		more_traffic(ctx, ids + 1, 15, 300);
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)holder), 0);
		rec.hold_conn = -1;
		/* the holder lingers with its 20 holds: q gets receives of
		 * its own, and works */
		q = conn_to(sub, &ch, 0, 0, 0);
		wait_connected(ctx, ++nconn);
		ch_subs(&ch, 16, ctx);
		more_traffic(ctx, &q, 1, 300);
		cr_assert_eq(msga_sub_disconnect(sub, (uint32_t)q), 0);
		more_traffic(ctx, ids + 1, 15, 100);
		release_held(4, 24);
		/* a new holder, back on the SRQ */
		holder = conn_to(sub, &ch, 0, 0, 0);
		ids[0] = holder;
		wait_connected(ctx, ++nconn);
		ch_subs(&ch, 16, ctx);
		more_traffic(ctx, ids, 16, 100);
	}
	fill(&ch, 1);
	ch_cmd(&ch, 'R');
	more_traffic(ctx, ids, 16, 500);
	drain_all(ctx, &ch, 1, ids + 1, 15);
	cr_expect_eq(rec.hold_ret, 0);
	ch_end(&ch);
	msga_ctx_close(ctx);
}
