/* SPDX-License-Identifier: MIT */
/*
 * cpu_spin.h - how noisy a CPU is, measured (issue 38): a thread pinned
 * to a CPU reads a clock in a tight loop for a set time and records
 * every gap between two reads at or above a threshold in the CPU's noise
 * record (lib/proto/cpu_rank.h). A gap is time the CPU gave to something
 * else: an interrupt, a softirq, another thread, firmware.
 *
 * One measurement for both users: msga_cpu_pick() (cpu_pick.c, the
 * CLOCK_MONOTONIC default) and the msga_cpu(1) tool, which compiles this
 * file in and passes its benchmark clock (the invariant TSC where it can
 * be trusted; bench/common/perf_clock.h), so lib/core needs no TSC
 * calibration of its own.
 */
#ifndef MSGA_CPU_SPIN_H
#define MSGA_CPU_SPIN_H

#include <pthread.h>
#include <stdint.h>

#include "cpu_rank.h"

struct cpu_spin_gate;

/*
 * The clock the loop reads: now() in ticks, ns_per_tick to convert.
 * A call through a pointer costs a few ns a turn, well under any useful
 * threshold (a microsecond by default).
 */
struct msga__spin_clock {
	uint64_t (*now)(void);
	double ns_per_tick;
};

/* CLOCK_MONOTONIC in ns (the vDSO's: no system call). */
extern const struct msga__spin_clock msga__spin_mono;

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
	const struct msga__spin_clock *clk;
};

/* Reset job for cpu: threshold_ns and duration_ns as given, read with
 * clk (NULL: msga__spin_mono). */
void msga__cpu_spin_init(struct cpu_spin *job, uint32_t cpu,
			 uint64_t threshold_ns, uint64_t duration_ns,
			 const struct msga__spin_clock *clk);

/*
 * Run jobs[0, n) at once (each thread waits for all to start, then
 * spins), and wait for them all. A job whose thread could not start or
 * be pinned has ok 0 and err set.
 */
void msga__cpu_spin_run(struct cpu_spin *jobs, uint32_t n);

#endif
