/* SPDX-License-Identifier: MIT */
/*
 * cpu_rank.c - per-CPU noise: the gaps' record, its summary, the ranking
 * and the choice of polling CPUs (cpu_rank.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpu_rank.h"
#include "cpulist.h"

const uint32_t msga__noise_pct[MSGA__NOISE_PCTS] = {
	50000, 90000, 99000, 99900, 99990, 99999,
};

void msga__noise_init(struct msga__noise *n, uint64_t threshold_ns)
{
	memset(n, 0, sizeof(*n));
	n->threshold_ns = threshold_ns;
	n->min_ns = UINT64_MAX;
}

/* The highest set bit of v (> 0). */
static uint32_t msb(uint64_t v)
{
	return 63u - (uint32_t)__builtin_clzll(v);
}

uint32_t msga__noise_bucket(uint64_t gap_ns)
{
	uint32_t e;

	if (gap_ns < 2 * MSGA__NOISE_SUB)
		return (uint32_t)gap_ns;
	e = msb(gap_ns) - MSGA__NOISE_SUB_BITS;
	return e * MSGA__NOISE_SUB + (uint32_t)(gap_ns >> e);
}

uint64_t msga__noise_bucket_top(uint32_t bucket)
{
	uint32_t e, m;

	if (bucket < 2 * MSGA__NOISE_SUB)
		return bucket;
	e = bucket / MSGA__NOISE_SUB - 1;
	m = bucket - e * MSGA__NOISE_SUB;
	/* The last bucket's top is 2^64 - 1: the shift wraps to 0. */
	return ((uint64_t)(m + 1) << e) - 1;
}

void msga__noise_add(struct msga__noise *n, uint64_t gap_ns)
{
	if (gap_ns < n->threshold_ns)
		return;
	n->count++;
	n->sum_ns += gap_ns;
	if (gap_ns < n->min_ns)
		n->min_ns = gap_ns;
	if (gap_ns > n->max_ns)
		n->max_ns = gap_ns;
	n->bucket[msga__noise_bucket(gap_ns)]++;
}

/* ceil(count * parts / 100000), without overflow: the nearest rank. */
static uint64_t rank_of(uint64_t count, uint32_t parts)
{
	uint64_t r = count / 100000 * parts +
		     (count % 100000 * parts + 99999) / 100000;

	return r ? r : 1;
}

static uint64_t percentile(const struct msga__noise *n, uint32_t parts)
{
	uint64_t want = rank_of(n->count, parts), seen = 0, top;

	for (uint32_t b = 0; b < MSGA__NOISE_BUCKETS; b++) {
		seen += n->bucket[b];
		if (seen >= want) {
			top = msga__noise_bucket_top(b);
			return top < n->max_ns ? top : n->max_ns;
		}
	}
	return n->max_ns;
}

/* a * b / c, the product in 128 bits. */
static uint64_t share(uint64_t a, uint64_t b, uint64_t c)
{
	return (uint64_t)((unsigned __int128)a * b / c);
}

int msga__noise_summary(const struct msga__noise *n, uint64_t run_ns,
			struct msga__noise_stats *s)
{
	if (!run_ns)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->run_ns = run_ns;
	s->threshold_ns = n->threshold_ns;
	if (!n->count)
		return 0;
	s->count = n->count;
	s->min_ns = n->min_ns;
	s->max_ns = n->max_ns;
	s->mean_ns = n->sum_ns / n->count;
	for (int i = 0; i < MSGA__NOISE_PCTS; i++)
		s->pct_ns[i] = percentile(n, msga__noise_pct[i]);
	s->stolen_ns = n->sum_ns;
	/* Gaps a clock saw cannot outlast the run; a caller's slip can. */
	s->stolen_ppb = n->sum_ns >= run_ns ? 1000000000u :
			share(n->sum_ns, 1000000000u, run_ns);
	s->per_ks = share(n->count, 1000000000000u, run_ns);
	return 0;
}

/* ---------------------------------------------------------------- ranking */

/* The criteria, in the order they decide (cpu_rank.h). */
enum crit { SAME, MEASURED, STOLEN, IRQS, RATE, MAX, EXACT };

/* x's band: one per factor of 2 (0 for 0). */
static uint32_t band(uint64_t x)
{
	return x ? msb(x) + 1 : 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return (a > b) - (a < b);
}

