#!/bin/bash
# SPDX-License-Identifier: MIT
# package-check.sh [WORKDIR]  (default: build-deb/ in the checkout)
# The Debian packages, as a user gets them (issue 36 item 12):
#   1. debian/changelog's version is configure.ac's AC_INIT version;
#   2. a clean export of the tree (the committed files, with any edits to
#      them, as `git stash create` sees them; nothing untracked, so no
#      build-*/ folder) builds with `dpkg-buildpackage -us -uc -b`;
#      DEB_BUILD_OPTIONS defaults to "nocheck parallel=<cores>" here, as
#      the host tests ran in the earlier stages of scripts/test.sh;
#   3. lintian finds no error and no warning (none is overridden today;
#      an override goes in debian/<package>.lintian-overrides, with a
#      comment saying why the tag is wrong there);
#   4. the three .debs, unpacked with dpkg-deb -x into an empty root (the
#      host's dpkg database is not touched), give a msga_stat whose
#      --version names this version, run with LD_LIBRARY_PATH only in the
#      root, and ldd must resolve libmsgaccel there;
#   5. tests/check-install.sh builds and runs a program through
#      `pkg-config libmsgaccel` and a libev one through
#      `pkg-config libmsgaccel-ev`, with PKG_CONFIG_LIBDIR and
#      PKG_CONFIG_SYSROOT_DIR in the root: the headers, .so link and .pc
#      files come from libmsgaccel-dev, never from the source tree.
# Any failed step fails the script, naming the step.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$top/build-deb}
jobs=$(nproc)
die() { echo "package-check: FAIL: $*" >&2; exit 1; }
start=$SECONDS
step() { printf 'package-check: [%3ds] %s\n' $((SECONDS - start)) "$*"; }

version=$(sed -n 's/^AC_INIT(\[msgaccel\], \[\([^]]*\)\].*/\1/p' "$top/configure.ac")
[ -n "$version" ] || die "no version in configure.ac's AC_INIT"
deb_version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
[ "$deb_version" = "$version" ] ||
	die "debian/changelog says $deb_version, configure.ac says $version: add a changelog entry for $version (dch -v $version)"
step "version $version (configure.ac and debian/changelog agree)"
# The soname's number, libtool's current - age, names the library package.
lt=$(sed -n 's/^AC_SUBST(\[MSGA_LT_VERSION\], \[\([0-9:]*\)\]).*/\1/p' "$top/configure.ac")
IFS=: read -r lt_cur _ lt_age <<<"$lt"
[ -n "$lt_cur" ] && [ -n "$lt_age" ] || die "no MSGA_LT_VERSION in configure.ac"
soname=libmsgaccel.so.$((lt_cur - lt_age))
libpkg=libmsgaccel$((lt_cur - lt_age))
grep -qx "Package: $libpkg" "$top/debian/control" ||
	die "debian/control has no package $libpkg for $soname"
[ -f "$top/debian/$libpkg.symbols" ] || die "no debian/$libpkg.symbols"
step "$soname (MSGA_LT_VERSION $lt): package $libpkg"

rm -rf "$work"
mkdir -p "$work"
rev=$(git -C "$top" stash create 2>/dev/null || true)
git -C "$top" archive --prefix="msgaccel-$version/" "${rev:-HEAD}" |
	tar -C "$work" -xf - || die "cannot export the tree from git"
src=$work/msgaccel-$version
step "exported ${rev:-HEAD} to $src"

export DEB_BUILD_OPTIONS=${DEB_BUILD_OPTIONS:-nocheck parallel=$jobs}
step "dpkg-buildpackage -us -uc -b (DEB_BUILD_OPTIONS=$DEB_BUILD_OPTIONS)"
(cd "$src" && dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
	{ tail -n 80 "$work/build.log"; die "dpkg-buildpackage (log: $work/build.log)"; }
grep -E '^dpkg-(gensymbols|shlibdeps): warning' "$work/build.log" &&
	die "dpkg-gensymbols/dpkg-shlibdeps warned (above)"
changes=$(ls "$work"/msgaccel_"$version"_*.changes)
debs=("$work"/"$libpkg"_"$version"_*.deb "$work"/libmsgaccel-dev_"$version"_*.deb \
	"$work"/msgaccel-tools_"$version"_*.deb)
for deb in "${debs[@]}"; do
	[ -f "$deb" ] || die "no package $deb"
done

step "lintian (fails on errors and warnings)"
lintian --info --display-info --fail-on error,warning "$changes" ||
	die "lintian"

root=$work/root
mkdir -p "$root"
for deb in "${debs[@]}"; do
	dpkg-deb -x "$deb" "$root"
	step "unpacked $(basename "$deb"): $(dpkg-deb -c "$deb" | grep -vc '/$') files"
done
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$root/usr/lib/$triplet
[ -e "$libdir/$soname" ] || die "no $soname in the root"

libs=$(LD_LIBRARY_PATH=$libdir ldd "$root/usr/bin/msga_stat")
grep -q "$soname => $libdir/" <<<"$libs" ||
	die "msga_stat does not load libmsgaccel from the root: $libs"
out=$(LD_LIBRARY_PATH=$libdir "$root/usr/bin/msga_stat" --version) ||
	die "msga_stat --version failed: $out"
grep -qF "$version" <<<"$out" || die "msga_stat --version says '$out', not $version"
step "root's msga_stat --version: $out"
for tool in msga_feed rdma_lat rdma_bw; do
	[ -x "$root/usr/bin/$tool" ] || die "no $tool in msgaccel-tools"
done

# libmsgaccel's .pc files come from the root, first in the search path.
# libibverbs', librdmacm's and libsodium's (its Requires.private, which
# pkgconf reads for --cflags too) are libmsgaccel-dev's dependencies, so
# they come from the host's own folders, after the root's. Their flags are
# system folders, which pkgconf leaves out, except libnl3's include folder
# (-I<root>/usr/include/libnl3, empty in the root and unused by msgaccel.h).
export PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_LIBDIR=$libdir/pkgconfig:$root/usr/share/pkgconfig:/usr/lib/$triplet/pkgconfig:/usr/share/pkgconfig
flags=$(pkg-config --cflags --libs libmsgaccel-ev) ||
	die "pkg-config cannot read the root's libmsgaccel-ev.pc"
grep -q -- "-I$root/usr/include" <<<"$flags" ||
	die "pkg-config's flags do not point into the root: $flags"
grep -q -- "-L$libdir" <<<"$flags" ||
	die "pkg-config's flags do not point into the root: $flags"
for f in $flags; do # every folder named is in the root: none in the tree
	case $f in
	-I* | -L*) [[ ${f:2} == "$root"/* ]] ||
		die "pkg-config names $f, outside the root: $flags" ;;
	esac
done
step "pkg-config libmsgaccel-ev: $flags"
CC=${CC:-cc} LIBDIR=$libdir sh "$top/tests/check-install.sh" \
	"$top/tests/install_user.c" "$top/tests/install_user_ev.c" ||
	die "a program built against the root's libmsgaccel-dev"
step "PASS: packages of $version built, lintian clean, installed into $root and used"
