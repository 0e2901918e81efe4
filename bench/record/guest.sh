# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, dwork in /work): record the same
# dwork run with each call-graph mode and buffer setting, and leave per run
# NAME.err (perf record's stderr: "Woken up N times", bytes written, and
# busybox time's report of the workload) plus a line in results.txt:
#   NAME WALL_S PERF_UTIME PERF_STIME CHILD_UTIME CHILD_STIME (clock ticks)
W=/work
S=${SECONDS_:-2}
. $W/guest-setup.sh

run() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	# perf record in a subshell: its utime/stime are the subshell's
	# children times minus the workload's, which busybox time reports.
	sh -c 'perf record -o '"$name"'.data "$@" -- time '"$W"'/dwork recurse -d 40 -s '"$S"' > /dev/null 2> '"$name"'.err; cat /proc/$$/stat > '"$name"'.stat' sh "$@"
	t1=$(cut -d' ' -f1 /proc/uptime)
	# fields 16, 17: cutime, cstime of the sh (perf record + dwork)
	echo "$name $t0 $t1 $(cut -d' ' -f16,17 $name.stat)" >> results.txt
	echo "$name: $t0..$t1"; grep -h "Woken\|written\|real\|user\|sys" $name.err
}

for r in ${RUNS:-fp defer dwarf defer-m8 defer-m1024 fp-m8 none}; do
	case $r in
	none)		t0=$(cut -d' ' -f1 /proc/uptime)
			time $W/dwork recurse -d 40 -s $S > /dev/null 2> none.err
			echo "none $t0 $(cut -d' ' -f1 /proc/uptime) 0 0" >> results.txt ;;
	fp)		run $r $EV --call-graph fp ;;
	defer)		run $r $EV --call-graph fp,defer ;;
	dwarf)		run $r $EV --call-graph dwarf ;;
	defer-m8)	run $r $EV --call-graph fp,defer -m 8 ;;
	defer-m1024)	run $r $EV --call-graph fp,defer -m 1024 ;;
	fp-m8)		run $r $EV --call-graph fp -m 8 ;;
	*)		echo "unknown run $r"; exit 2 ;;
	esac
done
