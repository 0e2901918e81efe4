# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, files in /work): record each
# workload with --call-graph fp,defer, and with plain fp where comparing
# helps. RUNS (default: all) picks some; SECONDS_ (default 1) sets the
# workload length. Each recording NAME leaves NAME.data, NAME.out (the
# workload's stdout: "thread INDEX TID DEPTH" lines), NAME.err and a line
# "NAME STATUS" in status.txt.
#
# The top-* runs leave no NAME.data: perf top --stdio watches dwork (see
# ptop below) and leaves its screens in NAME.top, its stderr in NAME.err
# (-v: the "Deferred callchains:" statistics at exit) and dwork's
# /proc/PID/maps in NAME.maps. top-defer is our perf with --call-graph
# fp,defer; top-upstream is /work/perf-upstream, when there: it refuses
# that option, and gets defer from the config key call-graph.record-mode.
#
# The harsher workloads of issue #12, all --call-graph fp,defer:
# storm-defer  -a over a fork/exec storm: STORM_ROUNDS (3) rounds of
#              STORM_PROCS (40) dwork processes started at once by sh, a
#              sample every 400 us of CPU (-a at 100 us: 12 MB a run);
# dir-defer    --threads: NAME.data is a perf.data directory;
# zstd-defer   -z: zstd-compressed records (NAME.zstd: the guest perf's
#              build option line; the run is skipped when it has none);
# pipe-defer   perf record -o - > NAME.data: a pipe stream in a file;
# pidns-defer  dwork in a new pid namespace (busybox unshare -p -f;
#              skipped, NAME.unshare saying why, when that fails);
# many-defer   dwork threads -t 48: many threads on 2 CPUs.
#
# The task lifecycle workloads of issue #24, all --call-graph fp,defer, each
# run for a number of rounds (-n), not a wall time, so that it has its
# samples by construction however slow the guest is (the sizes below are
# the defaults; regen.sh lifecycle makes smaller ones):
# offcpu-defer  -a -e sched:sched_switch -c 1 over dwork offcpu -n
#               OFFCPU_ROUNDS (40): blocking pipe reads, nanosleep, futex
#               waits, one read blocked 1.2 s; exiting tasks' last switch
#               (tid -1); the records ride on the dummy event;
# sig-defer     dwork signal -n SIGNALS (200): SIGALRM and SIGPROF handled
#               on a sigaltstack;
# fault-defer   -e page-faults -c 1 over dwork fault -n FAULT_ROUNDS (6):
#               64 page faults inside each read();
# exec-defer    dwork exec -n EXEC_GENS (5): per generation a vfork+exec,
#               and an exec by a non-leader thread (de_thread());
# user-defer, kern-defer  -e cpu-clock:u, cpu-clock:k over dwork recurse
#               -n USER_ROUNDS (6 x ROUNDS), -n ROUNDS (20), and on until
#               dwork's work loop has used CPU_MS (60) ms of user (:u) or
#               twice that of kernel (:k) CPU time: cpu-clock samples CPU
#               time, so the sample count is the same on a fast host as on
#               a slow one (a fixed number of rounds gave 84 samples where
#               100 were wanted);
# deep400-defer kernel.perf_event_max_stack at 127, dwork recurse -d 400
#               -n DEEP_ROUNDS (ROUNDS), -U CPU_MS: records deeper than that.
# They record with -N (--no-buildid-cache): the header keeps the build-ids,
# and perf record skips copying the kernel's symbols into ~/.debug, seconds
# a run under TCG.
#
# perf-test runs perf test on the shell tests in /work/shell (with
# /work/bash as /bin/bash), from a directory where perf test finds them
# (./tests/shell), into perf-test.log.
#
# dwork runs for a wall time, and under TCG on a busy host the guest gets
# less CPU in it, and cpu-clock fewer samples (an hrtimer that fires late
# gives one sample for the periods it missed). So a recording is made
# again, with twice the time each time (at most twice), until dwork has
# NEED_SAMPLES (default 400) samples in it: the checks of test_guest.py
# want more than MIN_SAMPLES (200) below dwork's recursion.

