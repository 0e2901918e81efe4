#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-src.sh PKG...: unpack Debian (bookworm) source packages under
# cache/inline-src/PKG, through scripts/apt-suite.sh's private apt state
# (a deb-src line for the mirror the system's apt sources already use).
# The system's apt configuration is never touched. Prints the
# unpacked source directory of each package, one a line.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
base=${INLINE_SRC_DIR:-$top/cache/inline-src}
suite=${INLINE_SUITE:-bookworm}
for pkg in "$@"; do
	out=$base/$pkg
	if [ ! -f "$out/.unpacked" ]; then
		rm -rf "$out"
		mkdir -p "$out/dl"
		(cd "$out/dl" && APT_SUITE_DIR=$base/apt APT_SUITE_SRC=1 \
			"$top/scripts/apt-suite.sh" "$suite" source --download-only "$pkg" >&2)
		(cd "$out" && dpkg-source --no-check -x dl/*.dsc src >&2)
		touch "$out/.unpacked"
	fi
	echo "$out/src"
done
