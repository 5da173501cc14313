#!/bin/bash
# SPDX-License-Identifier: MIT
# guest-run.sh RESULTS_DIR COMMAND [ARGS...] - the VM side of vm-run.sh.
set -uo pipefail
results=$1
shift
touch "$results/started"
if ! command -v "$1" >/dev/null; then
	echo "guest-run: the guest cannot find $1 (not shared with the VM? see tests/vm/vm-run.sh)" >&2
	rc=127
elif bash "$(dirname "$0")/guest-setup.sh"; then
	"$@"
	rc=$?
else
	echo "guest-run: test devices could not be set up" >&2
	rc=1
fi
echo "$rc" >"$results/rc.tmp" && mv "$results/rc.tmp" "$results/rc"
sync
sleep 1 # let the console drain before the VM powers off
exit "$rc"
