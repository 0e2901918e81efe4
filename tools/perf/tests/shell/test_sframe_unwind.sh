#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf unwinds --call-graph dwarf samples with SFrame
#
# A program built without frame pointers, with .sframe (gas
# --gsframe), recorded with --call-graph dwarf: perf sframe dump reads
# its section and names its functions, --unwind-style sframe (and
# sframe-only, for the program's own frames) give the stacks libdw
# gives, and perf script and perf report's header say what SFrame did.
# Skipped without a compiler and assembler that emit SFrame, or when
# perf cannot record.

set -e

shelldir=$(dirname "$0")
# shellcheck source=lib/callchains.sh
. "${shelldir}"/lib/callchains.sh

tmpdir=$(mktemp -d /tmp/perf-test-sframe.XXXXXX)
trap trap_cleanup EXIT TERM INT
prog="$tmpdir/sframe-work"
data="$tmpdir/perf.data"

[ "$(uname -m)" = x86_64 ] || skip "perf unwinds with SFrame on x86_64 only"
if ! perf check feature -q libdw-dwarf-unwind; then
	skip "libdw DWARF unwinding is not available"
fi

cat > "$tmpdir/work.c" << 'EOF'
#include <stdlib.h>

volatile unsigned long sink;

__attribute__((noinline)) unsigned long level(int depth, unsigned long x)
{
	unsigned long i;

	if (depth == 0) {
		for (i = 0; i < 20000; i++)
			x = x * 6364136223846793005UL + i;
		return x;
	}
	x = level(depth - 1, x + depth) ^ depth;
	sink = x;
	return x + 1;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 4000;

	while (n--)
		sink += level(8, n);
	return 0;
}
EOF
if ! cc -O2 -g -fomit-frame-pointer -fasynchronous-unwind-tables -Wa,--gsframe \
	-o "$prog" "$tmpdir/work.c" 2> "$tmpdir/cc.err"; then
	skip "cc -Wa,--gsframe failed: $(head -n 1 "$tmpdir/cc.err")"
fi

err=0
if ! perf sframe dump "$prog" > "$tmpdir/dump.txt" 2>&1 ||
   ! grep -q 'func idx.* <level>$' "$tmpdir/dump.txt"; then
	echo "Error: perf sframe dump does not show the program's functions"
	head -20 "$tmpdir/dump.txt"
	err=1
fi

# The program does a fixed amount of work; cpu-clock samples every 250 us
# of its CPU time (a period, never refused as a frequency above a lowered
# kernel.perf_event_max_sample_rate is): hundreds of samples, however busy
# the machine is.
if ! perf record -q -o "$data" -e cpu-clock -c 250000 --call-graph dwarf,4096 \
	-- "$prog" > /dev/null 2>&1; then
	skip "perf record --call-graph dwarf failed"
fi

chains -i "$data" --unwind-style libdw > "$tmpdir/libdw.txt"
chains -i "$data" --unwind-style sframe > "$tmpdir/sframe.txt"
total=$(grep -c ' level' "$tmpdir/libdw.txt" || true)
[ "$total" -gt 0 ] || skip "no samples in the program"
same=$(paste -d '|' "$tmpdir/libdw.txt" "$tmpdir/sframe.txt" |
       awk -F '|' '$1 ~ / level/ && $1 == $2 { n++ } END { print n + 0 }')
echo "sframe: $same of $total samples in the program as libdw unwinds them"
# A sample taken in a prologue or epilogue may differ; nearly all agree.
if [ $((same * 100)) -lt $((total * 95)) ]; then
	echo "Error: --unwind-style sframe differs from libdw"
	paste -d '|' "$tmpdir/libdw.txt" "$tmpdir/sframe.txt" |
		awk -F '|' '$1 ~ / level/ && $1 != $2' | head -5
	err=1
fi

# sframe-only stops where .sframe ends (libc has none): main at least.
chains -i "$data" --unwind-style sframe-only > "$tmpdir/only.txt"
deep=$(grep -cE '( level){9} main' "$tmpdir/only.txt" || true)
echo "sframe-only: $deep samples reach main through the 9 levels"
if [ "$deep" -eq 0 ]; then
	echo "Error: --unwind-style sframe-only never reaches main"
	err=1
fi

if ! perf script -F ip -i "$data" --unwind-style sframe 2>&1 > /dev/null |
	grep -q 'SFrame unwinding'; then
	echo "Error: perf script shows no SFrame unwinding counters"
	err=1
fi
if ! perf report --stdio -i "$data" --unwind-style sframe 2> /dev/null |
	grep -q '^# SFrame unwinding: '; then
	echo "Error: perf report's header shows no SFrame unwinding counters"
	err=1
fi

cleanup
exit $err
