#!/bin/bash
# SPDX-License-Identifier: MIT
# The main job, from a fresh clone: set the machine up, build msgaccel, boot
# the test VM, and on each soft device (rxe0 = RoCE v2, siw0 = iWARP) print
# what the device is and ping messages over an RC queue pair with
# msga_ping, printing the half round-trip times it measured.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. tests/vm/env.sh

scripts/bootstrap.sh
[ -x configure ] || ./autogen.sh >/dev/null 2>&1
mkdir -p build-demo
cd build-demo
[ -f Makefile ] || ../configure -q
make -s -j"$(nproc)" bench/msga_ping

guest_cmds=""
for spec in $MSGA_VM_DEVICES; do
	IFS=: read -r dev addr transport <<<"$spec"
	guest_cmds+="echo; echo '== $dev ($transport) at $addr';"
	guest_cmds+=" $PWD/bench/msga_ping -n ${MSGA_DEMO_COUNT:-5000} $addr || exit 1;"
done
MSGA_VM_RWDIRS="--rwdir $PWD" exec ../tests/vm/vm-run.sh "$PWD/vm-results" \
	bash -c "$guest_cmds"
