/* SPDX-License-Identifier: MIT */
/*
 * cpu_sys.h - what msga_cpu(1) reads of the system beyond what
 * msga_cpu_pick() reads too (the allowed CPUs and their cores:
 * lib/core/cpu_topo.h): the kernel's isolation settings, whether
 * irqbalance runs, the names an RDMA device's interrupts go by, and an IRQ's
 * affinity. Files only (procfs, sysfs); the parsing is lib/proto's
 * (cpulist.h, irq_parse.h).
 */
#ifndef MSGA_CPU_SYS_H
#define MSGA_CPU_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's isolation settings as text ("" when none), and irqbalance. */
struct cpu_sys_isol {
	char isolated[256];   /* /sys/devices/system/cpu/isolated */
	char nohz_full[256];  /* /sys/devices/system/cpu/nohz_full */
	char isolcpus[256];   /* isolcpus= on /proc/cmdline */
	int irqbalance;       /* a process named irqbalance runs */
};

void cpu_sys_isolation(struct cpu_sys_isol *is);

#define CPU_SYS_KEYS_MAX 8
#define CPU_SYS_KEY_LEN 64

/*
 * The names the interrupts of device name go by: name itself, and for an
 * RDMA device (/sys/class/infiniband/NAME) its PCI address, its network
 * devices and its parent (rxe, siw). Returns how many went into keys.
 */
int cpu_sys_dev_keys(const char *name, char keys[][CPU_SYS_KEY_LEN],
		     int max);

/* /proc/irq/IRQ/smp_affinity_list's text (newline removed) into buf. */
int cpu_sys_irq_affinity(int irq, char *buf, size_t cap);

#endif
