# SPDX-License-Identifier: GPL-2.0
"""Damaged perf.data files: perf keeps every whole event and says what it lost.

Copies of the real 7.2 recordings (tests/fixtures) are damaged the way real
files get damaged (tests/damaged/damage.py): cut short, perf record killed
before it rewrote the header, a sample that does not parse, a malformed
PERF_RECORD_CALLCHAIN_DEFERRED in every event layout, an event header that
loses the framing.  Each test checks which samples come out, the warning,
the exit status and the perf report --stats counters (docs/robustness.md).
"""
import os
import shutil
import subprocess
import sys
import unittest
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
sys.path.insert(0, os.path.dirname(__file__))
import common                                   # noqa: E402
import cpu_record                               # noqa: E402
import perf_counters                            # noqa: E402
import perf_report                              # noqa: E402
import perf_script                              # noqa: E402
import damage as d                              # noqa: E402
from deferred_scenario import USER_TEXT        # noqa: E402
from perf_abi import (HEADER_DIR_FORMAT, HEADER_NRCPUS, ID_INDEX, MISC_GUEST_KERNEL,  # noqa: E402
                      SW_BPF_OUTPUT, S_CGROUP, S_ID, S_IP, S_TID, S_TIME)
from perfdata_writer import Evsel, Writer       # noqa: E402

PERF = common.PERF
UPSTREAM = common.PERF_UPSTREAM
DEFER_ST = os.path.join(common.REAL, 'defer-st.data')
GUEST = os.path.join(common.FIXTURES, 'guest-7.2')
# The recordings made here (Damaged.recording): two dwork threads, each
# until it has used DWORK_MS of user CPU time (its own measure), not the
# fixture workload's wall-time second, of which a loaded machine may give
# it little: cpu-clock samples CPU time, so the samples (and the -z
# recording's COMPRESSED2 records) are a property of the work.
DWORK_THREADS = 2
DWORK_MS = 200


def sample_times(out):
    """perf script -F tid,time: the samples, as [(tid, time)]."""
    return [(s.tid, s.time) for s in perf_script.samples(out, 'tid,time')]


