# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, files in /work): record each
# workload with --call-graph fp,defer, and with plain fp where comparing
# helps. RUNS (default: all) picks some; SECONDS_ (default 1) sets the
# workload length. Each recording NAME leaves NAME.data, NAME.out (the
# workload's stdout: "thread INDEX TID DEPTH" lines), NAME.err and a line
# "NAME STATUS" in status.txt.

W=/work
S=${SECONDS_:-1}
RUNS=${RUNS:-st-defer st-fp mt-defer mt-fp deep300-defer deep300-fp deep600-defer exit-defer two-defer sys-defer}
EV="-e cpu-clock -c 100000"

# No throttling: TCG makes sampling slow, and the kernel would otherwise
# lower the sample rate half-way through the runs.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

rec() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	perf record -o "$name.data" "$@" > "$name.out" 2> "$name.err"
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$name $rc $t0 $t1" >> status.txt
	echo "$name: exit $rc, $t0..$t1 s"
}

for r in $RUNS; do
	case $r in
	st-defer)	rec $r $EV --call-graph fp,defer -- $W/dwork recurse -d 40 -s $S ;;
	st-fp)		rec $r $EV --call-graph fp -- $W/dwork recurse -d 40 -s $S ;;
	mt-defer)	rec $r $EV --sample-cpu --call-graph fp,defer -- $W/dwork threads -t 4 -d 10 -s $S ;;
	mt-fp)		rec $r $EV --sample-cpu --call-graph fp -- $W/dwork threads -t 4 -d 10 -s $S ;;
	deep300-defer)	rec $r $EV --call-graph fp,defer -- $W/dwork recurse -d 300 -s $S ;;
	deep300-fp)	rec $r $EV --call-graph fp -- $W/dwork recurse -d 300 -s $S ;;
	deep600-defer)	rec $r $EV --call-graph fp,defer -- $W/dwork recurse -d 600 -s $S ;;
	exit-defer)	rec $r $EV --call-graph fp,defer -- $W/dwork exit -t 4 -d 10 -s $S ;;
	two-defer)	rec $r -e cpu-clock,task-clock -c 100000 --call-graph fp,defer -- \
				$W/dwork recurse -d 40 -s $S ;;
	sys-defer)	rec $r -a $EV --call-graph fp,defer -- $W/dwork recurse -d 40 -s $S ;;
	*)		echo "unknown run $r"; exit 2 ;;
	esac
done
cp $W/dwork .
