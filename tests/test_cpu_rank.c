/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU noise (lib/proto/cpu_rank.c): the gaps' histogram against exact
 * figures from recorded gaps (tests/data/noise_host_cpu*.txt: a thread
 * pinned to each vCPU of this build machine spun for a second on
 * CLOCK_MONOTONIC_RAW under a parallel build, every gap of 1 us or more
 * written down), the ranking's criteria one by one, its order on many
 * CPUs, and the sibling-aware choice of polling CPUs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cpu_rank.h"

#ifndef MSGA_TEST_DATA
#error "MSGA_TEST_DATA must name tests/data"
#endif

Test(cpu_rank, buckets)
{
	uint64_t prev_top = 0;

	for (uint32_t b = 0; b < MSGA__NOISE_BUCKETS; b++) {
		uint64_t top = msga__noise_bucket_top(b);

		cr_assert(b == 0 || top > prev_top, "bucket %u", b);
		cr_assert_eq(msga__noise_bucket(top), b, "bucket %u", b);
		if (b)
			cr_assert_eq(msga__noise_bucket(prev_top + 1), b);
		prev_top = top;
	}
	cr_assert_eq(prev_top, UINT64_MAX);
	cr_assert_eq(msga__noise_bucket(UINT64_MAX), MSGA__NOISE_BUCKETS - 1);
	/* Exact below 32 ns, then at most 1/16 wide. */
	for (uint64_t v = 0; v < 32; v++)
		cr_assert_eq(msga__noise_bucket_top(msga__noise_bucket(v)), v);
	for (uint64_t v = 32; v < 5000000; v = v * 17 / 16 + 3) {
		uint64_t top = msga__noise_bucket_top(msga__noise_bucket(v));

		cr_assert(top >= v && top - v <= v / 16, "%llu -> %llu",
			  (unsigned long long)v, (unsigned long long)top);
	}
}

struct recorded {
	uint64_t run_ns, threshold_ns;
	uint64_t gaps[4096];
	size_t n;
};

