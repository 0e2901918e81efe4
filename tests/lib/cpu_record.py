# SPDX-License-Identifier: GPL-2.0
"""perf record of a workload on this host whose number of samples is a
property of the workload's CPU work, not of the machine's load.

- The event is cpu-clock with a period in nanoseconds (-c): an hrtimer
  that runs only while the task runs (perf_swevent_start_hrtimer() and
  perf_swevent_cancel_hrtimer() carry the period left across a context
  switch), so C ms of CPU time give C / P samples of P ms however busy the
  machine is.  -F on cpu-clock is the same fixed period
  (perf_swevent_init_hrtimer() maps a frequency to NSEC_PER_SEC / F), but
  perf_event_open() refuses a frequency above
  kernel.perf_event_max_sample_rate, which the kernel lowers on a loaded
  machine ("perf: interrupt took too long"); a period is never refused.
- The workload stops after a fixed amount of its own CPU time (it measures
  it itself: CLOCK_PROCESS_CPUTIME_ID) or a fixed amount of work, never
  after a wall time.
- The ring buffers hold the whole run (-m, as root, who may lock that
  much): perf record starved of CPU by other work cannot lose samples, the
  kernel keeps them until perf reads them at the end.
"""
import os

import common

# Bytes of a sample beside its stack copy: header, ids, regs, a callchain.
SAMPLE_OVERHEAD = 2048
# Side-band events (MMAP2, COMM...) and the samples taken outside the
# measured part of the run (start-up, exit).
SLACK_BYTES = 256 << 10
PAGE = os.sysconf('SC_PAGE_SIZE')
# tests/workloads/dwork.c, built as the guest tests build it: frame
# pointers everywhere, so that its stacks are whole.
DWORK_SRC = os.path.join(common.TOP, 'tests', 'workloads', 'dwork.c')
DWORK_CFLAGS = ['-O1', '-g', '-fno-omit-frame-pointer', '-mno-omit-leaf-frame-pointer',
                '-pthread']


def expected(cpu_ms, period_us):
    """Samples that @cpu_ms of CPU time give at a period of @period_us
    (the first period may start late: one less)."""
    return max(int(cpu_ms * 1000 // period_us) - 1, 0)


def mmap_arg(cpu_ms, period_us, sample_bytes):
    """-m for buffers holding every sample of a run of @cpu_ms of CPU,
    each CPU's buffer the whole run (the workload may stay on one CPU);
    [] when perf may not lock that much (not root: the default buffers)."""
    if os.geteuid() != 0:
        return []
    n = 2 * (cpu_ms * 1000 // period_us + 1)
    size = n * (sample_bytes + SAMPLE_OVERHEAD) + SLACK_BYTES
    pages = 1
    while pages * PAGE < size:
        pages *= 2
    return ['-m', str(pages)]


def args(cpu_ms, period_us, event='cpu-clock:u', stack=0):
    """perf record options: @event every @period_us of the task's CPU time,
    buffers for a run of @cpu_ms; @stack: --call-graph dwarf's dump size
    (0: no stack copies)."""
    return ['-e', event, '-c', str(int(period_us * 1000))] + \
        mmap_arg(cpu_ms, period_us, stack)


def lost(perf, data):
    """LOST and LOST_SAMPLES events of @data (perf report --stats): what a
    failure message should say."""
    r = common.run([perf, 'report', '--stats', '-i', data], check=False)
    return ' '.join(line.strip() for line in r.stdout.splitlines()
                    if line.strip().startswith('LOST'))


class _Message:
    """A failure message made when unittest shows it (it str()s its msg
    argument only on a failure), not each time the assertion passes."""

    def __init__(self, make):
        self.make = make

    def __str__(self):
        return self.make()


def too_few(what, got, cpu_ms, period_us, perf=None, data=None):
    """A clear failure message for a recording with too few samples (its
    perf report --stats runs only if the message is shown)."""
    def make():
        msg = ('%s: %d samples, but %d ms of CPU time at one sample every %d us '
               'of it give %d' % (what, got, cpu_ms, period_us,
                                  expected(cpu_ms, period_us)))
        if perf and data:
            msg += '; %s' % (lost(perf, data) or 'nothing lost')
        return msg
    return _Message(make)


def dwork(tmpdir):
    """tests/workloads/dwork.c built in @tmpdir (once): a workload whose
    recurse and threads modes run until each thread has used -U ms of
    user (-K: kernel) CPU time, whatever the machine's load."""
    out = os.path.join(tmpdir, 'dwork')
    if not os.path.exists(out):
        common.run(['gcc'] + DWORK_CFLAGS + ['-o', out, DWORK_SRC])
    return out
