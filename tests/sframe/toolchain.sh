#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# toolchain.sh SUITE DEST: unpack SUITE's (trixie, sid) binutils and glibc
# into DEST and write as/ld/readelf/objdump wrappers in DEST/bin that run
# them through that glibc's own dynamic loader, since they need a newer
# glibc than the host's.  Use with gcc -BDEST/bin/.  Packages come from the
# cache (CACHE_DIR) or are fetched with scripts/apt-suite.sh.
set -euo pipefail

suite=$1
dest=$2
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CACHE_DIR:-$top/cache}
debs=$cache/sframe-tc/debs-$suite

case "$suite" in
trixie) pkgs="libsframe1 binutils-dev" ;;
sid) pkgs="libsframe3 libsframe-dev" ;;
*) echo "toolchain.sh: unknown suite $suite" >&2; exit 1 ;;
esac
pkgs="binutils binutils-x86-64-linux-gnu libbinutils libctf0 libctf-nobfd0
      libjansson4 libzstd1 zlib1g libc6 $pkgs"

[ -x "$dest/bin/as" ] && exit 0
mkdir -p "$debs"
for p in $pkgs; do
	ls "$debs/${p}_"*.deb >/dev/null 2>&1 && continue
	APT_SUITE_DEST=$debs APT_SUITE_DIR=${APT_SUITE_DIR:-$cache/apt} \
		"$top/scripts/apt-suite.sh" "$suite" download "$p"
done
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/bin"
for d in "$debs"/*.deb; do
	dpkg-deb -x "$d" "$dest.tmp/root"
done
lib=$dest/root/usr/lib/x86_64-linux-gnu
for t in as ld readelf objdump; do
	printf '#!/bin/sh\nexec %s/ld-linux-x86-64.so.2 --library-path %s %s/root/usr/bin/x86_64-linux-gnu-%s "$@"\n' \
		"$lib" "$lib" "$dest" "$t" > "$dest.tmp/bin/$t"
	chmod +x "$dest.tmp/bin/$t"
done
# sid's libsframe-dev lacks ansidecl.h, which sframe.h includes.
inc=$dest.tmp/root/usr/include
[ -f "$inc/ansidecl.h" ] || printf '#define ATTRIBUTE_PACKED __attribute__((packed))\n#define ATTRIBUTE_UNUSED __attribute__((unused))\n' > "$inc/ansidecl.h"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
