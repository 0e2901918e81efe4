#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# apt-suite.sh SUITE CMD...: run an apt command against another Debian suite
# without touching the system's apt configuration. The mirror is the one the
# system already uses (first non-security "debian" URI in its apt sources);
# package lists go to a private state dir under $APT_SUITE_DIR.
#
#   scripts/apt-suite.sh sid download linux-source-7.2
#
# APT_SUITE_SRC=1: the suite's source packages instead (a deb-src line, in
# a state dir of their own), e.g. "source --download-only sqlite3".
set -euo pipefail

suite=$1; shift
top=$(cd "$(dirname "$0")/.." && pwd)
base=${APT_SUITE_DIR:-$top/cache/apt}
dir=$base/$suite
kind=deb
index='*Packages*'
if [ "${APT_SUITE_SRC:-0}" = 1 ]; then
	dir=$base/$suite-src
	kind=deb-src
	index='*Sources*'
fi

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
	echo "apt-suite: no Debian mirror found in the system's apt sources" >&2
	exit 1
}

mkdir -p "$dir/lists/partial" "$dir/archives/partial"
if [ ! -f "$dir/sources.list" ]; then
	echo "$kind [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main" > "$dir/sources.list"
fi
opts=(-o Dir::State::Lists="$dir/lists"
      -o Dir::Etc::sourcelist="$dir/sources.list"
      -o Dir::Etc::sourceparts=-
      -o Dir::Cache::archives="$dir/archives"
      -o Dir::Cache::pkgcache="$dir/pkgcache.bin"
      -o Dir::Cache::srcpkgcache="$dir/srcpkgcache.bin"
      -o APT::Get::List-Cleanup=0)
# Refresh lists at most once a day.
if [ -z "$(find "$dir/lists" -name "$index" -mtime -1 2>/dev/null | head -n 1)" ]; then
	apt-get "${opts[@]}" -q update >&2
fi
cmd=$1; shift
case "$cmd" in
download)
	cd "${APT_SUITE_DEST:-.}"
	apt-get "${opts[@]}" -q download "$@" >&2 ;;
policy|show|showpkg|depends|search)
	apt-cache "${opts[@]}" "$cmd" "$@" ;;
*)
	apt-get "${opts[@]}" "$cmd" "$@" ;;
esac
