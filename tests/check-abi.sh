#!/bin/sh
# SPDX-License-Identifier: MIT
# Self-test of scripts/abi-check.sh (the ABI check CI runs on libmsgaccel):
# a fixture library (tests/abi/: include/fixture.h, fixture.c, version
# scripts) is built in its old shape, dumped as a baseline, and then in
# new shapes. The allowed changes (a member appended to a size-first
# struct and a function added in a new version node; an enumerator
# added) must pass; each incompatible one (a member retyped, a member
# moved, an enumerator changed, a function removed, a function added to a
# released node, a member appended to a struct that is not size-first,
# the same library under another soname: a bump needs its own baseline)
# must fail.
# Needs abidw and abidiff (Debian: abigail-tools): without them it skips,
# except under CI=true, where bootstrap installs them and it fails.
# Environment: srcdir, CC, ABIDW, ABIDIFF (make check sets them).
set -u
srcdir=${srcdir:-.}
here=$srcdir/tests/abi
check=$srcdir/scripts/abi-check.sh
: "${ABIDW:=abidw}" "${ABIDIFF:=abidiff}"
export ABIDW ABIDIFF
if ! command -v "$ABIDW" >/dev/null 2>&1 ||
	! command -v "$ABIDIFF" >/dev/null 2>&1; then
	if [ "${CI:-}" = true ]; then
		echo "check-abi: FAIL: abidw/abidiff missing under CI (apt-get install abigail-tools)"
		exit 1
	fi
	echo "check-abi: SKIP: abidw/abidiff not found (apt-get install abigail-tools)"
	exit 77
fi
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

build() { # build NAME MAP [-DSHAPE]
	${CC:-cc} -g -O1 -fPIC -shared -I"$here/include" -o "$tmp/$1.so" \
		"$here/fixture.c" -Wl,--version-script="$here/$2" \
		-Wl,-soname,"${SONAME:-libfix.so.0}" ${3:+"$3"} ||
		{ echo "check-abi: cannot build the $1 fixture"; exit 99; }
}

expect() { # expect pass|fail NAME MAP [-DSHAPE]
	want=$1
	shift
	build "$@"
	if bash "$check" "$tmp/base.abi" "$tmp/$1.so" "$here/include" \
		>"$tmp/$1.out" 2>&1; then got=pass; else got=fail; fi
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
		echo "ok: $1 ${3:-} ($want)"
	else
		fail=$((fail + 1))
		echo "WRONG: $1 ${3:-}: expected $want, got $got:"
		cat "$tmp/$1.out"
	fi
	sed -n 's/^abi-check: /    /p' "$tmp/$1.out"
}

build base fix_v1.map
bash "$check" --update "$tmp/base.abi" "$tmp/base.so" "$here/include" ||
	exit 99
expect pass same fix_v1.map
expect pass grow fix_v2.map -DFIX_GROW
expect pass enum_add fix_v1.map -DFIX_ENUM_ADD
expect fail retype fix_v1.map -DFIX_RETYPE
expect fail move fix_v1.map -DFIX_MOVE
expect fail enum fix_v1.map -DFIX_ENUM
expect fail remove fix_v1.map -DFIX_REMOVE
expect fail old_stanza fix_v1_grown.map -DFIX_OLD_STANZA
expect fail msg_grow fix_v1.map -DFIX_MSG_GROW
SONAME=libfix.so.1 expect fail soname fix_v1.map
echo "check-abi: $pass passed, $fail failed"
[ $fail = 0 ]
