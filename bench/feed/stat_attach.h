/* SPDX-License-Identifier: MIT */
/* stat_attach.h - msga_stat -p / -a: live counters of running processes. */
#ifndef MSGA_STAT_ATTACH_H
#define MSGA_STAT_ATTACH_H

#include <signal.h>

struct attach_opts {
	long pid;                  /* 0: every process (-a) */
	double interval;           /* seconds between prints */
	int count;                 /* prints, 0 = until stopped */
	int json, clear;
	volatile sig_atomic_t *stop;
};

/* Print until stopped or count prints: exit status 0, or 1 (none found). */
int msga_stat_attach(const struct attach_opts *o);

#endif
