/* SPDX-License-Identifier: MIT */
/* perf_sq.c - see perf_sq.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "perf_sq.h"

/* Credit writes are signalled alone and carry no data message. */
#define CREDIT_WR (1ull << 63)

static void account(struct perf_sq *sq, const struct ibv_wc *wc, int n)
{
	for (int i = 0; i < n; i++) {
		if (wc[i].wr_id & CREDIT_WR) {
			sq->outstanding--;
			continue;
		}
		sq->outstanding -= (uint32_t)wc[i].wr_id;
		sq->completed += wc[i].wr_id;
	}
}

int perf_sq_reap(struct perf_ep *ep, struct perf_sq *sq)
{
	struct ibv_wc wc[16];
	int n = perf_poll(ep, ep->scq, wc, 16, 0);

	account(sq, wc, n);
	return n < 0 ? n : 0;
}

static int sq_wait(struct perf_ep *ep, struct perf_sq *sq, uint32_t limit)
{
	uint64_t since = perf_mono_ns();
	uint32_t spins = 0;

	while (sq->outstanding > limit) {
		struct ibv_wc wc[16];
		int n = perf_poll(ep, ep->scq, wc, 16, 100);

		if (n < 0)
			return n;
		account(sq, wc, n);
		if (n || (++spins & 4095))
			continue;
		if (perf_mono_ns() - since >
		    (uint64_t)ep->opts->timeout_s * 1000000000ull) {
			snprintf(ep->err, sizeof(ep->err),
				 "send completions stopped for %u s",
				 ep->opts->timeout_s);
			return -ETIMEDOUT;
		}
	}
	return 0;
}

int perf_sq_reserve(struct perf_ep *ep, struct perf_sq *sq, uint32_t n)
{
	return sq_wait(ep, sq, ep->prm.tx_depth - n);
}

int perf_sq_drain(struct perf_ep *ep, struct perf_sq *sq)
{
	return sq_wait(ep, sq, 0);
}

int perf_sq_post(struct perf_ep *ep, struct perf_sq *sq, enum perf_verb verb,
		 uint32_t size, uint32_t tx_slot, uint32_t n, int force_signal)
{
	uint64_t mask = 0;
	uint32_t q = ep->prm.cq_mod;
	uint64_t ids[64];
	int ret;

	/* One work request id per send: the number it covers if signalled. */
	for (uint32_t k = 0; k < n; k++) {
		sq->unsignaled++;
		ids[k] = 0;
		if (sq->unsignaled >= q || (force_signal && k == n - 1)) {
			mask |= 1ull << k;
			ids[k] = sq->unsignaled;
			sq->unsignaled = 0;
		}
	}
	ret = perf_post_ids(ep, verb, size, tx_slot, n, mask, ids);
	if (ret) {
		snprintf(ep->err, sizeof(ep->err), "ibv_post_send failed: %s",
			 strerror(-ret));
		return ret;
	}
	sq->outstanding += n;
	ep->tx_total += n;
	return 0;
}

int perf_sq_post_credit(struct perf_ep *ep, struct perf_sq *sq, uint64_t value)
{
	int ret;

	/* The queue pair has one slot more than data may use: see perf_sq.h. */
	if (sq->outstanding > ep->prm.tx_depth)
		return 0;
	ret = perf_post_credit(ep, value, CREDIT_WR);
	if (ret) {
		snprintf(ep->err, sizeof(ep->err), "posting a credit failed: %s",
			 strerror(-ret));
		return ret;
	}
	sq->outstanding++;
	return 1;
}

int perf_credit_flush(struct perf_ep *ep, struct perf_sq *sq)
{
	uint32_t every = ep->prm.rx_depth / 4 ? ep->prm.rx_depth / 4 : 1;
	int ret;

	if (!ep->credits || ep->rx_total - ep->credit_last < every)
		return 0;
	ret = perf_sq_post_credit(ep, sq, ep->rx_total);
	if (ret > 0)
		ep->credit_last = ep->rx_total;
	return ret < 0 ? ret : 0;
}

int perf_credit_received(struct perf_ep *ep, struct perf_sq *sq, uint32_t n)
{
	ep->rx_total += n;
	return perf_credit_flush(ep, sq);
}
