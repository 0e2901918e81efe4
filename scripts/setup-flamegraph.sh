#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Put the d3-flame-graph HTML template that perf script report flamegraph
# uses (--template) in a project-local directory, from the npm registry, so
# that nothing is fetched when a flame graph is made.  Safe to run again.
#
#   scripts/setup-flamegraph.sh [DIR]     default: build/d3-flame-graph
#
# Prints the template's path.  The version and checksum are the ones
# tools/perf/scripts/python/flamegraph.py expects.
set -euo pipefail

version=4.1.3
md5=143e0d06ba69b8370b9848dcd6ae3f36
top=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$top/build/d3-flame-graph}
cache=${CACHE_DIR:-$top/cache}/npm
template=$dir/dist/templates/d3-flamegraph-base.html

if [ -f "$template" ] && echo "$md5  $template" | md5sum -c --status; then
	echo "$template"
	exit 0
fi
mkdir -p "$cache" "$dir"
tgz=$cache/d3-flame-graph-$version.tgz
if [ ! -f "$tgz" ]; then
	# The dist template is self-contained: no dependencies needed.
	(cd "$cache" && npm pack --silent --fetch-retries=5 "d3-flame-graph@$version" >/dev/null)
fi
tar -xzf "$tgz" -C "$dir" --strip-components=1
echo "$md5  $template" | md5sum -c --status || {
	echo "setup-flamegraph: unexpected checksum of $template" >&2
	exit 1
}
echo "$template"
