#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cross.sh SUITE TARGET DEST: unpack SUITE's (bookworm, trixie, sid) cross
# binutils for TARGET (aarch64, s390x) into DEST and write as/ld/readelf
# wrappers in DEST/bin.  trixie's and sid's run on the glibc that
# toolchain.sh unpacks for that suite's host binutils, through its own
# dynamic loader; bookworm's on the host's.  Packages come from the cache
# (CACHE_DIR) or are fetched with scripts/apt-suite.sh.
set -euo pipefail

suite=$1
target=$2
dest=$(realpath -m "$3")	# the wrappers name it
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=$(realpath -m "${CACHE_DIR:-$top/cache}")
debs=$cache/sframe-tc/debs-cross-$suite
pkg=binutils-$target-linux-gnu

case "$target" in
aarch64|s390x) ;;
*) echo "cross.sh: unknown target $target" >&2; exit 1 ;;
esac
case "$suite" in
bookworm)
	loader=/lib64/ld-linux-x86-64.so.2
	libs= ;;
trixie|sid)
	"$here/toolchain.sh" "$suite" "$cache/sframe-tc/$suite"
	libs=$cache/sframe-tc/$suite/root/usr/lib/x86_64-linux-gnu
	loader=$libs/ld-linux-x86-64.so.2 ;;
*) echo "cross.sh: unknown suite $suite" >&2; exit 1 ;;
esac

[ -x "$dest/bin/as" ] && exit 0
mkdir -p "$debs"
if ! ls "$debs/${pkg}_"*.deb >/dev/null 2>&1; then
	APT_SUITE_DEST=$debs APT_SUITE_DIR=${APT_SUITE_DIR:-$cache/apt} \
		"$top/scripts/apt-suite.sh" "$suite" download "$pkg"
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp/bin"
dpkg-deb -x "$debs/${pkg}_"*.deb "$dest.tmp/root"
path=$dest/root/usr/lib/x86_64-linux-gnu${libs:+:$libs}
for t in as ld readelf objdump objcopy; do
	printf '#!/bin/sh\nexec %s --library-path %s %s/root/usr/bin/%s-linux-gnu-%s "$@"\n' \
		"$loader" "$path" "$dest" "$target" "$t" > "$dest.tmp/bin/$t"
	chmod +x "$dest.tmp/bin/$t"
done
rm -rf "$dest"
mv "$dest.tmp" "$dest"
"$dest/bin/as" --version >/dev/null || { rm -rf "$dest"; exit 1; }
