/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

static uint32_t fnv1a(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= *p++;
		h *= 16777619u;
	}
	return h;
}

void dp_fill(void *buf, size_t len, uint32_t topic, uint64_t seq)
{
	uint8_t *p = buf;
	uint64_t x = seq * 0x9e3779b97f4a7c15ull + topic;
	uint32_t sum;

	cr_assert_geq(len, 16, "test messages carry seq and checksum");
	memcpy(p, &seq, 8);
	for (size_t i = 8; i < len - 4; i++) {
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		p[i] = (uint8_t)(x * 0x2545f4914f6cdd1dull >> 56);
	}
	sum = fnv1a(p, len - 4);
	memcpy(p + len - 4, &sum, 4);
}

int dp_check(const void *buf, size_t len, uint32_t topic, uint64_t seq)
{
	const uint8_t *p = buf;
	uint64_t s;
	uint32_t sum;

	(void)topic;
	if (len < 16)
		return -1;
	memcpy(&s, p, 8);
	memcpy(&sum, p + len - 4, 4);
	if (s != seq)
		return -2;
	return fnv1a(p, len - 4) == sum ? 0 : -3;
}

static void bad(struct dp_rec *r, const char *fmt, uint32_t c, uint32_t t,
		uint64_t a, uint64_t b)
{
	if (!r->bad++)
		snprintf(r->first_bad, sizeof(r->first_bad), fmt, c, t,
			 (unsigned long long)a, (unsigned long long)b);
}

void dp_on_msg(const struct msga_msg *m, void *user)
{
	struct dp_rec *r = user;
	uint32_t c = m->conn_id % DP_CONNS, t = m->topic_id % DP_TOPICS;
	uint64_t want = r->next[c][t];

	if (!want && r->strict)
		want = 1;
	if (want && m->seq != want)
		bad(r, "conn %u topic %u: seq %llu, expected %llu", c, t,
		    m->seq, want);
	if (m->size != sizeof(*m)) /* 0.10: the library's size, first */
		bad(r, "conn %u topic %u: msg size %llu, expected %llu", c, t,
		    m->size, sizeof(*m));
	if (dp_check(m->data, m->len, m->topic_id, m->seq))
		bad(r, "conn %u topic %u: seq %llu len %llu: bad payload", c, t,
		    m->seq, m->len);
	r->next[c][t] = m->seq + 1;
	r->got[c][t]++;
	r->total++;
	r->bytes += m->len;
	snprintf(r->topic_name[c][t], sizeof(r->topic_name[c][t]), "%s",
		 m->topic);
}

void dp_on_event(const struct msga_event *ev, void *user)
{
	struct dp_rec *r = user;

	if (ev->size != sizeof(*ev)) /* 0.10: the library's size, first */
		bad(r, "conn %u type %u: event size %llu, expected %llu",
		    ev->conn_id, ev->type, ev->size, sizeof(*ev));
	r->last_status = ev->status;
	r->last_conn = ev->conn_id;
	if (ev->type == MSGA_EVENT_DISCONNECTED && ev->topic) {
		if (ev->status)
			r->stream_silent++;
		else
			r->stream_ended++;
		return;
	}
	if (ev->type == MSGA_EVENT_CONNECTED)
		r->connected++;
	else if (ev->type == MSGA_EVENT_DISCONNECTED)
		r->disconnected++;
	else if (ev->type == MSGA_EVENT_CONNECT_FAILED)
		r->failed++;
}

int dp_connect_id(struct msga_sub *sub, const char *uri)
{
	uint32_t id = UINT32_MAX;
	int ret = msga_sub_connect(sub, uri, &id);

	if (ret)
		return ret;
	cr_assert_lt(id, (uint32_t)INT32_MAX, "conn_id %u", id);
	return (int)id;
}

const char *dp_uri(uint16_t port)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "rdma://%s:%u", devtest_env()->addr, port);
	return buf;
}

const char *dp_ud_uri(int port)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "ud://%s:%d", devtest_env()->addr, port);
	return buf;
}

int dp_is_iwarp(void)
{
	return !strcmp(devtest_env()->transport, "iWARP");
}

struct msga_pub *dp_pub_at(struct msga_ctx *ctx, const char *uri,
			   uint32_t flags, struct dp_rec *events)
{
	struct msga_pub_attr a = { .size = sizeof(a), .flags = flags,
				   .uri = uri, .on_event = dp_on_event,
				   .user = events };
	struct msga_pub *pub = NULL;
	int ret = msga_pub_create(ctx, &a, &pub);

	cr_assert_eq(ret, 0, "msga_pub_create(%s) = %d: %s", a.uri, ret,
		     msga_ctx_last_error(ctx));
	return pub;
}

struct msga_pub *dp_pub(struct msga_ctx *ctx, uint32_t flags,
			struct dp_rec *events)
{
	struct msga_pub *pub = dp_pub_at(ctx, dp_uri(0), flags, events);

	cr_assert_gt(msga_pub_port(pub), 0);
	return pub;
}

