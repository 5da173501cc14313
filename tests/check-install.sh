#!/bin/sh
# SPDX-License-Identifier: MIT
# check-install.sh PROGRAM.c [EV_PROGRAM.c] - build PROGRAM.c against the
# installed libmsgaccel using only `pkg-config libmsgaccel`, and
# EV_PROGRAM.c (a libev program including <msgaccel_ev.h>) using only
# `pkg-config libmsgaccel-ev`, then run each. Env: CC, LIBDIR (the
# installed library's directory, for the run), PKG_CONFIG_PATH or
# PKG_CONFIG_LIBDIR (and PKG_CONFIG_SYSROOT_DIR for a root that is not /).
set -eu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

build_run() { # build_run MODULE SOURCE
	flags=$(pkg-config --cflags --libs "$1") ||
		{ echo "check-install: pkg-config cannot find $1" >&2; exit 1; }
	echo "check-install: ${CC:-cc} $2 $flags"
	# shellcheck disable=SC2086
	${CC:-cc} -o "$out/user" "$2" $flags
	LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/user"
}

build_run libmsgaccel "$1"
[ $# -lt 2 ] || build_run libmsgaccel-ev "$2"
