# SPDX-License-Identifier: GPL-2.0
"""Damaged metadata around the data section: the data is still read.

A perf.data file's feature sections (HEADER_CMDLINE, HEADER_NRCPUS, ...)
are optional metadata: perf record writes a table of (offset, size), one
entry per bit of the header's feature bitmap, in bit order, right after the
data, then the sections one after the other to the end of the file.  A
damaged section, an entry pointing past the end, a bitmap bit without a
section (or a section without a bit), a file cut inside the table: perf
upstream 7.2.13 refuses the whole file ("incompatible file format", 0
samples).  Ours skips what is damaged with a warning naming it, counts it
("damaged features" in perf report --stats) and reads every sample.

The damage helpers are in tests/damaged/damage.py (fuzz/mkseeds-perf-data.py
seeds the fuzzer with the same kinds); docs/robustness.md has a row per kind.
"""
import os
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
sys.path.insert(0, os.path.dirname(__file__))
import common                                   # noqa: E402
import perf_counters                            # noqa: E402
import perf_script                              # noqa: E402
import damage                                   # noqa: E402
import deferred_scenario                        # noqa: E402
from damage import (FeatFile, patch, attr_damage, cut_in_table, garbage_section,  # noqa: E402
                    lost_bit, section_offset, section_size, section_u32, spurious_bit)
from perf_abi import (HEADER_BRANCH_STACK, HEADER_BUILD_ID, HEADER_CMDLINE,  # noqa: E402
                      HEADER_COMPRESSED, HEADER_CPU_TOPOLOGY, HEADER_DIR_FORMAT,
                      HEADER_NRCPUS, HEADER_PMU_MAPPINGS, HEADER_TRACING_DATA)

PERF = common.PERF
UPSTREAM = common.PERF_UPSTREAM
GUEST = common.GUEST_FIXTURES


# The recordings damaged: one event, two, -a (tracepoints), deferred or not.
FILES = [os.path.join(common.REAL, 'defer-st.data'),
         os.path.join(GUEST, 'mt-defer.data'),
         os.path.join(GUEST, 'two-defer.data'),
         os.path.join(GUEST, 'sys-defer.data')]


