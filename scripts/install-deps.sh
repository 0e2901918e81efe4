#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building, testing and demonstrating this project needs on
# Debian 12 (bookworm), as root. Safe to run again: apt skips what is there.
set -euo pipefail

pkgs=(
	# perf build, full features
	make gcc flex bison pkg-config libelf-dev libtraceevent-dev libdw-dev
	libzstd-dev liblzma-dev libslang2-dev libnuma-dev libcapstone-dev
	libpfm4-dev llvm-dev clang libssl-dev python3-dev python3-setuptools
	libperl-dev systemtap-sdt-dev libunwind-dev libbabeltrace-dev libcap-dev
	binutils-dev xz-utils patch
	# perf help (man), perf archive (bzip2)
	man-db bzip2
	# tests/tools: perf inject --convert-callchain under valgrind
	valgrind
	# tests/inline: a dwz'd copy of its program
	dwz
	# bench/inline: sqlite's amalgamation is generated with tclsh
	tcl
	# tests: sanitizers, the guest, the fuzzers
	libclang-rt-14-dev qemu-system-x86 busybox-static cpio
	# man pages
	asciidoc-base xmlto
	# tests/tools: hotspot's perfparser, extracted from its package
	libqt5core5a libqt5network5
	# make deb, tests/package
	debhelper dpkg-dev fakeroot lintian
	# flame graph test: headless browser (npm, for d3-flame-graph, below)
	chromium
)
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: run as root (apt-get install)" >&2
	exit 1
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
# Any npm will do (nodejs may come with its own): Debian's only if none.
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# The flame graph template, from the npm registry, into build/: nothing is
# fetched when flame graphs are made or tested.
"$(dirname "$0")/setup-flamegraph.sh" >/dev/null ||
	echo "install-deps: no d3-flame-graph template (scripts/setup-flamegraph.sh)" >&2
"$(dirname "$0")/setup-perfparser.sh" >/dev/null ||
	echo "install-deps: no hotspot perfparser (scripts/setup-perfparser.sh)" >&2
