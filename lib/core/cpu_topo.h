/* SPDX-License-Identifier: MIT */
/*
 * cpu_topo.h - what the system says about its CPUs (issue 38): the CPUs
 * this thread may run on, the core each one is on, and the small procfs
 * and sysfs files that say so, read whole. Files only; the parsing is
 * lib/proto's (cpulist.h, cpu_rank.h). Shared by msga_cpu_pick()
 * (cpu_pick.c) and the msga_cpu(1) tool, which compiles this file in.
 */
#ifndef MSGA_CPU_TOPO_H
#define MSGA_CPU_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The largest CPU number + 1 handled (lib/proto's limit). */
#define MSGA__CPU_MAX 8192u

/* A small file's text into buf of cap (> 0) bytes, NUL-terminated: its
 * length, or -errno. */
ssize_t msga__sys_read(const char *path, char *buf, size_t cap);

/*
 * A whole procfs file of any length (/proc/interrupts) in a malloc'd
 * buffer, NUL-terminated, *len its length; NULL with errno on failure or
 * past 64 MiB.
 */
char *msga__sys_slurp(const char *path, size_t *len);

/* The CPUs the calling thread may run on, rising, into cpus[max]: how
 * many, or -errno. */
int msga__cpu_allowed(uint32_t *cpus, uint32_t max);

/* cpu's core key (cpu_rank.h's msga__cpu_core_key); cpu itself when the
 * topology cannot be read. */
uint32_t msga__cpu_core(uint32_t cpu);

#endif
