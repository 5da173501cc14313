#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-run.sh RESULTS_DIR COMMAND [ARGS...]
#
# Boot Debian's stock kernel under QEMU with virtme-ng over the host's
# filesystem, bring up the rxe and siw test devices (guest-setup.sh), run
# COMMAND as root inside, and exit with COMMAND's status. RESULTS_DIR is
# shared read-write with the guest; its `rc` file carries the status back,
# because a guest that exits right after printing can lose its last output.
#
# The VM runs under TCG (software emulation). KVM on these machines cannot
# boot the stock kernel: QEMU failed to set MSR 0x10a, and on 2026-11-25 a
# KVM boot spun at full CPU for minutes without reaching the guest, which
# would have cost a run its whole MSGA_VM_TIMEOUT. MSGA_VM_KVM=1 tries KVM
# first where /dev/kvm exists, falling back to TCG when the kernel does not
# boot. MSGA_VM_TIMEOUT (seconds) bounds each boot, and a guest that has
# not marked itself booted within MSGA_VM_BOOT_TIMEOUT (480) is stopped.
# MSGA_VM_QEMU_OPTS adds QEMU arguments (two-host.sh: a network link).
#
# The guest sees the host's files at the same paths, read-only, except
# where virtme-ng masks them (guest-shares.sh). Directories the guest
# writes to are shared read-write: RESULTS_DIR and MSGA_VM_RWDIRS (a
# space-separated list, e.g. the build tree). The checkout this script is
# in, MSGA_VM_RODIRS and the siw.ko cache are shared read-only where the
# guest masks them. A directory that cannot be shared ends the run before
# the boot, with one line naming it.
#
# Under TCG the guest kernel finds the TSC unstable and falls back to the
# emulated HPET, where one clock_gettime() costs ~1.25 us (measured) instead
# of ~20 ns on a TSC clocksource. The library time-stamps every receive, so
# that would charge a VM-only cost to every message. QEMU's TCG TSC follows
# the host's invariant TSC, so the guest is told to trust it, as production
# hosts do; MSGA_VM_APPEND replaces these kernel arguments.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
. "$here/env.sh"
. "$here/guest-shares.sh"

[ $# -ge 2 ] || { echo "usage: vm-run.sh RESULTS_DIR COMMAND [ARGS...]" >&2; exit 2; }
results=$(mkdir -p "$1" && cd "$1" && pwd -P) || exit 1
shift

vng=${MSGA_VNG:-$MSGA_CACHE_DIR/venv/bin/vng}
[ -x "$vng" ] || vng=$(command -v vng || true)
[ -n "$vng" ] || { echo "vm-run: virtme-ng not found; run scripts/bootstrap.sh" >&2; exit 1; }
kernel=$(msga_vm_kernel)
[ -n "$kernel" ] || { echo "vm-run: no /boot/vmlinuz-*-amd64; apt-get install linux-image-amd64" >&2; exit 1; }
[ -f "$(msga_siw_ko)" ] || { echo "vm-run: no siw.ko; run tests/vm/build-siw.sh" >&2; exit 1; }

# What the guest needs, as physical paths (the guest resolves symlinks
# too); the words "--rwdir" are what MSGA_VM_RWDIRS once held, and skipped.
physical() { # DIR: its path without symlinks, or one line on stderr
	(cd "$1" 2>/dev/null && pwd -P) || { echo "vm-run: no directory $1 to share with the VM" >&2; return 1; }
}
needs() {
	local dir path
	echo "rw $results"
	for dir in ${MSGA_VM_RWDIRS:-}; do
		[ "$dir" != --rwdir ] || continue
		path=$(physical "$dir") || return 1
		echo "rw $path"
	done
	for dir in "$(dirname "$(dirname "$here")")" ${MSGA_VM_RODIRS:-} "$(dirname "$(msga_siw_ko)")"; do
		path=$(physical "$dir") || return 1
		echo "ro $path"
	done
}
needs=$(needs) || exit 1
shares=$(msga_vm_shares <<<"$needs") || exit 1

# Quote the command. The guest first marks that it booted, in RESULTS_DIR,
# which is always shared: a guest that then cannot run guest-run.sh is
# told apart from a VM that never came up. The guest's HOME differs from
# the host's, so it is given the cache directory.
# The command itself goes to the guest in a file of RESULTS_DIR: virtme-ng
# passes the guest's command on the kernel command line, which x86 cuts
# at 2048 bytes (COMMAND_LINE_SIZE), and a cut one never runs (the guest
# sits idle until the timeout): the list of every device test outgrew it.
printf 'exec %s\n' "$(printf '%q ' "$@")" >"$results/guest-cmd.sh" || exit 1
guest="touch $(printf %q "$results/booted");"
guest+=" MSGA_CACHE_DIR=$(printf %q "$MSGA_CACHE_DIR")"
guest+=" bash $(printf %q "$here/guest-run.sh") $(printf %q "$results")"
guest+=" bash $(printf %q "$results/guest-cmd.sh")"
# virtme-ng runs its helpers from PATH.
export PATH="$(dirname "$vng"):$PATH"

# A guest that never marks booted (a kernel that hangs, a command it
# cannot read) would otherwise hold the run until MSGA_VM_TIMEOUT: stop
# it after MSGA_VM_BOOT_TIMEOUT seconds instead. timeout(1) passes the
# TERM on to virtme-ng.
boot_watchdog() {
	local left=${MSGA_VM_BOOT_TIMEOUT:-480} pid

	while [ "$left" -gt 0 ]; do
		[ -f "$results/booted" ] && return 0
		sleep 2
		left=$((left - 2))
	done
	pid=$(cat "$results/vm.pid" 2>/dev/null) || return 0
	echo "vm-run: the guest did not mark booted within ${MSGA_VM_BOOT_TIMEOUT:-480} s: stopping the VM" >&2
	kill -TERM "$pid" 2>/dev/null
	return 0
}

boot() {
	local watchdog ret

	rm -f "$results/rc" "$results/started" "$results/booted" "$results/vm.pid"
	boot_watchdog &
	watchdog=$!
	(
		echo "$BASHPID" >"$results/vm.pid"
		exec timeout --kill-after=10 "${MSGA_VM_TIMEOUT:-1500}" \
			"$vng" --run "$kernel" "$@" --cpus 2 --memory 4G \
			--append "${MSGA_VM_APPEND-tsc=reliable clocksource=tsc}" \
			$shares \
			${MSGA_VM_QEMU_OPTS:+--qemu-opts="$MSGA_VM_QEMU_OPTS"} \
			--exec "$guest"
	) 2>&1 | cat
	# Through a pipe: QEMU reopens its stdout as a new file description,
	# so with stdout on a log file it would overwrite the log from byte 0.
	ret=${PIPESTATUS[0]}
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
	return "$ret"
}

booted=0
if [ "${MSGA_VM_KVM:-0}" = 1 ] && [ -w /dev/kvm ]; then
	boot && true
	[ -f "$results/booted" ] && booted=1
	[ $booted = 1 ] || echo "vm-run: KVM could not boot the kernel; falling back to TCG" >&2
fi
if [ $booted = 0 ]; then
	boot --disable-kvm && true
	[ -f "$results/booted" ] || { echo "vm-run: the VM did not boot (see QEMU output above)" >&2; exit 1; }
fi
[ -f "$results/started" ] || {
	echo "vm-run: the VM booted, but its guest could not run $here/guest-run.sh (see the output above)" >&2
	exit 1
}
[ -f "$results/rc" ] || { echo "vm-run: the guest command did not finish (crash or timeout)" >&2; exit 1; }
exit "$(cat "$results/rc")"
