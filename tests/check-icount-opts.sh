#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/msga_icount's usage errors, on the host (no device: options are
# checked before anything opens): one line on stderr naming the culprit,
# exit status 2; --help exits 0. Run from the build tree by make check.
prog=${MSGA_ICOUNT:-./bench/msga_icount}
fail=0
err=$(mktemp) || exit 1
trap 'rm -f "$err"' EXIT

expect() { # WHAT ARGS...: exit 2, one stderr line containing WHAT
	what=$1
	shift
	"$prog" "$@" >/dev/null 2>"$err"
	st=$?
	lines=$(wc -l <"$err")
	if [ "$st" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$what" "$err"; then
		echo "FAIL: msga_icount $*: status $st, $lines line(s): $(cat "$err")"
		fail=1
	else
		echo "ok: msga_icount $*: $(cat "$err")"
	fi
}

expect "--path" --path tcp 198.18.0.1
expect "-n" -n 0 198.18.0.1
expect "-n" -n 12x 198.18.0.1
expect "--idle" --idle -1 198.18.0.1
expect "-s" -s 5000 198.18.0.1
expect "-p" -p 65535 198.18.0.1
expect "-w" -w 0 198.18.0.1
expect "ADDR" --pingpong
expect "ADDR" 198.18.0.1 198.18.0.2
expect "--bogus: unknown option" --bogus 198.18.0.1
expect "--mac" --mac --path ring 198.18.0.1
expect "--pingpong" --path write 198.18.0.1
expect "-g" --path mcast -g 10.0.0 198.18.0.1
"$prog" --help >/dev/null 2>&1 || { echo "FAIL: --help did not exit 0"; fail=1; }
exit $fail
