# SPDX-License-Identifier: GPL-2.0
"""A small perf.data writer for tests and benchmarks (Python stdlib only).

Writes what perf 7.2 reads: file mode (perf_file_header, attrs with ids, the
data section and a few optional feature sections) or pipe mode
(PERF_RECORD_HEADER_ATTR on the stream), in either byte order.

    w = Writer([Evsel(sample_type=..., defer=True)], endian='<')
    w.comm(pid, tid, 'name', time=..., cpu=0)
    w.sample(ip=..., pid=..., tid=..., time=..., cpu=0, callchain=[...])
    w.deferred(cookie, ips, pid=..., tid=..., time=..., cpu=0)
    w.finished_round()
    w.save('perf.data')            # or w.save_pipe(path) / w.pipe_bytes()

scenario() generates realistic deferred-callchain streams, with the ground
truth of every sample, and can write the same stacks "already merged".
"""
import random
import struct

# enum perf_event_type
MMAP, LOST, COMM, EXIT, THROTTLE, UNTHROTTLE, FORK, READ, SAMPLE, MMAP2 = range(1, 11)
CALLCHAIN_DEFERRED = 22
HEADER_ATTR = 64
FINISHED_ROUND = 68

# enum perf_event_sample_format
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = \
    [1 << i for i in range(14)]
S_IDENTIFIER = 1 << 16

# perf_event_attr flag bits
F_DISABLED, F_INHERIT = 1 << 0, 1 << 1
F_MMAP, F_COMM, F_ENABLE_ON_EXEC, F_TASK = 1 << 8, 1 << 9, 1 << 12, 1 << 13
F_SAMPLE_ID_ALL = 1 << 18
F_MMAP2, F_COMM_EXEC = 1 << 23, 1 << 24
F_DEFER_CALLCHAIN, F_DEFER_OUTPUT = 1 << 38, 1 << 39

MISC_KERNEL, MISC_USER = 1, 2
COMM_EXEC = 1 << 13

CONTEXT_KERNEL = (1 << 64) - 128
CONTEXT_USER = (1 << 64) - 512
CONTEXT_USER_DEFERRED = (1 << 64) - 640

PERF_TYPE_SOFTWARE = 1
SW_CPU_CLOCK, SW_DUMMY = 0, 9

# x86_64 perf_regs: AX BX CX DX SI DI BP SP IP ... (IP = 8, SP = 7, BP = 6)
X86_REG_BP, X86_REG_SP, X86_REG_IP = 6, 7, 8
PERF_SAMPLE_REGS_ABI_64 = 2

# feature bits (enum HEADER_*)
HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION, HEADER_ARCH, HEADER_NRCPUS = 3, 4, 5, 6, 7
HEADER_CMDLINE = 11

ATTR_SIZE = 144         # PERF_ATTR_SIZE_VER9
MAGIC = b'PERFILE2'


def _bitrev64(v):
    return int('{:064b}'.format(v)[::-1], 2)


class Evsel:
    """One perf_event_attr and its ids."""

    def __init__(self, ids=(1,), type=PERF_TYPE_SOFTWARE, config=SW_CPU_CLOCK,
                 period=100000, sample_type=S_IP | S_TID | S_TIME | S_CALLCHAIN,
                 defer=False, defer_output=None, sample_id_all=True, flags=None,
                 regs_user=0, stack_user=0):
        self.ids = list(ids)
        self.type = type
        self.config = config
        self.period = period
        self.sample_type = sample_type
        if flags is None:
            flags = (F_DISABLED | F_INHERIT | F_MMAP | F_COMM | F_ENABLE_ON_EXEC |
                     F_TASK | F_MMAP2 | F_COMM_EXEC)
        if sample_id_all:
            flags |= F_SAMPLE_ID_ALL
        if defer:
            flags |= F_DEFER_CALLCHAIN
        if defer if defer_output is None else defer_output:
            flags |= F_DEFER_OUTPUT
        self.flags = flags
        self.regs_user = regs_user
        self.stack_user = stack_user

    @property
    def sample_id_all(self):
        return bool(self.flags & F_SAMPLE_ID_ALL)


