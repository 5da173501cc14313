/* SPDX-License-Identifier: MIT */
/* two_host_util.c - see two_host_util.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "two_host_util.h"

uint64_t th_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int th_mark(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	if (fsync(fd)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return close(fd) ? -errno : 0;
}

struct msga_ctx *th_open_ctx(const char *dev, uint32_t timeout_ms)
{
	struct msga_ctx_attr attr = { .size = sizeof(attr), .dev_name = dev,
				      .peer_timeout_ms = timeout_ms };
	struct msga_ctx *ctx;

	return msga_ctx_open(&attr, &ctx) ? NULL : ctx;
}

struct msga_ctx *th_open_ctx_resolver(const char *dev, uint32_t timeout_ms,
				      uint32_t resolver_flags)
{
	struct msga_resolver_attr ra = { .size = sizeof(ra),
					 .flags = resolver_flags };
	struct msga_ctx_attr attr = { .size = sizeof(attr), .dev_name = dev,
				      .peer_timeout_ms = timeout_ms,
				      .resolver = &ra };
	struct msga_ctx *ctx;

	return msga_ctx_open(&attr, &ctx) ? NULL : ctx;
}
