/* SPDX-License-Identifier: MIT */
/*
 * msga_cpu_pick() (lib/core/cpu_pick.c) through the public API, on the
 * host: each documented refusal, and short real measurements of this
 * host's CPUs (50 ms): the choice is an allowed CPU outside avoid, its
 * figures are a run's, and MSGA_CPU_PICK_PIN leaves the thread on it.
 * Which CPU is quietest is the VM's test (tests/dev_cpu_pin.c, a vCPU made
 * noisy on purpose); the choice among cores is lib/proto's
 * (tests/test_cpu_rank.c, pick_free_core).
 *
 * A failed pin is made by the kernel, not a mock: a seccomp filter in
 * the test's own process (criterion forks one per test) refuses
 * sched_setaffinity(0, ...), the caller's pin, with EPERM, while the
 * measuring threads, pinned by their thread id at creation, still run.
 * -ENOMEM has no test: it needs an allocation to fail, and nothing short
 * of interposing on calloc (a mock) makes the library's first ones fail
 * and not the sanitizers' and the test runner's.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

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

/* The documented errors with MSGA_CPU_PICK_PIN: the thread keeps its
 * affinity when there is no CPU to choose. */
Test(cpu_pick, enodev_with_pin_when_the_affinity_leaves_no_cpu)
{
	static uint32_t cpus[CPU_SETSIZE];
	struct msga_cpu_pick_attr a = attr_ms(10);
	struct msga_cpu_choice c = choice();
	cpu_set_t one;

	cr_assert_geq(allowed(cpus, CPU_SETSIZE), 1);
	CPU_ZERO(&one);
	CPU_SET(cpus[0], &one);
	cr_assert_eq(sched_setaffinity(0, sizeof(one), &one), 0);
	a.flags = MSGA_CPU_PICK_PIN;
	a.avoid = cpus;
	a.navoid = 1;
	cr_expect_eq(msga_cpu_pick(&a, &c), -ENODEV);
	cr_expect_eq(c.flags, 0, "not pinned");
	cr_expect_eq(allowed(cpus, CPU_SETSIZE), 1, "affinity unchanged");
}

/* sched_setaffinity fails with EPERM from now on in this process: only
 * sched_setaffinity(0, ...) when only_self (with a thread id, how
 * pthread_create pins a measuring thread, it works), else every call. */
static void refuse_pinning(int only_self)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sched_setaffinity, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, only_self ? 1 : 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]),
				   .filter = f };

	cr_assert_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	cr_assert_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

/* A failed pin returns sched_setaffinity's errno, with out filled and
 * not flagged pinned, and the thread where it was. */
Test(cpu_pick, failed_pin_returns_its_errno_and_fills_out)
{
	static uint32_t cpus[CPU_SETSIZE];
	uint32_t n = allowed(cpus, CPU_SETSIZE), i;
	struct msga_cpu_pick_attr a = attr_ms(20);
	struct msga_cpu_choice c = choice();

	refuse_pinning(1);
	a.flags = MSGA_CPU_PICK_PIN;
	cr_expect_eq(msga_cpu_pick(&a, &c), -EPERM);
	for (i = 0; i < n && cpus[i] != c.cpu; i++)
		;
	cr_expect_lt(i, n, "out not filled: CPU %u", c.cpu);
	cr_expect_eq(c.measured, n);
	cr_expect_neq(c.why[0], '\0');
	cr_expect_eq(c.flags & MSGA_CPU_CHOICE_PINNED, 0);
	cr_expect_eq(allowed(cpus, CPU_SETSIZE), n, "still every CPU");
}

/* No measuring thread can be pinned, so none can start: -ENODEV. */
Test(cpu_pick, enodev_when_no_cpu_could_be_measured)
{
	struct msga_cpu_pick_attr a = attr_ms(10);
	struct msga_cpu_choice c = choice();

	refuse_pinning(0);
	cr_expect_eq(msga_cpu_pick(&a, &c), -ENODEV);
}