class Writer:
    """Collects events, then writes a perf.data file or a pipe stream."""

    def __init__(self, evsels=None, endian='<', nr_cpus=2, arch='x86_64',
                 cmdline='perf record --call-graph fp,defer', features=True):
        self.evsels = evsels or [Evsel()]
        self.e = endian
        self.nr_cpus = nr_cpus
        self.arch = arch
        self.cmdline = cmdline
        self.features = features
        self.chunks = []
        self.nr_samples = 0
        if len(self.evsels) > 1:
            for ev in self.evsels:
                assert ev.sample_type & S_IDENTIFIER, \
                    'several events need PERF_SAMPLE_IDENTIFIER'

    # -- encoding helpers -------------------------------------------------
    def p(self, fmt, *args):
        return struct.pack(self.e + fmt, *args)

    def _evsel(self, evsel):
        if evsel is None:
            return self.evsels[0]
        if isinstance(evsel, int):
            return self.evsels[evsel]
        return evsel

    def attr_bytes(self, ev):
        flags = ev.flags if self.e == '<' else _bitrev64(ev.flags)
        b = self.p('IIQQQQ', ev.type, ATTR_SIZE, ev.config, ev.period,
                   ev.sample_type, 0)
        b += struct.pack(self.e + 'Q', flags)
        b += self.p('IIQQQQIiQIHHIIQQQ', 0, 0, 0, 0, 0, ev.regs_user,
                    ev.stack_user, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        assert len(b) == ATTR_SIZE, len(b)
        return b

    def id_trailer(self, ev, pid, tid, time, cpu, id=None):
        """The sample_id trailer of a non-sample event."""
        if not ev.sample_id_all:
            return b''
        st = ev.sample_type
        b = b''
        if st & S_TID:
            b += self.p('II', pid & 0xffffffff, tid & 0xffffffff)
        if st & S_TIME:
            b += self.p('Q', time)
        if st & S_ID:
            b += self.p('Q', id if id is not None else ev.ids[0])
        if st & S_STREAM_ID:
            b += self.p('Q', id if id is not None else ev.ids[0])
        if st & S_CPU:
            b += self.p('II', cpu, 0)
        if st & S_IDENTIFIER:
            b += self.p('Q', id if id is not None else ev.ids[0])
        return b

    def header(self, type, misc, body):
        size = 8 + len(body)
        assert size < 65536, 'event too large: %d' % size
        return self.p('IHH', type, misc, size) + body

    def add(self, raw):
        self.chunks.append(raw)
        return raw

    @staticmethod
    def _str(s):
        b = s.encode() + b'\0'
        return b + b'\0' * (-len(b) % 8)

    # -- events -----------------------------------------------------------
    def comm(self, pid, tid, name, time=0, cpu=0, evsel=None, exec=False):
        ev = self._evsel(evsel)
        body = self.p('II', pid, tid) + self._str(name[:15])
        body += self.id_trailer(ev, pid, tid, time, cpu)
        return self.add(self.header(COMM, COMM_EXEC if exec else 0, body))

    def fork(self, pid, ppid, tid, ptid, time=0, cpu=0, evsel=None):
        ev = self._evsel(evsel)
        body = self.p('IIIIQ', pid, ppid, tid, ptid, time)
        body += self.id_trailer(ev, pid, tid, time, cpu)
        return self.add(self.header(FORK, 0, body))

    def exit(self, pid, ppid, tid, ptid, time=0, cpu=0, evsel=None):
        ev = self._evsel(evsel)
        body = self.p('IIIIQ', pid, ppid, tid, ptid, time)
        body += self.id_trailer(ev, pid, tid, time, cpu)
        return self.add(self.header(EXIT, 0, body))

    def mmap2(self, pid, tid, start, length, pgoff, filename, time=0, cpu=0,
              prot=5, flags=2, kernel=False, evsel=None):
        ev = self._evsel(evsel)
        body = self.p('IIQQQIIQQII', pid & 0xffffffff, tid & 0xffffffff, start,
                      length, pgoff, 0, 0, 0, 0, prot, flags)
        body += self._str(filename)
        body += self.id_trailer(ev, pid, tid, time, cpu)
        return self.add(self.header(MMAP2, MISC_KERNEL if kernel else MISC_USER, body))

    def lost(self, nr, time=0, cpu=0, evsel=None):
        ev = self._evsel(evsel)
        body = self.p('QQ', ev.ids[0], nr) + self.id_trailer(ev, -1, -1, time, cpu)
        return self.add(self.header(LOST, 0, body))

    def finished_round(self):
        return self.add(self.header(FINISHED_ROUND, 0, b''))

    def sample(self, ip, pid, tid, time, cpu=0, callchain=None, period=None,
               evsel=None, misc=None, regs=None, stack=None, id=None):
        """callchain: the raw u64 entries (context markers included).
        regs: dict reg index -> value (REGS_USER); stack: bytes (STACK_USER)."""
        ev = self._evsel(evsel)
        st = ev.sample_type
        id = id if id is not None else ev.ids[0]
        if misc is None:
            misc = MISC_KERNEL if ip >= 1 << 63 else MISC_USER
        b = b''
        if st & S_IDENTIFIER:
            b += self.p('Q', id)
        if st & S_IP:
            b += self.p('Q', ip)
        if st & S_TID:
            b += self.p('II', pid, tid)
        if st & S_TIME:
            b += self.p('Q', time)
        if st & S_ADDR:
            b += self.p('Q', 0)
        if st & S_ID:
            b += self.p('Q', id)
        if st & S_STREAM_ID:
            b += self.p('Q', id)
        if st & S_CPU:
            b += self.p('II', cpu, 0)
        if st & S_PERIOD:
            b += self.p('Q', period if period is not None else ev.period)
        if st & S_CALLCHAIN:
            cc = callchain or []
            b += self.p('Q%dQ' % len(cc), len(cc), *cc)
        if st & S_REGS_USER:
            if regs is None:
                b += self.p('Q', 0)
            else:
                mask = ev.regs_user
                vals = [regs.get(i, 0) for i in range(64) if mask & (1 << i)]
                b += self.p('Q%dQ' % len(vals), PERF_SAMPLE_REGS_ABI_64, *vals)
        if st & S_STACK_USER:
            if not stack:
                b += self.p('Q', 0)
            else:
                data = bytes(stack) + b'\0' * (-len(stack) % 8)
                b += self.p('Q', len(data)) + data + self.p('Q', len(stack))
        self.nr_samples += 1
        return self.add(self.header(SAMPLE, misc, b))

    def deferred(self, cookie, ips, pid, tid, time, cpu=0, evsel=None, nr=None,
                 id=None, truncate=None):
        """PERF_RECORD_CALLCHAIN_DEFERRED; nr overrides the count written
        (malformed records), truncate cuts the event to that many bytes."""
        ev = self._evsel(evsel)
        n = len(ips) if nr is None else nr
        body = self.p('QQ%dQ' % len(ips), cookie, n, *ips)
        body += self.id_trailer(ev, pid, tid, time, cpu, id)
        if truncate is not None:
            body = body[:truncate - 8]
        return self.add(self.header(CALLCHAIN_DEFERRED, MISC_USER, body))

    # -- output -----------------------------------------------------------
    def data_bytes(self):
        return b''.join(self.chunks)

    def _feature_blobs(self):
        if not self.features:
            return []

        def string(s):
            b = s.encode() + b'\0'
            b += b'\0' * (-len(b) % 64)
            return self.p('I', len(b)) + b
        feats = [
            (HEADER_HOSTNAME, string('perfdata-py')),
            (HEADER_OSRELEASE, string('7.2.13')),
            (HEADER_VERSION, string('7.2.13')),
            (HEADER_ARCH, string(self.arch)),
            (HEADER_NRCPUS, self.p('II', self.nr_cpus, self.nr_cpus)),
        ]
        args = self.cmdline.split()
        feats.append((HEADER_CMDLINE, self.p('I', len(args)) +
                      b''.join(string(a) for a in args)))
        return feats

    def file_bytes(self):
        hdr_size = 104
        attr_entry = ATTR_SIZE + 16
        # ids first, right after the header, then the attrs, then the data
        ids_off = hdr_size
        ids_blob = b''
        id_secs = []
        for ev in self.evsels:
            blob = self.p('%dQ' % len(ev.ids), *ev.ids)
            id_secs.append((ids_off + len(ids_blob), len(blob)))
            ids_blob += blob
        attrs_off = ids_off + len(ids_blob)
        attrs = b''.join(self.attr_bytes(ev) + self.p('QQ', *sec)
                         for ev, sec in zip(self.evsels, id_secs))
        data_off = attrs_off + len(attrs)
        data = self.data_bytes()
        feats = self._feature_blobs()
        bitmap = 0
        for bit, _ in feats:
            bitmap |= 1 << bit
        fsec_off = data_off + len(data)
        content_off = fsec_off + 16 * len(feats)
        secs = b''
        contents = b''
        for _, blob in feats:
            secs += self.p('QQ', content_off + len(contents), len(blob))
            contents += blob
        head = MAGIC if self.e == '<' else MAGIC[::-1]
        head += self.p('QQ', hdr_size, attr_entry)
        head += self.p('QQQQQQ', attrs_off, len(attrs), data_off, len(data), 0, 0)
        head += self.p('4Q', bitmap & (2**64 - 1), bitmap >> 64 & (2**64 - 1), 0, 0)
        assert len(head) == hdr_size
        return head + ids_blob + attrs + data + secs + contents

    def pipe_bytes(self):
        head = (MAGIC if self.e == '<' else MAGIC[::-1]) + self.p('Q', 16)
        for ev in self.evsels:
            body = self.attr_bytes(ev) + self.p('%dQ' % len(ev.ids), *ev.ids)
            head += self.header(HEADER_ATTR, 0, body)
        return head + self.data_bytes()

    def save(self, path):
        with open(path, 'wb') as f:
            f.write(self.file_bytes())
        return path

    def save_pipe(self, path):
        with open(path, 'wb') as f:
            f.write(self.pipe_bytes())
        return path


# ---------------------------------------------------------------------------
# Scenario generator
# ---------------------------------------------------------------------------

KERNEL_TEXT = 0xffffffffa0c00000   # the real-7.2 fixture's kernel map
KERNEL_TEXT_LEN = 0x255da80
USER_BASE = 0x555555554000          # PIE load base of the fixture workload
USER_TEXT = (USER_BASE + 0x1000, 0x619)     # its R E segment
USER_TEXT_PGOFF = 0x1000


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

    st = dict(samples=0, stitched=0, stitched_late=0, lost=0, exited=0,
              duplicates=0, records=0, orphans=0)
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
                st['samples'] += 1
                st['lost' if missing else 'stitched'] += 1
            if not missing:
                push(rec_time, rec_cpu, 'record', (tid, ck, ustack))
                st['records'] += 1
                if rng.random() < dup_fraction:
                    push(rec_time, rec_cpu, 'dup', (tid, ck, ustack))
                    st['duplicates'] += 1
                now = rec_time
                for _ in range(late):
                    now += rng.randint(200, 2000)
                    kst = unwind_k[rng.randrange(3):]
                    cc = [CONTEXT_KERNEL] + kst + [CONTEXT_USER_DEFERRED, ck]
                    truth = Truth(tid, now, kst, ustack, 'stitched_late', ck, rec_cpu)
                    push(now, rec_cpu, 'sample', (tid, kst[0], cc, truth, ustack))
                    sc.truth.append(truth)
                    st['samples'] += 1
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
                st['exited'] += 1
    sc.stats = st
    sc.events = ev
    sc.nr_cpus = nr_cpus
    sc.round_ns = round_ns
    sc.lag_fraction = lag_fraction
    sc.seed = seed
    sc.regs_stack = regs_stack
    sc.two_events = two_events
    sc.truth.sort(key=lambda t: (t.time, t.tid))
    sc.nr_records = st['records']
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
    t0 = min(e[0] for e in sc.events) - 100000
    w.mmap2(-1, 0, KERNEL_TEXT, KERNEL_TEXT_LEN, KERNEL_TEXT, '[kernel.kallsyms]_text',
            time=0, kernel=True)
    w.comm(pid, pid, 'workload', time=t0, exec=True)
    w.mmap2(pid, pid, USER_TEXT[0], 0x1000, USER_TEXT_PGOFF, workload_path(),
            time=t0 + 1)
    w.finished_round()
    rng = random.Random(sc.seed + 3)
    for e in _file_order(sc):
        if e is None:
            w.finished_round()
            continue
        time, _, cpu, kind, p = e
        tid = p[0]
        if kind == 'task':
            if tid != pid:
                w.fork(pid, pid, tid, pid, time=time, cpu=cpu)
                w.comm(pid, tid, 'worker', time=time, cpu=cpu)
        elif kind == 'exit':
            w.exit(pid, pid, tid, pid, time=time, cpu=cpu)
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
    import os
    return os.path.abspath(os.path.join(os.path.dirname(__file__), '..', 'fixtures',
                                        'real-7.2', 'workload'))


# ---------------------------------------------------------------------------
# Reading perf.data files (file mode, host byte order) and rewriting them
# ---------------------------------------------------------------------------

class Recording:
    """The attrs (with ids) and the data section events of a perf.data file
    written by perf record: [(type, misc, raw event bytes)]."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            b = f.read()
        assert b[:8] == MAGIC, '%s: not a little-endian perf.data file' % path
        attr_size, = struct.unpack_from('<Q', b, 16)
        a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQ', b, 24)
        self.attrs = []
        for off in range(a_off, a_off + a_size, attr_size):
            (type, _, config, period, st, _, flags) = struct.unpack_from('<IIQQQQQ', b, off)
            regs_user, stack_user = struct.unpack_from('<QI', b, off + 80)
            i_off, i_size = struct.unpack_from('<QQ', b, off + attr_size - 16)
            ids = struct.unpack_from('<%dQ' % (i_size // 8), b, i_off)
            self.attrs.append(dict(type=type, config=config, period=period,
                                   sample_type=st, flags=flags, ids=ids,
                                   regs_user=regs_user, stack_user=stack_user))
        self.events = []
        off = d_off
        while off + 8 <= d_off + d_size:
            type, misc, size = struct.unpack_from('<IHH', b, off)
            assert size >= 8, 'bad event size at %#x' % off
            self.events.append((type, misc, b[off:off + size]))
            off += size

    def evsel_of(self, raw):
        """The attr of a sample."""
        if len(self.attrs) == 1:
            return self.attrs[0]
        id, = struct.unpack_from('<Q', raw, 8)   # PERF_SAMPLE_IDENTIFIER
        return next(a for a in self.attrs if id in a['ids'])


def sample_fields(attr, raw):
    """Offsets of a sample's parts: {'pid', 'tid', 'time', 'callchain':
    (offset, nr), 'regs': {reg: value}, 'stack': (offset, size)}."""
    st = attr['sample_type']
    bad = st & ~(S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID | S_STREAM_ID |
                 S_CPU | S_PERIOD | S_CALLCHAIN | S_REGS_USER | S_STACK_USER)
    assert not bad, 'sample_type %#x not handled' % st
    out = {}
    off = 8
    for bit, name in ((S_IDENTIFIER, 'identifier'), (S_IP, 'ip'), (S_TID, 'pidtid'),
                      (S_TIME, 'time'), (S_ADDR, 'addr'), (S_ID, 'id'),
                      (S_STREAM_ID, 'stream_id'), (S_CPU, 'cpu'), (S_PERIOD, 'period')):
        if st & bit:
            out[name], = struct.unpack_from('<Q', raw, off)
            off += 8
    if 'pidtid' in out:
        out['pid'], out['tid'] = out['pidtid'] & 0xffffffff, out['pidtid'] >> 32
    if st & S_CALLCHAIN:
        nr, = struct.unpack_from('<Q', raw, off)
        out['callchain'] = (off, nr)
        off += 8 + 8 * nr
    regs = {}
    if st & S_REGS_USER:
        abi, = struct.unpack_from('<Q', raw, off)
        off += 8
        if abi:
            for i in range(64):
                if attr['regs_user'] & (1 << i):
                    regs[i], = struct.unpack_from('<Q', raw, off)
                    off += 8
    out['regs'] = regs
    if st & S_STACK_USER:
        size, = struct.unpack_from('<Q', raw, off)
        off += 8
        dyn = 0
        if size:
            dyn, = struct.unpack_from('<Q', raw, off + size)
        out['stack'] = (off, dyn)
    return out


def fp_walk(regs, stack, max_frames=512):
    """The frame pointer walk of perf's deferred-callchain fallback
    (dc__walk_snapshot()): the user IPs it gives for x86_64 @regs and
    @stack (the bytes from SP up)."""
    ip, sp, bp = regs[X86_REG_IP], regs[X86_REG_SP], regs[X86_REG_BP]
    ips = [ip]
    while len(ips) < max_frames:
        if bp < sp or bp & 7 or bp - sp > len(stack) or len(stack) - (bp - sp) < 16:
            break
        nbp, ra = struct.unpack_from('<QQ', stack, bp - sp)
        if not ra:
            break
        ips.append(ra)
        if nbp <= bp:
            break
        bp = nbp
    return ips


def dwarf_to_deferred(src, dst, cmdline='perf record --call-graph fp,defer,snapshot'):
    """Rewrite a --call-graph dwarf recording @src (x86_64, one machine) into
    @dst as a fp,defer,snapshot recording whose PERF_RECORD_CALLCHAIN_DEFERRED
    never came: each sample keeps its kernel frames, then
    PERF_CONTEXT_USER_DEFERRED and a cookie of its own; its user regs and
    stack stay.  Returns [(regs, stack bytes)] per sample, in file order."""
    rec = Recording(src)
    evsels = []
    for a in rec.attrs:
        ev = Evsel(ids=a['ids'], type=a['type'], config=a['config'], period=a['period'],
                   sample_type=a['sample_type'], defer=True, defer_output=False,
                   sample_id_all=bool(a['flags'] & F_SAMPLE_ID_ALL),
                   flags=a['flags'] & ~(F_DEFER_CALLCHAIN | F_DEFER_OUTPUT),
                   regs_user=a['regs_user'], stack_user=a['stack_user'])
        evsels.append(ev)
    w = Writer(evsels, cmdline=cmdline)
    snaps = []
    cookie = 1
    for type, misc, raw in rec.events:
        if type == SAMPLE:
            attr = rec.evsel_of(raw)
            f = sample_fields(attr, raw)
            off, nr = f['callchain']
            cc = list(struct.unpack_from('<%dQ' % nr, raw, off + 8))
            if CONTEXT_USER in cc:
                cc = cc[:cc.index(CONTEXT_USER)]
            cc += [CONTEXT_USER_DEFERRED, cookie]
            cookie += 1
            body = raw[8:off] + struct.pack('<%dQ' % (len(cc) + 1), len(cc), *cc) + \
                raw[off + 8 + 8 * nr:]
            w.add(w.header(SAMPLE, misc, body))
            w.nr_samples += 1
            so, size = f['stack']
            snaps.append((f['regs'], raw[so:so + size]))
        elif type < HEADER_ATTR or type == FINISHED_ROUND:
            w.add(raw)
    w.save(dst)
    return snaps
