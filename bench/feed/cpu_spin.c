/* SPDX-License-Identifier: MIT */
/*
 * cpu_spin.c - the spinning threads of msga_cpu(1) (cpu_spin.h).
 */
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "cpu_spin.h"
#include "perf_clock.h"

void cpu_spin_init(struct cpu_spin *job, uint32_t cpu, uint64_t threshold_ns,
		   uint64_t duration_ns)
{
	memset(job, 0, sizeof(*job));
	job->cpu = cpu;
	job->duration_ns = duration_ns;
	msga__noise_init(&job->rec, threshold_ns);
}

static uint64_t ticks_ns(uint64_t ticks)
{
	return (uint64_t)(perf_ticks_us(ticks) * 1000.0 + 0.5);
}

/*
 * The loop: nothing in it but the clock and a compare, so each turn costs
 * one clock read; only a gap at or above the threshold costs more.
 */
static void spin(struct cpu_spin *job)
{
	uint64_t thr = perf_us_ticks(job->rec.threshold_ns / 1e3);
	uint64_t t0 = perf_now(), prev = t0, now;
	uint64_t end = t0 + perf_us_ticks(job->duration_ns / 1e3);

	while (prev < end) {
		now = perf_now();
		if (now - prev >= thr)
			msga__noise_add(&job->rec, ticks_ns(now - prev));
		prev = now;
	}
	job->run_ns = ticks_ns(prev - t0);
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

void cpu_spin_run(struct cpu_spin *jobs, uint32_t n)
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
