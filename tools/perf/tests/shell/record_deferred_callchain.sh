#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# perf record --call-graph fp,defer: user callchains stitched
#
# A kernel that defers user callchains (Linux 7.2+) sends each kernel
# entry's user stack once, in a PERF_RECORD_CALLCHAIN_DEFERRED after the
# samples it belongs to. Every sample must get its whole user stack back,
# the same in file mode, in pipe mode and in the file perf inject
# --merge-callchains writes. Skipped where the kernel cannot defer.

set -e

shelldir=$(dirname "$0")
# shellcheck source=lib/callchains.sh
. "${shelldir}"/lib/callchains.sh

tmpdir=$(mktemp -d /tmp/perf-test-defer.XXXXXX)
trap trap_cleanup EXIT TERM INT
data="$tmpdir/perf.data"

# noploop runs for a wall time: on a busy machine it may get little CPU
# in it, and cpu-clock samples only while it runs. Record again, twice as
# long each time, until samples landed in noploop; its samples are then
# what the checks below need, whatever the load.
in_loop=0
for secs in 1 2 4 8; do
	if ! perf record -o "$data" -e cpu-clock -c 100000 --call-graph fp,defer \
		-- perf test -w noploop $secs > /dev/null 2> "$tmpdir/record.err"; then
		cat "$tmpdir/record.err"
		skip "perf record --call-graph fp,defer failed"
	fi
	chains -i "$data" > "$tmpdir/file.txt"
	in_loop=$(grep -c ' noploop ' "$tmpdir/file.txt" || true)
	[ "$in_loop" -eq 0 ] || break
done
records=$(perf report --stats -i "$data" 2> /dev/null |
	  awk '/CALLCHAIN_DEFERRED events:/ { print $3 }')
if [ -z "$records" ] || [ "$records" -eq 0 ]; then
	skip "this kernel cannot defer user callchains"
fi
if [ "$in_loop" -eq 0 ]; then
	echo "Error: no sample shows noploop's user stack in 15 s of noploop"
	cleanup
	exit 1
fi
echo "$records deferred callchain records"

err=0
whole=$(grep ' noploop ' "$tmpdir/file.txt" | grep -c ' main' || true)
echo "$in_loop samples in noploop, $whole with the whole user stack"
if [ "$whole" -ne "$in_loop" ]; then
	echo "Error: samples in noploop without their user stack"
	grep ' noploop ' "$tmpdir/file.txt" | grep -v ' main' | head -5
	err=1
fi
# The marker and its cookie are not frames.
if perf script -F ip -i "$data" 2> /dev/null | grep -q 'fffffffffffffd80'; then
	echo "Error: PERF_CONTEXT_USER_DEFERRED printed as a frame"
	err=1
fi

perf inject -i "$data" -o - | chains -i - > "$tmpdir/pipe.txt"
if ! cmp -s "$tmpdir/file.txt" "$tmpdir/pipe.txt"; then
	echo "Error: pipe mode stitches differently"
	diff "$tmpdir/file.txt" "$tmpdir/pipe.txt" | head -10
	err=1
fi

# A lost user stack ("[user stack lost]", a task that exited before its
# record was written) is cut from the merged file: older perfs would
# drop the whole callchain over the marker.
perf inject --merge-callchains -i "$data" -o "$tmpdir/merged.data"
chains -i "$tmpdir/merged.data" > "$tmpdir/merged.txt"
sed -i 's/ \[user$//' "$tmpdir/file.txt"
if ! cmp -s "$tmpdir/file.txt" "$tmpdir/merged.txt"; then
	echo "Error: perf inject --merge-callchains wrote other stacks"
	diff "$tmpdir/file.txt" "$tmpdir/merged.txt" | head -10
	err=1
fi

cleanup
exit $err
