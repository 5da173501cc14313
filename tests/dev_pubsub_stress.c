/* SPDX-License-Identifier: MIT */
/*
 * 2^18 (262 144) 64-byte messages, publisher to subscriber through the
 * device under test, all in one process driven by msga_ctx_poll(): every
 * message must arrive once, in order, with its checksum intact. Prints
 * the rate (informational; no timing assertion). MSGA_STRESS_COUNT sets
 * another count (it was a million until the device loops ran at once in
 * the VM: under ASan, sharing the host with the other device's loop, a
 * million ran past the time budget on a loaded host; 2^18 still wrap the
 * 256 KiB ring about a hundred times).
 *
 * Publishing stops after MSGA_STRESS_SECONDS (default 300: soft RDMA under
 * emulation has run this at 3k-200k msg/s) so a pathological slowdown
 * ends the test instead of hanging it; falling short of the target fails.
 */
#include <errno.h>
#include <stdlib.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "dev_pubsub_util.h"

#define MSG 64

static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 10) : dflt;
}

Test(pubsub_stress, many_messages_in_order, .timeout = 600)
{
	static struct dp_rec rec, ev;
	struct msga_ctx *ctx = devtest_open_ctx();
	struct msga_pub *pub = dp_pub(ctx, 0, &ev);
	struct msga_sub *sub = dp_sub(ctx, "s.*", &rec);
	uint32_t t0, t1;
	const uint64_t want = env_u64("MSGA_STRESS_COUNT", 1u << 18);
	const uint64_t budget_ms = env_u64("MSGA_STRESS_SECONDS", 300) * 1000;
	uint64_t start, ms, n;

	cr_assert_eq(msga_pub_topic(pub, "s.0", &t0), 0);
	cr_assert_eq(msga_pub_topic(pub, "s.1", &t1), 0);
	rec.strict = 1;
	dp_connect(sub, pub, &ctx, 1, 1);
	start = dp_now_ms();
	for (n = 0; n < want; n++) {
		uint32_t t = (n & 1) ? t1 : t0;

		if (!(n & 1023) && dp_now_ms() - start > budget_ms)
			break;
		dp_send(pub, t, n / 2 + 1, MSG, &ctx, 1);
	}
	cr_assert(dp_poll_until64(&ctx, 1, &rec.total, n, 60000),
		  "got %llu of %llu; subscriber disconnected %d (status %d), "
		  "publisher disconnected %d (status %d); bad %llu %s; %s",
		  (unsigned long long)rec.total, (unsigned long long)n,
		  rec.disconnected, rec.last_status, ev.disconnected,
		  ev.last_status, (unsigned long long)rec.bad, rec.first_bad,
		  msga_ctx_last_error(ctx));
	ms = dp_now_ms() - start;
	for (int i = 0; i < 100; i++)
		msga_ctx_poll(ctx, 64);
	cr_expect_eq(n, want, "only %llu of %llu messages could be sent in %llu s",
		     (unsigned long long)n, (unsigned long long)want,
		     (unsigned long long)budget_ms / 1000);
	cr_expect_eq(rec.total, n, "duplicates");
	cr_expect_eq(rec.got[0][t0], (n + 1) / 2);
	cr_expect_eq(rec.got[0][t1], n / 2);
	cr_expect_eq(rec.bad, 0, "%s", rec.first_bad);
	cr_log_info("%s: %llu x %d B delivered in order in %llu ms = %.0f msg/s%s",
		    devtest_env()->dev, (unsigned long long)n, MSG,
		    (unsigned long long)ms, ms ? n * 1000.0 / ms : 0.0,
		    n < want ? " (stopped by the time budget)" : "");
	msga_ctx_close(ctx);
}