static int cmp_gap(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void load(const char *name, struct recorded *r)
{
	char path[512], line[256];
	unsigned long long v, run, thr;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", MSGA_TEST_DATA, name);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	cr_assert_not_null(fgets(line, sizeof(line), f));
	cr_assert_eq(sscanf(line, "# msga_cpu recorded gaps: cpu %*u run_ns %llu "
			    "threshold_ns %llu", &run, &thr), 2, "%s", line);
	r->run_ns = run;
	r->threshold_ns = thr;
	r->n = 0;
	while (fscanf(f, "%llu", &v) == 1) {
		cr_assert_lt(r->n, sizeof(r->gaps) / sizeof(r->gaps[0]));
		r->gaps[r->n++] = v;
	}
	fclose(f);
	cr_assert_gt(r->n, 100);
	qsort(r->gaps, r->n, sizeof(r->gaps[0]), cmp_gap);
}

static void summarise(const struct recorded *r, struct msga__noise_stats *s)
{
	static struct msga__noise n;

	msga__noise_init(&n, r->threshold_ns);
	for (size_t i = 0; i < r->n; i++)
		msga__noise_add(&n, r->gaps[i]);
	cr_assert_eq(msga__noise_summary(&n, r->run_ns, s), 0);
}

/* The histogram's figures against the exact ones from the sorted gaps. */
static void check_recorded(const char *name)
{
	struct msga__noise_stats s;
	struct recorded *r = malloc(sizeof(*r));
	uint64_t sum = 0;

	cr_assert_not_null(r);
	load(name, r);
	summarise(r, &s);
	for (size_t i = 0; i < r->n; i++)
		sum += r->gaps[i];
	cr_assert_eq(s.count, r->n);
	cr_assert_eq(s.min_ns, r->gaps[0]);
	cr_assert_eq(s.max_ns, r->gaps[r->n - 1]);
	cr_assert_eq(s.stolen_ns, sum);
	cr_assert_eq(s.mean_ns, sum / r->n);
	cr_assert_eq(s.stolen_ppb,
		     (uint64_t)((unsigned __int128)sum * 1000000000 / r->run_ns));
	cr_assert_eq(s.per_ks,
		     (uint64_t)((unsigned __int128)r->n * 1000000000000 /
				r->run_ns));
	cr_assert_geq(s.min_ns, r->threshold_ns);
	for (int i = 0; i < MSGA__NOISE_PCTS; i++) {
		/* Nearest rank: ceil(n * p), 1-based. */
		uint64_t rank = (r->n * msga__noise_pct[i] + 99999) / 100000;
		uint64_t exact = r->gaps[rank - 1];

		cr_assert(s.pct_ns[i] >= exact &&
			  s.pct_ns[i] - exact <= exact / 16 &&
			  s.pct_ns[i] <= s.max_ns,
			  "%s p%u: %llu, exact %llu", name, msga__noise_pct[i],
			  (unsigned long long)s.pct_ns[i],
			  (unsigned long long)exact);
		cr_assert(i == 0 || s.pct_ns[i] >= s.pct_ns[i - 1]);
	}
	/* Under 100000 gaps, p99.999 is the largest. */
	cr_assert_eq(s.pct_ns[5], s.max_ns);
	free(r);
}

Test(cpu_rank, recorded_cpu0)
{
	check_recorded("noise_host_cpu0.txt");
}

Test(cpu_rank, recorded_cpu1)
{
	check_recorded("noise_host_cpu1.txt");
}

Test(cpu_rank, recorded_ranked)
{
	struct msga__cpu_noise c[2] = { { .cpu = 0 }, { .cpu = 1 } };
	struct recorded *r = malloc(sizeof(*r));
	uint32_t order[2], best;

	cr_assert_not_null(r);
	load("noise_host_cpu0.txt", r);
	summarise(r, &c[0].st);
	load("noise_host_cpu1.txt", r);
	summarise(r, &c[1].st);
	c[0].flags = c[1].flags = MSGA__CPU_MEASURED;
	cr_assert_eq(msga__cpu_rank(c, 2, order), 0);
	best = order[0];
	cr_assert_eq(c[best].rank, 1);
	cr_assert_eq(c[order[1]].rank, 2);
	cr_assert_eq(strncmp(c[best].why, "quietest: ", 10), 0, "%s",
		     c[best].why);
	cr_assert_gt(strlen(c[order[1]].why), 0);
	cr_assert_null(strchr(c[order[1]].why, '\n'));
	free(r);
}

Test(cpu_rank, summary_edges)
{
	struct msga__noise n;
	struct msga__noise_stats s;

	msga__noise_init(&n, 1000);
	cr_assert_eq(msga__noise_summary(&n, 0, &s), -EINVAL);
	cr_assert_eq(msga__noise_summary(&n, 1000000, &s), 0);
	cr_assert_eq(s.count, 0);
	cr_assert_eq(s.min_ns, 0);
	cr_assert_eq(s.pct_ns[0], 0);
	cr_assert_eq(s.run_ns, 1000000);
	cr_assert_eq(s.threshold_ns, 1000);
	msga__noise_add(&n, 999);          /* below the threshold */
	msga__noise_add(&n, 1000);
	msga__noise_add(&n, 3000);
	cr_assert_eq(msga__noise_summary(&n, 1000000, &s), 0);
	cr_assert_eq(s.count, 2);
	cr_assert_eq(s.stolen_ns, 4000);
	cr_assert_eq(s.stolen_ppb, 4000000);
	cr_assert_eq(s.per_ks, 2000000);   /* 2000 gaps/s */
	cr_assert_eq(s.pct_ns[0], 1023);   /* 1000's bucket: 992..1023 */
	cr_assert_eq(s.pct_ns[1], 3000);   /* capped at the largest */
	/* More stolen than the run (a caller's slip): 100 %, no more. */
	msga__noise_add(&n, 2000000);
	cr_assert_eq(msga__noise_summary(&n, 1000000, &s), 0);
	cr_assert_eq(s.stolen_ppb, 1000000000);
}

static struct msga__cpu_noise cpu_with(uint32_t cpu, uint64_t stolen_ppb,
				       uint64_t per_s, uint64_t max_ns)
{
	struct msga__cpu_noise c = { .cpu = cpu, .flags = MSGA__CPU_MEASURED };

	c.st.run_ns = 1000000000;
	c.st.stolen_ppb = stolen_ppb;
	c.st.stolen_ns = stolen_ppb;
	c.st.per_ks = per_s * 1000;
	c.st.count = per_s;
	c.st.max_ns = max_ns;
	return c;
}

/*
 * Each criterion decides once, and the reason names it: every CPU but 11
 * (and 15, not measured) is in the same stolen band, 1024 to 2047 ppb.
 */
Test(cpu_rank, criteria)
{
	struct msga__cpu_noise c[8];
	static const struct {
		uint32_t cpu;
		const char *why;
	} want[8] = {
		{ 10, "quietest: 0.000110% stolen in 10 gaps (10.0/s), "
		      "max 10.0 us" },
		{ 14, "within 2x of cpu 10 on stolen, interrupts/s, gaps/s and "
		      "max; then by exact figures" },
		{ 13, "stolen, interrupts/s and gaps/s within 2x of cpu 14, but "
		      "max 100.0 us vs 12.0 us" },
		{ 12, "stolen and interrupts/s within 2x of cpu 13, but 100.0 "
		      "gaps/s vs 12.0" },
		{ 16, "stolen within 2x of cpu 12, but 5000 interrupts/s vs 0" },
		{ 17, "stolen within 2x of cpu 16, but unknown interrupts/s "
		      "vs 5000" },
		{ 11, "stolen 0.000500% vs 0.000140% on cpu 17" },
		{ 15, "not measured" },
	};
	uint32_t order[8];

	c[0] = cpu_with(15, 0, 0, 0);
	c[0].flags = 0;
	c[1] = cpu_with(11, 5000, 10, 10000);    /* stolen band */
	c[2] = cpu_with(12, 1500, 100, 10000);   /* gap rate band */
	c[3] = cpu_with(13, 1200, 12, 100000);   /* max band */
	c[4] = cpu_with(14, 1150, 10, 12000);    /* exact stolen */
	c[5] = cpu_with(10, 1100, 10, 10000);
	c[6] = cpu_with(16, 1050, 1, 1000);      /* interrupt band */
	c[6].irqs = 5000;
	c[7] = cpu_with(17, 1400, 1, 1000);      /* interrupts unknown */
	c[7].irqs = MSGA__CPU_IRQS_UNKNOWN;
	cr_assert_eq(msga__cpu_rank(c, 8, order), 0);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(c[order[i]].cpu, want[i].cpu, "place %d", i);
		cr_assert_eq(c[order[i]].rank, (uint32_t)i + 1);
		cr_assert_str_eq(c[order[i]].why, want[i].why);
	}
	cr_assert_eq(msga__cpu_rank(c, MSGA__CPU_RANK_MAX + 1, order),
		     -EINVAL);
}