/* c's interrupts per 1000 s of its run; unknown: above any count. */
static uint64_t irq_rate(const struct msga__cpu_noise *c)
{
	if (c->irqs == MSGA__CPU_IRQS_UNKNOWN || !c->st.run_ns)
		return UINT64_MAX;
	return share(c->irqs, 1000000000000u, c->st.run_ns);
}

/* The band of an interrupt rate: unknown after every known one. */
static uint32_t irq_band(const struct msga__cpu_noise *c)
{
	uint64_t r = irq_rate(c);

	return r == UINT64_MAX ? 65 : band(r);
}

/* < 0 if a ranks before b; *why: the criterion that decided. */
static int cmp_cpu(const struct msga__cpu_noise *a,
		   const struct msga__cpu_noise *b, enum crit *why)
{
	const struct msga__noise_stats *x = &a->st, *y = &b->st;
	int r;

	*why = MEASURED;
	r = cmp_u64(!(a->flags & MSGA__CPU_MEASURED),
		    !(b->flags & MSGA__CPU_MEASURED));
	if (r)
		return r;
	*why = STOLEN;
	if ((r = cmp_u64(band(x->stolen_ppb), band(y->stolen_ppb))))
		return r;
	*why = IRQS;
	if ((r = cmp_u64(irq_band(a), irq_band(b))))
		return r;
	*why = RATE;
	if ((r = cmp_u64(band(x->per_ks), band(y->per_ks))))
		return r;
	*why = MAX;
	if ((r = cmp_u64(band(x->max_ns), band(y->max_ns))))
		return r;
	*why = EXACT;
	if ((r = cmp_u64(x->stolen_ppb, y->stolen_ppb)) ||
	    (r = cmp_u64(x->count, y->count)) ||
	    (r = cmp_u64(x->max_ns, y->max_ns)) ||
	    (r = cmp_u64(a->cpu, b->cpu)))
		return r;
	*why = SAME;
	return 0;
}

/* ns as "12.3 us" or "4.56 ms", into buf. */
static const char *fmt_ns(char *buf, size_t cap, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, cap, "%.1f us", ns / 1e3);
	else
		snprintf(buf, cap, "%.2f ms", ns / 1e6);
	return buf;
}

/*
 * A share in parts per 10^9 as a percentage with about 3 significant
 * digits ("12.5%", "0.0340%", "0.000110%"): a quiet CPU loses a few parts
 * per million, which a fixed "%.2f" would print as 0.
 */
static const char *fmt_pct(char *buf, size_t cap, uint64_t ppb)
{
	int decimals = ppb >= 10000000 ? 2 : ppb >= 1000000 ? 3 :
		       ppb >= 100000 ? 4 : ppb >= 10000 ? 5 :
		       ppb >= 1000 ? 6 : 7;

	if (ppb)
		snprintf(buf, cap, "%.*f%%", decimals, ppb / 1e7);
	else
		snprintf(buf, cap, "0%%");
	return buf;
}

static void why_best(struct msga__cpu_noise *c)
{
	char max[24], pct[24];

	snprintf(c->why, sizeof(c->why),
		 "quietest: %s stolen in %llu gaps (%.1f/s), max %s",
		 fmt_pct(pct, sizeof(pct), c->st.stolen_ppb),
		 (unsigned long long)c->st.count, c->st.per_ks / 1e3,
		 fmt_ns(max, sizeof(max), c->st.max_ns));
}

/* Interrupts per second as text, "unknown" when they are. */
static const char *fmt_irqs(char *buf, size_t cap,
			    const struct msga__cpu_noise *c)
{
	uint64_t r = irq_rate(c);

	if (r == UINT64_MAX)
		snprintf(buf, cap, "unknown");
	else
		snprintf(buf, cap, "%.0f", r / 1e3);
	return buf;
}

static void why_irqs(struct msga__cpu_noise *c,
		     const struct msga__cpu_noise *p)
{
	char a[24], b[24];

	snprintf(c->why, sizeof(c->why),
		 "stolen within 2x of cpu %u, but %s interrupts/s vs %s",
		 p->cpu, fmt_irqs(a, sizeof(a), c), fmt_irqs(b, sizeof(b), p));
}

