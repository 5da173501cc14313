/* SPDX-License-Identifier: MIT */
/*
 * cpu_sys.c - what msga_cpu(1) reads of the system (cpu_sys.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu_rank.h"
#include "cpu_sys.h"
#include "cpu_topo.h"

/* path's text, trimmed, into buf; "" when missing or "(null)" (the
 * kernel's word for a nohz_full mask it never made). */
static void read_list(const char *path, char *buf, size_t cap)
{
	ssize_t n = msga__sys_read(path, buf, cap);

	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	if (n < 0 || !strcmp(buf, "(null)"))
		buf[0] = '\0';
}

/* isolcpus= of /proc/cmdline, as written there. */
static void read_isolcpus(char *buf, size_t cap)
{
	char line[4096];
	const char *p, *end;

	buf[0] = '\0';
	if (msga__sys_read("/proc/cmdline", line, sizeof(line)) <= 0)
		return;
	for (p = line; (p = strstr(p, "isolcpus=")); p++) {
		if (p != line && p[-1] != ' ')
			continue;
		p += strlen("isolcpus=");
		end = p + strcspn(p, " \n");
		snprintf(buf, cap, "%.*s", (int)(end - p), p);
		return;
	}
}

/* Does a process named irqbalance run? (its /proc/PID/comm) */
static int irqbalance_runs(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[300], comm[64];
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		if (msga__sys_read(path, comm, sizeof(comm)) > 0 &&
		    !strcmp(comm, "irqbalance\n"))
			found = 1;
	}
	closedir(d);
	return found;
}

void cpu_sys_isolation(struct cpu_sys_isol *is)
{
	read_list("/sys/devices/system/cpu/isolated", is->isolated,
		  sizeof(is->isolated));
	read_list("/sys/devices/system/cpu/nohz_full", is->nohz_full,
		  sizeof(is->nohz_full));
	read_isolcpus(is->isolcpus, sizeof(is->isolcpus));
	is->irqbalance = irqbalance_runs();
}

static int add_key(char keys[][CPU_SYS_KEY_LEN], int n, int max,
		   const char *key)
{
	if (n >= max || !*key || strlen(key) >= CPU_SYS_KEY_LEN)
		return n;
	for (int i = 0; i < n; i++)
		if (!strcmp(keys[i], key))
			return n;
	snprintf(keys[n], CPU_SYS_KEY_LEN, "%s", key);
	return n + 1;
}

/* The network devices under dir (an RDMA device's device/net). */
static int add_netdevs(const char *dir, char keys[][CPU_SYS_KEY_LEN], int n,
		       int max)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return n;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n = add_key(keys, n, max, e->d_name);
	closedir(d);
	return n;
}

int cpu_sys_dev_keys(const char *name, char keys[][CPU_SYS_KEY_LEN],
		     int max)
{
	char path[PATH_MAX], link[PATH_MAX], buf[CPU_SYS_KEY_LEN];
	const char *base;
	ssize_t len;
	int n = add_key(keys, 0, max, name);

	if (strchr(name, '/'))
		return n;
	/* The PCI address: the device link's last component. */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", name);
	len = readlink(path, link, sizeof(link) - 1);
	if (len > 0) {
		link[len] = '\0';
		base = strrchr(link, '/');
		n = add_key(keys, n, max, base ? base + 1 : link);
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/net",
		 name);
	n = add_netdevs(path, keys, n, max);
	/* rxe and siw name the network device they sit on. */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/parent", name);
	read_list(path, buf, sizeof(buf));
	return add_key(keys, n, max, buf);
}

int cpu_sys_irq_affinity(int irq, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/irq/%d/smp_affinity_list", irq);
	n = msga__sys_read(path, buf, cap);
	while (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n < 0 ? (int)n : 0;
}