struct msga_sub *dp_sub_flags(struct msga_ctx *ctx, const char *pattern,
			      uint32_t flags, struct dp_rec *rec)
{
	struct msga_sub_attr a = { .size = sizeof(a), .flags = flags,
				   .pattern = pattern, .on_msg = dp_on_msg,
				   .on_event = dp_on_event, .user = rec };
	struct msga_sub *sub = NULL;
	int ret = msga_sub_create(ctx, &a, &sub);

	cr_assert_eq(ret, 0, "msga_sub_create(%s) = %d", pattern, ret);
	return sub;
}

struct msga_sub *dp_sub(struct msga_ctx *ctx, const char *pattern,
			struct dp_rec *rec)
{
	return dp_sub_flags(ctx, pattern, 0, rec);
}

uint64_t dp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int poll_all(struct msga_ctx **ctxs, int nctx)
{
	for (int i = 0; i < nctx; i++) {
		int ret = msga_ctx_poll(ctxs[i], 64);

		cr_assert_geq(ret, 0, "msga_ctx_poll = %d", ret);
	}
	return 0;
}

int dp_poll_until(struct msga_ctx **ctxs, int nctx, const volatile int *flag,
		  int want, int timeout_ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)timeout_ms;

	while (*flag < want) {
		if (dp_now_ms() > end)
			return 0;
		poll_all(ctxs, nctx);
	}
	return 1;
}

int dp_poll_until64(struct msga_ctx **ctxs, int nctx,
		    const volatile uint64_t *val, uint64_t want,
		    int timeout_ms)
{
	uint64_t end = dp_now_ms() + (uint64_t)timeout_ms;

	while (*val < want) {
		if (dp_now_ms() > end)
			return 0;
		poll_all(ctxs, nctx);
	}
	return 1;
}

int dp_iwarp_refuses(const char *uri)
{
	struct msga_pub_attr pa = { .size = sizeof(pa), .uri = uri,
				    .flags = MSGA_PUB_RELIABLE };
	struct msga_pub *pub = NULL;
	struct msga_sub *sub;
	struct msga_ctx *ctx;
	struct dp_rec rec = { 0 };

	if (!dp_is_iwarp())
		return 0;
	ctx = devtest_open_ctx();
	cr_assert_eq(msga_pub_create(ctx, &pa, &pub), -EOPNOTSUPP, "%s", uri);
	cr_assert_null(pub);
	sub = dp_sub(ctx, "*", &rec);
	cr_assert_eq(msga_sub_connect(sub, uri, NULL), -EOPNOTSUPP, "%s", uri);
	msga_ctx_close(ctx);
	return 1;
}

struct msga_sub_stats dp_sub_stats(const struct msga_sub *sub)
{
	struct msga_sub_stats st = { .size = sizeof(st) };

	cr_assert_eq(msga_sub_stats(sub, &st), 0);
	return st;
}

void dp_wait_total(struct msga_ctx **ctxs, int nctx, const struct dp_rec *rec,
		   const struct msga_sub *sub, uint64_t n)
{
	struct msga_sub_stats st;

	if (dp_poll_until64(ctxs, nctx, &rec->total, n, 30000))
		return;
	st = dp_sub_stats(sub);
	cr_assert_fail("%llu of %llu: recovered %llu, naks %llu, reads %llu, "
		       "fallbacks %llu, lost %llu, bad %llu (%s)",
		       (unsigned long long)rec->total, (unsigned long long)n,
		       (unsigned long long)st.recovered,
		       (unsigned long long)st.naks,
		       (unsigned long long)st.reads,
		       (unsigned long long)st.read_fallbacks,
		       (unsigned long long)st.unrecoverable,
		       (unsigned long long)rec->bad, rec->first_bad);
}

void dp_connect(struct msga_sub *sub, struct msga_pub *pub,
		struct msga_ctx **ctxs, int nctx, int nsubs)
{
	int id = dp_connect_id(sub, dp_uri((uint16_t)msga_pub_port(pub)));
	uint64_t end = dp_now_ms() + 10000;

	cr_assert_geq(id, 0, "msga_sub_connect = %d", id);
	while (msga_pub_subscribers(pub) < nsubs) {
		cr_assert_lt(dp_now_ms(), end,
			     "publisher has %d of %d subscribers after 10 s "
			     "(last errors: %s / %s)",
			     msga_pub_subscribers(pub), nsubs,
			     msga_ctx_last_error(ctxs[0]),
			     msga_ctx_last_error(ctxs[nctx - 1]));
		poll_all(ctxs, nctx);
	}
}

void dp_send(struct msga_pub *pub, uint32_t topic, uint64_t seq, size_t len,
	     struct msga_ctx **ctxs, int nctx)
{
	uint64_t end = 0;
	struct msga_claim claim = { .size = sizeof(claim) };
	int ret;

	for (;;) {
		ret = msga_pub_claim(pub, topic, len, &claim);
		if (ret != -EAGAIN)
			break;
		if (!end)
			end = dp_now_ms() + 20000;
		cr_assert_lt(dp_now_ms(), end,
			     "back-pressured for 20 s at seq %llu",
			     (unsigned long long)seq);
		poll_all(ctxs, nctx);
	}
	cr_assert_eq(ret, 0, "msga_pub_claim = %d", ret);
	dp_fill(claim.data, len, topic, seq);
	ret = msga_pub_commit(pub, &claim);
	cr_assert_geq(ret, 0, "msga_pub_commit = %d", ret);
}
