#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-kernel.sh: print the path of a cached Linux 7.2.13 vmlinuz, fetching it
# first if needed.
#
# The kernel is Debian's linux-binary-7.2.13+deb14-cloud-amd64 (suite sid; it
# holds /usr/lib/modules/<release>/vmlinuz, the linux-image-* package of the
# same name only depends on it). Fetched through scripts/apt-suite.sh, so
# the system's apt configuration is never touched. The .deb is checked
# against a known SHA-256 and its control fields, and the bzImage's own
# version string must name the expected release; anything else stops here
# with the reason. Cached under $CACHE_DIR (default <repo>/cache).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${CACHE_DIR:-$top/cache}
pkg=linux-binary-7.2.13+deb14-cloud-amd64
want_pkg=7.2.13-1
release=7.2.13+deb14-cloud-amd64
# SHA256 of linux-binary-7.2.13+deb14-cloud-amd64_7.2.13-1_amd64.deb
want_sha=03e41f1c34c16583462f029e81944a85ebcdb78098c258dedfa1cfdd680a27f8

die() { echo "get-kernel: $*" >&2; exit 1; }

out=$cache/guest/vmlinuz-$release
if [ -f "$out" ]; then
	echo "$out"
	exit 0
fi
command -v dpkg-deb > /dev/null || die "dpkg-deb not found (Debian host needed to unpack $pkg)"

mkdir -p "$cache/debs" "$cache/guest"
deb=$cache/debs/${pkg}_${want_pkg}_amd64.deb
if [ ! -f "$deb" ]; then
	APT_SUITE_DIR=${APT_SUITE_DIR:-$cache/apt} APT_SUITE_DEST=$cache/debs "$top/scripts/apt-suite.sh" sid download "$pkg=$want_pkg" ||
		die "could not download $pkg $want_pkg from sid (no network? no longer in the archive?)"
fi
[ -f "$deb" ] || die "$deb missing after download"
got=$(sha256sum "$deb" | cut -d' ' -f1)
[ "$got" = "$want_sha" ] || die "$deb: sha256 $got, expected $want_sha (corrupt or rebuilt package; delete it to fetch again)"
[ "$(dpkg-deb -f "$deb" Package)" = "$pkg" ] || die "$deb is not $pkg"
[ "$(dpkg-deb -f "$deb" Version)" = "$want_pkg" ] || die "$deb is not version $want_pkg"

dpkg-deb --fsys-tarfile "$deb" | tar -xOf - "./usr/lib/modules/$release/vmlinuz" > "$out.tmp" ||
	die "$deb holds no usr/lib/modules/$release/vmlinuz"
# bzImage header: 'HdrS' at 0x202, kernel_version pointer (minus 0x200) at 0x20e.
[ "$(dd if="$out.tmp" bs=1 skip=$((0x202)) count=4 2> /dev/null)" = HdrS ] ||
	die "$out.tmp is not a bzImage"
off=$(od -An -tu2 -j $((0x20e)) -N2 "$out.tmp" | tr -d ' ')
ver=$(dd if="$out.tmp" bs=1 skip=$((off + 0x200)) count=128 2> /dev/null | tr '\0' '\n' | head -n 1)
case "$ver" in
"$release "*) ;;
*) die "vmlinuz says '$ver', expected $release" ;;
esac
mv "$out.tmp" "$out"
echo "$out"
