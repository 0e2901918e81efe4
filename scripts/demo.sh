#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh (make demo): record a small workload with --call-graph fp,defer
# and show what our perf makes of the deferred user callchains: a report
# with callchains, a few perf script samples and the stitching statistics.
#
# When the running kernel emits PERF_RECORD_CALLCHAIN_DEFERRED the
# workload is recorded natively; otherwise it is recorded in a Linux
# 7.2.13 guest (scripts/guest/run.sh, qemu) and shown on the host.
# The recording, the workload and what symbolizes them stay in DEMO_DIR
# (default <repo>/build/demo); the last lines say what to run next.
# PERF (default <repo>/build/bin/perf); DEMO_GUEST=1 forces the guest.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
perf=${PERF:-$top/build/bin/perf}
[ -x "$perf" ] || { echo "demo: $perf not found: run make" >&2; exit 1; }
perf=$(readlink -f "$perf")

keep=${DEMO_DIR:-$top/build/demo}
tmp=$(mktemp -d /tmp/perf-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/work"
gcc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
	-o "$tmp/work/dwork" "$top/tests/workloads/dwork.c"

ev=(-e cpu-clock -c 100000 --call-graph fp,defer)
workload=(recurse -d 6 -s 1)

# Deferred records in a perf.data file?
has_deferred() {
	"$perf" report --stats -i "$1" 2> /dev/null |
		awk '/CALLCHAIN_DEFERRED events:/ && $3 > 0 { ok = 1 } END { exit !ok }'
}

native=0
if [ "${DEMO_GUEST:-0}" != 1 ] &&
   "$perf" record -q -o "$tmp/probe.data" "${ev[@]}" -- "$tmp/work/dwork" recurse -d 2 -s 0.1 \
	> /dev/null 2>&1 && has_deferred "$tmp/probe.data"; then
	native=1
fi

sym=()
if [ $native = 1 ]; then
	echo "== this kernel ($(uname -r)) emits deferred callchains: recording natively"
	data=$tmp/demo.data
	"$perf" record -q -o "$data" "${ev[@]}" -- "$tmp/work/dwork" "${workload[@]}"
else
	echo "== this kernel ($(uname -r)) has no deferred callchains: recording in a Linux 7.2.13 guest"
	cat > "$tmp/guest.sh" <<EOF
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
perf record -o demo.data ${ev[*]} -- /work/dwork ${workload[*]}
cp /work/dwork .
EOF
	PERF=$perf "$top/scripts/guest/run.sh" -o "$tmp/out" -w "$tmp/work" -t 180 "$tmp/guest.sh"
	cat "$tmp/out/guest.log"
	rm -rf "$keep"
	mkdir -p "$keep"
	cp "$tmp/out/demo.data" "$tmp/out/dwork" "$tmp/out/guest-kallsyms" "$keep/"
	data=$keep/demo.data
	# The workload's build-id into a private cache, the guest's kallsyms.
	"$perf" --buildid-dir "$keep/buildid" buildid-cache -a "$keep/dwork"
	sym=(--kallsyms "$keep/guest-kallsyms")
fi
p=("$perf" --buildid-dir "$keep/buildid")
if [ $native = 1 ]; then
	rm -rf "$keep"
	mkdir -p "$keep"
	cp "$data" "$tmp/work/dwork" "$keep/"
	data=$keep/demo.data
	p=("$perf")
fi
# head and awk below stop reading early: not an error.
set +o pipefail

echo
echo "== perf report --stdio (callchains, caller view, top entries)"
"${p[@]}" report --stdio -i "$data" "${sym[@]}" --no-children --percent-limit 3 \
	-g graph,0.5,caller,function,percent --max-stack 16 2> /dev/null | grep -v '^$' | head -n 60

echo
echo "== perf script: a few samples below the recursion"
"${p[@]}" script -i "$data" "${sym[@]}" -F comm,tid,time,event,ip,sym,dso 2> /dev/null |
	awk 'BEGIN { RS = ""; ORS = "\n\n" } /user_spin|long_read|cheap_syscalls/ && /main/ { if (++n % 50 == 1) print; if (n > 200) exit }'

echo "== perf report --stats: stitching of the deferred callchains"
"${p[@]}" report --stats -i "$data" 2> /dev/null | sed -n '/CALLCHAIN_DEFERRED events/p; /^Deferred callchains:/,/^[^ ]/p' |
	grep -v '^[^ D]'

# What to run next, with paths as short as the working directory allows.
show=("${PERF:-$top/build/bin/perf}" "${p[@]:1}")
for i in "${!show[@]}"; do show[$i]=${show[$i]#"$PWD"/}; done
args=(-i "$data" "${sym[@]}")
for i in "${!args[@]}"; do args[$i]=${args[$i]#"$PWD"/}; done
echo
echo "== the recording is kept in ${data#"$PWD"/}; to look at it again:"
echo "   ${show[*]} report ${args[*]}"
echo "   ${show[*]} script ${args[*]}"
