/* SPDX-License-Identifier: MIT */
/*
 * rdma_lat - RDMA latency: send, write, write_imm ping-pong (half round
 * trip) and read (full read), on RC, UC or UD, or under load with --rate.
 * See rdma_lat(1). The measurement loops are here; connection, options,
 * clock and output are shared with rdma_bw (perf_*.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lat_stats.h"
#include "perf_main.h"
#include "perf_out.h"
#include "perf_sq.h"

#define CHECK_EVERY 4096 /* empty polls between peer checks */
#define MAX_SAMPLES (100u << 20)

struct samples {
	double *v;
	size_t n, cap;
};

static int samples_add(struct perf_ep *ep, struct samples *s, double us)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 4096;
		double *v;

		if (cap > MAX_SAMPLES) {
			snprintf(ep->err, sizeof(ep->err),
				 "more than %u samples; use a shorter -D",
				 MAX_SAMPLES);
			return -E2BIG;
		}
		v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = us;
	return 0;
}

/* Are we done? -n counts measured iterations, -D measured seconds. */
static int lat_done(const struct perf_opts *o, uint64_t i, uint64_t t_end)
{
	if (o->duration)
		return i >= o->warmup && t_end && perf_now() >= t_end;
	return i >= o->warmup + o->iters;
}

static uint64_t lat_end_ticks(const struct perf_opts *o)
{
	return perf_now() + perf_us_ticks((double)o->duration * 1e6);
}

static int peer_error(struct perf_ep *ep, int ret, const char *what)
{
	if (ret == 1)
		snprintf(ep->err, sizeof(ep->err),
			 "unexpected control message while %s", what);
	else
		snprintf(ep->err, sizeof(ep->err), "peer %s while %s",
			 ret == -ETIMEDOUT ? "silent too long" : "went away",
			 what);
	return ret == 1 ? -EPROTO : ret;
}

/*
 * Called on each empty poll of a wait loop: every CHECK_EVERY spins
 * (every spin in event mode, where a spin is a wake-up) ask the control
 * channel whether the peer is still there, timing idleness from the first
 * check. Returns 0 to keep waiting, or the peer error for `what`.
 */
static int idle_check(struct perf_ep *ep, uint32_t *spins, uint64_t *since,
		      int every_spin, const char *what)
{
	struct perf_msg m;
	int n;

	if (++*spins % CHECK_EVERY && !every_spin)
		return 0;
	if (!*since)
		*since = perf_mono_ns();
	n = perf_check_peer(ep, &m, *since);
	return n ? peer_error(ep, n, what) : 0;
}

/* Wait for one receive completion and re-post its buffer. */
static int wait_recv(struct perf_ep *ep, uint32_t *slot)
{
	uint64_t since = 0;
	uint32_t spins = 0;
	struct ibv_wc wc;

	for (;;) {
		int n = perf_poll(ep, ep->rcq, &wc, 1, 100);

		if (n < 0)
			return n;
		if (n == 1)
			break;
		n = idle_check(ep, &spins, &since, ep->prm.events,
			       "waiting for a message");
		if (n)
			return n;
	}
	if (slot)
		*slot = (uint32_t)wc.wr_id;
	return perf_post_recv(ep, (uint32_t)wc.wr_id);
}

/* Wait until the peer's RDMA write has put seq in the last byte. */
static int wait_byte(struct perf_ep *ep, volatile uint8_t *p, uint8_t seq)
{
	uint64_t since = 0;
	uint32_t spins = 0;

	while (*p != seq) {
		int n = idle_check(ep, &spins, &since, 0,
				   "waiting for an RDMA write");

		if (n)
			return n;
	}
	return 0;
}

static uint8_t next_seq(uint8_t s)
{
	return (uint8_t)(s % 255 + 1); /* 1..255, never the cleared 0 */
}

/* One ping: post, wait for the echo. */
static int ping(struct perf_ep *ep, struct perf_sq *sq, uint32_t size,
		uint8_t seq)
{
	int ret = perf_sq_reserve(ep, sq, 1);

	if (ret)
		return ret;
	if (ep->prm.verb == PERF_WRITE)
		perf_tx(ep, 0)[size - 1] = seq;
	ret = perf_sq_post(ep, sq, ep->prm.verb, size, 0, 1, 0);
	if (ret)
		return ret;
	if (ep->prm.verb == PERF_WRITE)
		ret = wait_byte(ep, perf_rx(ep, 0) + size - 1, seq);
	else
		ret = wait_recv(ep, NULL);
	return ret ? ret : perf_sq_reap(ep, sq);
}

