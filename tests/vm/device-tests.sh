#!/bin/bash
# SPDX-License-Identifier: MIT
# device-tests.sh [PROGRAM...]  (called by `make check`, from check-local)
#
# Runs every device test PROGRAM once on every test device, and prints
# which device each run used plus Criterion's own summary for it.
#   MSGA_DEVICE_TESTS=vm      boot the VM (tests/vm/vm-run.sh) with rxe0 and
#                             siw0 and run there (the default);
#   MSGA_DEVICE_TESTS=native  use this host's devices, listed in
#                             MSGA_TEST_DEVICES="dev:addr:transport ..."
#                             e.g. "mlx5_0:198.18.0.10:RoCE";
#                             tests/dev_bind also needs
#                             MSGA_TEST_ALIAS_ADDR (a second address on the
#                             first device's netdev) and
#                             MSGA_TEST_NORDMA_ADDR (an address of a netdev
#                             with no RDMA device) and MSGA_TEST_SILENT_ADDR
#                             (one on the first device's subnet that no
#                             host answers);
#   MSGA_DEVICE_TESTS=no      do not run them; fails when CI=true, since a
#                             device test that did not run is not a pass,
#                             unless MSGA_NO_DEVICE_TESTS_REASON says why
#                             (only distcheck does: the device tests ran in
#                             the main make check of the same CI run).
# MSGA_BUILDDIR is the build tree (set by make). MSGA_TEST_WRAPPER, if set,
# is put before each program (scripts/valgrind.sh uses it for valgrind).
# MSGA_TEST_TIMEOUT_SCALE=K (a whole number, default 1) multiplies the time
# limits of a run: the VM's (MSGA_VM_TIMEOUT, 3000 s here for every device test on two devices),
# each program's (MSGA_TEST_TIMEOUT, default 900 s), each Criterion test's,
# and a test's waits for the tools it starts (tests/devtest.c). Limits are
# written for native speed; valgrind.sh sets a scale for its slowdown.
# MSGA_VM_TEST_DEVICES="siw0" (names from env.sh's MSGA_VM_DEVICES) runs
# on those VM devices only, e.g. to split a valgrind run that would not
# fit one VM boot; unset, every VM device is tested. CI never sets it.
# MSGA_DEVICE_PARALLEL=1 runs the devices' loops at once (the VM's
# default; 0 there runs them one after the other), =0 one after the other
# (the native default). At once, each device's output is printed whole
# when all are done, with a progress line per program meanwhile; the
# summary gives each run's verdict and time either way. Programs named in
# MSGA_DEVICE_ALONE (make check sets DEVICE_TESTS_ALONE) run after the
# loops, alone, device after device.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
builddir=${MSGA_BUILDDIR:-$(pwd)}
mode=${MSGA_DEVICE_TESTS:-vm}
scale=${MSGA_TEST_TIMEOUT_SCALE:-1}
[[ $scale =~ ^[1-9][0-9]?$|^100$ ]] || {
	echo "device-tests: MSGA_TEST_TIMEOUT_SCALE must be a whole number from 1 to 100, not '$scale'" >&2
	exit 2
}

# One device's loop: every program on the device SPEC names, each run's
# verdict and time appended to the file SUMMARY, and a line of progress
# on fd 3 as each program ends.
run_device() { # SPEC SUMMARY PROGRAM...
	local spec=$1 summary=$2 dev addr transport prog rc limit t0 took
	shift 2
	limit=$((${MSGA_TEST_TIMEOUT:-900} * scale))
	IFS=: read -r dev addr transport <<<"$spec"
	for prog in "$@"; do
		echo
		echo "==== device $dev ($transport, $addr): $prog ===="
		t0=$SECONDS
		MSGA_TEST_DEV=$dev MSGA_TEST_ADDR=$addr MSGA_TEST_TRANSPORT=$transport \
			MSGA_TEST_TIMEOUT_SCALE=$scale \
			timeout --kill-after=10 "$limit" \
			${MSGA_TEST_WRAPPER:-} "$builddir/$prog" --verbose --jobs 1 2>&1
		rc=$?
		# (each run's time, so that a slow program shows in CI's log)
		took=$((SECONDS - t0))
		if [ $rc = 0 ]; then
			echo "PASS  $dev  $prog  ${took} s" >>"$summary"
		else
			echo "FAIL  $dev  $prog (exit $rc)  ${took} s" >>"$summary"
		fi
		echo "device-tests: $(tail -n 1 "$summary")" >&3
	done
}

