# SPDX-License-Identifier: GPL-2.0
"""Generated deferred-callchain streams with the ground truth of every
sample: scenario() lays out threads, kernel entries, samples and their
PERF_RECORD_CALLCHAIN_DEFERRED the way a 7.2 kernel and perf record do
(per-CPU buffers, rounds, late and missing records, duplicates), and
Scenario.write() writes them deferred or "already merged" (the floor of
the benchmarks)."""
import os
import random
import struct

from perf_abi import (CONTEXT_KERNEL, CONTEXT_USER, CONTEXT_USER_DEFERRED,
                      SW_DUMMY, S_CALLCHAIN, S_CPU,
                      S_IDENTIFIER, S_IP, S_PERIOD, S_REGS_USER, S_STACK_USER,
                      S_TID, S_TIME, X86_REG_BP, X86_REG_IP, X86_REG_SP)
from perfdata_writer import Evsel, Writer

KERNEL_TEXT = 0xffffffffa0c00000   # the real-7.2 fixture's kernel map
KERNEL_TEXT_LEN = 0x255da80
USER_BASE = 0x555555554000          # PIE load base of the fixture workload
USER_TEXT = (USER_BASE + 0x1000, 0x619)     # its R E segment
USER_TEXT_PGOFF = 0x1000
VDSO_TEXT = 0x7ffff7fc1000


def cookie_of(cpu, counter):
    return (counter << 32) | (cpu + 1)


class Truth:
    """What one generated sample must look like after stitching."""
    __slots__ = ('tid', 'time', 'kernel', 'user', 'fate', 'cookie', 'cpu')

    def __init__(self, tid, time, kernel, user, fate, cookie, cpu):
        self.tid, self.time, self.kernel, self.user = tid, time, kernel, user
        self.fate, self.cookie, self.cpu = fate, cookie, cpu

    def expected_ips(self):
        """The ips perf script prints: kernel frames then user frames (a
        lost user stack prints as one frame at address 0)."""
        if self.fate == 'lost':
            return list(self.kernel) + [0]
        return list(self.kernel) + list(self.user)


class Scenario:
    """A generated stream: ground truth, counters, and writers for it."""

    def __init__(self):
        self.truth = []          # one Truth per sample, in time order
        self.events = []         # (time, seq, cpu_buffer, kind, args)
        self.stats = {}
        self.threads = []
        self.nr_records = 0
        self.file_events = None

    def expected(self):
        return sorted(self.truth, key=lambda t: (t.time, t.tid))


def _stacks(rng, n, lo, hi, base, span, depth_lo, depth_hi):
    out = []
    for _ in range(n):
        d = rng.randint(depth_lo, depth_hi)
        out.append([base + rng.randrange(lo, hi) % span for _ in range(d)])
    return out