static int read_once(struct perf_ep *ep, struct perf_sq *sq, uint32_t size)
{
	int ret = perf_sq_post(ep, sq, PERF_READ, size, 0, 1, 1);

	return ret ? ret : perf_sq_drain(ep, sq);
}

static int client_pingpong(struct perf_ep *ep, uint32_t size,
			   struct samples *s)
{
	const struct perf_opts *o = ep->opts;
	int half = ep->prm.verb != PERF_READ;
	struct perf_sq sq = { 0 };
	uint64_t t_end = 0;
	uint8_t seq = 1;
	int ret = 0;

	if (ep->prm.verb == PERF_WRITE)
		memset(perf_rx(ep, 0), 0, size);
	for (uint64_t i = 0; !lat_done(o, i, t_end); i++, seq = next_seq(seq)) {
		uint64_t t0, t1;

		if (o->duration && i == o->warmup)
			t_end = lat_end_ticks(o);
		t0 = perf_now();
		ret = half ? ping(ep, &sq, size, seq) : read_once(ep, &sq, size);
		t1 = perf_now();
		if (ret)
			return ret;
		if (i >= o->warmup)
			ret = samples_add(ep, s, perf_ticks_us(t1 - t0) /
					  (half ? 2.0 : 1.0));
		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------ under load */

struct load {
	uint64_t total, sent, expected, got;
	uint64_t measured, got_measured; /* sampled replies after warm-up */
	uint64_t *ts;  /* send time of each sampled message */
	uint8_t *seen;
};

static int load_reply(struct perf_ep *ep, struct load *l, struct samples *s,
		      uint32_t slot, uint64_t now)
{
	uint64_t seq, k;

	memcpy(&seq, perf_rx(ep, slot), sizeof(seq));
	if (seq >= l->sent || seq % ep->prm.sample)
		return perf_post_recv(ep, slot); /* not ours: ignore */
	k = seq / ep->prm.sample;
	if (l->seen[k]++)
		return perf_post_recv(ep, slot);
	l->got++;
	if (seq >= ep->opts->warmup) {
		int ret = samples_add(ep, s, perf_ticks_us(now - l->ts[k]) / 2.0);

		if (ret)
			return ret;
		l->got_measured++;
	}
	return perf_post_recv(ep, slot);
}

/* Re-posted n reply buffers: tell the server (credits, iWARP only). */
static int load_credit(struct perf_ep *ep, struct perf_sq *sq, int n)
{
	return n > 0 ? perf_credit_received(ep, sq, (uint32_t)n) : 0;
}

static int load_poll(struct perf_ep *ep, struct perf_sq *sq, struct load *l,
		     struct samples *s)
{
	struct ibv_wc wc[16];
	int n = perf_poll(ep, ep->rcq, wc, 16, 0);
	uint64_t now = perf_now();

	for (int i = 0; i < n; i++) {
		int ret = load_reply(ep, l, s, (uint32_t)wc[i].wr_id, now);

		if (ret)
			return ret;
	}
	return n < 0 ? n : load_credit(ep, sq, n);
}

static int load_send(struct perf_ep *ep, struct perf_sq *sq, struct load *l,
		     uint32_t size, uint64_t now)
{
	uint32_t slot = (uint32_t)(l->sent % ep->tx_slots);
	int ret;

	/* No credit: the server has not re-posted yet; send a bit late. */
	if (!perf_credit_ok(ep, 1))
		return 0;
	ret = perf_sq_reserve(ep, sq, 1);
	if (ret)
		return ret;
	memcpy(perf_tx(ep, slot), &l->sent, sizeof(l->sent));
	if (l->sent % ep->prm.sample == 0)
		l->ts[l->sent / ep->prm.sample] = now;
	ret = perf_sq_post(ep, sq, PERF_SEND, size, slot, 1, 0);
	if (ret)
		return ret;
	l->sent++;
	return 1;
}

/* Sampled replies still missing one second after the last send are lost. */
static int load_drain(struct perf_ep *ep, struct perf_sq *sq, struct load *l,
		      struct samples *s)
{
	uint64_t deadline = perf_mono_ns() + 1000000000ull;

	while (l->got < l->expected && perf_mono_ns() < deadline) {
		int ret = load_poll(ep, sq, l, s);

		if (ret < 0)
			return ret;
	}
	return 0;
}

static int client_load(struct perf_ep *ep, uint32_t size, struct samples *s,
		       struct perf_lat_extra *x)
{
	const struct perf_opts *o = ep->opts;
	uint64_t gap = perf_us_ticks(1e6 / (double)o->rate), next;
	struct perf_sq sq = { 0 };
	struct load l = { 0 };
	int ret = 0;

	l.total = o->warmup + (o->duration ? o->rate * o->duration : o->iters);
	l.expected = (l.total + ep->prm.sample - 1) / ep->prm.sample;
	l.measured = l.expected -
		     (o->warmup + ep->prm.sample - 1) / ep->prm.sample;
	l.ts = calloc(l.expected, sizeof(*l.ts));
	l.seen = calloc(l.expected, 1);
	if (!l.ts || !l.seen) {
		ret = -ENOMEM;
		goto out;
	}
	next = perf_now();
	while (l.sent < l.total && ret >= 0) {
		uint64_t now = perf_now();

		/* A fixed schedule: late sends go out at once, never skipped. */
		if (now >= next) {
			ret = load_send(ep, &sq, &l, size, now);
			if (ret > 0)
				next += gap;
		}
		if (ret >= 0)
			ret = load_poll(ep, &sq, &l, s);
		if (ret >= 0)
			ret = perf_sq_reap(ep, &sq);
		if (ret >= 0)
			ret = perf_credit_flush(ep, &sq);
	}
	if (ret >= 0)
		ret = load_drain(ep, &sq, &l, s);
	x->sent = l.sent;
	x->lost = l.measured - l.got_measured;
out:
	free(l.ts);
	free(l.seen);
	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------ client */

static int report(struct perf_ep *ep, uint32_t size, struct samples *s,
		  const struct perf_lat_extra *x)
{
	struct lat_summary sum;
	struct lat_hist h;

	if (lat_stats_compute(s->v, s->n, &sum)) {
		snprintf(ep->err, sizeof(ep->err),
			 "no latency samples for size %u", size);
		return -ENODATA;
	}
	if (ep->opts->histogram)
		lat_hist_fill(&h, s->v, s->n);
	perf_out_lat(stdout, ep->opts, size, &sum,
		     ep->opts->histogram ? &h : NULL, x);
	return 0;
}

/* Ping-pong never has more than one message in flight: no credits. */
static void lat_credits(struct perf_ep *ep)
{
	ep->credits = ep->prm.rate && ep->transport == PERF_TR_IWARP;
}

static int lat_client_size(struct perf_ep *ep, uint32_t size)
{
	struct perf_lat_extra x = { 0 };
	struct samples s = { 0 };
	struct perf_msg done;
	int ret;

	lat_credits(ep);
	if (ep->prm.rate)
		ret = client_load(ep, size, &s, &x);
	else
		ret = client_pingpong(ep, size, &s);
	if (!ret) {
		ret = perf_stop(ep, s.n, &done);
		if (ret)
			snprintf(ep->err, sizeof(ep->err),
				 "server did not finish size %u: %s", size,
				 strerror(-ret));
	}
	if (!ret)
		ret = report(ep, size, &s, &x);
	free(s.v);
	return ret;
}

/* ------------------------------------------------------------ server */

/* Under load on iWARP: a reply waits until the client has room for it. */
static int wait_credit(struct perf_ep *ep, struct perf_sq *sq)
{
	uint64_t since = 0;
	uint32_t spins = 0;

	while (!perf_credit_ok(ep, 1)) {
		/* The client may wait for our report as we wait for its. */
		int n = perf_sq_reap(ep, sq);

		if (!n)
			n = perf_credit_flush(ep, sq);
		if (!n)
			n = idle_check(ep, &spins, &since, 0,
				       "waiting for credit");
		if (n)
			return n;
	}
	return 0;
}

static int echo_one(struct perf_ep *ep, struct perf_sq *sq, uint32_t size,
		    uint32_t slot, uint64_t *replies)
{
	uint32_t tx = 0;
	int ret;

	if (ep->prm.rate) {
		uint64_t seq;

		memcpy(&seq, perf_rx(ep, slot), sizeof(seq));
		if (seq % ep->prm.sample) {
			ret = perf_post_recv(ep, slot);
			return ret ? ret : perf_credit_received(ep, sq, 1);
		}
		tx = (uint32_t)(*replies % ep->tx_slots);
		memcpy(perf_tx(ep, tx), &seq, sizeof(seq));
	}
	ret = perf_post_recv(ep, slot);
	if (!ret)
		ret = perf_credit_received(ep, sq, 1);
	if (!ret)
		ret = wait_credit(ep, sq);
	if (!ret)
		ret = perf_sq_reserve(ep, sq, 1);
	if (!ret)
		ret = perf_sq_post(ep, sq, ep->prm.verb, size, tx, 1, 0);
	(*replies)++;
	return ret;
}

/* Echo each received message (send, write_imm) until the client's STOP. */
static int serve_recv_echo(struct perf_ep *ep, uint32_t size)
{
	struct perf_sq sq = { 0 };
	uint64_t replies = 0, since = perf_mono_ns();
	uint32_t spins = 0;

	for (;;) {
		struct ibv_wc wc[16];
		struct perf_msg m;
		int n = perf_poll(ep, ep->rcq, wc, 16, 100);

		for (int i = 0; i < n; i++) {
			int ret = echo_one(ep, &sq, size, (uint32_t)wc[i].wr_id,
					   &replies);

			if (ret)
				return ret;
		}
		if (n < 0 || (n == 0 && (perf_sq_reap(ep, &sq) ||
					 perf_credit_flush(ep, &sq))))
			return n < 0 ? n : -EIO;
		if (n > 0) {
			since = perf_mono_ns();
			continue;
		}
		if (++spins % CHECK_EVERY && !ep->prm.events)
			continue;
		n = perf_check_peer(ep, &m, since);
		if (n == 1 && m.type == PERF_MSG_STOP)
			return perf_send_simple(ep, PERF_MSG_DONE, replies);
		if (n)
			return peer_error(ep, n, "echoing");
	}
}

/* Write ping-pong: answer each write the client made with our own. */
static int serve_write_echo(struct perf_ep *ep, uint32_t size)
{
	volatile uint8_t *p = perf_rx(ep, 0) + size - 1;
	struct perf_sq sq = { 0 };
	uint64_t replies = 0, since = perf_mono_ns();
	uint32_t spins = 0;
	uint8_t seq = 1;

	for (;;) {
		struct perf_msg m;
		int n;

		if (*p == seq) {
			int ret = perf_sq_reserve(ep, &sq, 1);

			perf_tx(ep, 0)[size - 1] = seq;
			if (!ret)
				ret = perf_sq_post(ep, &sq, PERF_WRITE, size, 0, 1, 0);
			if (!ret)
				ret = perf_sq_reap(ep, &sq);
			if (ret)
				return ret;
			seq = next_seq(seq);
			replies++;
			since = perf_mono_ns();
			continue;
		}
		if (++spins % CHECK_EVERY)
			continue;
		n = perf_check_peer(ep, &m, since);
		if (n == 1 && m.type == PERF_MSG_STOP)
			return perf_send_simple(ep, PERF_MSG_DONE, replies);
		if (n)
			return peer_error(ep, n, "echoing writes");
	}
}

static int lat_server_size(struct perf_ep *ep, const struct perf_msg *run)
{
	uint32_t size = (uint32_t)run->v[0];
	struct perf_msg stop;
	int ret;

	lat_credits(ep);
	if (ep->prm.verb == PERF_WRITE)
		memset(perf_rx(ep, 0), 0, size);
	ret = perf_send_simple(ep, PERF_MSG_READY, 0);
	if (ret)
		return ret;
	switch (ep->prm.verb) {
	case PERF_SEND:
	case PERF_WRITE_IMM:
		return serve_recv_echo(ep, size);
	case PERF_WRITE:
		return serve_write_echo(ep, size);
	case PERF_READ:
		ret = perf_wait_stop(ep, &stop);
		return ret ? peer_error(ep, ret, "serving reads") :
		       perf_send_simple(ep, PERF_MSG_DONE, 0);
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct perf_tool_ops ops = {
		.client_size = lat_client_size,
		.server_size = lat_server_size,
	};

	return perf_main(argc, argv, PERF_TOOL_LAT, &ops);
}
