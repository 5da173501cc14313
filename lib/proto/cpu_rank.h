/* SPDX-License-Identifier: MIT */
/*
 * cpu_rank.h - how noisy each CPU is, and which to poll on (issue 38,
 * msga_cpu): a thread pinned to a CPU spins reading a clock and records
 * every gap between two reads above a threshold (an interrupt, a softirq,
 * another thread, an SMI, a hypervisor's steal: time the CPU did not give
 * the poller). From those gaps, per CPU: how many, how often, their
 * percentiles up to p99.999, the largest, and the total stolen and its
 * share of the run (what sysjitter prints). Then a ranking, with a short
 * reason per CPU, and a choice of N polling CPUs that keeps pollers off
 * the two threads of one core while whole cores are free.
 *
 * The recorder (struct msga__noise) is a bounded histogram, no list: the
 * spinning thread adds a gap in a few instructions whatever the run's
 * length, and one CPU's record is a fixed MSGA__NOISE_BUCKETS counters.
 * Buckets are log-linear: exact below 32 ns, then 16 per power of two,
 * so a percentile is reported within 1/16 (6.25 %) above the true value,
 * and never above the largest gap.
 *
 * The ranking (msga__cpu_rank), best first:
 *   1. measured before not measured (a CPU the thread could not run on);
 *   2. the least stolen share, in bands of a factor of 2;
 *   3. the fewest interrupts (hard and soft) per second taken during its
 *      run, in bands of a factor of 2 (unknown counts rank last here);
 *   4. the fewest gaps per second, in bands of a factor of 2;
 *   5. the smallest largest gap, in bands of a factor of 2;
 *   6. then exactly: stolen time, gap count, largest gap, CPU number.
 * Why stolen share first: it is what a busy poller loses, and it weighs
 * both how often and how long. Why bands: two runs of a second on the
 * same idle CPU differ by tens of percent, so a smaller difference says
 * nothing about the CPU; within a band the next criterion decides. Why
 * interrupts next: they are the cause the gaps measure the effect of,
 * and a count, not a timing, so they still tell CPUs apart when the
 * timings drown in something larger: in a guest whose vCPUs the host
 * deschedules for milliseconds, every vCPU loses 60 % or so, and a vCPU
 * taking seven times the timer interrupts of the other showed it only
 * in its interrupt count (issue 38's test VM under TCG). Why the gap rate
 * before the largest gap: the largest gap is one sample, the least
 * repeatable number of all (a single SMI sets it), while the rate is an
 * average over the run. Every key is a property of one CPU alone, so the
 * order is a true total order (no "within 10 % of each other"
 * comparison, which is not transitive).
 *
 * Pure: tested on the host (tests/test_cpu_rank.c, from recorded gaps in
 * tests/data/noise_*.txt).
 */
#ifndef MSGA_CPU_RANK_H
#define MSGA_CPU_RANK_H

#include <stddef.h>
#include <stdint.h>

#define MSGA__NOISE_SUB_BITS 4u
#define MSGA__NOISE_SUB (1u << MSGA__NOISE_SUB_BITS)
/* Exact below 2 * SUB, then SUB a power of two up to 2^64. */
#define MSGA__NOISE_BUCKETS \
	((64u - MSGA__NOISE_SUB_BITS + 1u) * MSGA__NOISE_SUB)

/* One CPU's gaps, as the spinning thread records them. */
struct msga__noise {
	uint64_t threshold_ns;   /* gaps below it are not recorded */
	uint64_t count, sum_ns, min_ns, max_ns;
	uint64_t bucket[MSGA__NOISE_BUCKETS];
};

/* The percentiles reported, in parts per 100000: p50 ... p99.999. */
#define MSGA__NOISE_PCTS 6
extern const uint32_t msga__noise_pct[MSGA__NOISE_PCTS];

/* What a recorder says about its run. */
struct msga__noise_stats {
	uint64_t run_ns;          /* how long the thread spun */
	uint64_t threshold_ns;
	uint64_t count;           /* gaps at or above the threshold */
	uint64_t min_ns, max_ns, mean_ns;
	uint64_t pct_ns[MSGA__NOISE_PCTS];  /* msga__noise_pct's */
	uint64_t stolen_ns;       /* the sum of the gaps */
	uint64_t stolen_ppb;      /* stolen_ns / run_ns, parts per 10^9 */
	uint64_t per_ks;          /* gaps per 1000 s (per second x 1000) */
};

