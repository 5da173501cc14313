/* SPDX-License-Identifier: MIT */
/*
 * cpu_pick.c - msga_cpu_pick(): measure the CPUs this thread may run on
 * (cpu_spin.h, with interrupt snapshots around the run: cpu_snap.h),
 * rank them and choose one whose core no other poller of the process is
 * on (lib/proto/cpu_rank.h), and pin to it if asked. The same
 * measurement and ranking as msga_cpu(1), in one call and all CPUs at
 * once, so a program pays duration_ms once, not per CPU.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "msgaccel.h"
#include "cpu_rank.h"
#include "cpu_snap.h"
#include "cpu_spin.h"
#include "cpu_topo.h"
#include "cpulist.h"

#define DEFAULT_DURATION_MS 200u
#define DEFAULT_THRESHOLD_NS 1000u

/* Everything one call allocates, freed in one place. */
struct pick_run {
	uint32_t n;
	struct cpu_spin *jobs;
	struct msga__cpu_noise *noise;
	uint32_t *core, *order, *taken, ntaken;
	struct msga__cpu_snap before, after;
	struct msga__irq_table d, dsoft;
};

static int check_attr(const struct msga_cpu_pick_attr *a)
{
	if (a->size < sizeof(*a) || a->flags & ~(uint32_t)MSGA_CPU_PICK_PIN ||
	    a->duration_ms > MSGA_CPU_PICK_DURATION_MAX_MS ||
	    (a->navoid && !a->avoid) || a->navoid > MSGA_CPU_PICK_AVOID_MAX ||
	    a->reserved)
		return -EINVAL;
	return 0;
}

/* The allowed CPUs not in avoid into r->jobs; the cores of avoid's CPUs
 * into r->taken. */