static uint32_t band_of(uint64_t x)
{
	return x ? 64 - (uint32_t)__builtin_clzll(x) : 0;
}

/* Many CPUs of random noise: a permutation, and the first keys hold. */
Test(cpu_rank, many)
{
	enum { N = 300 };
	static struct msga__cpu_noise c[N];
	static uint32_t order[N];
	static uint8_t seen[N];
	uint64_t x = 12345;

	for (uint32_t i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		c[i] = cpu_with(i, x >> 50, (x >> 30) & 1023, (x >> 10) & 0xfffff);
		if (!(x >> 61))
			c[i].flags = 0;
	}
	cr_assert_eq(msga__cpu_rank(c, N, order), 0);
	for (uint32_t i = 0; i < N; i++) {
		cr_assert_lt(order[i], N);
		cr_assert_not(seen[order[i]]);
		seen[order[i]] = 1;
		cr_assert_eq(c[order[i]].rank, i + 1);
		if (i) {
			const struct msga__cpu_noise *p = &c[order[i - 1]];
			const struct msga__cpu_noise *q = &c[order[i]];

			cr_assert(!(q->flags & MSGA__CPU_MEASURED) ||
				  (p->flags & MSGA__CPU_MEASURED));
			cr_assert(!(q->flags & MSGA__CPU_MEASURED) ||
				  band_of(p->st.stolen_ppb) <=
					  band_of(q->st.stolen_ppb));
		}
	}
}