void msga__noise_init(struct msga__noise *n, uint64_t threshold_ns);

/* Record one gap (ignored below the threshold). */
void msga__noise_add(struct msga__noise *n, uint64_t gap_ns);

/* The bucket of a gap, and the largest gap a bucket holds. */
uint32_t msga__noise_bucket(uint64_t gap_ns);
uint64_t msga__noise_bucket_top(uint32_t bucket);

/*
 * Summarise n over a run of run_ns (> 0, else -EINVAL). A percentile is
 * the nearest-rank value (the smallest gap with at least that share of
 * the gaps at or below it), reported as its bucket's top capped at the
 * largest gap: exact up to 32 ns, else at most 1/16 above. No gaps: all
 * zero but run_ns and threshold_ns. Returns 0.
 */
int msga__noise_summary(const struct msga__noise *n, uint64_t run_ns,
			struct msga__noise_stats *s);

/* One CPU to rank. */
#define MSGA__CPU_WHY_MAX 112

enum {
	MSGA__CPU_MEASURED = 1 << 0,  /* st holds a run on this CPU */
};

/* msga__cpu_noise.irqs when the interrupt counts could not be read. */
#define MSGA__CPU_IRQS_UNKNOWN UINT64_MAX

struct msga__cpu_noise {
	uint32_t cpu;
	uint32_t flags;               /* MSGA__CPU_* */
	struct msga__noise_stats st;
	/* Hard and soft interrupts it took during its run (/proc/interrupts
	 * and /proc/softirqs, irq_parse.h), or MSGA__CPU_IRQS_UNKNOWN. */
	uint64_t irqs;
	/* Set by msga__cpu_rank: */
	uint32_t rank;                /* 1 = best */
	char why[MSGA__CPU_WHY_MAX];  /* one line, no newline */
};

#define MSGA__CPU_RANK_MAX 8192u

/*
 * Rank c[0, n) (n at most MSGA__CPU_RANK_MAX, else -EINVAL) by the order
 * above: order[0, n) gets c's indices best first, each c[i].rank its
 * place (1-based), each c[i].why a reason: the best one's figures, each
 * other's against the CPU ranked just above it, naming the criterion that
 * put it below. Returns 0.
 */
int msga__cpu_rank(struct msga__cpu_noise *c, uint32_t n, uint32_t *order);

/*
 * The core CPU cpu is on, as a key two threads of one core share: the
 * lowest CPU of its thread_siblings_list text[0, len) (cpulist.h), which
 * must hold cpu. Returns the key (>= 0), or -EINVAL (not a CPU list, or
 * one without cpu) or -ERANGE (a CPU past MSGA__CPU_RANK_MAX).
 */
int msga__cpu_core_key(const char *text, size_t len, uint32_t cpu);

/*
 * Choose up to want polling CPUs among the measured ones of c[0, n),
 * ranked in order[0, n) (msga__cpu_rank's): best first, one per core
 * (core[i] is c[i]'s core key) while a core none of the chosen is on
 * remains; only then, still best first, the other threads of chosen
 * cores. out[] gets c's indices, in the order chosen. Returns how many
 * were chosen (fewer than want when fewer CPUs were measured).
 */
uint32_t msga__cpu_pick(const struct msga__cpu_noise *c, const uint32_t *core,
			const uint32_t *order, uint32_t n, uint32_t want,
			uint32_t *out);

/*
 * One more polling CPU for a process whose other pollers run on cores
 * taken[0, ntaken) (core keys; msga_cpu_pick()'s avoid list): the best
 * measured CPU of c[0, n), ranked in order[0, n), whose core is not
 * taken; when every measured CPU's core is taken, the best measured one,
 * and *shared is set to 1 (else 0). Returns its index in c, or -1 when
 * none was measured.
 */
int msga__cpu_pick_free(const struct msga__cpu_noise *c, const uint32_t *core,
			const uint32_t *order, uint32_t n,
			const uint32_t *taken, uint32_t ntaken, int *shared);

#endif