class Damaged(common.PerfTestCase):
    def script(self, path, perf=PERF, pipe=False, fields='tid,time'):
        if pipe:
            with open(path, 'rb') as f:
                r = subprocess.run([perf, 'script', '-i', '-', '-F', fields], stdin=f,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, errors='replace')
        else:
            r = common.run([perf, 'script', '-i', path, '-F', fields], check=False)
        self.assertGreaterEqual(r.returncode, 0, '%s script killed by signal %d:\n%s' %
                                (perf, -r.returncode, r.stderr[-2000:]))
        return r

    def stats(self, path):
        r = common.run([PERF, 'report', '-i', path, '--stats'], check=False)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return perf_counters.block(r.stdout, 'Damaged input')

    def report(self, path):
        r = common.run([PERF, 'report', '-i', path, '--stdio', '--no-children'], check=False)
        self.assertGreaterEqual(r.returncode, 0, 'perf report killed by signal %d' %
                                -r.returncode)
        return r

    def original(self, path, pipe=False):
        return sample_times(self.script(path, pipe=pipe).stdout)

    def assertKept(self, got, orig, f, upto):
        """got is orig less the samples not wholly before offset upto."""
        n = len([e for e in d.whole_events_before(f, upto) if e[1] == d.SAMPLE])
        self.assertEqual(got, orig[:n])

    def assertUpstreamReads(self, path, expected):
        """perf inject of the damaged file writes a file perf-upstream reads
        without complaint, with the samples perf kept."""
        out = path + '.inj'
        for opts in ([], ['-b'], ['--merge-callchains']):
            r = common.run([PERF, 'inject'] + opts + ['-i', path, '-o', out], check=False)
            self.assertEqual(r.returncode, 0, 'inject %s: %s' % (opts, r.stderr[-2000:]))
            if os.path.exists(UPSTREAM):
                r = self.script(out, perf=UPSTREAM)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertNotIn('rror', r.stderr)
                self.assertEqual(len(sample_times(r.stdout)), expected, 'inject %s' % opts)

    # --- cut short -------------------------------------------------------

    def test_cut_inside_last_event(self):
        """The header's data size matches a cut inside the last event, no
        feature sections: perf-upstream 7.2 dies of SIGBUS (the remap at the
        event's page kept the window's size); ours keeps every whole event
        and names the cut event."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        for keep in (8, 16, 40):
            raw = d.inside_last_event(f, keep)
            p = self.write('inlast-%d.data' % keep, raw)
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertKept(sample_times(r.stdout), orig, f, len(raw))
            self.assertRegex(r.stderr, r'is truncated: the event at 0x[0-9a-f]+ \(\d+ bytes\) '
                             r'runs past the end of the data; read \d+ events')
            self.assertEqual(self.report(p).returncode, 0)
            self.assertEqual(self.stats(p)['partial last event'], 1)

    def test_cut_last_sample(self):
        """The same cut inside the last sample: that sample is not parsed."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        off, _, size = f.samples()[-1]
        p = self.write('inlast-sample.data', d.cut(f, off + size - 8, fix_size=True))
        got = sample_times(self.script(p).stdout)
        self.assertEqual(got, orig[:-1])

    def test_cut_short(self):
        """Data section shorter than the header says (a copy that stopped):
        upstream prints nothing ("incompatible file format"); ours reads up
        to the last whole event and says where the data ends."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        for frac in (0.5, 0.9):
            at = f.data_off + int(f.data_size * frac)
            p = self.write('cut%d.data' % (frac * 100), d.cut(f, at))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertKept(sample_times(r.stdout), orig, f, at)
            nr = len(d.whole_events_before(f, at))
            self.assertIn('is truncated: data ends at %#x, the header says %#x; read %d events'
                          % (at, f.data_end, nr), r.stderr)
            st = self.stats(p)
            self.assertEqual(st['bytes cut off'], f.data_end - at)
            self.assertEqual(st['events read'], nr)
        self.assertUpstreamReads(p, len(sample_times(r.stdout)))

    def test_cut_before_data(self):
        """Nothing at all to read: an error, saying why."""
        f = d.PerfFile(DEFER_ST)
        p = self.write('nodata.data', d.cut(f, f.data_off))
        r = self.script(p)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('nothing to read', r.stderr)

    def test_killed(self):
        """perf record killed: the header's data size is still 0 and no
        feature section was written.  Read to the end of the file, say what
        is missing."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        for at in (f.data_end, f.data_off + f.data_size // 2 + 3):
            p = self.write('killed.data', d.killed(f, at))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertKept(sample_times(r.stdout), orig, f, at)
            self.assertIn("the header's data size is 0", r.stderr)
            self.assertIn('without feature sections', r.stderr)
            self.assertRegex(r.stderr, r'read %d events up to the end of the file at %#x'
                             % (len(d.whole_events_before(f, at)), at))
            self.assertEqual(self.stats(p)['no header data size'], 1)
        self.assertUpstreamReads(p, len(sample_times(r.stdout)))

    def test_killed_nr_cpus(self):
        """perf record killed, so no HEADER_NRCPUS: the CPU count is that of
        the samples (MAX_NR_CPUS bounds them while reading, as upstream),
        said in the warning and in perf report --stats; perf report --sort
        cpu and perf script -F cpu and --cpu show what the intact file
        shows.  Without PERF_SAMPLE_CPU there is no count to take."""
        src = os.path.join(GUEST, 'mt-defer.data')
        f = d.PerfFile(src)
        p = self.write('killed-cpus.data', d.killed(f))
        r = self.script(p)
        self.assertIn('has no CPU count: 2 CPUs, from the samples', r.stderr)
        self.assertIn("CPU count (the samples' is used)", r.stderr)
        self.assertEqual(self.stats(p)['CPUs from the samples'], 2)
        for args in (['script', '-F', 'cpu,tid,time'], ['script', '-F', 'tid,time', '--cpu', '1'],
                     ['report', '--stdio', '--sort', 'cpu', '--no-children', '-g', 'none']):
            want = common.run([PERF] + args + ['-i', src]).stdout
            got = common.run([PERF] + args + ['-i', p]).stdout
            self.assertEqual(perf_report.body(got), perf_report.body(want), args)
        p = self.write('killed-nocpu.data', d.killed(d.PerfFile(DEFER_ST)))
        self.assertNotIn('CPU count:', self.script(p).stderr)
        self.assertEqual(self.stats(p)['CPUs from the samples'], 0)

    def test_pipe_nr_cpus(self):
        """A pipe without its HEADER_NRCPUS feature event (an old or
        third-party tool's stream): the CPU count is that of the samples,
        not the host's, as for a file without the feature section."""
        pipe = self.pipe_of('mt-defer')
        p = self.write('nocpus.pipe', d.without_feature_event(d.PerfFile(pipe), HEADER_NRCPUS))
        r = self.script(p, pipe=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('the pipe has no CPU count: 2 CPUs, from the samples', r.stderr)
        self.assertNotIn('no CPU count', self.script(pipe, pipe=True).stderr)
        # A file's count is its header's: the pipe header is tried on files too.
        self.assertNotIn('no CPU count', self.script(os.path.join(GUEST, 'mt-defer.data')).stderr)
        # No --cpu: perf checks it before a pipe has told any CPU count.
        for args in (['script', '-F', 'cpu,tid,time'],
                     ['report', '--stdio', '--sort', 'cpu', '--no-children', '-g', 'none']):
            outs = []
            for path in (pipe, p):
                with open(path, 'rb') as f:
                    outs.append(subprocess.run([PERF] + args + ['-i', '-'], stdin=f,
                                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                               text=True, check=True).stdout)
            self.assertEqual(perf_report.body(outs[1]), perf_report.body(outs[0]), args)
        with open(p, 'rb') as f:
            r = subprocess.run([PERF, 'report', '-i', '-', '--stats'], stdin=f, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
        self.assertEqual(perf_counters.block(r.stdout, 'Damaged input')['CPUs from the samples'], 2)

    def test_generated_every_cut(self):
        """A generated file cut at every 8th byte of its last events (and a
        few odd ones), the header's size matching the cut or not: exactly the
        whole samples come out, no crash."""
        w = Writer([Evsel(sample_type=S_IP | S_TID | S_TIME)], nr_cpus=1)
        w.comm(100, 100, 'w', time=1)
        for i in range(12):
            w.sample(USER_TEXT[0] + i, 100, 100, 1000 + i)
        full = w.save(os.path.join(self.tmp, 'gen.data'))
        f = d.PerfFile(full)
        orig = self.original(full)
        self.assertEqual(len(orig), 12)
        first = f.events[-3][0]
        for at in list(range(first, f.data_end, 8)) + [first + 3, f.data_end - 1]:
            for fix in (False, True):
                p = self.write('gen-cut.data', d.cut(f, at, fix_size=fix))
                got = sample_times(self.script(p).stdout)
                self.assertKept(got, orig, f, at)

    # --- samples and records that do not parse ---------------------------

    def test_sample_nr_past_event(self):
        """37 samples whose callchain nr runs past their event: upstream stops
        at the first one ("can't parse sample", exit 242, or a segfault with
        nr = 2^40); ours skips and counts them, the rest comes out."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        ss = f.samples()
        bad = ss[100::180][:37]
        for nr in (1 << 40, (1 << 61) - 1, 200):
            p = self.write('nr.data', d.bad_callchain_nr(f, bad, nr))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr)
            keep = [t for t, s in zip(orig, ss) if s not in bad]
            self.assertEqual(sample_times(r.stdout), keep)
            self.assertIn('37 samples could not be parsed, first at offset %#x' % bad[0][0],
                          r.stderr)
            self.assertEqual(self.stats(p)['unparsable samples'], 37)
        self.assertUpstreamReads(p, len(keep))

    def test_sample_nr_past_event_layouts(self):
        """The same in two-event, -a (dummy tracking event) and pipe files."""
        for name in ('two-defer', 'sys-defer'):
            src = os.path.join(GUEST, name + '.data')
            for path, is_pipe in ((src, False), (self.pipe_of(name), True)):
                f = d.PerfFile(path)
                orig = self.original(path, pipe=is_pipe)
                ss = f.samples()
                bad = [ss[len(ss) // 3], ss[len(ss) // 2]]
                p = self.write('bad-' + os.path.basename(path), d.bad_callchain_nr(f, bad))
                r = self.script(p, pipe=is_pipe)
                self.assertEqual(r.returncode, 0, r.stderr)
                # time order, not file order: the two bad ones are missing
                got = sample_times(r.stdout)
                self.assertEqual(len(got), len(orig) - 2, path)
                self.assertEqual(sum((Counter(orig) - Counter(got)).values()), 2, path)
                self.assertIn('2 samples could not be parsed', r.stderr)

    def test_bad_metadata_record(self):
        """A CPU_MAP record of an unknown map type (a flipped bit): upstream
        stops ("cpu_map__new_data unknown type", -ENOMEM, nothing printed);
        ours skips and counts it."""
        src = os.path.join(common.REAL, 'fp-st.data')
        f = d.PerfFile(src)
        orig = self.original(src)
        cpu_map = [e for e in f.events if e[1] == 74][0]
        p = self.write('cpumap.data', d.patch(f.raw, cpu_map[0] + 8, '<H', 6))
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sample_times(r.stdout), orig)
        self.assertIn('1 records could not be parsed, first at offset %#x' % cpu_map[0],
                      r.stderr)
        # (perf report does not read CPU_MAP: it has nothing to skip)

    def test_bad_deferred_record_layouts(self):
        """A PERF_RECORD_CALLCHAIN_DEFERRED cut to 16 bytes (no room for its
        sample_id): skipped in every layout, one event, two events, -a with
        the dummy event, pipe mode; upstream stops there (exit 242)."""
        for name in ('st-defer', 'two-defer', 'sys-defer'):
            src = os.path.join(GUEST, name + '.data')
            for path, is_pipe in ((src, False), (self.pipe_of(name), True)):
                f = d.PerfFile(path)
                orig = self.original(path, pipe=is_pipe)
                recs = [e for e in f.events if e[1] == 22]
                p = self.write('t16-' + os.path.basename(path),
                               d.truncated_records(f, [recs[len(recs) // 2]]))
                r = self.script(p, pipe=is_pipe)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertNotIn('processing failed', r.stderr)
                self.assertIn('bad CALLCHAIN_DEFERRED skipped', r.stderr)
                self.assertEqual(len(sample_times(r.stdout)), len(orig), path)

    # --- event headers that lose the framing -----------------------------

    def test_bad_header_resync(self):
        """An event header of size 0, not a multiple of 8, too large (framing
        the events after it) or of a type no perf has: upstream stops there
        (and loses what it had queued); ours finds the next offset where
        several events are plausible, skips the damaged bytes, says how many,
        and goes on: only the damaged sample is lost."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        ss = f.samples()
        i = len(ss) // 2
        ev = ss[i]
        for name, off, fmt, val in (('size0', 6, '<H', 0), ('size12', 6, '<H', 12),
                                    ('size65528', 6, '<H', 0xfff8),
                                    ('type33', 0, '<I', 33), ('type999', 0, '<I', 999)):
            p = self.write(name + '.data', d.patch(f.raw, ev[0] + off, fmt, val))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(sample_times(r.stdout), orig[:i] + orig[i + 1:], name)
            self.assertIn('bad event header at %#x: skipped %d bytes to %#x, about 1 events lost'
                          % (ev[0], ev[2], ev[0] + ev[2]), r.stderr)
            st = self.stats(p)
            self.assertEqual((st['bad event headers'], st['bytes skipped']), (1, ev[2]), name)
        self.assertUpstreamReads(p, len(orig) - 1)

    def test_bad_headers_many(self):
        """One bad header every 300 events: each one skipped alone."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        ss = f.samples()
        bad = ss[50::300]
        raw = f.raw
        for ev in bad:
            raw = d.patch(raw, ev[0] + 6, '<H', 0)
        p = self.write('many.data', raw)
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        keep = [t for t, s in zip(orig, ss) if s not in bad]
        self.assertEqual(sample_times(r.stdout), keep)
        self.assertIn('%d bad event headers: skipped %d bytes' %
                      (len(bad), sum(e[2] for e in bad)), r.stderr)

    def test_misaligned_after_odd_size(self):
        """A record whose size is not a multiple of 8 early in the data: the
        events after it are misaligned in the mapped file.  Ours copies
        each of them aligned (the copies live until ordered events delivers
        them) and prints every sample, as from the original file."""
        f = d.PerfFile(DEFER_ST)
        orig = self.original(DEFER_ST)
        p = self.write('odd.data', d.odd_size_record(f, 2))
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn('bad event header', r.stderr)
        self.assertEqual(sample_times(r.stdout), orig)
        r = self.script(p, fields='tid,time,ip,sym')
        self.assertEqual(r.stdout, self.script(DEFER_ST, fields='tid,time,ip,sym').stdout)

    def pipe_of(self, name):
        src = os.path.join(GUEST, name + '.data')
        pipe = os.path.join(self.tmp, name + '.pipe')
        with open(pipe, 'wb') as out:
            subprocess.run([PERF, 'inject', '-i', src, '-o', '-'], stdout=out,
                           stderr=subprocess.DEVNULL, check=True)
        return pipe

    def test_pipe_bad_header_resync(self):
        """Pipe mode, without seeking: the bytes read ahead to find the
        framing again are read again from there; only the damaged sample is
        lost (upstream: "bad event header size", the rest of the stream is
        lost).  A plausible but wrong size (0xfff8, 64 bytes too many): the
        header after it is not plausible, so the reader looks for the
        framing inside the event first, from the bytes it holds, as the file
        reader does (before: the events it framed were lost with it)."""
        for name in ('two-defer', 'sys-defer'):
            pipe = self.pipe_of(name)
            f = d.PerfFile(pipe)
            orig = self.original(pipe, pipe=True)
            ev = f.samples()[len(f.samples()) // 2]
            for what, off, fmt, val in (('size0', 6, '<H', 0), ('size12', 6, '<H', 12),
                                        ('type33', 0, '<I', 33),
                                        ('size65528', 6, '<H', 0xfff8),
                                        ('size+64', 6, '<H', ev[2] + 64)):
                p = self.write('%s-%s.pipe' % (name, what), d.patch(f.raw, ev[0] + off, fmt, val))
                r = self.script(p, pipe=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                got = sample_times(r.stdout)
                self.assertEqual(len(got), len(orig) - 1, (name, what))
                self.assertEqual(sum((Counter(orig) - Counter(got)).values()), 1)
                self.assertIn('pipe: bad event header at %#x: skipped %d bytes'
                              % (ev[0] - 16, ev[2]), r.stderr)
                st = self.stats(p)
                self.assertEqual((st['bad event headers'], st['bytes skipped']), (1, ev[2]),
                                 (name, what))

    def test_pipe_tracing_data(self):
        """The reader reads each event's next header ahead, but not after
        PERF_RECORD_HEADER_TRACING_DATA: its payload follows it in the
        pipe and the tool reads it itself."""
        pipe = os.path.join(self.tmp, 'tp.pipe')
        with open(pipe, 'wb') as out:
            r = subprocess.run([PERF, 'record', '-e', 'sched:sched_process_exec', '-o', '-',
                                '--', '/bin/true'], stdout=out, stderr=subprocess.PIPE)
        if r.returncode:
            self.skipTest('cannot record a tracepoint here')
        with open(pipe, 'rb') as f:
            r = subprocess.run([PERF, 'script', '-i', '-'], stdin=f, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, errors='replace')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('sched:sched_process_exec:', r.stdout)
        self.assertNotIn('could not be parsed', r.stderr)

    def test_pipe_cut(self):
        """A pipe cut inside an event: everything before it comes out, and
        the warning says where."""
        pipe = self.pipe_of('sys-defer')
        f = d.PerfFile(pipe)
        orig = self.original(pipe, pipe=True)
        ev = f.samples()[len(f.samples()) // 2]
        p = self.write('cut.pipe', f.raw[:ev[0] + 20])
        r = self.script(p, pipe=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = sample_times(r.stdout)
        before = len([s for s in f.samples() if s[0] < ev[0]])
        self.assertEqual(len(got), before)
        self.assertTrue(set(got) <= set(orig))
        self.assertIn('the pipe is truncated: the event at %#x (%d bytes)' % (ev[0] - 16, ev[2]),
                      r.stderr)

    # --- guest machines ---------------------------------------------------

    def test_guest_cgroup(self):
        """A CGROUP record and samples with a cgroup in a guest's cpumode
        (perf inject --guest-data copies a guest's so): perf keeps cgroups
        for the host only.  The record is skipped with a warning, the
        samples come out with cgroup "unknown"; before, perf script and
        perf report died on the guest machine's NULL perf_env (found by
        fuzz/perf-data.c)."""
        w = Writer(evsels=[Evsel(sample_type=S_IP | S_TID | S_TIME | S_ID | S_CGROUP)])
        # perf inject --guest-data's ID_INDEX: id 1 is guest 4242's vCPU 0
        w.add(w.header(ID_INDEX, 0, w.p('QQQqqqQ', 1, 1, 0, 0, -1, 4242, 0)))
        w.cgroup(7, '/machine.slice/guest', time=1000, misc=MISC_GUEST_KERNEL)
        for i in range(3):
            w.sample(0xffffffff81000000 + i, 4242, 4242, 2000 + i,
                     misc=MISC_GUEST_KERNEL, cgroup=7)
        p = w.save(os.path.join(self.tmp, 'guest-cgroup.data'))
        r = common.run([PERF, 'script', '-i', p, '-F', 'time,cgroup'], check=False)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertIn('CGROUP record of guest 4242 skipped: host cgroups only', r.stderr)
        self.assertEqual(r.stdout.split().count('unknown'), 3, r.stdout)
        rep = common.run([PERF, 'report', '-i', p, '--stdio', '--sort', 'cgroup'],
                         check=False)
        self.assertEqual(rep.returncode, 0, rep.stderr[-2000:])
        self.assertIn('unknown', rep.stdout)

    def test_bpf_output_without_sample_type(self):
        """A bpf-output attr with sample_type 0, in a file and in a pipe:
        perf gives such an event RAW, TIME, CPU and PERIOD, and parsed its
        8-byte samples as 24-byte ones, past their end (ASan:
        heap-buffer-overflow; found by fuzz/perf-data.c).  The samples are
        too short for that layout: skipped and counted; the rest is read."""
        w = Writer(evsels=[Evsel(config=SW_BPF_OUTPUT, sample_type=0)])
        w.comm(4242, 4242, 'bpf-out', time=1000)
        for i in range(3):
            w.sample(0, 4242, 4242, 2000 + i)
        for name, save, is_pipe in (('bpf.data', w.save, False),
                                    ('bpf.pipe', w.save_pipe, True)):
            p = os.path.join(self.tmp, name)
            save(p)
            # no TID in that layout: perf script refuses -F tid
            r = self.script(p, pipe=is_pipe, fields='time')
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertEqual(r.stdout.strip(), '', name)
            self.assertIn('3 samples could not be parsed', r.stderr)
        self.assertEqual(self.stats(os.path.join(self.tmp, 'bpf.data'))['unparsable samples'], 3)

    # --- an error that stops the reading ---------------------------------

    def test_stop_on_error(self):
        """More than the resynchronization bound (1 MiB) of zeros in the
        middle of the data: reading stops there, but what was queued
        (ordered events, the stitcher) comes out, the exit status is 0, the
        report says it is partial, and perf inject writes a file
        perf-upstream reads."""
        src = os.path.join(common.REAL, 'fp-st.data')
        f = d.PerfFile(src)
        orig = self.original(src)
        ev = f.samples()[len(f.samples()) // 3]
        raw = f.raw[:ev[0]] + bytes(1100 * 1024) + f.raw[ev[0] + 1100 * 1024:]
        p = self.write('zeros.data', raw)
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertKept(sample_times(r.stdout), orig, f, ev[0])
        self.assertIn('Processing stopped at offset %#x' % ev[0], r.stderr)
        self.assertIn('the output is partial', r.stderr)
        rep = self.report(p)
        self.assertEqual(rep.returncode, 0, rep.stderr)
        self.assertIn('partial report', rep.stdout)
        self.assertEqual(self.stats(p)['stopped on an error'], 1)
        self.assertUpstreamReads(p, len(sample_times(r.stdout)))

    # --- damaged metadata: the DSO's image ------------------------------

    def test_mmap2_name_bit_debuginfo_image(self):
        """One flipped bit in the workload's MMAP2 file name ("/in/workload"
        to "/in/workloae"), and a debuginfo-only copy of the workload under
        that name (a debug directory has such files): perf takes it as the
        DSO's image, its build-id matching.  Its .plt and .plt.got are
        SHT_NOBITS; the PLT synthesis read them (elf_getdata(): d_buf NULL):
        SIGSEGV in dso__synthesize_plt_symbols() <- dso__load() <-
        map__find_symbol(), upstream as before.  A debuginfo file is not an
        image: its program headers' file offsets are not the DSO's, its
        symbols would land at wrong addresses.  Now it is not taken as one:
        the report is the intact file's without an image of the workload
        (and no PLT is read from a section without data)."""
        f = d.PerfFile(DEFER_ST)
        raw, name = d.mmap2_filename_bit(f, b'/in/workload', 11, 0)
        self.assertEqual(name, b'/in/workloae')
        p = self.write('name-bit.data', raw)
        symfs = os.path.join(self.tmp, 'symfs')
        os.makedirs(os.path.join(symfs, 'in'), exist_ok=True)
        common.run(['objcopy', '--only-keep-debug', os.path.join(common.REAL, 'workload'),
                    os.path.join(symfs, 'in', 'workloae')])
        bid = os.path.join(self.tmp, 'name-bit-buildid')
        os.makedirs(bid, exist_ok=True)
        cmd = ['--buildid-dir', bid, 'report', '--symfs', symfs, '-i', p, '--stdio',
               '--no-children', '-g', 'none', '--sort', 'dso,sym']
        r = common.run([PERF] + cmd, check=False)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        # what the intact file gives without any image of the workload
        nosymfs = os.path.join(self.tmp, 'no-symfs')
        os.makedirs(nosymfs, exist_ok=True)
        intact = common.run([PERF, '--buildid-dir', bid, 'report', '--symfs', nosymfs,
                             '-i', DEFER_ST] + cmd[7:])
        self.assertEqual(perf_report.body_lines(r.stdout),
                         [x.replace('workload', 'workloae')
                          for x in perf_report.body_lines(intact.stdout)])
        self.assertIn('workloae', r.stdout)
        if os.path.exists(UPSTREAM):
            r = common.run([UPSTREAM] + cmd, check=False)
            self.assertEqual(r.returncode, -11, 'perf-upstream no longer crashes: %d' %
                             r.returncode)

    # --- damaged metadata: directories and compressed data ---------------

    def recording(self, name, opts, period='100000'):
        """A recording of the workload made here by our perf with opts
        (--threads: a directory; -z: compressed), once per class."""
        cache = self.__class__.__dict__.get('_recordings')
        if cache is None:
            cache = self.__class__._recordings = {}
        if name not in cache:
            out = os.path.join(self.tmp, name)
            r = common.run([PERF, 'record', '-N', '-q', '-e', 'cpu-clock', '-c', period] +
                           opts + ['-o', out, '--', cpu_record.dwork(self.tmp), 'threads',
                                   '-t', str(DWORK_THREADS), '-d', '10',
                                   '-U', str(DWORK_MS)], check=False)
            if r.returncode != 0:
                self.skipTest('perf record %s: %s' % (' '.join(opts), r.stderr[-500:]))
            cache[name] = out
        return cache[name]

    def copy_dir(self, src, name):
        dst = os.path.join(self.tmp, name)
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst)
        return dst

    def test_dir_format_damaged(self):
        """A --threads directory whose DIR_FORMAT version is garbage (or 0:
        the "single file" version): upstream asserted (util/data.c:122,
        exit 255) or read only the header's file (no sample, exit 0).  The
        data.N files are found by name, with a warning."""
        src = self.recording('threads.data', ['--threads'])
        orig = sample_times(self.script(src).stdout)
        self.assertGreater(len(orig), 0, cpu_record.too_few(
            'threads.data', len(orig), DWORK_THREADS * DWORK_MS, 100, PERF, src))
        f = d.PerfFile(os.path.join(src, 'data'))
        off, size = d.feature_section(f, HEADER_DIR_FORMAT)
        self.assertEqual(size, 8)
        for version, upstream_rc in ((0x3f00000000000001, 255), (0, 0)):
            p = self.copy_dir(src, 'dirfmt-%x.data' % version)
            self.write(os.path.join(p, 'data'), d.patch(f.raw, off, '<Q', version))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertEqual(sample_times(r.stdout), orig)
            self.assertIn('%s: DIR_FORMAT version %d (damaged?): reading data.N files' %
                          (p, version), r.stderr)
            if os.path.exists(UPSTREAM):
                r = self.script(p, perf=UPSTREAM)
                self.assertEqual((r.returncode, sample_times(r.stdout)), (upstream_rc, []))
            self.assertUpstreamReads(p, len(orig))

    def test_inject_threads_dir(self):
        """perf inject of an undamaged --threads directory: has_kcore_dir()
        took any directory for one with kcore_dir (its strncmp() test
        inverted), so the output was a directory of one file, "Failed to
        copy kcore", and the DIR_FORMAT it kept made every perf refuse it.
        Now one file, without DIR_FORMAT, that perf-upstream reads whole."""
        src = self.recording('threads.data', ['--threads'])
        orig = sample_times(self.script(src).stdout)
        out = os.path.join(self.tmp, 'threads.inj')
        r = common.run([PERF, 'inject', '-i', src, '-o', out], check=False)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertNotIn('kcore', r.stderr)
        self.assertTrue(os.path.isfile(out))
        for perf in (PERF, UPSTREAM):
            if os.path.exists(perf):
                r = self.script(out, perf=perf)
                self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                self.assertEqual(sorted(sample_times(r.stdout)), sorted(orig), perf)

    def compressed(self):
        """A -z recording with small ring buffers (-m 8): tens of
        COMPRESSED2 records, one zstd frame."""
        src = self.recording('z.data', ['-z', '-m', '8'], period='20000')
        f = d.PerfFile(src)
        comp = [e for e in f.events if e[1] == d.COMPRESSED2]
        if len(comp) <= 8:
            self.fail('%d COMPRESSED2 records; %s' % (len(comp), cpu_record.too_few(
                'z.data', len(sample_times(self.script(src).stdout)),
                DWORK_THREADS * DWORK_MS, 20, PERF, src)))
        return src, f, comp

    def test_compressed_cut(self):
        """A -z recording cut inside a COMPRESSED2 payload, or perf record
        killed there: HEADER_COMPRESSED was never written (features come
        last), so nothing was decompressed (0 samples; upstream
        "incompatible file format" for the cut copy).  zstd frames
        describe themselves: every payload before the cut is read."""
        src, f, comp = self.compressed()
        orig = sample_times(self.script(src).stdout)
        off, _, size = comp[len(comp) // 2]
        # what the records before the cut hold: the copy cut at its start
        before = sample_times(self.script(self.write('zat.data', d.cut(f, off))).stdout)
        self.assertGreater(len(before), 0)
        self.assertLess(len(before), len(orig))
        self.assertEqual(Counter(before) - Counter(orig), Counter())
        for name, raw in (('zcut.data', d.cut(f, off + size // 2)),
                          ('zkilled.data', d.killed(f, off + size // 2))):
            p = self.write(name, raw)
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertEqual(sorted(sample_times(r.stdout)), sorted(before), name)
            self.assertIn('%s: no HEADER_COMPRESSED (file cut?): decompressing as Zstd' % p,
                          r.stderr)
            self.assertEqual(self.stats(p)['partial last event'], 1)
            if os.path.exists(UPSTREAM):
                self.assertEqual(sample_times(self.script(p, perf=UPSTREAM).stdout), [])
            self.assertUpstreamReads(p, len(before))

    def test_compressed_data_size(self):
        """A damaged data_size in a COMPRESSED2 record (larger than the
        record, or smaller than its payload by more than the padding): the
        record was not decompressed, and with it the rest of the zstd
        frame.  Bounded by the record, every sample comes out."""
        src, f, comp = self.compressed()
        orig = sample_times(self.script(src).stdout)
        off, _, size = comp[len(comp) // 3]
        data_size = d.struct.unpack_from('<Q', f.raw, off + 8)[0]
        for bad in (data_size + 1000, max(data_size - 100, 0), 1 << 40):
            p = self.write('zds-%d.data' % bad, d.patch(f.raw, off + 8, '<Q', bad))
            r = self.script(p)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertEqual(sample_times(r.stdout), orig)
            self.assertIn('%#x: COMPRESSED2 data_size %d not in %d bytes: %d' %
                          (off, bad, size - 16, data_size), r.stderr)
            self.assertUpstreamReads(p, len(orig))

    def test_compressed_payload_damaged(self):
        """8 flipped bits in one COMPRESSED2 payload: the record does not
        decompress; it is skipped, and so are the records after it in the
        same zstd frame (perf record flushes, never ends, its frame: they
        need the lost history), each counted and named by offset; what came
        before comes out, exit 0 (upstream: exit 255).  perf inject writes
        the events it decompressed, never the damaged record (it copied
        it: perf-upstream read nothing of its output)."""
        src, f, comp = self.compressed()
        # the largest record of the middle half: its flips far apart
        i = max(range(len(comp) // 4, len(comp) * 3 // 4), key=lambda j: comp[j][2])
        off, _, size = comp[i]
        raw = bytearray(f.raw)
        for k in range(8):
            raw[off + 16 + (size - 24) * k // 8] ^= 1 << k
        # Flips in a block's contents may decode without an error (zstd
        # has no checksum per block): the first block header's type
        # (bits 1-2 of its first byte: a record after the first starts
        # with one, perf record flushes whole blocks) made the reserved
        # type 3, so that this record fails whatever it holds.
        raw[off + 16] |= 0x06
        p = self.write('zflip.data', bytes(raw))
        before = sample_times(self.script(self.write('zat.data', d.cut(f, off))).stdout)
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        got = sample_times(r.stdout)
        # every sample before it; what a damaged block decoded to without
        # an error (zstd has no checksum per block) may come out too
        self.assertEqual(Counter(before) - Counter(got), Counter())
        self.assertIn('%#x: couldn\'t decompress data' % off, r.stderr)
        self.assertIn('records could not be parsed, first at offset %#x' % off, r.stderr)
        self.assertGreaterEqual(self.stats(p)['unparsable records'], 1)
        self.assertUpstreamReads(p, len(got))

    def test_inject_pipe_damaged_feature(self):
        """A pipe whose CPU_TOPOLOGY and CMDLINE feature events have a
        flipped bit in their counts: perf inject copied them, and
        perf-upstream refused its output (processing failed, 0 samples).
        They are dropped and counted; the output reads whole."""
        src, f, comp = self.compressed()
        orig = sample_times(self.script(src).stdout)
        pipe = os.path.join(self.tmp, 'z.pipe')
        with open(pipe, 'wb') as out:
            r = subprocess.run([PERF, 'inject', '-i', src, '-o', '-'], stdout=out,
                               stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        pf = d.PerfFile(pipe)
        feats = {d.struct.unpack_from('<Q', pf.raw, o + 8)[0]: o
                 for o, t, _ in pf.events if t == d.HEADER_FEATURE}
        raw = bytearray(pf.raw)
        raw[feats[13] + 16 + 3] ^= 0x40         # CPU_TOPOLOGY: nr of core siblings
        raw[feats[11] + 16 + 2] ^= 0x10         # CMDLINE: nr of arguments
        p = self.write('zfeat.pipe', bytes(raw))
        self.assertEqual(sample_times(self.script(p, pipe=True).stdout), orig)
        if os.path.exists(UPSTREAM):
            self.assertEqual(sample_times(self.script(p, perf=UPSTREAM, pipe=True).stdout), [])
        for out in ('file', 'pipe'):
            o = os.path.join(self.tmp, 'zfeat.inj.' + out)
            with open(p, 'rb') as stdin, open(o if out == 'pipe' else os.devnull, 'wb') as so:
                r = subprocess.run([PERF, 'inject', '-i', '-', '-o',
                                    '-' if out == 'pipe' else o],
                                   stdin=stdin, stdout=so, stderr=subprocess.PIPE,
                                   text=True)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            self.assertIn('2 records could not be parsed', r.stderr)
            for perf in (PERF, UPSTREAM):
                if os.path.exists(perf):
                    r = self.script(o, perf=perf, pipe=out == 'pipe')
                    self.assertEqual(r.returncode, 0, r.stderr[-2000:])
                    self.assertEqual(sample_times(r.stdout), orig, (perf, out))

if __name__ == '__main__':
    unittest.main()