W=/work
S=${SECONDS_:-1}
LIFECYCLE="offcpu-defer sig-defer fault-defer exec-defer user-defer kern-defer deep400-defer"
N=${ROUNDS:-20}
RUNS=${RUNS:-st-defer st-fp mt-defer mt-fp deep300-defer deep300-fp deep600-defer exit-defer two-defer sys-defer storm-defer dir-defer zstd-defer pipe-defer pidns-defer many-defer $LIFECYCLE top-defer top-upstream perf-test}
EV="-e cpu-clock -c 100000"
CPU_MS=${CPU_MS:-60}
NEED=${NEED_SAMPLES:-400}

# No throttling: TCG makes sampling slow, and the kernel would otherwise
# lower the sample rate half-way through the runs.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent

# finish NAME RC T0: the status line of a run that exited RC, started at
# guest uptime T0.
finish() {
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "$1 $2 $3 $t1" >> status.txt
	echo "$1: exit $2, $3..$t1 s"
}

rec() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	perf record -o "$name.data" "$@" > "$name.out" 2> "$name.err"
	finish $name $? $t0
}

# storm NAME ARGS...: perf record ARGS over a fork/exec storm: rounds of
# processes started at once, each a dwork that lives S / 10 seconds.
storm() {
	cat > /tmp/storm.sh <<STORM
r=0
while [ \$r -lt ${STORM_ROUNDS:-3} ]; do
	i=0
	while [ \$i -lt ${STORM_PROCS:-40} ]; do
		$W/dwork recurse -d \$((10 + i % 8)) -s $(awk "BEGIN { print $S / 10 }") &
		i=\$((i + 1))
	done
	wait
	r=\$((r + 1))
done
STORM
	rec "$@" -- sh /tmp/storm.sh
}

# rec_pipe NAME ARGS...: like rec on dwork recurse -d 40, into a pipe:
# perf record -o - writes the stream to its stdout (NAME.data), so
# dwork's own stdout goes to NAME.out through sh.
rec_pipe() {
	name=$1
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	perf record -o - "$@" -- sh -c "$W/dwork recurse -d 40 -s $S > $name.out" \
		> "$name.data" 2> "$name.err"
	finish $name $? $t0
}

# ptop NAME PERF ARGS...: perf top -p on dwork, refreshing every second,
# stopped by SIGINT once it has shown TOP_SCREENS (default 4) screens of
# fresh samples with callchains, or after TOP_MAX seconds (default 150:
# under TCG on a busy host, loading the kernel's symbols alone can take
# half a minute).  Its stdout goes to a file: --stdio shows nothing through
# a pipe.  Its stdin is a FIFO nobody writes: on /dev/null it would read
# EOF as a key press and show its key menu all the time.
screens() {
	awk '/PerfTop:/ { n += fresh && chain; fresh = !/PerfTop: +0 irqs/; chain = 0 }
	     /(---|%--)[^-]/ { chain = 1 } END { print n + (fresh && chain) }' "$1"
}

ptop() {
	name=$1
	perf=$2
	shift 2
	$W/dwork recurse -d 40 -s 100000 > "$name.out" &
	dpid=$!
	[ -p /tmp/top-stdin ] || mkfifo /tmp/top-stdin
	exec 3<> /tmp/top-stdin
	t0=$(cut -d' ' -f1 /proc/uptime)
	COLUMNS=160 $perf top --stdio -v -d 1 -E 6 --no-children $EV -p $dpid "$@" \
		<&3 > "$name.top" 2> "$name.err" &
	tpid=$!
	i=0
	while [ $i -lt "${TOP_MAX:-150}" ] && kill -0 $tpid 2> /dev/null &&
	      [ "$(screens "$name.top")" -lt "${TOP_SCREENS:-4}" ]; do
		sleep 1
		i=$((i + 1))
	done
	cp /proc/$dpid/maps "$name.maps"
	# perf top sets its own SIGINT handler (a background job starts
	# with SIGINT ignored)
	kill -INT $tpid
	wait $tpid
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	exec 3<&-
	kill $dpid
	wait $dpid
	echo "$name $rc $t0 $t1" >> status.txt
	echo "$name: exit $rc, $t0..$t1 s, $i s waited, $(screens "$name.top") screens"
}

# dwork_samples NAME: the samples of dwork in NAME.data
dwork_samples() {
	perf script -F comm -i "$1.data" 2> /dev/null | grep -c dwork
}

# enough NAME: NAME left no recording, or one with NEED dwork samples, or
# is one of the lifecycle runs (big enough by construction)
enough() {
	[ -e "$1.data" ] || return 0
	case " $LIFECYCLE " in *" $1 "*) return 0 ;; esac
	[ "$(dwork_samples "$1")" -ge "$NEED" ]
}

