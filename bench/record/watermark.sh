# SPDX-License-Identifier: GPL-2.0
#
# Runs in the guest (busybox sh, cwd /out, dwork in /work): a kprobe on
# perf_output_end() that logs the ring buffer's head, wakeup, watermark and
# nest at the end of every output, while perf record records fp,defer.
# kp-NAME.txt holds the trace; a run where the watermark ran away shows
# wakeup > head from one output on, every later output adding another
# watermark (see README.md). It is a race: not every run shows it.
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null
T=/sys/kernel/tracing
for d in 'handle->rb->head.a.counter wk=handle->rb->wakeup.a.counter wm=handle->rb->watermark nest=handle->rb->nest' \
	 'hd=handle->rb->head wk=handle->rb->wakeup wm=handle->rb->watermark' \
	 'hd=$arg1->rb->head.a.counter wk=$arg1->rb->wakeup.a.counter wm=$arg1->rb->watermark'; do
	echo "p:pe perf_output_end $d" > $T/kprobe_events 2> kp-err.txt && { echo "kprobe ok: $d"; break; }
	echo "kprobe failed: $d: $(cat kp-err.txt)"; cat $T/error_log 2>/dev/null | tail -3
done
tr() {
	name=$1; shift
	echo > $T/trace
	echo 1 > $T/events/kprobes/pe/enable
	perf record -o $name.data -e cpu-clock -c 100000 "$@" > /dev/null 2> $name.err
	echo 0 > $T/events/kprobes/pe/enable
	cat $T/trace > kp-$name.txt
	echo "$name: $(grep -c ' pe:' kp-$name.txt) outputs traced"; grep -v '^$' $name.err
}
tr sh-defer --call-graph fp,defer -- sh -c '/work/dwork recurse -d 40 -s 2; true'
tr time-defer --call-graph fp,defer -- time /work/dwork recurse -d 40 -s 2
tr sh-defer2 --call-graph fp,defer -- sh -c '/work/dwork recurse -d 40 -s 2; true'
