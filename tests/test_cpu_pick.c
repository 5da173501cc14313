/* SPDX-License-Identifier: MIT */
/*
 * msga_cpu_pick() (lib/core/cpu_pick.c) through the public API, on the
 * host: each documented refusal, and short real measurements of this
 * host's CPUs (50 ms): the choice is an allowed CPU outside avoid, its
 * figures are a run's, and MSGA_CPU_PICK_PIN leaves the thread on it.
 * Which CPU is quietest is the VM's test (tests/dev_tools.c, a vCPU made
 * noisy on purpose); the choice among cores is lib/proto's
 * (tests/test_cpu_rank.c, pick_free_core).
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "msgaccel.h"

static struct msga_cpu_pick_attr attr_ms(uint32_t ms)
{
	struct msga_cpu_pick_attr a = { .size = sizeof(a), .duration_ms = ms };

	return a;
}

static struct msga_cpu_choice choice(void)
{
	struct msga_cpu_choice c = { .size = sizeof(c) };

	return c;
}

/* The CPUs this thread may run on, into cpus[max]: how many. */
static uint32_t allowed(uint32_t *cpus, uint32_t max)
{
	cpu_set_t set;
	uint32_t n = 0;

	cr_assert_eq(sched_getaffinity(0, sizeof(set), &set), 0);
	for (uint32_t c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	return n;
}

Test(cpu_pick, einval)
{
	uint32_t one = 0;
	struct msga_cpu_pick_attr a = attr_ms(10);
	struct msga_cpu_choice c = choice();

	cr_expect_eq(msga_cpu_pick(&a, NULL), -EINVAL);
	c.size = sizeof(c) - 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	c.size = 0;
	cr_expect_eq(msga_cpu_pick(NULL, &c), -EINVAL);
	c = choice();
	a.size = sizeof(a) - 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	a = attr_ms(10);
	a.flags = 1u << 7;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	a = attr_ms(MSGA_CPU_PICK_DURATION_MAX_MS + 1);
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	a = attr_ms(10);
	a.navoid = 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	a.avoid = &one;
	a.navoid = MSGA_CPU_PICK_AVOID_MAX + 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
	a = attr_ms(10);
	a.reserved = 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EINVAL);
}

Test(cpu_pick, enodev_when_every_cpu_is_avoided)
{
	static uint32_t cpus[CPU_SETSIZE];
	struct msga_cpu_pick_attr a = attr_ms(10);
	struct msga_cpu_choice c = choice();

	a.navoid = allowed(cpus, CPU_SETSIZE);
	a.avoid = cpus;
	cr_expect_eq(msga_cpu_pick(&a, &c), -ENODEV);
}

Test(cpu_pick, measures_and_chooses_an_allowed_cpu)
{
	static uint32_t cpus[CPU_SETSIZE];
	uint32_t n = allowed(cpus, CPU_SETSIZE), i;
	struct msga_cpu_pick_attr a = attr_ms(50);
	struct msga_cpu_choice c = choice();

	cr_assert_eq(msga_cpu_pick(&a, &c), 0);
	for (i = 0; i < n && cpus[i] != c.cpu; i++)
		;
	cr_expect_lt(i, n, "CPU %u is not allowed", c.cpu);
	cr_expect_eq(c.size, sizeof(c));
	cr_expect_eq(c.measured, n);
	cr_expect_eq(c.rank, 1);
	cr_expect_geq(c.run_ns, 50000000ull);
	cr_expect_lt(c.run_ns, 5000000000ull);
	cr_expect_leq(c.stolen_ppm, 1000000ull);
	cr_expect(c.gaps == 0 || c.max_gap_ns >= 1000, "below the threshold");
	cr_expect_neq(c.why[0], '\0');
	cr_expect_eq(c.flags, 0);
	/* Not pinned: still every allowed CPU. */
	cr_expect_eq(allowed(cpus, CPU_SETSIZE), n);
}

Test(cpu_pick, pin_flag_pins_the_calling_thread)
{
	static uint32_t cpus[CPU_SETSIZE];
	struct msga_cpu_pick_attr a = attr_ms(20);
	struct msga_cpu_choice c = choice();

	a.flags = MSGA_CPU_PICK_PIN;
	cr_assert_eq(msga_cpu_pick(&a, &c), 0);
	cr_expect(c.flags & MSGA_CPU_CHOICE_PINNED);
	cr_assert_eq(allowed(cpus, CPU_SETSIZE), 1);
	cr_expect_eq(cpus[0], c.cpu);
}

/* A second poller: avoid the first one's CPU. */
Test(cpu_pick, avoid_is_never_chosen)
{
	static uint32_t cpus[CPU_SETSIZE];
	uint32_t n = allowed(cpus, CPU_SETSIZE);
	struct msga_cpu_pick_attr a = attr_ms(20);
	struct msga_cpu_choice c = choice();

	cr_assert_geq(n, 2, "this test needs two CPUs");
	a.avoid = cpus;
	a.navoid = 1;
	cr_assert_eq(msga_cpu_pick(&a, &c), 0);
	cr_expect_neq(c.cpu, cpus[0]);
	cr_expect_eq(c.measured, n - 1);
}
