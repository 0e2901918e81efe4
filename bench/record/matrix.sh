# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, dwork in /work): REPS rounds of
# each workload under each call-graph mode, the modes in a rotated order
# each round so that no mode always runs first.  Leaves per run
# W-M-R.err (perf record's stderr and busybox time's report of the
# workload) and a line in results.txt:
#   W M R WALL_S PERF+WORK_UTIME PERF+WORK_STIME (clock ticks)
# Workloads: f40, f300 (dwork recurse, one thread making raw syscalls at
# depth 40 or 300, forked by time), t40, t300 (dwork threads -t 2, two
# threads migrating between the CPUs, at those depths), k40, k300 (dwork
# recurse -R 16384: each round's long read() is 16 MiB, a kernel entry
# long enough for tens of samples that share one deferred record).
# Each workload does a fixed amount of work (-n ROUNDS), not a wall
# time: a run that costs more takes longer.  ROUNDS is calibrated once,
# before the first round, so that the workload alone runs about SECONDS_
# seconds; results.txt gets a "ROUNDS w n" line for each.  Modes: none (no
# perf), fp, defer (fp,defer), dwarf, and defer0: fp,defer recorded by
# /work/perf-before when run.sh was given one (PERF_BEFORE), for a
# before/after comparison in the same guest; MODES_EXTRA=fp512 adds fp
# with kernel.perf_event_max_stack at 512, as deep as a deferred record
# (up to 510 entries) walks; MODES replaces "none fp defer dwarf".
W=/work
S=${SECONDS_:-1}
REPS=${REPS:-10}
. $W/guest-setup.sh

kind() {
	case $1 in
	f40)	echo "recurse -d 40" ;;
	f300)	echo "recurse -d 300" ;;
	t40)	echo "threads -t 2 -d 40" ;;
	t300)	echo "threads -t 2 -d 300" ;;
	k40)	echo "recurse -d 40 -R 16384" ;;
	k300)	echo "recurse -d 300 -R 16384" ;;
	esac
}

work() {
	eval echo "\"$(kind "$1") -n \$rounds_$1\""
}

# busybox time's "real\t0m 1.05s" in seconds
real_s() {
	awk '$1 == "real" { sub(/m$/, "", $2); sub(/s$/, "", $3); print $2 * 60 + $3 }' "$1"
}

calibrate() {
	c=20
	# TCG translates code the first time it runs: a first run is slower
	# than the ones that follow, and is thrown away.
	sh -c "$W/dwork \$1 > /dev/null" sh "$(kind "$1") -n $c"
	while :; do
		sh -c 'time '"$W"'/dwork $1 > /dev/null 2> cal.err' sh "$(kind "$1") -n $c"
		t=$(real_s cal.err)
		# at least a fifth of the target, for a usable measurement
		if awk -v t="$t" -v s="$S" 'BEGIN { exit !(t >= s / 5) }'; then
			break
		fi
		c=$((c * 4))
	done
	n=$(awk -v t="$t" -v s="$S" -v c="$c" 'BEGIN { n = int(c * s / t + 0.5); print n < 1 ? 1 : n }')
	eval "rounds_$1=$n"
	echo "ROUNDS $1 $n" >> results.txt
}

cg() {
	case $1 in
	fp*)	echo fp ;;
	defer*)	echo fp,defer ;;
	dwarf)	echo dwarf ;;
	esac
}

one() {
	w=$1 m=$2 r=$3 n=$1-$2-$3
	t0=$(cut -d' ' -f1 /proc/uptime)
	if [ "$m" = none ]; then
		sh -c 'time '"$W"'/dwork $1 > /dev/null 2> '"$n"'.err; cat /proc/$$/stat > '"$n"'.stat' sh "$(work "$w")"
	else
		# perf record in a subshell: its CPU time is the subshell's
		# children times minus the workload's (busybox time's report).
		p=perf
		[ "$m" = defer0 ] && p=$W/perf-before
		# fp512: fp walking as deep as a deferred record does
		[ "$m" = fp512 ] && echo 512 > /proc/sys/kernel/perf_event_max_stack
		sh -c '$4 record -o '"$n"'.data $2 --call-graph $3 -- time '"$W"'/dwork $1 > /dev/null 2> '"$n"'.err; cat /proc/$$/stat > '"$n"'.stat' \
			sh "$(work "$w")" "$EV" "$(cg "$m")" "$p"
		# Keep the header and counts, not the samples: room in /out.
		[ "$m" = fp512 ] && echo "$max_stack" > /proc/sys/kernel/perf_event_max_stack
		perf report --stats -i "$n.data" 2>/dev/null | grep -E "SAMPLE events|CALLCHAIN_DEFERRED events" > "$n.stats"
		rm -f "$n.data"
	fi
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$w $m $r $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') $(cut -d' ' -f16,17 "$n.stat")" >> results.txt
}

max_stack=$(cat /proc/sys/kernel/perf_event_max_stack)
modes="${MODES:-none fp defer dwarf}${MODES_EXTRA:+ $MODES_EXTRA}"
[ -x $W/perf-before ] && modes="$modes defer0"
set -- $modes
nm=$#
for w in ${WORKLOADS:-f40 f300 t40 t300 k40 k300}; do
	calibrate "$w"
done
r=0
while [ $r -lt "$REPS" ]; do
	for w in ${WORKLOADS:-f40 f300 t40 t300 k40 k300}; do
		# round r starts at mode r mod nm
		set -- $modes $modes
		i=0
		while [ $i -lt $((r % nm)) ]; do shift; i=$((i + 1)); done
		i=0
		while [ $i -lt "$nm" ]; do
			one "$w" "$1" "$r"
			shift
			i=$((i + 1))
		done
	done
	echo "round $r done at $(cut -d' ' -f1 /proc/uptime)"
	r=$((r + 1))
done
