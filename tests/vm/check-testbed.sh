#!/bin/bash
# SPDX-License-Identifier: MIT
# check-testbed.sh - the test bed's own check (`make check-testbed`, CI).
#
# The test bed must work from any checkout path. virtme-ng's guest masks
# some host directories (guest-shares.sh), /var/tmp among them, so a
# checkout there is shared with the guest explicitly; /tmp stays the
# guest's own (an overlay), so a checkout below it works as is. This copies
# this checkout's files (as a fresh clone would have them) under /var/tmp
# and under /tmp/<dir>, runs the copy's vm-run.sh there (two VM boots), and
# has the guest copy a token from the checkout into its build directory:
# the guest saw the checkout and wrote back through the share, after
# guest-setup.sh brought up rxe0 and siw0 and bound a unix socket in the
# guest's /tmp. Paths that cannot be shared must end the run before any
# boot with one line naming them. Ends with "check-testbed: N passed, M
# failed".
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
top=$(dirname "$(dirname "$here")")
pass=0 fail=0
scratch=()
trap 'rm -rf "${scratch[@]}"' EXIT

result() { # result NAME STATUS
	if [ "$2" = 0 ]; then
		echo "check-testbed: $1: PASS"
		pass=$((pass + 1))
	else
		echo "check-testbed: $1: FAIL"
		fail=$((fail + 1))
	fi
}

# copy_checkout DIR: this checkout's files as a clone would have them, with
# the work tree's changes and new files (not the ignored build trees),
# in DIR; the test bed's own files when this is no git checkout (a tarball)
copy_checkout() {
	mkdir -p "$1"
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		(cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -C "$1" -xf -
	else
		(cd "$top" && tar -cf - tests/vm) | tar -C "$1" -xf -
	fi
}

# from_checkout NAME PARENT: boot the VM from a copy below PARENT; the guest
# reads a token in the checkout and writes it into the build directory.
from_checkout() {
	local name=$1 work co token log rc
	work=$(mktemp -d "$2/msga-testbed.XXXXXX") || { result "$name" 1; return; }
	scratch+=("$work")
	co=$work/checkout
	copy_checkout "$co"
	mkdir -p "$co/build"
	token=$RANDOM-$RANDOM-$$
	echo "$token" >"$co/testbed-token"
	log=$work/vm.log
	echo "check-testbed: $name: booting the VM from $co"
	MSGA_VM_RWDIRS="$co/build" MSGA_VM_TIMEOUT=600 \
		"$co/tests/vm/vm-run.sh" "$co/build/vm-results" \
		cp "$co/testbed-token" "$co/build/token-from-guest" >"$log" 2>&1
	rc=$?
	if [ $rc = 0 ] && [ "$(cat "$co/build/token-from-guest" 2>/dev/null)" = "$token" ]; then
		result "$name" 0
	else
		tail -n 25 "$log"
		echo "check-testbed: $name: vm-run.sh exit $rc; the guest did not copy the checkout's token"
		result "$name" 1
	fi
}

# refused NAME PATH RESULTS [CHECKOUT]: vm-run.sh (CHECKOUT's, else this
# one) must stop before booting with one line that names PATH.
refused() {
	local name=$1 path=$2 results=$3 runner=${4:-$top}/tests/vm/vm-run.sh out rc
	out=$(MSGA_VM_TIMEOUT=60 timeout 120 "$runner" "$results" true 2>&1)
	rc=$?
	if [ $rc != 0 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
		[[ $out == *"cannot share $path "* ]]; then
		echo "check-testbed: $name: $out"
		result "$name" 0
	else
		printf '%s\n' "$out" | tail -n 25
		echo "check-testbed: $name: vm-run.sh exit $rc; wanted one line refusing $path"
		result "$name" 1
	fi
}

# Refusals first: they cost no boot.
refused "results in /tmp itself (the guest's /tmp must stay local)" /tmp /tmp
work=$(mktemp -d /var/tmp/msga-testbed.XXXXXX) && scratch+=("$work")
copy_checkout "$work/msga checkout"
refused "a masked checkout whose path virtme-ng cannot carry" \
	"$work/msga checkout" "$work/results" "$work/msga checkout"

from_checkout "checkout under /var/tmp (masked in the guest)" /var/tmp
from_checkout "checkout under /tmp/<dir> (the guest's overlay)" /tmp

echo "check-testbed: $pass passed, $fail failed"
[ $fail = 0 ]