# record_run NAME: make recording NAME, its dwork running S seconds
record_run() {
	r=$1
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
	storm-defer)	storm $r -a -e cpu-clock -c 400000 --call-graph fp,defer ;;
	dir-defer)	rec $r --threads $EV --call-graph fp,defer -- \
				$W/dwork threads -t 4 -d 10 -s $S ;;
	zstd-defer)	perf version --build-options | grep -i zstd > $r.zstd
			grep -q 'zstd: \[ on' $r.zstd || return 0
			rec $r -z $EV --call-graph fp,defer -- $W/dwork threads -t 4 -d 10 -s $S ;;
	pipe-defer)	rec_pipe $r $EV --call-graph fp,defer ;;
	pidns-defer)	unshare -p -f true 2> $r.unshare || return 0
			rec $r $EV --call-graph fp,defer -- \
				unshare -p -f $W/dwork threads -t 4 -d 10 -s $S ;;
	many-defer)	rec $r $EV --call-graph fp,defer -- $W/dwork threads -t 48 -d 10 -s $S ;;
	offcpu-defer)	rec $r -N -a -e sched:sched_switch -c 1 --call-graph fp,defer -- \
				$W/dwork offcpu -n ${OFFCPU_ROUNDS:-40} -d 10 ;;
	sig-defer)	rec $r -N $EV --call-graph fp,defer -- $W/dwork signal -n ${SIGNALS:-200} -d 10 ;;
	fault-defer)	rec $r -N -e page-faults -c 1 --call-graph fp,defer -- \
				$W/dwork fault -n ${FAULT_ROUNDS:-6} -d 10 ;;
	exec-defer)	rec $r -N $EV --call-graph fp,defer -- $W/dwork exec -n ${EXEC_GENS:-5} -d 10 ;;
	user-defer)	rec $r -N -e cpu-clock:u -c 100000 --call-graph fp,defer -- \
				$W/dwork recurse -d 40 -n ${USER_ROUNDS:-$((N * 6))} -U $CPU_MS ;;
	# twice the budget: tick-based stime overstates short kernel entries,
	# :k got 324 samples below the recursion of the ~600 that 60 ms give
	kern-defer)	rec $r -N -e cpu-clock:k -c 100000 --call-graph fp,defer -- \
				$W/dwork recurse -d 40 -n $N -K $((CPU_MS * 2)) ;;
	deep400-defer)	echo 127 > /proc/sys/kernel/perf_event_max_stack
			rec $r -N $EV --call-graph fp,defer -- $W/dwork recurse -d 400 -n ${DEEP_ROUNDS:-$N} \
				-U $CPU_MS ;;
	top-defer)	ptop $r perf --call-graph fp,defer ;;
	top-upstream)	[ -x $W/perf-upstream ] || return 0
			mkdir -p /tmp/upstream-home
			printf '[call-graph]\n\trecord-mode = fp,defer\n' \
				> /tmp/upstream-home/.perfconfig
			ptop $r "env HOME=/tmp/upstream-home $W/perf-upstream" --call-graph fp ;;
	perf-test)	[ -d $W/shell ] || return 0
			mkdir -p /tmp/perf-test/tests/shell
			cp -R $W/shell/. /tmp/perf-test/tests/shell/
			[ -e /bin/bash ] || ln -s $W/bash /bin/bash
			t0=$(cut -d' ' -f1 /proc/uptime)
			(cd /tmp/perf-test && perf test -vv ${PERF_TESTS:-fp,defer}) > $r.log 2>&1
			echo "$r $? $t0 $(cut -d' ' -f1 /proc/uptime)" >> status.txt ;;
	*)		echo "unknown run $r"; exit 2 ;;
	esac
}

S_FIRST=$S
for r in $RUNS; do
	S=$S_FIRST
	tries=1
	record_run $r
	while ! enough $r && [ $tries -lt 3 ]; do
		n=$(dwork_samples $r)
		S=$(awk "BEGIN { print $S * 2 }")
		echo "$r: $n dwork samples, fewer than $NEED: again for $S s"
		tries=$((tries + 1))
		rm -rf "$r.data"
		record_run $r
	done
done
S=$S_FIRST
cp $W/dwork .
