/* SPDX-License-Identifier: MIT */
/*
 * What measures the CPUs or moves the host's IRQs, on the device under
 * test (issue 38): rdma_lat --pin auto and msga_cpu pick the quiet vCPU
 * of the test VM's two when the other is made noisy, and msga_cpu
 * --apply-irq-affinity moves a device IRQ off the polling vCPU.
 *
 * It runs alone (DEVICE_TESTS_ALONE in Makefile.am): a spinner pinned to
 * one vCPU, or the other device's loop, would make the vCPU it measures
 * as quiet look noisy, and an IRQ's affinity is the host's, not the
 * device's. The rest of the tools' tests, which can share the VM, are
 * tests/dev_tools.c; both run the tools through tests/tooltest.c.
 *
 * Alone in the VM is not enough when the host runs another VM beside
 * it: on 2026-12-07 a second VM (nice 0) beside this one (nice 19) on
 * the 2-core host took 56-59 % of the quiet vCPU and 69-77 % of the
 * noisy one, one band of msga_cpu's ranking (lib/proto/cpu_rank.h), and
 * --pin auto chose either. With the host idle, as in CI, it passed on
 * rxe0 and siw0 in about 12 s each.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "devtest.h"
#include "tooltest.h"

TestSuite(cpu_pin, .timeout = 300);

/* ------------------------------------------------------------ --pin auto */

/*
 * A vCPU made noisy on purpose (issue 38): a child pinned to it spins, so
 * a thread measured there gets about half of it, in slices of
 * milliseconds. A sleeper in a 50 us loop (bench/scripts/cpu_noise_vm.sh's
 * load, and this test's until 2026-11-28) was not enough: under TCG the
 * host takes up to half of either vCPU at times, and on siw0 --pin auto
 * once measured the quiet one as the noisier (51 % stolen on the noisy
 * one). Killed by noise_off().
 */
static pid_t noise_on(int cpu)
{
	pid_t pid = fork();
	cpu_set_t set;

	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid)
		return pid;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(1);
	for (volatile unsigned long n = 0;; n++)
		;
}

