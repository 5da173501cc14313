/* SPDX-License-Identifier: MIT */
/*
 * cpu_snap.h - a snapshot of /proc/interrupts and /proc/softirqs (issue
 * 38): taken before and after a CPU's noise is measured (cpu_spin.h), the
 * difference says which interrupts each CPU took meanwhile, the cause of
 * the gaps the spinning thread saw. The parsing and the difference are
 * lib/proto/irq_parse.h's. Shared by msga_cpu_pick() and msga_cpu(1).
 */
#ifndef MSGA_CPU_SNAP_H
#define MSGA_CPU_SNAP_H

#include <stdint.h>

#include "irq_parse.h"

/* /proc/softirqs has 10 rows; room for more. */
#define MSGA__SOFTIRQ_ROWS 32u

struct msga__cpu_snap {
	struct msga__irq_table irq, soft;
	int ok;                   /* both files were read and parsed */
};

/*
 * Rows for /proc/interrupts: its lines now and spare for devices that
 * come up meanwhile. The tables hold rows x CPUs counters each, so a
 * fixed generous count would cost a 1024-CPU machine hundreds of MiB.
 */
uint32_t msga__cpu_snap_rows(void);

/* The configured CPUs (the columns a snapshot may have), 1 to
 * MSGA__CPU_MAX. */
uint32_t msga__cpu_snap_cpus(void);

/* Make s hold ncpus columns and rows rows of /proc/interrupts: 0,
 * -EINVAL or -ENOMEM. msga__cpu_snap_fini() frees it (also after a
 * failed init). */
int msga__cpu_snap_init(struct msga__cpu_snap *s, uint32_t ncpus,
			uint32_t rows);
void msga__cpu_snap_fini(struct msga__cpu_snap *s);

/* Read both files into s; s->ok says whether both parsed. */
void msga__cpu_snap_take(struct msga__cpu_snap *s);

/*
 * d = after - before for /proc/interrupts, dsoft the same for
 * /proc/softirqs (tables of their own, sized as the snapshots'). 0, or
 * -1 when either snapshot failed or cannot be compared.
 */
int msga__cpu_snap_diff(struct msga__irq_table *d,
			struct msga__irq_table *dsoft,
			const struct msga__cpu_snap *before,
			const struct msga__cpu_snap *after);

/* The hard plus soft interrupts cpu took in a difference, or -1 when
 * either table lacks cpu. */
int64_t msga__cpu_snap_took(const struct msga__irq_table *d,
			    const struct msga__irq_table *dsoft, uint32_t cpu);

#endif