# Every program on every device. With MSGA_DEVICE_PARALLEL=1 (the VM's
# default: tests/vm's two devices each get a vCPU) the devices' loops run
# at once, each into a log of its own that is printed whole, in device
# order, when all are done (progress lines meanwhile); else one after the
# other, straight to the output. Their tests share nothing: each device
# has its own addresses, and tests that need fixed ports or groups name
# them per address or per process.
run_all() { # PROGRAM...
	local spec dev tmp pass fail pids=() rc=0 prog shared=() alone=()
	[ -n "${MSGA_TEST_DEVICES:-}" ] || { echo "device-tests: MSGA_TEST_DEVICES is empty" >&2; return 1; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/device-tests.XXXXXX") || return 1
	if [ "${MSGA_DEVICE_PARALLEL:-0}" = 1 ]; then
		# Programs in MSGA_DEVICE_ALONE measure the CPUs themselves
		# (dev_cpu_pin: msga_cpu, --pin auto) or change the host's
		# state (dev_port_range): they run after the loops, one
		# device after the other, with nothing else running.
		for prog in "$@"; do
			case " ${MSGA_DEVICE_ALONE:-} " in
			*" $prog "*) alone+=("$prog") ;;
			*) shared+=("$prog") ;;
			esac
		done
		for spec in $MSGA_TEST_DEVICES; do
			dev=${spec%%:*}
			echo "device-tests: $dev: ${#shared[@]} programs (its output follows when every device is done)"
			run_device "$spec" "$tmp/summary.$dev" "${shared[@]}" \
				3>&1 >"$tmp/log.$dev" 2>&1 &
			pids+=($!)
		done
		wait "${pids[@]}"
		for spec in $MSGA_TEST_DEVICES; do
			cat "$tmp/log.${spec%%:*}"
		done
		if [ ${#alone[@]} -gt 0 ]; then
			echo
			echo "device-tests: alone, device after device: ${alone[*]}"
			for spec in $MSGA_TEST_DEVICES; do
				run_device "$spec" "$tmp/summary.${spec%%:*}" \
					"${alone[@]}" 3>/dev/null
			done
		fi
	else
		for spec in $MSGA_TEST_DEVICES; do
			run_device "$spec" "$tmp/summary.${spec%%:*}" "$@" 3>/dev/null
		done
	fi
	echo
	echo "==== device test summary ===="
	for spec in $MSGA_TEST_DEVICES; do
		cat "$tmp/summary.${spec%%:*}" 2>/dev/null
	done | tee "$tmp/summary"
	pass=$(grep -c '^PASS' "$tmp/summary")
	fail=$(grep -c '^FAIL' "$tmp/summary")
	# (a loop that ended early ran fewer programs than it was given)
	[ $((pass + fail)) = $(($# * $(wc -w <<<"$MSGA_TEST_DEVICES"))) ] || {
		echo "device-tests: only $((pass + fail)) runs of $(($# * $(wc -w <<<"$MSGA_TEST_DEVICES"))) ended"
		rc=1
	}
	echo "device tests: $pass passed, $fail failed"
	rm -rf "$tmp"
	[ "$fail" = 0 ] && [ $rc = 0 ]
}

# The VM devices MSGA_VM_TEST_DEVICES names, all if it is empty.
vm_devices() {
	local spec name picked="" found
	[ -n "${MSGA_VM_TEST_DEVICES:-}" ] || { echo "$MSGA_VM_DEVICES"; return; }
	for name in $MSGA_VM_TEST_DEVICES; do
		found=""
		for spec in $MSGA_VM_DEVICES; do
			[ "${spec%%:*}" = "$name" ] && found=$spec
		done
		[ -n "$found" ] || {
			echo "device-tests: MSGA_VM_TEST_DEVICES: no VM device '$name' (the VM has:$(for spec in $MSGA_VM_DEVICES; do printf ' %s' "${spec%%:*}"; done))" >&2
			return 2
		}
		picked+="${picked:+ }$found"
	done
	echo "$picked"
}
vm_specs=$(vm_devices) || exit 2

if [ "${1:-}" = --in-guest ]; then
	shift
	# (every device of the VM, and tests/dev_bind's addresses: env.sh)
	MSGA_TEST_ALL_DEVICES=$MSGA_VM_DEVICES \
		MSGA_TEST_ALIAS_ADDR=$MSGA_VM_ALIAS_ADDR \
		MSGA_TEST_NORDMA_ADDR=$MSGA_VM_NORDMA_ADDR \
		MSGA_TEST_SILENT_ADDR=$MSGA_VM_SILENT_ADDR \
		MSGA_TEST_DEVICES=$vm_specs run_all "$@"
	exit
fi

# Nothing ran, and why: a pass, except under CI without a stated reason,
# since a device test that did not run is not a pass.
not_run() { # what-was-not-run
	echo "device-tests: NOT RUN ($1)" \
		"${MSGA_NO_DEVICE_TESTS_REASON:+(reason: $MSGA_NO_DEVICE_TESTS_REASON)}"
	if [ "${CI:-}" = true ] && [ -z "${MSGA_NO_DEVICE_TESTS_REASON:-}" ]; then
		echo "device-tests: CI must run the device tests" >&2
		exit 1
	fi
	exit 0
}

# (make check's DEVICE_TESTS_RUN= selects none)
[ $# -gt 0 ] || not_run "no device test program selected"
case "$mode" in
vm)
	echo "device-tests: booting the test VM (rxe0 = soft-RoCE, siw0 = soft-iWARP)"
	MSGA_VM_RWDIRS="$builddir" \
		MSGA_VM_TIMEOUT=$((${MSGA_VM_TIMEOUT:-3000} * scale)) \
		exec "$here/vm-run.sh" \
		"$builddir/tests/vm-results" \
		env MSGA_BUILDDIR="$builddir" ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
		MSGA_TEST_WRAPPER="${MSGA_TEST_WRAPPER:-}" \
		MSGA_TEST_TIMEOUT="${MSGA_TEST_TIMEOUT:-900}" \
		MSGA_TEST_TIMEOUT_SCALE="$scale" \
		MSGA_VM_TEST_DEVICES="${MSGA_VM_TEST_DEVICES:-}" \
		MSGA_DEVICE_PARALLEL="${MSGA_DEVICE_PARALLEL:-1}" \
		MSGA_DEVICE_ALONE="${MSGA_DEVICE_ALONE:-}" \
		"$here/device-tests.sh" --in-guest "$@"
	;;
native)
	run_all "$@"
	;;
no)
	not_run "configured --with-device-tests=no; $# device test programs were not executed"
	;;
*)
	echo "device-tests: MSGA_DEVICE_TESTS must be vm, native or no, not '$mode'" >&2
	exit 2
	;;
esac