/* Why c ranks just below p. */
static void why_below(struct msga__cpu_noise *c,
		      const struct msga__cpu_noise *p)
{
	char a[24], b[24];
	enum crit crit;

	cmp_cpu(p, c, &crit);
	if (crit == MEASURED)
		snprintf(c->why, sizeof(c->why), "not measured");
	else if (crit == STOLEN)
		snprintf(c->why, sizeof(c->why), "stolen %s vs %s on cpu %u",
			 fmt_pct(a, sizeof(a), c->st.stolen_ppb),
			 fmt_pct(b, sizeof(b), p->st.stolen_ppb), p->cpu);
	else if (crit == IRQS)
		why_irqs(c, p);
	else if (crit == RATE)
		snprintf(c->why, sizeof(c->why),
			 "stolen and interrupts/s within 2x of cpu %u, "
			 "but %.1f gaps/s vs %.1f",
			 p->cpu, c->st.per_ks / 1e3, p->st.per_ks / 1e3);
	else if (crit == MAX)
		snprintf(c->why, sizeof(c->why),
			 "stolen, interrupts/s and gaps/s within 2x of cpu %u, "
			 "but max %s vs %s",
			 p->cpu, fmt_ns(a, sizeof(a), c->st.max_ns),
			 fmt_ns(b, sizeof(b), p->st.max_ns));
	else
		snprintf(c->why, sizeof(c->why),
			 "within 2x of cpu %u on stolen, interrupts/s, gaps/s "
			 "and max; then by exact figures", p->cpu);
}

int msga__cpu_rank(struct msga__cpu_noise *c, uint32_t n, uint32_t *order)
{
	enum crit crit;

	if (n > MSGA__CPU_RANK_MAX)
		return -EINVAL;
	/* Insertion sort: stable, no allocation, n is a machine's CPUs. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = i;

		while (j > 0 && cmp_cpu(&c[i], &c[order[j - 1]], &crit) < 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct msga__cpu_noise *x = &c[order[i]];

		x->rank = i + 1;
		if (i)
			why_below(x, &c[order[i - 1]]);
		else if (x->flags & MSGA__CPU_MEASURED)
			why_best(x);
		else
			snprintf(x->why, sizeof(x->why), "not measured");
	}
	return 0;
}

/* ---------------------------------------------------------------- choice */

int msga__cpu_core_key(const char *text, size_t len, uint32_t cpu)
{
	uint64_t set[MSGA__CPUSET_WORDS(MSGA__CPU_RANK_MAX)];
	int ret = msga__cpulist_parse(text, len, set, MSGA__CPU_RANK_MAX);

	if (ret < 0)
		return ret;
	if (!msga__cpuset_has(set, MSGA__CPU_RANK_MAX, cpu))
		return -EINVAL;
	return msga__cpuset_first(set, MSGA__CPU_RANK_MAX);
}

static int chosen(const uint32_t *out, uint32_t got, uint32_t x)
{
	for (uint32_t i = 0; i < got; i++)
		if (out[i] == x)
			return 1;
	return 0;
}

static int core_taken(const uint32_t *core, const uint32_t *out,
		      uint32_t got, uint32_t key)
{
	for (uint32_t i = 0; i < got; i++)
		if (core[out[i]] == key)
			return 1;
	return 0;
}

uint32_t msga__cpu_pick(const struct msga__cpu_noise *c, const uint32_t *core,
			const uint32_t *order, uint32_t n, uint32_t want,
			uint32_t *out)
{
	uint32_t got = 0;

	/* Pass 0: one per core, best first; pass 1: the rest, best first. */
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n && got < want; i++) {
			uint32_t x = order[i];

			if (!(c[x].flags & MSGA__CPU_MEASURED) ||
			    chosen(out, got, x) ||
			    (!pass && core_taken(core, out, got, core[x])))
				continue;
			out[got++] = x;
		}
	}
	return got;
}

static int key_in(const uint32_t *keys, uint32_t n, uint32_t key)
{
	for (uint32_t i = 0; i < n; i++)
		if (keys[i] == key)
			return 1;
	return 0;
}

int msga__cpu_pick_free(const struct msga__cpu_noise *c, const uint32_t *core,
			const uint32_t *order, uint32_t n,
			const uint32_t *taken, uint32_t ntaken, int *shared)
{
	int best = -1;

	*shared = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = order[i];

		if (!(c[x].flags & MSGA__CPU_MEASURED))
			continue;
		if (best < 0)
			best = (int)x;
		if (!key_in(taken, ntaken, core[x]))
			return (int)x;
	}
	*shared = best >= 0;
	return best;
}
