# SPDX-License-Identifier: MIT
# Helpers of the two-VM tests (two-host.sh, two-host-mcast.sh). Sourced,
# not run; the sourcing script sets $here (this directory). Sets
# $builddir: MSGA_BUILDDIR, by default the current directory.
#
# Two VMs are joined by QEMU's socket netdev: one QEMU listens on a free
# port of 127.0.0.1, the other connects to it, and the guests see one
# virtio-net NIC each (its MAC picks it out, two-host-guest.sh). Nothing
# leaves the machine: the link is a TCP connection over loopback, and the
# guests address each other in 198.18.0.0/15.

builddir=$(cd "${MSGA_BUILDDIR:-$PWD}" && pwd)

# th_results_dir DIR: create DIR; its absolute path
th_results_dir() {
	mkdir -p "$1" && cd "$1" && pwd
}

# th_wait_file PATH SECONDS PID: 0 once PATH exists; 1 if PID (the VM
# that should create it) ended, or after SECONDS.
th_wait_file() {
	local end=$((SECONDS + $2))
	while [ ! -e "$1" ]; do
		kill -0 "$3" 2>/dev/null || return 1
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

# th_wait_listen PORT SECONDS PID: 0 once a QEMU listens on PORT of
# 127.0.0.1, i.e. the second VM may boot; 1 if PID ended, or after
# SECONDS. (A probe connection would be taken for the other VM's.)
th_wait_listen() {
	local end=$((SECONDS + $2))
	until ss -Hltn "sport = :$1" | grep -q .; do
		kill -0 "$3" 2>/dev/null || return 1
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

# th_free_port: a free TCP port of 127.0.0.1 for the link, picked by the
# kernel.
th_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# th_vm RESULTS LISTEN|CONNECT PORT MAC LOG COMMAND [ARGS...]: boot a VM
# in the background (vm-run.sh, its pid in th_pid) with its end of the
# link on PORT and NIC MAC, running COMMAND (results in RESULTS, console
# in LOG). The build tree is shared read-only. The first VM must listen,
# and must be up before the second connects.
th_vm() {
	local results=$1 mode=$2 port=$3 mac=$4 log=$5
	shift 5
	MSGA_VM_TIMEOUT=${MSGA_VM_TIMEOUT:-900} MSGA_VM_RODIRS="$builddir" \
	MSGA_VM_QEMU_OPTS="-netdev socket,id=th,$mode=127.0.0.1:$port -device virtio-net-pci,netdev=th,mac=$mac" \
		"$here/vm-run.sh" "$results" "$@" >"$log" 2>&1 &
	th_pid=$!
}

# th_descendants PID: the processes below PID, deepest last.
th_descendants() {
	local child
	for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$child"
		th_descendants "$child"
	done
}

# th_kill_host PID: the host of th_vm's PID dies: its QEMU, and what
# started it (timeout, virtme-ng), are killed outright, with no shutdown
# and nothing more on the wire. vm-run.sh (PID) then ends, the guest's
# status file missing. Only processes below PID are touched.
th_kill_host() {
	local pids pid
	pids=$(th_descendants "$1")
	for pid in $pids; do # QEMU first: the wire goes silent at once
		case "$(ps -o comm= -p "$pid" 2>/dev/null)" in
		qemu*) kill -KILL "$pid" 2>/dev/null ;;
		esac
	done
	for pid in $pids; do
		kill -KILL "$pid" 2>/dev/null
	done
}

# th_stop PID: end th_vm's PID and everything it started, and reap it.
th_stop() {
	th_kill_host "$1"
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}
