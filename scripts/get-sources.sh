#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-sources.sh DEST: lay out the pristine Linux 7.2.13 sources perf needs
# (the paths of tools/perf/MANIFEST, plus checkpatch.pl and its data) in DEST.
#
# From $LINUX_SRC when set (a Linux 7.2 tree), else from Debian's
# linux-source-7.2 package (suite sid), fetched through scripts/apt-suite.sh.
# The package's tarball is checked against a known SHA-256 and the tree's
# Makefile must say 7.2.13; anything else stops here with the reason.
set -euo pipefail

dest=$1
top=$(cd "$(dirname "$0")/.." && pwd)
want_version=7.2.13
want_pkg=7.2.13-1
# sha256 of usr/src/linux-source-7.2.tar.xz in linux-source-7.2_7.2.13-1_all.deb
want_sha=ecb3877b9988c936dcc64c63af8a54c2fa6df7f717d4e5ee429d0f4c4859e68b
cache=${CACHE_DIR:-$top/cache}

die() { echo "get-sources: $*" >&2; exit 1; }

extra_paths="scripts/checkpatch.pl scripts/spelling.txt scripts/const_structs.checkpatch Makefile"

check_version() {
	local v
	v=$(awk '/^VERSION =/ {a=$3} /^PATCHLEVEL =/ {b=$3} /^SUBLEVEL =/ {c=$3} END {print a "." b "." c}' "$1/Makefile")
	[ "$v" = "$want_version" ] || die "$1 is Linux $v, this overlay is for $want_version"
}

rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"

if [ -n "${LINUX_SRC:-}" ]; then
	[ -f "$LINUX_SRC/tools/perf/MANIFEST" ] || die "LINUX_SRC=$LINUX_SRC has no tools/perf/MANIFEST"
	check_version "$LINUX_SRC"
	# shellcheck disable=SC2046
	(cd "$LINUX_SRC" && tar -cf - $(grep -v '^#' tools/perf/MANIFEST) $extra_paths) |
		tar -xf - -C "$dest.tmp"
else
	mkdir -p "$cache/debs"
	deb=$cache/debs/linux-source-7.2_${want_pkg}_all.deb
	if [ ! -f "$deb" ]; then
		APT_SUITE_DEST=$cache/debs "$top/scripts/apt-suite.sh" sid download "linux-source-7.2=$want_pkg" ||
			die "could not download linux-source-7.2 $want_pkg from sid (is it still in the archive? or pass LINUX_SRC=)"
	fi
	tarball=$cache/linux-source-7.2.tar.xz
	if [ ! -f "$tarball" ]; then
		dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ./usr/src/linux-source-7.2.tar.xz > "$tarball.tmp"
		mv "$tarball.tmp" "$tarball"
	fi
	got=$(sha256sum "$tarball" | cut -d' ' -f1)
	[ "$got" = "$want_sha" ] || die "$tarball: sha256 $got, expected $want_sha (corrupt or different package)"
	# One pass over the 160 MB tarball: MANIFEST entries are directories,
	# files or globs; strip the linux-source-7.2/ prefix.
	manifest="tools/perf tools/arch tools/scripts tools/build tools/include tools/lib
		  tools/bpf/bpftool kernel/bpf/disasm.c kernel/bpf/disasm.h
		  COPYING LICENSES/preferred/GPL-2.0 arch/arm64/tools
		  include/uapi/asm-generic/Kbuild scripts/bpf_doc.py scripts/Kbuild.include
		  scripts/Makefile.asm-headers scripts/syscall.tbl scripts/syscallhdr.sh
		  kernel/unwind include/linux/unwind_deferred.h include/linux/unwind_deferred_types.h"
	pats=()
	for p in $manifest $extra_paths; do pats+=("linux-source-7.2/$p"); done
	tar -xJf "$tarball" -C "$dest.tmp" --strip-components=1 --wildcards \
		"${pats[@]}" 'linux-source-7.2/arch/*/include/uapi/asm/bpf_perf_event.h'
fi
check_version "$dest.tmp"
for p in $(grep -v '^#' "$dest.tmp/tools/perf/MANIFEST"); do
	compgen -G "$dest.tmp/$p" > /dev/null || die "MANIFEST path $p missing from the sources"
done
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "get-sources: Linux $want_version perf sources in $dest"
