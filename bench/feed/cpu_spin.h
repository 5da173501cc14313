/* SPDX-License-Identifier: MIT */
/*
 * cpu_spin.h - msga_cpu(1)'s measurement: a thread pinned to a CPU reads
 * the benchmark clock (bench/common/perf_clock.h: the invariant TSC where
 * it can be trusted, else CLOCK_MONOTONIC) in a tight loop for a set time
 * and records every gap between two reads at or above a threshold in the
 * CPU's noise record (lib/proto/cpu_rank.h). A gap is time the CPU gave
 * to something else: an interrupt, a softirq, another thread, firmware.
 */
#ifndef MSGA_CPU_SPIN_H
#define MSGA_CPU_SPIN_H

#include <pthread.h>
#include <stdint.h>

#include "cpu_rank.h"

struct cpu_spin_gate;

struct cpu_spin {
	uint32_t cpu;
	struct msga__noise rec;
	uint64_t run_ns;      /* how long it spun */
	int ok;               /* it ran on cpu from start to end */
	int err;              /* else why not (an errno) */
	/* private */
	pthread_t th;
	int started;
	struct cpu_spin_gate *gate;
	uint64_t duration_ns;
};

/* Reset job for cpu: threshold_ns and duration_ns as given. */
void cpu_spin_init(struct cpu_spin *job, uint32_t cpu, uint64_t threshold_ns,
		   uint64_t duration_ns);

/*
 * Run jobs[0, n) at once (each thread waits for all to start, then
 * spins), and wait for them all. perf_clock_init() must have run.
 * A job whose thread could not start or be pinned has ok 0 and err set.
 */
void cpu_spin_run(struct cpu_spin *jobs, uint32_t n);

#endif
