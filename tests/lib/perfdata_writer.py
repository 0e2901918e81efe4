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
"""
import struct

from perf_abi import (ATTR_SIZE, CALLCHAIN_DEFERRED, CGROUP, COMM, COMM_EXEC, EXIT,
                      FINISHED_ROUND, FORK, F_COMM, F_COMM_EXEC,
                      F_DEFER_CALLCHAIN, F_DEFER_OUTPUT, F_DISABLED,
                      F_ENABLE_ON_EXEC, F_INHERIT, F_MMAP, F_MMAP2,
                      F_SAMPLE_ID_ALL, F_TASK, HEADER_ARCH, HEADER_ATTR,
                      HEADER_CMDLINE, HEADER_HOSTNAME, HEADER_NRCPUS,
                      HEADER_OSRELEASE, HEADER_VERSION, LOST, MAGIC,
                      MISC_KERNEL, MISC_USER, MMAP2, PERF_SAMPLE_REGS_ABI_64,
                      PERF_TYPE_SOFTWARE, SAMPLE, SW_CPU_CLOCK, S_ADDR,
                      S_CALLCHAIN, S_CGROUP, S_CPU, S_ID, S_IDENTIFIER, S_IP, S_PERIOD,
                      S_BRANCH_STACK, S_RAW, S_REGS_USER, S_STACK_USER, S_STREAM_ID,
                      S_TID, S_TIME)


# struct branch_flags: (bit, width) of each field on a little-endian host.
_BRANCH_FLAGS = ((0, 1), (1, 1), (2, 1), (3, 1), (4, 16), (20, 4), (24, 2), (26, 4),
                 (30, 3), (33, 31))


def _branch_flags_be(v):
    """The same bitfields as a big-endian host lays them out: from the top."""
    out = 0
    for pos, size in _BRANCH_FLAGS:
        out |= ((v >> pos) & ((1 << size) - 1)) << (64 - pos - size)
    return out


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

    def cgroup(self, id, path, pid=0, tid=0, time=0, cpu=0, evsel=None, misc=0):
        ev = self._evsel(evsel)
        body = self.p('Q', id) + self._str(path)
        body += self.id_trailer(ev, pid, tid, time, cpu)
        return self.add(self.header(CGROUP, misc, body))

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
               evsel=None, misc=None, regs=None, stack=None, id=None, cgroup=0,
               raw=b'', branches=()):
        """callchain: the raw u64 entries (context markers included).
        raw: the RAW bytes, as the producer wrote them (RAW; a u32 size, then
        the bytes, padded so that the two end on a u64 boundary);
        branches: (from, to, flags) of each branch entry (BRANCH_STACK, no
        hw_idx), flags as a little-endian host lays out struct branch_flags;
        regs: dict reg index -> value (REGS_USER); stack: bytes (STACK_USER);
        cgroup: the cgroup id (CGROUP; no field between it and STACK_USER
        is written)."""
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
        if st & S_RAW:
            data = bytes(raw) + b'\0' * (-(len(raw) + 4) % 8)
            b += self.p('I', len(data)) + data
        if st & S_BRANCH_STACK:
            b += self.p('Q', len(branches))
            for frm, to, flags in branches:
                b += self.p('QQQ', frm, to, flags if self.e == '<' else _branch_flags_be(flags))
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
        if st & S_CGROUP:
            b += self.p('Q', cgroup)
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