def scenario(threads=4, samples=2000, late_fraction=0.1, missing_fraction=0.0,
             dup_fraction=0.0, cross_cpu_fraction=0.3, cross_cpu_delay=20_000_000,
             user_mode_fraction=0.15, max_per_entry=6, nr_cpus=2, seed=1,
             exit_threads=True, round_ns=5_000_000, lag_fraction=0.2,
             sample_gap=250_000, start=1_000_000_000, regs_stack=False,
             two_events=False, block_fraction=0.0):
    """Generate a realistic deferred-callchain stream.

    Per thread: kernel entries with 1..max_per_entry samples each; the
    entry's PERF_RECORD_CALLCHAIN_DEFERRED is emitted at return to user
    (after the samples); late_fraction of entries also get a sample taken in
    the unwind path, timestamped after the record; missing_fraction of
    entries get no record; dup_fraction of records are duplicated in the next
    round; cross_cpu_fraction of records are written in another CPU's
    buffer, up to cross_cpu_delay ns after the entry's samples;
    block_fraction of entries end in a preemption or a block: their record
    comes when the task runs again, about one of its sampling gaps later
    (capped at cross_cpu_delay), so that waiting samples grow with the
    number of threads as on an oversubscribed machine.  Events go to
    per-CPU buffers and are written per round, buffer after buffer, like
    perf record; a buffer is sometimes read one round late (lag_fraction).

    Returns a Scenario; write it with .write(path, merged=False, ...).
    """
    rng = random.Random(seed)
    sc = Scenario()
    kstacks = _stacks(rng, 64, 0x1000, 0x2000000, KERNEL_TEXT, KERNEL_TEXT_LEN, 3, 14)
    ustacks = _stacks(rng, 64, 0, 1 << 20, USER_TEXT[0], USER_TEXT[1], 2, 24)
    unwind_k = [KERNEL_TEXT + 0x2345, KERNEL_TEXT + 0x1234, KERNEL_TEXT + 0x777]
    counters = [0] * nr_cpus
    ev = []          # (time, seq, buffer cpu, kind, payload)
    seq = [0]

    def push(time, cpu, kind, payload):
        seq[0] += 1
        ev.append((time, seq[0], cpu, kind, payload))

    # the "Deferred callchains:" counters perf must print, by
    # perf_counters.key() of their labels
    st = dict(deferred_samples=0, stitched=0, stitched_late=0, user_stack_lost=0,
              of_which_task_exited=0, duplicate_records=0, deferred_records=0,
              orphan_records=0)
    per_thread = max(1, samples // threads)
    pid = 1000
    tids = [pid] + [pid + 1 + i for i in range(threads - 1)]
    sc.threads = tids
    sc.pid = pid
    # thread start times are staggered so that all run concurrently
    span = per_thread * sample_gap * max(1, threads // nr_cpus)
    for i, tid in enumerate(tids):
        cpu = i % nr_cpus
        now = start + rng.randrange(0, max(1, sample_gap * 4)) + i * 1000
        left = per_thread + (samples - per_thread * threads if i == 0 else 0)
        push(now - 500, cpu, 'task', (tid,))
        step = max(1, span // max(1, per_thread))
        while left > 0:
            n = min(left, rng.randint(1, max_per_entry))
            ustack = rng.choice(ustacks)
            if rng.random() < user_mode_fraction:
                # a user-mode sample: nr=2, the ip is the user leaf
                counters[cpu] += 1
                ck = cookie_of(cpu, counters[cpu])
                now += rng.randint(step // 2, step * 3 // 2)
                entry = [(now, None)]
                n = 1
            else:
                counters[cpu] += 1
                ck = cookie_of(cpu, counters[cpu])
                entry = []
                kst = rng.choice(kstacks)
                # the task runs in the kernel for the whole entry: its
                # samples are one sampling period apart, not one task gap
                inner = min(step, sample_gap)
                now += max(1, rng.randint(step // 2, step * 3 // 2) * n - (n - 1) * inner)
                for j in range(n):
                    if j:
                        now += rng.randint(inner // 2, inner * 3 // 2)
                    entry.append((now, kst[rng.randrange(len(kst)):]))
            left -= n
            missing = rng.random() < missing_fraction
            rec_cpu = cpu
            rec_time = now + rng.randint(1000, 20000)
            if not missing and rng.random() < cross_cpu_fraction and nr_cpus > 1:
                rec_cpu = (cpu + rng.randint(1, nr_cpus - 1)) % nr_cpus
                rec_time = now + rng.randint(1000, cross_cpu_delay)
            if not missing and rng.random() < block_fraction:
                rec_time = now + min(cross_cpu_delay, rng.randint(step // 2, step + 1))
            late = 0
            if not missing and left > 0 and rng.random() < late_fraction:
                late = min(left, rng.randint(1, 2))
                left -= late
            for time, kst in entry:
                fate = 'lost' if missing else 'stitched'
                if kst is None:
                    cc = [CONTEXT_USER_DEFERRED, ck]
                    truth = Truth(tid, time, [], ustack, fate, ck, cpu)
                    push(time, cpu, 'sample', (tid, ustack[0], cc, truth, ustack))
                else:
                    cc = [CONTEXT_KERNEL] + kst + [CONTEXT_USER_DEFERRED, ck]
                    truth = Truth(tid, time, kst, ustack, fate, ck, cpu)
                    push(time, cpu, 'sample', (tid, kst[0], cc, truth, ustack))
                sc.truth.append(truth)
                st['deferred_samples'] += 1
                st['user_stack_lost' if missing else 'stitched'] += 1
            if not missing:
                push(rec_time, rec_cpu, 'record', (tid, ck, ustack))
                st['deferred_records'] += 1
                if rng.random() < dup_fraction:
                    push(rec_time, rec_cpu, 'dup', (tid, ck, ustack))
                    st['duplicate_records'] += 1
                now = rec_time
                for _ in range(late):
                    now += rng.randint(200, 2000)
                    kst = unwind_k[rng.randrange(3):]
                    cc = [CONTEXT_KERNEL] + kst + [CONTEXT_USER_DEFERRED, ck]
                    truth = Truth(tid, now, kst, ustack, 'stitched_late', ck, rec_cpu)
                    push(now, rec_cpu, 'sample', (tid, kst[0], cc, truth, ustack))
                    sc.truth.append(truth)
                    st['deferred_samples'] += 1
                    st['stitched_late'] += 1
            else:
                now += rng.randint(1000, 20000)
        now += rng.randint(1000, 10000)
        if exit_threads:
            push(now, cpu, 'exit', (tid,))
    # Which lost samples got their fate from the task's exit?  All of them
    # that no later record of the same task resolved: i.e. the trailing ones.
    last_rec = {}
    for time, _, _, kind, p in ev:
        if kind == 'record':
            last_rec[p[0]] = max(last_rec.get(p[0], 0), time)
    if exit_threads:
        for tr in sc.truth:
            if tr.fate == 'lost' and tr.time > last_rec.get(tr.tid, 0):
                st['of_which_task_exited'] += 1
    sc.stats = st
    sc.events = ev
    sc.nr_cpus = nr_cpus
    sc.round_ns = round_ns
    sc.lag_fraction = lag_fraction
    sc.seed = seed
    sc.regs_stack = regs_stack
    sc.two_events = two_events
    sc.truth.sort(key=lambda t: (t.time, t.tid))
    sc.nr_records = st['deferred_records']
    return sc


def _file_order(sc):
    """Per-CPU buffers read round after round, buffer after buffer, some
    buffers a round late: the order perf record writes events in.  Yields
    events and None for FINISHED_ROUND."""
    rng = random.Random(sc.seed + 7)
    bufs = [[] for _ in range(sc.nr_cpus)]
    for e in sorted(sc.events, key=lambda e: (e[0], e[1])):
        bufs[e[2]].append(e)
    pos = [0] * sc.nr_cpus
    dups = []               # duplicates go out in the round after their record
    t_read = min(e[0] for e in sc.events) + sc.round_ns if sc.events else 0
    prev_read = 0
    while any(pos[c] < len(bufs[c]) for c in range(sc.nr_cpus)) or dups:
        next_dups = []
        for d in dups:
            yield d
        for c in range(sc.nr_cpus):
            # a buffer may be read a round late, but never later than that:
            # its events must not be older than the previous read
            limit = t_read if rng.random() >= sc.lag_fraction else prev_read
            b = bufs[c]
            while pos[c] < len(b) and b[pos[c]][0] <= limit:
                e = b[pos[c]]
                pos[c] += 1
                if e[3] == 'dup':
                    next_dups.append(e)
                else:
                    yield e
        yield None
        dups = next_dups
        prev_read = t_read
        t_read += sc.round_ns


def write_scenario(sc, path, merged=False, endian='<', pipe=False,
                   sample_id_all=True, dummy=False):
    """Write @sc to @path.  merged=True writes the same stacks already merged
    (kernel frames, PERF_CONTEXT_USER, user frames; no defer bits, no
    records): the floor for benchmarks.  dummy=True adds a dummy tracking
    event that carries the records (perf record -a)."""
    st = S_IP | S_TID | S_TIME | S_CPU | S_PERIOD | S_CALLCHAIN
    regs_mask = (1 << X86_REG_BP) | (1 << X86_REG_SP) | (1 << X86_REG_IP)
    if sc.regs_stack:
        st |= S_REGS_USER | S_STACK_USER
    several = dummy or sc.two_events
    if several:
        st |= S_IDENTIFIER
    defer = not merged
    evsels = [Evsel(ids=(11, 12), sample_type=st, defer=defer,
                    defer_output=defer and not dummy, sample_id_all=sample_id_all,
                    regs_user=regs_mask if sc.regs_stack else 0,
                    stack_user=8192 if sc.regs_stack else 0)]
    if sc.two_events:
        evsels.append(Evsel(ids=(21, 22), config=2, sample_type=st, defer=defer,
                            defer_output=False, sample_id_all=sample_id_all))
    if dummy:
        evsels.append(Evsel(ids=(31, 32), config=SW_DUMMY, period=1,
                            sample_type=st, defer=False, defer_output=defer,
                            sample_id_all=sample_id_all))
    w = Writer(evsels, endian=endian, nr_cpus=sc.nr_cpus)
    rec_ev = evsels[-1]
    pid = sc.pid
    pid_of = getattr(sc, 'pid_of', {})
    t0 = min(e[0] for e in sc.events) - 100000
    w.mmap2(-1, 0, KERNEL_TEXT, KERNEL_TEXT_LEN, KERNEL_TEXT, '[kernel.kallsyms]_text',
            time=0, kernel=True)
    w.comm(pid, pid, 'workload', time=t0, exec=True)
    w.mmap2(pid, pid, USER_TEXT[0], 0x1000, USER_TEXT_PGOFF, workload_path(),
            time=t0 + 1)
    # the execve's last MMAP, as load_elf_binary() writes it
    w.mmap2(pid, pid, VDSO_TEXT, 0x2000, 0, '[vdso]', time=t0 + 2)
    w.finished_round()
    rng = random.Random(sc.seed + 3)
    for e in _file_order(sc):
        if e is None:
            w.finished_round()
            continue
        time, _, cpu, kind, p = e
        tid = p[0]
        pid = pid_of.get(tid, sc.pid)
        if kind == 'task':
            if tid != pid:
                w.fork(pid, pid, tid, pid, time=time, cpu=cpu)
                w.comm(pid, tid, 'worker', time=time, cpu=cpu)
            elif pid != sc.pid:
                w.comm(pid, tid, 'other', time=time, cpu=cpu)
        elif kind == 'exit':
            w.exit(pid, pid, tid, pid, time=time, cpu=cpu)
        elif kind == 'comm_exec':
            w.comm(pid, tid, p[1], time=time, cpu=cpu, exec=True)
        elif kind == 'sample':
            _, ip, cc, truth, ustack = p
            if merged:
                if cc[0] == CONTEXT_KERNEL:
                    cc = cc[:-2] + [CONTEXT_USER] + list(ustack)
                else:
                    cc = [CONTEXT_USER] + list(ustack)
            evi = 0
            if sc.two_events and rng.random() < 0.5:
                evi = 1
            ev = evsels[evi]
            regs = stack = None
            if sc.regs_stack:
                regs, stack = _fp_snapshot(ustack)
            w.sample(ip, pid, tid, time, cpu=cpu, callchain=cc, evsel=ev,
                     id=ev.ids[cpu % 2], regs=regs, stack=stack)
        elif kind in ('record', 'dup'):
            if merged:
                continue
            _, ck, ustack = p
            w.deferred(ck, ustack, pid, tid, time, cpu=cpu, evsel=rec_ev,
                       id=rec_ev.ids[cpu % 2])
    w.finished_round()
    if pipe:
        return w.save_pipe(path)
    return w.save(path)


Scenario.write = write_scenario


def _fp_snapshot(ustack, sp=0x7ffc00001000):
    """User regs and a stack snapshot a frame-pointer walk turns into
    @ustack: ip = leaf, bp chain holding the return addresses."""
    n = len(ustack)
    frames = b''
    bp0 = sp + 16
    for i in range(1, n):
        nxt = bp0 + 16 * i if i < n - 1 else 0
        frames += struct.pack('<QQ', nxt, ustack[i])
    stack = b'\0' * 16 + frames + b'\0' * 16
    regs = {X86_REG_IP: ustack[0], X86_REG_SP: sp, X86_REG_BP: bp0 if n > 1 else 0}
    return regs, stack


def workload_path():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), '..', 'fixtures',
                                        'real-7.2', 'workload'))



class _Builder:
    """Kernel entries laid out by hand, with their truth, for the task
    lifecycle scenarios (exec, off-CPU, exiting tasks)."""

    def __init__(self, seed, nr_cpus=2):
        self.rng = random.Random(seed)
        self.sc = Scenario()
        self.sc.pid_of = {}
        self.ev = []
        self.counters = [0] * nr_cpus
        self.nr_cpus = nr_cpus
        self.kst = _stacks(self.rng, 8, 0x1000, 0x2000000, KERNEL_TEXT, KERNEL_TEXT_LEN, 3, 10)
        self.ust = _stacks(self.rng, 8, 0, 1 << 20, USER_TEXT[0], USER_TEXT[1], 2, 12)

    def push(self, time, cpu, kind, payload):
        self.ev.append((time, len(self.ev), cpu, kind, payload))

    def cookie(self, cpu):
        self.counters[cpu] += 1
        return cookie_of(cpu, self.counters[cpu])

    def sample(self, tid, time, cpu, ck, ustack, fate='stitched', kst=None):
        """One sample in the kernel of entry @ck; @ustack its user frames."""
        kst = kst or self.rng.choice(self.kst)
        cc = [CONTEXT_KERNEL] + kst + [CONTEXT_USER_DEFERRED, ck]
        truth = Truth(tid, time, kst, ustack, fate, ck, cpu)
        self.push(time, cpu, 'sample', (tid, kst[0], cc, truth, ustack))
        self.sc.truth.append(truth)

    def record(self, tid, time, cpu, ck, ustack):
        self.push(time, cpu, 'record', (tid, ck, ustack))
        self.sc.nr_records += 1

    def entry(self, tid, time, cpu, nr=1, delay=20_000, rec_cpu=None):
        """A kernel entry of @nr samples 100 us apart and its record."""
        ck = self.cookie(cpu)
        ustack = self.rng.choice(self.ust)
        for i in range(nr):
            self.sample(tid, time + i * 100_000, cpu, ck, ustack)
        self.record(tid, time + (nr - 1) * 100_000 + delay,
                    cpu if rec_cpu is None else rec_cpu, ck, ustack)

    def done(self, pid, round_ns=5_000_000):
        sc = self.sc
        sc.pid = pid
        sc.events = self.ev
        sc.nr_cpus = self.nr_cpus
        sc.round_ns = round_ns
        sc.lag_fraction = 0
        sc.seed = 1
        sc.regs_stack = sc.two_events = False
        sc.truth.sort(key=lambda t: (t.time, t.tid))
        return sc


MS = 1_000_000


def flow(b, tid, start, end, gap=10 * MS, cpu=1):
    """Task @tid runs from @start to @end: an entry every @gap, records 20 us
    after their samples: the stream's clock moves on."""
    b.push(start - 1000, cpu, 'task', (tid,))
    t = start
    while t < end:
        b.entry(tid, t, cpu, nr=2)
        t += gap


def offcpu_scenario(block_ns=2_000 * MS, others=3, seed=31):
    """perf record -e sched:sched_switch --call-graph fp,defer: task 1000 is
    switched out in a blocking read at 100 ms; its record comes when it runs
    again, @block_ns later, on the other CPU.  Meanwhile @others tasks run,
    one kernel entry (two samples, one record) every 10 ms each."""
    b = _Builder(seed)
    pid = 1000
    b.push(1 * MS, 0, 'task', (pid,))
    end = 100 * MS + block_ns + 200 * MS
    for i in range(others):
        tid = pid + 1 + i
        flow(b, tid, 5 * MS + i * 3 * MS, end, cpu=1 if i % 2 == 0 else 0)
    b.entry(pid, 50 * MS + 7_000, 0, nr=2)
    ck = b.cookie(0)
    ustack = b.rng.choice(b.ust)
    b.sample(pid, 100 * MS + 7_000, 0, ck, ustack)  # sched_switch, blocked
    b.record(pid, 100 * MS + block_ns, 1, ck, ustack)
    b.entry(pid, 100 * MS + block_ns + 5 * MS + 7_000, 1, nr=2)
    sc = b.done(pid)
    sc.blocked = (pid, 100 * MS)
    return sc


def dethread_scenario(exec_ns=300 * MS, seed=32):
    """An exec by a non-leader thread (fs/exec.c de_thread()): thread 1001
    of process 1000 calls execve at 60 ms; its samples carry tid 1001 until
    exchange_tids(), tid 1000 after it, all with one cookie.  The old leader
    (1000) exits first: its EXIT at 63 ms, its last record 50 us after it
    (do_exit(): perf_event_exit_task() before unwind_deferred_task_exit()).
    The COMM exec of (1000, 1000) follows, no FORK; the execve goes on for
    @exec_ns and its record (one frame, the new program's _start) comes
    with tid 1000.  Process 2000 runs all along."""
    b = _Builder(seed)
    pid, thr = 1000, 1001
    b.push(1 * MS, 0, 'task', (pid,))
    b.push(2 * MS, 1, 'task', (thr,))
    b.sc.pid_of[2000] = 2000
    flow(b, 2000, 3 * MS, 120 * MS + exec_ns, gap=10 * MS, cpu=1)
    for t in range(5, 55, 10):
        b.entry(pid, t * MS, 0)
        b.entry(thr, t * MS + 2 * MS, 1)
    ck = b.cookie(1)                                # the execve entry
    start = [USER_TEXT[0] + 0x100]                  # _start
    for t in (60, 61, 62):
        b.sample(thr, t * MS, 1, ck, start)
    # the old leader, zapped: its last entry, its EXIT, then its record
    lk = b.cookie(0)
    lus = b.rng.choice(b.ust)
    b.sample(pid, 62 * MS + 500_000, 0, lk, lus)
    b.push(63 * MS, 0, 'exit', (pid,))
    b.record(pid, 63 * MS + 50_000, 0, lk, lus)
    # exchange_tids(): the exec'ing thread is 1000 now
    b.sample(pid, 64 * MS, 1, ck, start)
    b.push(64 * MS + 500_000, 1, 'comm_exec', (pid, 'newprog'))
    t = 65 * MS
    while t < 64 * MS + exec_ns:
        b.sample(pid, t, 1, ck, start)
        t += 50 * MS
    b.record(pid, 64 * MS + exec_ns + 20 * MS, 1, ck, start)
    b.entry(pid, 64 * MS + exec_ns + 30 * MS, 1, nr=2)
    sc = b.done(pid)
    sc.exec_entry = ck
    return sc
