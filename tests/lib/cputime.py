# SPDX-License-Identifier: GPL-2.0
"""CPU time and peak RSS of a command, from wait4(), for the benchmarks.

run(cmd) runs @cmd (stdin inherited, stderr thrown away, stdout thrown
away or, with capture=True, kept) and returns a Run:

  cpu        user+sys seconds of the child (ru_utime + ru_stime)
  rss        its peak RSS in KiB (ru_maxrss)
  wall       seconds from before the spawn to the reaping (to 50 ms
             with @timeout)
  out        its stdout (bytes) with capture=True, else None
  status     its exit code (os.waitstatus_to_exitcode: -N for signal N)
  timed_out  killed after @timeout seconds of wall time (numbers are then
             lower bounds)

With descendants=True, cpu also counts every process the child starts
that outlives it or that it does not reap (perf leaves its addr2line
processes to the system): the caller is their subreaper for the run and
reaps them after the child, so it must have no other child running.

A child that fails raises subprocess.CalledProcessError, unless
check=False.  With @timeout, wait4() is polled every 50 ms and the child
killed (SIGKILL) past @timeout seconds; without, wait4() blocks.

The peak RSS is not the command's alone: exec keeps the high-water mark
of the memory the process had before it.  By default the child is
spawned by subprocess.Popen, which vforks on Linux: until exec it runs in
the caller's memory, so the caller's peak RSS so far counts.  With
fork=True it is started by os.fork() and os.execv(): its copy of the
caller's memory counts (the caller's resident pages at the time, not its
earlier peak), and its CPU time includes some 10 ms of copy-on-write
faults and of the copy's teardown at exec.  Keep the caller small where
the RSS matters (bench/deferred generates its files in a child for it).

best_cpu(cmds, reps) is the best (least) CPU time of each of @cmds over
@reps rounds, the commands taking turns within each round so that a busy
spell of a shared machine falls on all of them alike: other jobs only
ever add to a run's CPU time, so the least is the nearest to the
command's own cost.
"""
import collections
import ctypes
import os
import signal
import subprocess
import tempfile
import time

Run = collections.namedtuple('Run', 'cpu rss wall out status timed_out')

PR_SET_CHILD_SUBREAPER = 36


def _subreaper(on):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0):
        raise OSError(ctypes.get_errno(), 'prctl(PR_SET_CHILD_SUBREAPER)')


def _spawn(cmd, stdout, fork):
    if not fork:
        return subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.DEVNULL)
    pid = os.fork()
    if pid == 0:
        os.dup2(stdout.fileno(), 1)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        try:
            os.execv(cmd[0], cmd)
        finally:
            os._exit(127)
    return pid


def _reap_descendants():
    """Reap every child left (orphans of the run): their CPU seconds."""
    cpu = 0.0
    while True:
        try:
            _, _, ru = os.wait4(-1, 0)
        except ChildProcessError:
            return cpu
        cpu += ru.ru_utime + ru.ru_stime


def run(cmd, capture=False, timeout=None, check=True, fork=False,
        descendants=False):
    """Run @cmd: its Run (see the module's description)."""
    if descendants:
        _subreaper(True)
    try:
        with (tempfile.TemporaryFile() if capture else open(os.devnull, 'wb')) as f:
            t0 = time.monotonic()
            p = _spawn(cmd, f, fork)
            pid = p if fork else p.pid
            timed_out = False
            if timeout is None:
                _, status, ru = os.wait4(pid, 0)
            else:
                while True:
                    reaped, status, ru = os.wait4(pid, os.WNOHANG)
                    if reaped:
                        break
                    if time.monotonic() - t0 > timeout and not timed_out:
                        os.kill(pid, signal.SIGKILL)
                        timed_out = True
                    time.sleep(0.05)
            cpu = ru.ru_utime + ru.ru_stime
            if descendants:
                cpu += _reap_descendants()
            wall = time.monotonic() - t0
            code = os.waitstatus_to_exitcode(status)
            if not fork:
                # Reaped here: Popen must not wait for it again.
                p.returncode = code
            out = None
            if capture:
                f.seek(0)
                out = f.read()
    finally:
        if descendants:
            _subreaper(False)
    if check and code:
        raise subprocess.CalledProcessError(code, cmd)
    return Run(cpu, ru.ru_maxrss, wall, out, code, timed_out)


def cpu_time(cmd):
    """User+sys seconds of @cmd, its output thrown away."""
    return run(cmd).cpu


def best_cpu(cmds, reps, measure=cpu_time):
    """The least CPU time of each of @cmds over @reps rounds, the commands
    taking turns within each round; @measure(cmd) gives one run's seconds."""
    best = [None] * len(cmds)
    for _ in range(reps):
        for i, cmd in enumerate(cmds):
            t = measure(cmd)
            best[i] = t if best[i] is None else min(best[i], t)
    return best
