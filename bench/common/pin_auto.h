/* SPDX-License-Identifier: MIT */
/*
 * pin_auto.h - the tools' --pin auto (issue 38): msga_cpu_pick(3) chooses
 * the quietest allowed CPU for a polling thread, and every report says
 * which CPU ran the poller and how noisy it measured, the same way in
 * rdma_lat, rdma_bw and msga_feed.
 */
#ifndef MSGA_PIN_AUTO_H
#define MSGA_PIN_AUTO_H

#include <stdint.h>
#include <stdio.h>

#include "msgaccel.h"

/* How long --pin auto measures: short enough for a tool's start. */
#define PIN_AUTO_MS 300u

/*
 * Choose a CPU into *c, not in avoid[0, navoid) (another poller's of the
 * same run) and off its core while a whole core is free; pin the calling
 * thread to it when pin is set. 0, or msga_cpu_pick()'s negative errno.
 */
int pin_auto_pick(struct msga_cpu_choice *c, const uint32_t *avoid,
		  uint32_t navoid, int pin);

/*
 * The report's record of one poller: "cpu" (the CPU it ran on) and
 * "cpu_noise" (c's measurement, or null when c is NULL: a CPU given by
 * number, or none), as JSON members followed by a comma.
 */
void pin_auto_json(FILE *f, int cpu, const struct msga_cpu_choice *c);

/* The same as text: "CPU 3 (--pin auto, quietest of 4: ...)". No
 * newline; how is printed when c is NULL ("--pin", "not pinned"). */
void pin_auto_text(FILE *f, int cpu, const struct msga_cpu_choice *c,
		   const char *how);

#endif