static int make_jobs(struct pick_run *r, const struct msga_cpu_pick_attr *a)
{
	static const size_t words = MSGA__CPUSET_WORDS(MSGA__CPU_MAX);
	uint32_t *allowed = calloc(MSGA__CPU_MAX, sizeof(*allowed));
	uint64_t *avoid = calloc(words, sizeof(*avoid));
	int n = allowed && avoid ? msga__cpu_allowed(allowed, MSGA__CPU_MAX) :
				   -ENOMEM;

	for (uint32_t i = 0; n > 0 && i < a->navoid; i++)
		msga__cpuset_add(avoid, MSGA__CPU_MAX, a->avoid[i]);
	if (n > 0) {
		r->jobs = calloc((size_t)n, sizeof(*r->jobs));
		r->taken = calloc(a->navoid + 1u, sizeof(*r->taken));
		if (!r->jobs || !r->taken)
			n = -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (!msga__cpuset_has(avoid, MSGA__CPU_MAX, allowed[i]))
			msga__cpu_spin_init(&r->jobs[r->n++], allowed[i],
					    a->threshold_ns,
					    a->duration_ms * 1000000ull, NULL);
	for (uint32_t i = 0; n > 0 && i < a->navoid; i++)
		if (a->avoid[i] < MSGA__CPU_MAX)
			r->taken[r->ntaken++] = msga__cpu_core(a->avoid[i]);
	free(allowed);
	free(avoid);
	if (n < 0)
		return n;
	return r->n ? 0 : -ENODEV;
}

static int alloc_run(struct pick_run *r)
{
	uint32_t ncpus = msga__cpu_snap_cpus(), rows = msga__cpu_snap_rows();

	r->noise = calloc(r->n, sizeof(*r->noise));
	r->core = calloc(r->n, sizeof(*r->core));
	r->order = calloc(r->n, sizeof(*r->order));
	if (!r->noise || !r->core || !r->order ||
	    msga__cpu_snap_init(&r->before, ncpus, rows) ||
	    msga__cpu_snap_init(&r->after, ncpus, rows) ||
	    msga__irq_table_init(&r->d, ncpus, rows) ||
	    msga__irq_table_init(&r->dsoft, ncpus, MSGA__SOFTIRQ_ROWS))
		return -ENOMEM;
	return 0;
}

static void free_run(struct pick_run *r)
{
	msga__cpu_snap_fini(&r->before);
	msga__cpu_snap_fini(&r->after);
	msga__irq_table_fini(&r->d);
	msga__irq_table_fini(&r->dsoft);
	free(r->jobs);
	free(r->noise);
	free(r->core);
	free(r->order);
	free(r->taken);
}

/* Spin on every CPU at once, interrupts read around it; rank. */
static void measure(struct pick_run *r)
{
	int diffed;

	msga__cpu_snap_take(&r->before);
	msga__cpu_spin_run(r->jobs, r->n);
	msga__cpu_snap_take(&r->after);
	diffed = !msga__cpu_snap_diff(&r->d, &r->dsoft, &r->before,
				      &r->after);
	for (uint32_t i = 0; i < r->n; i++) {
		const struct cpu_spin *j = &r->jobs[i];
		struct msga__cpu_noise *c = &r->noise[i];
		int64_t took = diffed ?
				       msga__cpu_snap_took(&r->d, &r->dsoft, j->cpu) :
				       -1;

		c->cpu = j->cpu;
		c->irqs = took < 0 ? MSGA__CPU_IRQS_UNKNOWN : (uint64_t)took;
		if (j->ok && j->run_ns &&
		    !msga__noise_summary(&j->rec, j->run_ns, &c->st))
			c->flags = MSGA__CPU_MEASURED;
		r->core[i] = msga__cpu_core(j->cpu);
	}
	msga__cpu_rank(r->noise, r->n, r->order);
}

static void fill(struct msga_cpu_choice *out, const struct pick_run *r,
		 const struct msga__cpu_noise *c, int shared)
{
	uint32_t size = out->size;

	memset(out, 0, sizeof(*out));
	out->size = size;
	out->cpu = c->cpu;
	out->flags = shared ? MSGA_CPU_CHOICE_SHARED_CORE : 0;
	out->measured = r->n;
	out->rank = c->rank;
	out->run_ns = c->st.run_ns;
	out->gaps = c->st.count;
	out->gaps_per_s = c->st.per_ks / 1000u;
	out->max_gap_ns = c->st.max_ns;
	out->stolen_ppm = c->st.stolen_ppb / 1000u;
	out->irqs = c->irqs == MSGA__CPU_IRQS_UNKNOWN ? UINT64_MAX : c->irqs;
	snprintf(out->why, sizeof(out->why), "%s", c->why);
}

static int pin(uint32_t cpu)
{
	cpu_set_t *set = CPU_ALLOC(cpu + 1);
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	int ret = 0;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	if (sched_setaffinity(0, size, set))
		ret = -errno;
	CPU_FREE(set);
	return ret;
}

MSGA_API int msga_cpu_pick(const struct msga_cpu_pick_attr *attr,
			   struct msga_cpu_choice *out)
{
	struct msga_cpu_pick_attr a = { .size = sizeof(a) };
	struct pick_run r = { 0 };
	int ret, best, shared;

	if (!out || out->size < sizeof(*out) || (attr && check_attr(attr)))
		return -EINVAL;
	if (attr)
		memcpy(&a, attr, sizeof(a));
	a.duration_ms = a.duration_ms ? a.duration_ms : DEFAULT_DURATION_MS;
	a.threshold_ns = a.threshold_ns ? a.threshold_ns : DEFAULT_THRESHOLD_NS;
	ret = make_jobs(&r, &a);
	if (!ret)
		ret = alloc_run(&r);
	if (ret)
		goto out;
	measure(&r);
	best = msga__cpu_pick_free(r.noise, r.core, r.order, r.n, r.taken,
				   r.ntaken, &shared);
	ret = -ENODEV;
	if (best < 0)
		goto out;
	fill(out, &r, &r.noise[best], shared);
	ret = 0;
	if (a.flags & MSGA_CPU_PICK_PIN) {
		ret = pin(out->cpu);
		out->flags |= ret ? 0 : MSGA_CPU_CHOICE_PINNED;
	}
out:
	free_run(&r);
	return ret;
}
