/* SPDX-License-Identifier: MIT */
/*
 * rdma_bw - RDMA bandwidth and message rate: send, write, write_imm or
 * read streams on RC or UC, one way or both (-b). See rdma_bw(1).
 *
 * Each side runs one loop that may both send (client; server too with -b)
 * and receive (when the peer sends with send or write_imm). A side whose
 * sending is over tells the peer, over the control channel, how many
 * messages it sent and what it measured; a receiver is done once it has
 * seen that many.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_main.h"
#include "perf_out.h"
#include "perf_sq.h"

#define CHECK_EVERY 1024
/* UD: no new message this long after the sender's STOP = the rest is lost. */
#define UD_QUIET_NS 300000000ull

struct point {
	uint64_t count, ticks;
};

struct bw_side {
	/* sending */
	int sending, send_done, stopping;
	uint64_t target, t_end, warmup;
	uint32_t duration;
	struct perf_sq sq;
	uint64_t posted, c0, t0;   /* completions and time when timing began */
	struct point *pts;
	size_t npts, cap;
	struct perf_bw_result res;
	/* receiving */
	int recv_verb, peer_sends, peer_stopped;
	uint64_t received, peer_count;
	struct perf_bw_result peer_res;
	uint64_t since;
	/* UD drops: after the peer's STOP, wait for quiet, not for a count */
	int drained;
	uint64_t quiet_ns, quiet_rx;
};

