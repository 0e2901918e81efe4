# SPDX-License-Identifier: GPL-2.0
#
# Sourced by guest.sh and matrix.sh in the guest (cwd /out): the event
# every run samples, no throttling of it, and results.txt started with
# the clock tick its CPU times are counted in.
EV="-e cpu-clock -c 100000"
echo 0 > /proc/sys/kernel/perf_cpu_time_max_percent
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
echo "CLK_TCK $tck" > results.txt
