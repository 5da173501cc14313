/* SPDX-License-Identifier: MIT */
/*
 * devtest.h - what a device test needs to know about the device it runs on.
 * tests/vm/device-tests.sh sets, for each run:
 *   MSGA_TEST_DEV        device name (rxe0, siw0, mlx5_0, ...)
 *   MSGA_TEST_ADDR       an IP address on that device
 *   MSGA_TEST_TRANSPORT  expected transport: RoCE, iWARP or InfiniBand
 * A device test run without them fails: it never passes by skipping.
 */
#ifndef MSGA_DEVTEST_H
#define MSGA_DEVTEST_H

#include "msgaccel.h"

struct devtest_env {
	const char *dev;
	const char *addr;
	const char *transport;
};

/* The device under test; fails the current test if the env is missing. */
const struct devtest_env *devtest_env(void);

/* Open a context on the device under test by name; fails the test if not. */
struct msga_ctx *devtest_open_ctx(void);
/*
 * The same with msga_ctx_attr.peer_timeout_ms set to peer_timeout_ms times
 * MSGA_TEST_TIMEOUT_SCALE (0: the library's default).
 */
struct msga_ctx *devtest_open_ctx_timeout(uint32_t peer_timeout_ms);

/*
 * native_s seconds times MSGA_TEST_TIMEOUT_SCALE (devtest.c): the limit for
 * waiting on a program the test started, which under valgrind pays tens
 * of seconds of start-up before it does anything.
 */
int devtest_wait_s(int native_s);
/* The same for a duration in milliseconds (a peer timeout, a wait). */
uint64_t devtest_scale_ms(uint64_t native_ms);

/*
 * A number from 1 to 250 for naming what the host shares between the
 * device loops that run at once (tests/vm/device-tests.sh): multicast
 * groups heard on every interface, ports on every address. It mixes the
 * process id with the device's address so that the VM's two devices
 * never get the same one at once (their addresses differ in parity) and
 * two processes on one device seldom do.
 */
unsigned devtest_salt(void);

#endif