Test(cpu_rank, core_key)
{
	cr_assert_eq(msga__cpu_core_key("0,4\n", 4, 4), 0);
	cr_assert_eq(msga__cpu_core_key("2-3\n", 4, 3), 2);
	cr_assert_eq(msga__cpu_core_key("7", 1, 7), 7);
	cr_assert_eq(msga__cpu_core_key("1", 1, 0), -EINVAL);
	cr_assert_eq(msga__cpu_core_key("x", 1, 0), -EINVAL);
	cr_assert_eq(msga__cpu_core_key("9000", 4, 9000), -ERANGE);
}

/*
 * 4 cores of 2 threads, numbered as Intel numbers them (core k: CPUs k
 * and k + 4), ranked 0, 4, 1, 5, 2, 6, 3, 7 (each thread right behind its
 * sibling), and CPU 3 not measured.
 */
Test(cpu_rank, pick_siblings)
{
	static const uint32_t ranked[8] = { 0, 4, 1, 5, 2, 6, 3, 7 };
	struct msga__cpu_noise c[8];
	uint32_t core[8], order[8], out[8];

	for (uint32_t i = 0; i < 8; i++) {
		uint32_t cpu = ranked[i];

		c[cpu] = cpu_with(cpu, 1000u << i, 10, 1000);
		core[cpu] = cpu % 4;
	}
	c[3].flags = 0;
	cr_assert_eq(msga__cpu_rank(c, 8, order), 0);
	for (uint32_t i = 0; i < 7; i++)
		cr_assert_eq(order[i], ranked[i == 6 ? 7 : i]);
	/* One per core while cores are free: 0, 1, 2, then 7 (core 3). */
	cr_assert_eq(msga__cpu_pick(c, core, order, 8, 1, out), 1);
	cr_assert_eq(out[0], 0);
	cr_assert_eq(msga__cpu_pick(c, core, order, 8, 2, out), 2);
	cr_assert_eq(out[1], 1);
	cr_assert_eq(msga__cpu_pick(c, core, order, 8, 4, out), 4);
	cr_assert_eq(out[2], 2);
	cr_assert_eq(out[3], 7);
	/* Then the siblings, best first; the unmeasured CPU never. */
	cr_assert_eq(msga__cpu_pick(c, core, order, 8, 8, out), 7);
	cr_assert_eq(out[4], 4);
	cr_assert_eq(out[5], 5);
	cr_assert_eq(out[6], 6);
	cr_assert_eq(msga__cpu_pick(c, core, order, 8, 0, out), 0);
}

/* One more poller beside others (msga_cpu_pick's avoid): a free core's
 * best CPU before a quieter sibling of a taken core; a taken core only
 * when no core is free, flagged shared. */
Test(cpu_rank, pick_free_core)
{
	struct msga__cpu_noise c[4];
	uint32_t core[4] = { 0, 1, 0, 1 }, order[4];
	uint32_t taken0[] = { 0 }, taken01[] = { 0, 1 };
	int shared = -1;

	/* CPU 2 quietest, then 3, 1; CPU 0 not measured (a poller's). */
	c[0] = cpu_with(0, 1000, 10, 1000);
	c[0].flags = 0;
	c[1] = cpu_with(1, 4000, 10, 1000);
	c[2] = cpu_with(2, 1000, 10, 1000);
	c[3] = cpu_with(3, 2000, 10, 1000);
	cr_assert_eq(msga__cpu_rank(c, 4, order), 0);
	cr_assert_eq(order[0], 2);
	cr_assert_eq(msga__cpu_pick_free(c, core, order, 4, NULL, 0, &shared),
		     2);
	cr_assert_eq(shared, 0);
	/* Core 0 taken: CPU 2 is CPU 0's sibling, so 3 (core 1). */
	cr_assert_eq(msga__cpu_pick_free(c, core, order, 4, taken0, 1,
					 &shared), 3);
	cr_assert_eq(shared, 0);
	/* Both cores taken: the quietest all the same, shared. */
	cr_assert_eq(msga__cpu_pick_free(c, core, order, 4, taken01, 2,
					 &shared), 2);
	cr_assert_eq(shared, 1);
	/* Nothing measured: -1. */
	for (int i = 0; i < 4; i++)
		c[i].flags = 0;
	cr_assert_eq(msga__cpu_pick_free(c, core, order, 4, NULL, 0, &shared),
		     -1);
	cr_assert_eq(shared, 0);
}