class Metadata(common.PerfTestCase):
    def script(self, path, perf=PERF):
        r = common.run([perf, 'script', '-i', path, '-F', 'tid,time,event'], check=False)
        self.assertGreaterEqual(r.returncode, 0, '%s killed by signal %d:\n%s' %
                                (perf, -r.returncode, r.stderr[-2000:]))
        return r

    def samples(self, out):
        return [(s.tid, s.time, s.event)
                for s in perf_script.samples(out, 'tid,time,event')]

    def original(self, src):
        if not hasattr(self, '_orig'):
            self._orig = {}
        if src not in self._orig:
            r = self.script(src)
            self.assertEqual(r.returncode, 0, r.stderr)
            self._orig[src] = self.samples(r.stdout)
        return self._orig[src]

    def damaged_stats(self, path):
        r = common.run([PERF, 'report', '-i', path, '--stats'], check=False)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        return perf_counters.block(r.stdout, 'Damaged input')

    def check(self, src, name, raw, warning, damaged=1, upstream_fails=True, report=False):
        """Every sample of src comes out of the damaged copy raw, exit 0,
        with the warning (a regex) and damaged features counted; the
        headers (and with report, perf report) print without an error."""
        p = self.write(name, raw)
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertEqual(self.samples(r.stdout), self.original(src), name)
        self.assertRegex(r.stderr, warning)
        self.assertNotIn('incompatible file format', r.stderr)
        if damaged is not None:
            self.assertEqual(self.damaged_stats(p)['damaged features'], damaged, name)
        views = [['report', '--header-only', '-I'], ['script', '--header-only']]
        if report:
            views.append(['report', '--stdio', '--header', '-g', 'none'])
        for args in views:
            rr = common.run([PERF] + args + ['-i', p], check=False)
            self.assertEqual(rr.returncode, 0, '%s: %s' % (args, rr.stderr[-2000:]))
        if upstream_fails and os.path.exists(UPSTREAM):
            ru = self.script(p, perf=UPSTREAM)
            self.assertEqual(self.samples(ru.stdout), [], 'upstream reads %s now?' % name)
        return p, r

    def test_garbage_cmdline(self):
        """HEADER_CMDLINE's bytes replaced by garbage: skipped, named."""
        for src in FILES:
            f = FeatFile(src)
            off, size = f.sections[HEADER_CMDLINE]
            self.check(src, 'cmdline.data', garbage_section(f, HEADER_CMDLINE),
                       r'feature section CMDLINE \(at %#x, %d bytes\) does not parse: skipped'
                       % (off, size), report=True)

    def test_nrcpus_size_zero(self):
        """HEADER_NRCPUS with size 0: skipped; the CPU count comes from the
        samples' cpu field; CPU_TOPOLOGY, which needs it, is skipped too."""
        for src in FILES:
            f = FeatFile(src)
            p, r = self.check(src, 'nrcpus0.data', section_size(f, HEADER_NRCPUS, 0),
                              r'feature section NRCPUS \(at %#x, 0 bytes\) does not parse'
                              % f.sections[HEADER_NRCPUS][0], damaged=None, report=True)
            self.assertRegex(r.stderr, r'CPU_TOPOLOGY \(at 0x[0-9a-f]+, \d+ bytes\) needs the '
                             r'CPU count \(NRCPUS\): skipped')
            st = self.damaged_stats(p)
            self.assertGreaterEqual(st['damaged features'], 2)
            if 'sys-' in src or 'mt-' in src:     # the others' samples have no cpu
                self.assertRegex(r.stderr, r'has no CPU count: \d+ CPUs, from the samples')
                self.assertGreaterEqual(st['CPUs from the samples'], 1)

    def test_absurd_cpu_topology(self):
        """CPU_TOPOLOGY claiming 2^24 sibling cores: skipped; perf report
        -I prints the rest of the header."""
        for src in FILES:
            f = FeatFile(src)
            self.check(src, 'topo.data', section_u32(f, HEADER_CPU_TOPOLOGY, 0, 1 << 24),
                       r'feature section CPU_TOPOLOGY \(at 0x[0-9a-f]+, \d+ bytes\) '
                       r'does not parse: skipped')

    def test_offset_past_end(self):
        """Each feature's offset past the end of the file in turn: that one
        is skipped, the others and the data are read."""
        src = FILES[1]
        f = FeatFile(src)
        for feat in f.bits:
            past = len(f.raw) + 4096
            p, _ = self.check(src, 'past-%d.data' % feat, section_offset(f, feat, past),
                              r'feature section \S+ \(at %#x, %d bytes\) runs past the end '
                              r'of the file: skipped' % (past, f.sections[feat][1]),
                              damaged=None)
            # Those sized by the CPU count go with NRCPUS.
            self.assertEqual(self.damaged_stats(p)['damaged features'],
                             3 if feat == HEADER_NRCPUS else 1, feat)

    def test_spurious_bit(self):
        """A bitmap bit for a section the table does not have (a flipped
        bit): the table's sections chain one short of the bits, the bit
        whose section would not fit is dropped, every other feature reads
        its own section."""
        for src in FILES:
            f = FeatFile(src)
            for feat in (HEADER_TRACING_DATA, HEADER_BUILD_ID, HEADER_BRANCH_STACK,
                         HEADER_DIR_FORMAT, HEADER_COMPRESSED, 200):
                if feat in f.bits:
                    continue
                p, r = self.check(src, 'bit-%d.data' % feat, spurious_bit(f, feat),
                                  r'the feature bitmap has %d bits, its table %d sections'
                                  % (len(f.bits) + 1, len(f.bits)), damaged=None,
                                  upstream_fails=feat < 64)
                self.assertRegex(r.stderr, r'feature section \S+ is in the bitmap, not in '
                                 r'the table: skipped')
                # The header reads as the intact file's.
                want = common.run([PERF, 'report', '--header-only', '-i', src]).stdout
                got = common.run([PERF, 'report', '--header-only', '-i', p]).stdout
                self.assertEqual(header_body(got), header_body(want), feat)

    def test_lost_bit(self):
        """A section whose bit was cleared: the section is ignored, the
        features around it read their own."""
        src = FILES[1]
        f = FeatFile(src)
        for feat in (HEADER_CMDLINE, HEADER_PMU_MAPPINGS, f.bits[-1]):
            p, r = self.check(src, 'lost-%d.data' % feat, lost_bit(f, feat),
                              r'the feature bitmap has %d bits, its table %d sections'
                              % (len(f.bits) - 1, len(f.bits)), damaged=None,
                              upstream_fails=False)
            want = common.run([PERF, 'report', '--header-only', '-i', src]).stdout
            got = common.run([PERF, 'report', '--header-only', '-i', p]).stdout
            want = [ln for ln in header_body(want) if not ln.startswith('# missing')]
            got = [ln for ln in header_body(got) if not ln.startswith('# missing')]
            self.assertLessEqual(len(set(want) - set(got)), 2, feat)
        # HOSTNAME's bit: the string sections after it all fit each other's
        # place: those that cannot be told apart are skipped.
        p, r = self.check(src, 'lost-host.data', lost_bit(f, f.bits[0]), 'cannot be told '
                          'from its neighbours', damaged=None, upstream_fails=False)

    def test_cut_in_table(self):
        """A file cut inside its feature table (perf record killed while
        writing its features): the data is read without them."""
        for src in FILES:
            f = FeatFile(src)
            for n in (0, 1, len(f.bits) // 2, len(f.bits) - 1):
                raw = cut_in_table(f, n)
                p, r = self.check(src, 'cut-table-%d.data' % n, raw + b'\0' * 8,
                                  r'the feature table at %#x is cut off by the end of the '
                                  r'file \(%#x\): reading the data without its feature '
                                  r'sections' % (f.feat_off, len(raw) + 8), damaged=None)
                self.assertEqual(self.damaged_stats(p)['damaged features'], len(f.bits))

    def test_attrs(self):
        """A wrong attr_size, attrs offset or size, attr size field or ids
        section (upstream: "incompatible file format", or 0-50% of the
        samples): the attrs are found where perf record lays them out,
        between the ids and the data, and every sample is read."""
        for src in FILES:
            f = FeatFile(src)
            nr = f.attrs_size // f.attr_size
            for name, raw in attr_damage(f):
                p, r = self.check(src, 'attrs.data', raw,
                                  r'its attrs are %d of 144 bytes at %#x' % (nr, f.attrs_off),
                                  damaged=0, upstream_fails=False)
                self.assertEqual(self.damaged_stats(p)['attrs found by layout'], 1, name)
                ru = self.script(p, perf=UPSTREAM)
                if name != 'attr_size=144':     # upstream reads that one
                    self.assertLess(len(self.samples(ru.stdout)),
                                    len(self.original(src)), (src, name))

    def check_samples(self, src, name, raw, warning, counter, what=None):
        """Every sample of src comes out of the damaged copy raw as in
        src, exit 0, with the warning (a regex) and the counter of perf
        report --stats's "Damaged input" at 1 or more; @what names the
        case in a failure (default: @name)."""
        p = self.write(name, raw)
        name = what or name
        r = self.script(p)
        self.assertEqual(r.returncode, 0, '%s: %s' % (name, r.stderr[-2000:]))
        self.assertEqual(self.samples(r.stdout), self.original(src), name)
        self.assertRegex(r.stderr, warning, name)
        self.assertGreaterEqual(self.damaged_stats(p)[counter], 1, name)
        return p, r

    def test_sample_type(self):
        """An attr's sample_type with a bit its samples do not have, or
        without one they have (PHYS_ADDR set: upstream and before skipped
        every sample; CPU, ADDR, ID...: misread or refused): the samples
        pick the layout they parse with, one bit away; in the files of
        several attrs too (two-defer: two events recorded alike;
        sys-defer: the dummy event's records carry the deferred
        callchains, their ids found from the records' sample_id)."""
        for src in FILES:
            f = FeatFile(src)
            for bit in ('TIME', 'CPU', 'ADDR', 'PERIOD', 'ID', 'IDENTIFIER', 'READ',
                        'CALLCHAIN', 'RAW', 'PHYS_ADDR', 'CGROUP', 'DATA_PAGE_SIZE', 1 << 40):
                if bit == 1 << 40:
                    name = 'bit 40'
                    off = damage.attrs(f)[0][0]
                    raw = patch(f.raw, off + 24, '<Q', damage.attrs(f)[0][1] | bit)
                else:
                    name = bit
                    raw = damage.sample_type_bit(f, 0, bit)
                self.check_samples(src, 'st.data', raw,
                                   r'the samples of attr 0 \(\S+\) do not parse with its '
                                   r'sample_type %#x: \d+ of the first \d+ do with %#x'
                                   % (struct.unpack_from('<Q', raw, damage.attrs(f)[0][0] + 24)[0],
                                      damage.attrs(f)[0][1]),
                                   'sample_types from samples')

    def pipe(self, src):
        """@src as a pipe stream (perf inject -o -), in a file: its bytes,
        and the offsets of its HEADER_ATTR events."""
        r = subprocess.run([PERF, 'inject', '-i', src, '-o', '-'], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, check=True)
        raw, pos, attrs = r.stdout, 16, []
        while pos + 8 <= len(raw):
            typ, _, size = struct.unpack_from('<IHH', raw, pos)
            if typ == 9 or size < 8:                # the first sample
                break
            if typ == 64:                           # PERF_RECORD_HEADER_ATTR
                attrs.append(pos)
            pos += size
        return raw, attrs

    def test_pipe_sample_type(self):
        """The same in a pipe, whose attrs come as HEADER_ATTR events: the
        first sample no attr parses as it says (read as it comes, nothing
        read ahead before) has the file's check run on it and on the
        bytes read ahead after it (upstream and before: 0% of a
        one-event pipe for most bits).  The dummy event of -a has no
        samples: test_sample_id_of_sampleless_attr."""
        for src in FILES:
            raw, attrs = self.pipe(src)
            self.assertTrue(attrs, src)
            orig = self.write('orig.pipe', raw)
            r = self.script(orig)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            want = self.samples(r.stdout)
            self.assertNotIn('sample_type', r.stderr)
            for i, off in enumerate(attrs):
                typ, _, config, _, st = struct.unpack_from('<IIQQQ', raw, off + 8)
                if (typ, config) == (1, 9):             # PERF_COUNT_SW_DUMMY
                    continue
                for bit in ('TIME', 'CPU', 'ADDR', 'PERIOD', 'ID', 'IDENTIFIER', 'READ',
                            'RAW', 'PHYS_ADDR', 'CGROUP', 'DATA_PAGE_SIZE'):
                    name = '%s attr %d %s' % (os.path.basename(src), i, bit)
                    p = self.write('st.pipe', patch(raw, off + 8 + 24, '<Q',
                                                    st ^ (1 << damage.SAMPLE_TYPE_BITS[bit])))
                    r = self.script(p)
                    self.assertEqual(r.returncode, 0, '%s: %s' % (name, r.stderr[-2000:]))
                    self.assertEqual(self.samples(r.stdout), want, name)
                    self.assertRegex(r.stderr, r'the samples of attr \d+ \(\S+\) do not parse '
                                     r'with its sample_type', name)
                    self.assertGreaterEqual(
                        self.damaged_stats(p)['sample_types from samples'], 1, name)

    def test_sample_type_other_byte_order(self):
        """The same in a file of the other byte order (a big-endian
        machine's, generated): the samples checked u64 by u64 as the
        session swaps them, their u32 pairs (CPU and reserved, RAW's size)
        taken in that order (before: swapped files were left as they were,
        0% for most bits)."""
        sc = deferred_scenario.scenario(threads=4, samples=600, seed=25)
        for several in (False, True):
            src = self.write('be.data', b'')
            deferred_scenario.write_scenario(sc, src, endian='>', dummy=several)
            want = self.original(src)
            self.assertGreater(len(want), 500)
            with open(src, 'rb') as f:
                raw = f.read()
            attr_size, attrs_off = struct.unpack_from('>QQ', raw, 16)
            st = struct.unpack_from('>Q', raw, attrs_off + 24)[0]
            # Not READ: the generator's read_format is 0, so a READ block
            # is one u64 as PERIOD is, and either layout parses (perf
            # record writes read_format ID, LOST: three u64s).
            for bit in ('TIME', 'CPU', 'ADDR', 'PERIOD', 'ID', 'IDENTIFIER',
                        'RAW', 'PHYS_ADDR', 'CGROUP', 'DATA_PAGE_SIZE'):
                name = '%s %s' % ('-a' if several else 'one event', bit)
                damaged = patch(raw, attrs_off + 24, '>Q',
                                st ^ (1 << damage.SAMPLE_TYPE_BITS[bit]))
                self.check_samples(src, 'be-st.data', damaged,
                                   r'the samples of attr 0 \(\S+\) do not parse with '
                                   r'its sample_type', 'sample_types from samples', name)
            del self._orig[src]

    def test_sample_type_of_sampleless_attr(self):
        """-a's dummy event has no samples; its records' sample_id is laid
        out like the other attrs': a sample_id bit flipped in it is taken
        back from theirs (upstream: "non matching sample_type" for
        IDENTIFIER, misread records for the others)."""
        src = FILES[3]
        f = FeatFile(src)
        for bit in ('IDENTIFIER', 'CPU', 'TIME', 'STREAM_ID'):
            self.check_samples(src, 'dummy.data', damage.sample_type_bit(f, 1, bit),
                               r'attr 1 \(\S+\) has no samples to check its sample_type',
                               'sample_types from samples')

    def test_sample_id_of_sampleless_attr(self):
        """The dummy event of -a, in a file and in a pipe: a sample_id bit
        flipped in it, its records (the deferred callchains among them)
        are read as they were, every sample stitched as in the intact
        recording.  A pipe's attrs come before any sample, so the first
        records are checked as they come: one that is the dummy's by its
        id, does not parse with its sample_id fields and does with the
        other attrs' (before: 983 of 983 deferred samples lost their user
        stack, for each bit)."""
        src = FILES[3]
        fields = 'tid,time,event,ip,sym'
        raw, attrs = self.pipe(src)
        for mode, data, off in (('file', FeatFile(src).raw, damage.attrs(FeatFile(src))[1][0]),
                                ('pipe', raw, attrs[1] + 8)):
            typ, _, config, _, st = struct.unpack_from('<IIQQQ', data, off)
            self.assertEqual((typ, config), (1, 9), 'attr 1 is not the dummy event')
            want = common.run([PERF, 'script', '-i', self.write('orig.' + mode, data),
                               '-F', fields]).stdout
            self.assertIn('\n', want)
            for bit in ('TID', 'TIME', 'ID', 'STREAM_ID', 'CPU', 'IDENTIFIER'):
                name = '%s %s' % (mode, bit)
                p = self.write('dummy.' + mode, patch(data, off + 24, '<Q', st ^
                                                      (1 << damage.SAMPLE_TYPE_BITS[bit])))
                r = common.run([PERF, 'script', '-i', p, '-F', fields], check=False)
                self.assertEqual(r.returncode, 0, '%s: %s' % (name, r.stderr[-2000:]))
                self.assertTrue(r.stdout == want, name)
                self.assertRegex(r.stderr, r'attr 1 \(dummy\S*\) (has no samples to check|'
                                 r'do not parse with) its sample_type', name)
                self.assertNotIn('user stack lost', r.stderr, name)
                self.assertGreaterEqual(
                    self.damaged_stats(p)['sample_types from samples'], 1, name)

    def test_ids(self):
        """Several attrs, one ids section or all of them damaged (zeroed,
        a bit flipped in each id): every sample's id is no attr's, so
        upstream and before skipped them.  The ids come from the samples:
        by layout, or by the order the kernel gave them in; with -a
        (sys-defer) the dummy event's from its records' sample_id."""
        for src in FILES[2:]:
            f = FeatFile(src)
            for name, raw in (('zero0', damage.ids_zeroed(f, [0])),
                              ('flip0', damage.ids_flipped(f, 0)),
                              ('zero', damage.ids_zeroed(f))):
                self.check_samples(src, 'ids-%s.data' % name, raw,
                                   r'no sample has an id of attr 0 \(\S+\)',
                                   'attr ids from samples')
                if os.path.exists(UPSTREAM):
                    ru = self.script(self.write('ids.data', raw), perf=UPSTREAM)
                    self.assertLess(len(self.samples(ru.stdout)), len(self.original(src)))

    def test_ids_other_byte_order(self):
        """The same in a file of the other byte order (generated, two
        events recorded alike): the whole data is scanned u64 by u64 as
        the session swaps it (before: a swapped file's ids were not looked
        for, 0 of 600 samples read)."""
        sc = deferred_scenario.scenario(threads=4, samples=600, seed=26, two_events=True)
        src = self.write('be-ids-src.data', b'')
        deferred_scenario.write_scenario(sc, src, endian='>')
        want = self.original(src)
        self.assertGreater(len(want), 500)
        with open(src, 'rb') as f:
            raw = f.read()
        attr_size, attrs_off = struct.unpack_from('>QQ', raw, 16)
        # attr 0's ids zeroed (both zeroed: the ids of the two events
        # recorded alike cannot be told apart, in either byte order)
        ids_off, ids_size = struct.unpack_from('>QQ', raw, attrs_off + attr_size - 16)
        damaged = raw[:ids_off] + bytes(ids_size) + raw[ids_off + ids_size:]
        self.check_samples(src, 'be-ids.data', damaged,
                           r'no sample has an id of attr 0 \(\S+\)', 'attr ids from samples')
        del self._orig[src]

    def test_clock_data_past_2262(self):
        """HEADER_CLOCK_DATA whose TOD reference time is past INT64_MAX ns
        (a `perf record -k` file, one flipped high bit): skipped with the
        value named; perf report -I prints the rest of the header.
        Upstream takes it and overflows the signed second counts it makes
        of it (UBSan, fuzz/regressions/perf-data)."""
        p = os.path.join(common.TOP, 'fuzz', 'regressions', 'perf-data',
                         'ubsan-clock-data-reference-past-2262')
        r = self.script(p)
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])
        self.assertTrue(self.samples(r.stdout), r.stdout)
        self.assertRegex(r.stderr, r'CLOCK_DATA: reference time 18446744073709551600 ns '
                         r'\(TOD\), \d+ ns \(clockid 1\) is past the year 2262')
        self.assertRegex(r.stderr, r'feature section CLOCK_DATA \(at 0x[0-9a-f]+, 24 bytes\) '
                         r'does not parse: skipped')
        self.assertEqual(self.damaged_stats(p)['damaged features'], 1)
        rr = common.run([PERF, 'report', '--header-only', '-I', '-i', p], check=False)
        self.assertEqual(rr.returncode, 0, rr.stderr[-2000:])
        self.assertIn('# clockid frequency', rr.stdout)
        self.assertNotIn('# reference time', rr.stdout)

    def test_inject_reads_in_upstream(self):
        """perf inject of a file with damaged metadata writes only what it
        understood: pristine perf reads every sample of its output."""
        src = FILES[2]
        f = FeatFile(src)
        for name, raw in (('cmdline', garbage_section(f, HEADER_CMDLINE)),
                          ('bit', spurious_bit(f, HEADER_BRANCH_STACK)),
                          ('cut', cut_in_table(f, 3)),
                          ('attrs', patch(f.raw, 24, '<Q', 0)),
                          ('sample_type', damage.sample_type_bit(f, 0, 'PHYS_ADDR')),
                          ('ids', damage.ids_zeroed(f, [0]))):
            p = self.write('inj-%s.data' % name, raw)
            out = p + '.out'
            r = common.run([PERF, 'inject', '-i', p, '-o', out], check=False)
            self.assertEqual(r.returncode, 0, r.stderr[-2000:])
            if os.path.exists(UPSTREAM):
                ru = self.script(out, perf=UPSTREAM)
                self.assertEqual(ru.returncode, 0, ru.stderr[-2000:])
                self.assertEqual(self.samples(ru.stdout), self.original(src), name)


def header_body(out):
    """perf report --header-only's lines that describe the recording (not
    the file's time or the damage)."""
    return [ln for ln in out.splitlines()
            if ln.startswith('# ') and not ln.startswith(('# captured on', '# WARNING'))]


if __name__ == '__main__':
    unittest.main()
