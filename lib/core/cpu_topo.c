/* SPDX-License-Identifier: MIT */
/*
 * cpu_topo.c - the CPUs this thread may run on and their cores, from
 * procfs and sysfs (cpu_topo.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cpu_rank.h"
#include "cpu_topo.h"

#define SLURP_MAX (64u << 20)

ssize_t msga__sys_read(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, cap - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	buf[n < 0 ? 0 : n] = '\0';
	return n;
}

char *msga__sys_slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, n = 0;
	char *buf = NULL, *more;
	ssize_t r;
	int err;

	if (fd < 0)
		return NULL;
	/* procfs files report size 0: read until EOF, doubling. */
	do {
		if (!buf || n + 1 >= cap) {
			cap = buf ? cap * 2 : cap;
			err = EFBIG;
			if (cap > SLURP_MAX)
				goto fail;
			err = ENOMEM;
			if (!(more = realloc(buf, cap)))
				goto fail;
			buf = more;
		}
		r = read(fd, buf + n, cap - 1 - n);
		err = errno;
		if (r < 0)
			goto fail;
		n += (size_t)r;
	} while (r > 0);
	close(fd);
	buf[n] = '\0';
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	errno = err;
	return NULL;
}

int msga__cpu_allowed(uint32_t *cpus, uint32_t max)
{
	size_t size = CPU_ALLOC_SIZE(MSGA__CPU_MAX);
	cpu_set_t *set = CPU_ALLOC(MSGA__CPU_MAX);
	uint32_t n = 0;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	if (sched_getaffinity(0, size, set)) {
		CPU_FREE(set);
		return -errno;
	}
	for (uint32_t c = 0; c < MSGA__CPU_MAX && n < max; c++)
		if (CPU_ISSET_S(c, size, set))
			cpus[n++] = c;
	CPU_FREE(set);
	return (int)n;
}

uint32_t msga__cpu_core(uint32_t cpu)
{
	char path[96], buf[256];
	ssize_t n;
	int key;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%u/topology/thread_siblings_list",
		 cpu);
	n = msga__sys_read(path, buf, sizeof(buf));
	key = n > 0 ? msga__cpu_core_key(buf, (size_t)n, cpu) : -1;
	return key < 0 ? cpu : (uint32_t)key;
}
