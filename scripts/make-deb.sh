#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the Debian package of our perf from the tree make lays out (pristine
# 7.2.13 + the overlay) and packaging/debian, then check it with lintian.
#
#   scripts/make-deb.sh TREE TEMPLATE OUTDIR
#
# TREE is build/ours, TEMPLATE the d3-flame-graph template.  The package
# is built from a copy of TREE (dpkg-buildpackage -b: binary only, no
# source package: the source is this project plus Linux 7.2.13) in
# OUTDIR/perf-deferred-VERSION; the .deb lands in OUTDIR.  Exits non-zero
# when the build fails or lintian reports an error.
set -euo pipefail

mkdir -p "$3"
tree=$(realpath "$1") template=$(realpath "$2") out=$(realpath "$3")
top=$(cd "$(dirname "$0")/.." && pwd)
version=$(dpkg-parsechangelog -l "$top/packaging/debian/changelog" -S Version)
src=$out/perf-deferred-$version

rm -rf "$src"
mkdir -p "$src"
# Only what perf's build reads: the tree has no build output (O= is
# elsewhere), so a plain copy is the source.
cp -a "$tree"/. "$src"/
rm -f "$src/.overlay-state"
cp -a "$top/packaging/debian" "$src/debian"
install -m 644 "$template" "$src/debian/d3-flamegraph-base.html"
rm -f "$out"/perf-deferred_*
(cd "$src" && DEB_BUILD_OPTIONS="parallel=$(nproc) ${DEB_BUILD_OPTIONS:-}" \
	dpkg-buildpackage -us -uc -b >"$out/build.log" 2>&1) || {
	# With -j the error can sit far above the log's end.
	grep -n -E '\*\*\*|error:|Error [0-9]|cannot find' "$out/build.log" | head -n 20
	tail -n 40 "$out/build.log"
	echo "make-deb: dpkg-buildpackage failed: $out/build.log" >&2
	exit 1
}
changes=$(ls "$out"/perf-deferred_*.changes)
# Errors fail the build; warnings and the rest are shown.
lintian --fail-on error --no-tag-display-limit "$changes" | tee "$out/lintian.log"
ls "$out"/perf-deferred_*.deb
