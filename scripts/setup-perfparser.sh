#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Put hotspot's perfparser (an external reader of perf.data) in a
# project-local directory, from Debian's hotspot package, without
# installing hotspot: the package pulls about 100 KDE and Qt GUI
# packages, perfparser alone needs Qt's core and network libraries
# (scripts/install-deps.sh installs those).  tests/tools/test_perfparser.py
# checks that it sees on perf inject --merge-callchains output the stacks
# perf script shows.  Safe to run again.
#
#   scripts/setup-perfparser.sh [DIR]     default: build/perfparser
#
# Prints the binary's path.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build/perfparser}
cache=${CACHE_DIR:-$top/cache}/debs
bin=$dir/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
mkdir -p "$cache" "$dir"
deb=$(ls "$cache"/hotspot_*.deb 2>/dev/null | tail -n 1 || true)
if [ -z "$deb" ]; then
	# apt-get download checks the package against the signed index.
	(cd "$cache" && apt-get download -q hotspot >/dev/null)
	deb=$(ls "$cache"/hotspot_*.deb | tail -n 1)
fi
dpkg-deb -x "$deb" "$dir"
[ -x "$bin" ] || {
	echo "setup-perfparser: no hotspot-perfparser in $deb" >&2
	exit 1
}
echo "$bin"
