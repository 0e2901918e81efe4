#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# get-src.sh PKG...: unpack Debian (bookworm) source packages under
# cache/inline-src/PKG, through a private apt state (deb-src line built from
# the mirror the system's apt sources already use, as scripts/apt-suite.sh
# does). The system's apt configuration is never touched. Prints the
# unpacked source directory of each package, one a line.
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
base=${INLINE_SRC_DIR:-$top/cache/inline-src}
suite=${INLINE_SUITE:-bookworm}
dir=$base/apt

mirror() {
	local f u
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		u=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' "$f" |
		    grep -v -- '-security' | grep '/debian/*$' | head -n 1)
		[ -n "$u" ] && { echo "${u%/}"; return; }
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		u=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^(https?|file):/) { print $i; break } }' "$f" |
		    grep -v -- '-security' | grep '/debian/*$' | head -n 1)
		[ -n "$u" ] && { echo "${u%/}"; return; }
	done
	echo "get-src: no Debian mirror found in the system's apt sources" >&2
	exit 1
}

opts=(-o Dir::State::Lists="$dir/lists"
      -o Dir::Etc::sourcelist="$dir/sources.list"
      -o Dir::Etc::sourceparts=-
      -o Dir::Cache::archives="$dir/archives"
      -o Dir::Cache::pkgcache="$dir/pkgcache.bin"
      -o Dir::Cache::srcpkgcache="$dir/srcpkgcache.bin"
      -o APT::Get::List-Cleanup=0)

updated=
for pkg in "$@"; do
	out=$base/$pkg
	if [ ! -f "$out/.unpacked" ]; then
		if [ -z "$updated" ]; then
			mkdir -p "$dir/lists/partial" "$dir/archives/partial"
			[ -f "$dir/sources.list" ] ||
				echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" \
					> "$dir/sources.list"
			if [ -z "$(find "$dir/lists" -name '*Sources*' -mtime -7 2>/dev/null | head -n 1)" ]; then
				apt-get "${opts[@]}" -q update >&2
			fi
			updated=1
		fi
		rm -rf "$out"
		mkdir -p "$out/dl"
		(cd "$out/dl" && apt-get "${opts[@]}" -q source --download-only "$pkg" >&2)
		(cd "$out" && dpkg-source --no-check -x dl/*.dsc src >&2)
		touch "$out/.unpacked"
	fi
	echo "$out/src"
done
