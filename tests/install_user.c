/* SPDX-License-Identifier: MIT */
/* A user's program, built only with `pkg-config --cflags --libs libmsgaccel`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <msgaccel.h>

int main(void)
{
	/* No device is needed to prove linking: the argument check comes first. */
	if (msga_ctx_open(NULL, NULL) != -EINVAL)
		return 1;
	printf("linked libmsgaccel %s: %s\n", msga_version(),
	       msga_strerror(-EAGAIN));
	return strcmp(msga_version(), "") == 0;
}
