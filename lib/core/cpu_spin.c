/* SPDX-License-Identifier: MIT */
/*
 * cpu_spin.c - the spinning threads that measure a CPU's noise, for
 * msga_cpu_pick() and msga_cpu(1) (cpu_spin.h).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include "cpu_spin.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

const struct msga__spin_clock msga__spin_mono = { mono_ns, 1.0 };

void msga__cpu_spin_init(struct cpu_spin *job, uint32_t cpu,
			 uint64_t threshold_ns, uint64_t duration_ns,
			 const struct msga__spin_clock *clk)
{
	memset(job, 0, sizeof(*job));
	job->cpu = cpu;
	job->duration_ns = duration_ns;
	job->clk = clk ? clk : &msga__spin_mono;
	msga__noise_init(&job->rec, threshold_ns);
}

static uint64_t ticks_ns(const struct msga__spin_clock *clk, uint64_t ticks)
{
	return (uint64_t)((double)ticks * clk->ns_per_tick + 0.5);
}

static uint64_t ns_ticks(const struct msga__spin_clock *clk, uint64_t ns)
{
	return (uint64_t)((double)ns / clk->ns_per_tick);
}

/*
 * The loop: nothing in it but the clock and a compare, so each turn costs
 * one clock read; only a gap at or above the threshold costs more.
 */
static void spin(struct cpu_spin *job)
{
	const struct msga__spin_clock *clk = job->clk;
	uint64_t (*clock_now)(void) = clk->now;
	uint64_t thr = ns_ticks(clk, job->rec.threshold_ns);
	uint64_t t0 = clock_now(), prev = t0, now;
	uint64_t end = t0 + ns_ticks(clk, job->duration_ns);

	while (prev < end) {
		now = clock_now();
		if (now - prev >= thr)
			msga__noise_add(&job->rec, ticks_ns(clk, now - prev));
		prev = now;
	}
	job->run_ns = ticks_ns(clk, prev - t0);
}

/* Held shut until every thread of a run has started. */
struct cpu_spin_gate {
	pthread_mutex_t lock;
	pthread_cond_t open_cond;
	int open;
};

static void gate_wait(struct cpu_spin_gate *g)
{
	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->open_cond, &g->lock);
	pthread_mutex_unlock(&g->lock);
}

static void gate_open(struct cpu_spin_gate *g)
{
	pthread_mutex_lock(&g->lock);
	g->open = 1;
	pthread_cond_broadcast(&g->open_cond);
	pthread_mutex_unlock(&g->lock);
}

static void *spin_thread(void *arg)
{
	struct cpu_spin *job = arg;

	gate_wait(job->gate);
	if (sched_getcpu() != (int)job->cpu) {
		job->err = EXDEV;
		return NULL;
	}
	spin(job);
	/* Pinned, so this holds; a CPU taken offline mid-run would not. */
	job->ok = sched_getcpu() == (int)job->cpu;
	job->err = job->ok ? 0 : EXDEV;
	return NULL;
}

static int start(struct cpu_spin *job, struct cpu_spin_gate *gate)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	job->gate = gate;
	if (job->cpu >= CPU_SETSIZE)
		return EINVAL;
	CPU_ZERO(&set);
	CPU_SET(job->cpu, &set);
	pthread_attr_init(&attr);
	/* Pinned from its first instruction: it never runs elsewhere. */
	err = pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	if (!err)
		err = pthread_create(&job->th, &attr, spin_thread, job);
	pthread_attr_destroy(&attr);
	return err;
}

void msga__cpu_spin_run(struct cpu_spin *jobs, uint32_t n)
{
	struct cpu_spin_gate gate = {
		PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0,
	};

	for (uint32_t i = 0; i < n; i++) {
		jobs[i].err = start(&jobs[i], &gate);
		jobs[i].started = !jobs[i].err;
	}
	gate_open(&gate);
	for (uint32_t i = 0; i < n; i++)
		if (jobs[i].started)
			pthread_join(jobs[i].th, NULL);
	pthread_mutex_destroy(&gate.lock);
	pthread_cond_destroy(&gate.open_cond);
}
