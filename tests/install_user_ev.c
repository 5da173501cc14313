/* SPDX-License-Identifier: MIT */
/*
 * A libev user's program, built only with
 * `pkg-config --cflags --libs libmsgaccel-ev`: it must compile the
 * adapter's header and link both -lmsgaccel and -lev.
 */
#include <errno.h>
#include <stdio.h>

#include <ev.h>
#include <msgaccel_ev.h>

int main(void)
{
	struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
	struct msga_ev me;
	int rc;

	if (!loop)
		return 1;
	/* No device is needed: a NULL context fails in msga_ctx_fd(). */
	rc = msga_ev_attach(&me, loop, NULL);
	ev_run(loop, EVRUN_NOWAIT);
	ev_loop_destroy(loop);
	if (rc >= 0)
		return 1;
	printf("linked libmsgaccel-ev %s with libev %d.%d: attach(NULL) = %s\n",
	       msga_version(), ev_version_major(), ev_version_minor(),
	       msga_strerror(rc));
	return 0;
}