static int add_point(struct bw_side *b, uint64_t count, uint64_t ticks)
{
	if (b->npts == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct point *p = realloc(b->pts, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->pts = p;
		b->cap = cap;
	}
	b->pts[b->npts].count = count;
	b->pts[b->npts].ticks = ticks;
	b->npts++;
	return 0;
}

/*
 * Peak: the best rate over any stretch of at least a tenth of the run
 * (and at least one CQ moderation batch) between two completion points.
 */
static double peak_rate(const struct bw_side *b, uint64_t msgs, uint32_t q)
{
	uint64_t w = msgs / 10 > q ? msgs / 10 : q;
	double best = 0.0;
	size_t j = 0;

	for (size_t i = 0; i < b->npts; i++) {
		if (j < i)
			j = i;
		while (j < b->npts && b->pts[j].count - b->pts[i].count < w)
			j++;
		if (j == b->npts)
			break;
		if (b->pts[j].ticks > b->pts[i].ticks) {
			double r = (double)(b->pts[j].count - b->pts[i].count) /
				   perf_ticks_us(b->pts[j].ticks - b->pts[i].ticks);

			if (r > best)
				best = r;
		}
	}
	return best; /* messages per microsecond */
}

static void compute(struct bw_side *b, uint32_t size, uint32_t q)
{
	uint64_t msgs = b->sq.completed - b->c0;
	uint64_t t1 = b->npts ? b->pts[b->npts - 1].ticks : b->t0;
	double us = perf_ticks_us(t1 - b->t0);
	double rate = us > 0 ? (double)msgs / us : 0.0; /* msgs per us */
	double peak = peak_rate(b, msgs, q);

	if (peak < rate)
		peak = rate;
	b->res.iterations = msgs;
	b->res.msg_rate_mpps = rate;
	b->res.bw_avg_mbps = rate * size * 1e6 / 1048576.0;
	b->res.bw_peak_mbps = peak * size * 1e6 / 1048576.0;
}

/* Timing starts once the warm-up messages have completed. */
static int note_progress(struct perf_ep *ep, struct bw_side *b)
{
	uint64_t now = perf_now();

	if (!b->t0) {
		if (b->sq.completed < b->warmup)
			return 0;
		b->t0 = now;
		b->c0 = b->sq.completed;
		if (b->duration)
			b->t_end = now + perf_us_ticks(b->duration * 1e6);
		return add_point(b, b->c0, now);
	}
	return add_point(b, b->sq.completed, now);
}

static int post_data(struct perf_ep *ep, struct bw_side *b, uint32_t size,
		     uint32_t n, int force_signal)
{
	int ret = perf_sq_post(ep, &b->sq, ep->prm.verb, size, 0, n,
			       force_signal);

	if (ret)
		return ret;
	b->posted += n;
	if (!b->t0 && !b->warmup)
		ret = note_progress(ep, b);
	return ret;
}

/* The last send must be signalled, or its completion is never seen. */
static int finish_sending(struct perf_ep *ep, struct bw_side *b,
			  uint32_t size)
{
	if (b->sq.unsignaled) {
		if (b->sq.outstanding < ep->prm.tx_depth && perf_credit_ok(ep, 1))
			return post_data(ep, b, size, 1, 1);
		return 0;
	}
	/* Not a blocking drain: our receiver must keep re-posting. */
	if (b->sq.outstanding == 0) {
		b->send_done = 1;
		return note_progress(ep, b);
	}
	return 0;
}

static int send_step(struct perf_ep *ep, struct bw_side *b, uint32_t size)
{
	uint64_t before = b->sq.completed;
	uint32_t n = ep->prm.post_list;
	int ret = 0;

	if (b->t_end && !b->stopping && perf_now() >= b->t_end)
		b->stopping = 1;
	if (!b->stopping && b->posted < b->target) {
		if (b->target - b->posted < n)
			n = (uint32_t)(b->target - b->posted);
		if (b->sq.outstanding + n <= ep->prm.tx_depth &&
		    perf_credit_ok(ep, n))
			ret = post_data(ep, b, size, n, b->posted + n == b->target);
	}
	if (!ret)
		ret = perf_sq_reap(ep, &b->sq);
	if (!ret && b->sq.completed != before)
		ret = note_progress(ep, b);
	if (ret || !(b->stopping || b->posted == b->target))
		return ret;
	return finish_sending(ep, b, size);
}

static int recv_step(struct perf_ep *ep, struct bw_side *b)
{
	struct ibv_wc wc[32];
	int n = perf_poll(ep, ep->rcq, wc, 32, 0);

	for (int i = 0; i < n; i++) {
		int ret = perf_post_recv(ep, (uint32_t)wc[i].wr_id);

		if (ret)
			return ret;
	}
	if (n <= 0)
		return n;
	b->received += (uint64_t)n;
	return perf_credit_received(ep, &b->sq, (uint32_t)n);
}

static int send_stop(struct perf_ep *ep, struct bw_side *b, uint32_t size)
{
	struct perf_msg m = { .type = PERF_MSG_STOP };

	compute(b, size, ep->prm.cq_mod);
	m.v[0] = b->posted;
	m.v[1] = perf_dbl_bits(b->res.bw_peak_mbps);
	m.v[2] = perf_dbl_bits(b->res.bw_avg_mbps);
	m.v[3] = perf_dbl_bits(b->res.msg_rate_mpps);
	m.v[4] = b->res.iterations;
	return perf_ctrl_send(&ep->ctrl, &m);
}

static int check_stop(struct perf_ep *ep, struct bw_side *b)
{
	struct perf_msg m;
	/* A passive receiver (write, read) hears nothing until STOP. */
	int n = perf_check_peer(ep, &m, b->recv_verb ? b->since : perf_mono_ns());

	if (n == 1 && m.type == PERF_MSG_STOP) {
		b->peer_stopped = 1;
		b->peer_count = m.v[0];
		b->peer_res.bw_peak_mbps = perf_bits_dbl(m.v[1]);
		b->peer_res.bw_avg_mbps = perf_bits_dbl(m.v[2]);
		b->peer_res.msg_rate_mpps = perf_bits_dbl(m.v[3]);
		b->peer_res.iterations = m.v[4];
		return 0;
	}
	if (n == 0)
		return 0;
	snprintf(ep->err, sizeof(ep->err), "%s",
		 n == 1 ? "unexpected control message" :
		 n == -ETIMEDOUT ? "peer silent too long" : "peer went away");
	return n == 1 ? -EPROTO : n;
}

static int finished(const struct bw_side *b)
{
	if (b->sending && !b->send_done)
		return 0;
	if (!b->peer_sends)
		return 1;
	return b->peer_stopped && (!b->recv_verb || b->drained ||
				   b->received >= b->peer_count);
}

/*
 * UD may drop, so a receiver cannot wait for the count the sender sent:
 * once that sender has stopped, a quiet spell ends the wait. Its send
 * completions came first, so what is still on the way is microseconds off.
 */
static void ud_quiet(struct perf_ep *ep, struct bw_side *b)
{
	uint64_t now = perf_mono_ns();

	if (ep->prm.conn != PERF_UD || !b->peer_stopped)
		return;
	if (!b->quiet_ns || b->received != b->quiet_rx) {
		b->quiet_ns = now;
		b->quiet_rx = b->received;
	} else if (now - b->quiet_ns > UD_QUIET_NS) {
		b->drained = 1;
	}
}

/* Neither messages nor completions for --timeout seconds: give up. */
static int stalled(struct perf_ep *ep, struct bw_side *b, uint64_t *mark)
{
	uint64_t now = perf_mono_ns(), progress = b->sq.completed + b->received;

	if (progress != *mark) {
		*mark = progress;
		b->since = now;
		return 0;
	}
	if (!b->sending || b->send_done)
		return 0; /* check_stop watches the peer from here on */
	if (now - b->since <= (uint64_t)ep->opts->timeout_s * 1000000000ull)
		return 0;
	snprintf(ep->err, sizeof(ep->err), "no progress for %u s (sent %llu, "
		 "completed %llu, received %llu)", ep->opts->timeout_s,
		 (unsigned long long)b->posted,
		 (unsigned long long)b->sq.completed,
		 (unsigned long long)b->received);
	return -ETIMEDOUT;
}

static int bw_loop(struct perf_ep *ep, struct bw_side *b, uint32_t size)
{
	uint64_t mark = 0;
	uint32_t spins = 0;
	int ret = 0;

	b->since = perf_mono_ns();
	while (!ret && !finished(b)) {
		int was_done = b->send_done;

		if (!(++spins % CHECK_EVERY) && (ret = stalled(ep, b, &mark)))
			break;
		if (b->sending && !b->send_done)
			ret = send_step(ep, b, size);
		if (!ret && b->sending && b->send_done && !was_done)
			ret = send_stop(ep, b, size);
		if (!ret && b->peer_sends && b->recv_verb)
			ret = recv_step(ep, b);
		/* A side that only receives still reaps its credit writes. */
		if (!ret && ep->credits && (!b->sending || b->send_done))
			ret = perf_sq_reap(ep, &b->sq);
		/*
		 * A report our full send queue held back goes out now, even
		 * with nothing more arriving: the peer may be waiting for it.
		 */
		if (!ret && ep->credits)
			ret = perf_credit_flush(ep, &b->sq);
		if (!ret && b->peer_sends && !b->peer_stopped &&
		    (!b->sending || b->send_done) && !(spins % CHECK_EVERY))
			ret = check_stop(ep, b);
		if (!(spins % CHECK_EVERY))
			ud_quiet(ep, b);
	}
	return ret;
}

static void side_init(struct perf_ep *ep, struct bw_side *b, int sending,
		      int peer_sends, uint64_t iters, uint32_t duration,
		      uint64_t warmup)
{
	memset(b, 0, sizeof(*b));
	b->warmup = warmup;
	b->duration = duration;
	b->sending = sending;
	b->peer_sends = peer_sends;
	b->recv_verb = ep->prm.verb == PERF_SEND ||
		       ep->prm.verb == PERF_WRITE_IMM;
	ep->credits = b->recv_verb && ep->transport == PERF_TR_IWARP;
	b->target = duration ? UINT64_MAX : warmup + iters;
}

static int bw_client_size(struct perf_ep *ep, uint32_t size)
{
	const struct perf_opts *o = ep->opts;
	struct perf_msg done;
	struct bw_side b;
	int ret;

	side_init(ep, &b, 1, ep->prm.bidir, o->iters, o->duration, o->warmup);
	ret = bw_loop(ep, &b, size);
	if (!ret && (ret = perf_ctrl_expect(&ep->ctrl, PERF_MSG_DONE, &done,
					    (int)o->timeout_s * 1000)))
		snprintf(ep->err, sizeof(ep->err),
			 "server did not finish size %u: %s", size,
			 strerror(-ret));
	if (!ret) {
		if (ep->prm.bidir) { /* perftest reports the sum of both ways */
			b.res.bw_peak_mbps += b.peer_res.bw_peak_mbps;
			b.res.bw_avg_mbps += b.peer_res.bw_avg_mbps;
			b.res.msg_rate_mpps += b.peer_res.msg_rate_mpps;
			b.res.iterations += b.peer_res.iterations;
		}
		/* UD: the server counted what arrived; the rest was lost. */
		b.res.sent = b.posted;
		b.res.received = done.v[0];
		perf_out_bw(stdout, o, size, &b.res);
	}
	free(b.pts);
	return ret;
}

static int bw_server_size(struct perf_ep *ep, const struct perf_msg *run)
{
	uint32_t size = (uint32_t)run->v[0];
	struct bw_side b;
	int ret;

	/* With -b the server sends as long as the client asked for. */
	side_init(ep, &b, ep->prm.bidir, 1, run->v[1], (uint32_t)run->v[2],
		  run->v[3]);
	ret = perf_send_simple(ep, PERF_MSG_READY, 0);
	if (!ret)
		ret = bw_loop(ep, &b, size);
	if (!ret)
		ret = perf_send_simple(ep, PERF_MSG_DONE, b.received);
	free(b.pts);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct perf_tool_ops ops = {
		.client_size = bw_client_size,
		.server_size = bw_server_size,
	};

	return perf_main(argc, argv, PERF_TOOL_BW, &ops);
}
