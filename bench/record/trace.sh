# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, dwork in /work): ftrace the
# wakeup path of perf record for recordings that differ only in how the
# workload is started. Per run NAME: NAME.err (perf record's stderr),
# tr-NAME.txt (the function trace of perf_event_wakeup, the kernel's
# wakeup of a ring buffer's readers, and perf_poll, perf record's poll),
# and a line "NAME: P perf_poll, W perf_event_wakeup" on stdout.
# Add "echo 1 > $T/options/func_stack_trace" before tracing_on for the
# stack of each wakeup (it shows who queued the irq_work).
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
tr() {
	name=$1; shift
	echo > $T/trace
	echo 'perf_event_wakeup perf_poll' > $T/set_ftrace_filter
	echo function > $T/current_tracer
	echo 1 > $T/tracing_on
	perf record -o $name.data -e cpu-clock -c 100000 "$@" > /dev/null 2> $name.err
	echo 0 > $T/tracing_on
	cat $T/trace > tr-$name.txt
	echo nop > $T/current_tracer
	echo "$name: $(grep -c ' perf_poll <-' tr-$name.txt) perf_poll, $(grep -c ' perf_event_wakeup <-' tr-$name.txt) perf_event_wakeup"; grep -v '^$' $name.err
}
tr mt-fp --call-graph fp -- /work/dwork threads -t 2 -d 10 -s 2
tr mt-defer --call-graph fp,defer -- /work/dwork threads -t 2 -d 10 -s 2
tr sh-defer --call-graph fp,defer -- sh -c '/work/dwork recurse -d 40 -s 2; true'
tr time-defer-m1024-s4 --call-graph fp,defer -m 1024 -- time /work/dwork recurse -d 40 -s 4
tr time-defer-m2048-s4 --call-graph fp,defer -m 2048 -- time /work/dwork recurse -d 40 -s 4
