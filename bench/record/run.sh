#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run.sh [-o OUTDIR] [RUN...]
#
# What recording costs with each call-graph mode, measured in the real
# Linux 7.2.13 guest (scripts/guest/run.sh; TCG here, one guest at a time):
# the same dwork run (recurse -d 40, SECONDS_ seconds, cpu-clock every
# 100 us) recorded with --call-graph fp, fp,defer and dwarf, and fp,defer
# with other buffer sizes (-m), see guest.sh. Prints one table line per
# run: perf record's wakeups, bytes, samples, deferred records, perf
# record's own CPU time and the workload's wall time (busybox time).
# "run.sh trace" runs trace.sh instead (ftrace of the kernel's wakeups,
# workload started directly, by busybox time, by sh -c, as threads) and
# prints its log; "run.sh watermark" runs watermark.sh (a kprobe on
# perf_output_end() logging rb->head and rb->wakeup), leaving its traces
# in OUTDIR.  "run.sh matrix" runs matrix.sh: REPS rounds (10) of six
# workloads (forked child and two threads, 40 and 300 frames deep; a
# forked child in long reads at 40 and 300 frames) with no perf, fp,
# fp,defer and dwarf, each a fixed amount of work calibrated to take
# SECONDS_ (1) without perf, and prints
# summary.py's medians and spread; with PERF_BEFORE (a perf binary), also
# fp,defer recorded by it (defer0), in the same rounds.
# Environment: PERF (default <repo>/build/bin/perf), SECONDS_ (2), RUNS
# (default: all of guest.sh's), REPS, WORKLOADS, MODES and MODES_EXTRA
# (matrix.sh's).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
perf=${PERF:-$top/build/bin/perf}
out=
while getopts "o:" opt; do
	case "$opt" in
	o) out=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
script=guest.sh
case "${1:-}" in
trace | watermark | matrix)
	script=$1.sh
	shift ;;
esac
timeout=600
[ "$script" = matrix.sh ] && timeout=$((${REPS:-10} * 900))
[ $# -gt 0 ] && export RUNS="$*"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${out:-$tmp/out}
mkdir -p "$tmp/work"
gcc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
	-o "$tmp/work/dwork" "$top/tests/workloads/dwork.c"
cp "$here/$script" "$here/guest-setup.sh" "$tmp/work/"
[ -n "${PERF_BEFORE:-}" ] && cp "$PERF_BEFORE" "$tmp/work/perf-before"
{
	if [ "$script" = matrix.sh ]; then
		echo "export SECONDS_=${SECONDS_:-1} REPS=${REPS:-10}"
		[ -n "${WORKLOADS:-}" ] && echo "export WORKLOADS='$WORKLOADS'"
		[ -n "${MODES_EXTRA:-}" ] && echo "export MODES_EXTRA='$MODES_EXTRA'"
		[ -n "${MODES:-}" ] && echo "export MODES='$MODES'"
	else
		echo "export SECONDS_=${SECONDS_:-2}"
	fi
	[ -n "${RUNS:-}" ] && echo "export RUNS='$RUNS'"
	echo ". /work/$script"
} > "$tmp/g.sh"
PERF=$perf "$top/scripts/guest/run.sh" -o "$out" -w "$tmp/work" -t "$timeout" "$tmp/g.sh" > "$tmp/log" 2>&1 ||
	{ cat "$tmp/log" >&2; exit 1; }
if [ "$script" = matrix.sh ]; then
	python3 "$here/summary.py" "$out"
	exit
fi
if [ "$script" != guest.sh ]; then
	cat "$out/guest.log"
	exit 0
fi

# perf record's own CPU = (sh's cutime + cstime) - dwork's user + sys
tck=$(awk '$1 == "CLK_TCK" { print $2 }' "$out/results.txt")
printf '%-12s %7s %9s %8s %8s %9s %9s %9s\n' run wakeups MB samples deferred \
	'perf-cpu' 'work-wall' 'work-cpu'
awk -v tck="$tck" '$1 != "CLK_TCK" { print $1, ($4 + $5) / tck }' "$out/results.txt" |
while read -r name tot; do
	e=$out/$name.err
	# busybox time: "real\t0m 2.20s"
	secs='{ sub(/m$/, "", $2); sub(/s$/, "", $3); s += $2 * 60 + $3 }'
	wall=$(awk '$1 == "real" '"$secs"' END { printf "%.2fs", s }' "$e")
	ucpu=$(awk '$1 == "user" || $1 == "sys" '"$secs"' END { print s }' "$e")
	if [ "$name" = none ]; then
		printf '%-12s %7s %9s %8s %8s %9s %9s %9s\n' none - - - - - "$wall" "${ucpu}s"
		continue
	fi
	wk=$(sed -n 's/.*Woken up \([0-9]*\) times.*/\1/p' "$e")
	mb=$(sed -n 's/.*wrote \([0-9.]*\) MB.*/\1/p' "$e")
	ns=$(sed -n 's/.*MB .* (\([0-9]*\) samples).*/\1/p' "$e")
	nd=$("$perf" report --stats -i "$out/$name.data" 2>/dev/null |
	     awk '/CALLCHAIN_DEFERRED events/ { print $3 } END { }' | head -1)
	pc=$(awk -v t="$tot" -v u="$ucpu" 'BEGIN { printf "%.2fs", t - u }')
	printf '%-12s %7s %9s %8s %8s %9s %9s %9s\n' "$name" "$wk" "$mb" "$ns" "${nd:-0}" \
		"$pc" "$wall" "${ucpu}s"
done