static void noise_off(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/*
 * With vCPU `noisy` loaded, msga_cpu ranks the other first and
 * rdma_lat --pin auto polls on it, its report naming the CPU and its
 * noise. The server is pinned to the noisy vCPU, so its own start-up,
 * which overlaps the client's measurement, cannot make the quiet one
 * look busy.
 */
static void pin_auto_case(int noisy)
{
	static const char *const cpu_argv[] = { "msga_cpu", "-a", "-d", "0.3",
						"--json", NULL };
	int quiet = !noisy;
	const char *sv[] = { "--pin", noisy ? "1" : "0", NULL };
	pid_t load = noise_on(noisy);
	struct proc m, c;
	struct json *j;

	usleep(200000); /* the load running before anything measures */
	proc_start(&m, cpu_argv);
	proc_wait(&m, 60);
	cr_expect_eq(m.status, 0, "msga_cpu exit %d: %s", m.status, m.err);
	j = json_parse(m.out);
	cr_expect(jget(j, "poll.0") && jget(j, "poll.0")->num == quiet,
		  "msga_cpu chose %g with vCPU %d noisy: %s",
		  jget(j, "poll.0") ? jget(j, "poll.0")->num : -1, noisy, m.out);
	free(j);
	proc_free(&m);
	run_pair("rdma_lat", sv, (const char *const[]){ "--json", "--pin",
			 "auto", "-n", "100", NULL }, &c);
	noise_off(load);
	j = json_parse(c.out);
	cr_expect_str_eq(jstr(j, "pin"), "auto");
	cr_expect(jget(j, "cpu") && jget(j, "cpu")->num == quiet,
		  "--pin auto chose %g with vCPU %d noisy: %s",
		  jget(j, "cpu") ? jget(j, "cpu")->num : -1, noisy, c.out);
	cr_expect(jget(j, "cpu_noise.measured_cpus") &&
		  jget(j, "cpu_noise.measured_cpus")->num == 2, "%s", c.out);
	cr_expect(jget(j, "cpu_noise.run_ns") &&
		  jget(j, "cpu_noise.run_ns")->num >= 3e8, "%s", c.out);
	cr_expect(jget(j, "cpu_noise.stolen_ppm") &&
		  jget(j, "cpu_noise.stolen_ppm")->num <= 1e6, "%s", c.out);
	check_lat_row(j, 0, 2, 100);
	free(j);
	proc_free(&c);
}

Test(cpu_pin, pin_auto_picks_the_quiet_vcpu)
{
	cr_assert_eq(sysconf(_SC_NPROCESSORS_ONLN), 2,
		     "the test VM has two vCPUs");
	pin_auto_case(0);
	pin_auto_case(1);
}

/* ------------------------------------------------- --apply-irq-affinity */

/* The first virtio device with a config interrupt ("virtio3"), and that
 * IRQ's number; the test VM has no NIC, but virtio IRQs are unmanaged. */
static int virtio_config_irq(char *name, size_t len)
{
	FILE *f = fopen("/proc/interrupts", "r");
	char line[512];
	int irq = -1;

	cr_assert_not_null(f);
	while (irq < 0 && fgets(line, sizeof(line), f)) {
		char *v = strstr(line, " virtio");
		char *c = v ? strstr(v, "-config") : NULL;

		if (c && sscanf(line, " %d:", &irq) == 1)
			snprintf(name, len, "%.*s", (int)(c - v - 1), v + 1);
	}
	fclose(f);
	return irq;
}

static void irq_affinity(int irq, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	cr_assert_not_null(fgets(buf, (int)len, f));
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static void irq_set_affinity(int irq, const char *list)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fprintf(f, "%s\n", list);
	cr_assert_eq(fclose(f), 0, "%s <- %s: %s", path, list, strerror(errno));
}

/*
 * msga_cpu polls on vCPU 0 (-c 0) and moves a device's IRQ that may run
 * there (affinity 0-1, set first) to vCPU 1, says so in its JSON, and the
 * kernel's file shows it; without the flag the same move is only advised.
 */
Test(cpu_pin, msga_cpu_moves_device_irqs_off_the_polling_cpu)
{
	char dev[32], aff[64], key[96];
	const char *argv[] = { "msga_cpu", "-c", "0", "-d", "0.05", "-D", dev,
			       "--json", "--apply-irq-affinity", NULL };
	int irq = virtio_config_irq(dev, sizeof(dev)), row = -1;
	struct proc m;
	struct json *j;

	cr_assert_geq(irq, 0, "no virtio config interrupt in the VM");
	for (int apply = 0; apply < 2; apply++) {
		irq_set_affinity(irq, "0-1");
		argv[8] = apply ? "--apply-irq-affinity" : NULL;
		proc_start(&m, argv);
		proc_wait(&m, 60);
		cr_assert_eq(m.status, 0, "msga_cpu exit %d: %s", m.status,
			     m.err);
		j = json_parse(m.out);
		for (int k = 0; row < 0 && k < 64; k++) {
			snprintf(key, sizeof(key), "devices.0.irqs.%d.irq", k);
			if (jget(j, key) && jget(j, key)->num == irq)
				row = k;
		}
		cr_assert_geq(row, 0, "IRQ %d not reported: %s", irq, m.out);
		snprintf(key, sizeof(key), "devices.0.irqs.%d.move_to", row);
		cr_expect_str_eq(jstr(j, key), "1", "%s", m.out);
		irq_affinity(irq, aff, sizeof(aff));
		cr_expect_str_eq(aff, apply ? "1" : "0-1",
				 "IRQ %d affinity after %s", irq,
				 apply ? "applying" : "advice only");
		free(j);
		proc_free(&m);
	}
	irq_set_affinity(irq, "0-1");
}
