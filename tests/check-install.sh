#!/bin/sh
# SPDX-License-Identifier: MIT
# check-install.sh PROGRAM.c - build PROGRAM.c against the installed
# libmsgaccel using only pkg-config, then run it. Env: CC, LIBDIR,
# PKG_CONFIG_PATH (pointing at the installed libmsgaccel.pc).
set -eu
src=$1
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
flags=$(pkg-config --cflags --libs libmsgaccel) ||
	{ echo "check-install: pkg-config cannot find libmsgaccel" >&2; exit 1; }
echo "check-install: ${CC:-cc} $src $flags"
# shellcheck disable=SC2086
${CC:-cc} -o "$out/user" "$src" $flags
LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$out/user"
