#!/bin/bash
# SPDX-License-Identifier: MIT
# scripts/valgrind.sh [BUILDDIR] [PROGRAM...]
# Run device test programs under valgrind memcheck in the test VM, on rxe0
# and siw0. A memory error or a definite leak fails the run. BUILDDIR is a
# configured and built tree without sanitizers (default: build-check).
# PROGRAMs default to every device test of that tree.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=$(cd "${1:-$top/build-check}" && pwd)
shift || true
cd "$builddir"
if [ $# = 0 ]; then
	set -- $(make -s -f Makefile print-device-tests 2>/dev/null)
fi
make -s -j"$(nproc)" "$@"
vg="valgrind -q --trace-children=yes --error-exitcode=99 --leak-check=full"
vg+=" --errors-for-leak-kinds=definite --show-leak-kinds=definite"
# A libtool wrapper (bench/msga_feed, run by dev_feed) computes its paths
# with sed, and sed leaks a 0-byte block on exit: that is not our leak, and
# the report would land in the output a test reads. dev_feed checks the
# JSON msga_feed writes with jq, which is not our code either, and each
# traced start-up costs tens of seconds under TCG. The wrapper's shell and
# the program it then runs are still traced.
vg+=" --trace-children-skip=*/sed,*/jq"
# Every process start pays valgrind's start-up (~75 s in the VM under TCG)
# and the code runs tens of times slower, so every time limit of the run,
# written for native speed, is stretched (device-tests.sh says which).
# libtool --mode=execute runs the real binary rather than the wrapper script.
MSGA_TEST_TIMEOUT_SCALE=${MSGA_TEST_TIMEOUT_SCALE:-4} \
	MSGA_BUILDDIR=$builddir MSGA_DEVICE_TESTS=${MSGA_DEVICE_TESTS:-vm} \
	MSGA_TEST_WRAPPER="$builddir/libtool --mode=execute $vg" \
	exec "$top/tests/vm/device-tests.sh" "$@"
