# SPDX-License-Identifier: GPL-2.0
"""Unwind real --call-graph dwarf recordings of the corpus with the sframe
styles and compare with libdw: "sframe" (hybrid) must give libdw's chains
exactly; "sframe-only" must give their prefix up to the first frame outside
the corpus binaries (libc has no .sframe), and stop cleanly there."""
import collections
import os
import shutil
import struct
import unittest

import common
import cpu_record
import perf_counters
import perf_script
import sframe_corpus as corpus
import sframe_dump
from snapshot_rewrite import dwarf_to_deferred

# (version, variant) pairs recorded; v3 in every link mode.
CASES = ((1, 'pie'), (2, 'pie'), (3, 'pie'), (3, 'nopie'), (3, 'static'))
# Each runs RECORD_MS of CPU time, sampled every 500 us of it (cpu_record):
# half the samples that gives is a floor no load can take away.
RECORD_MS = 400
MIN_SAMPLES = cpu_record.expected(RECORD_MS, 500) // 2


class Unwind(corpus.CorpusTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.data = cls.record_cases(CASES, RECORD_MS, 16384)

    def script(self, data, style):
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', style])
        return perf_script.unwound(r.stdout)

    def test_hybrid_is_libdw(self):
        for key, data in self.data.items():
            with self.subTest(case=key):
                libdw = self.script(data, 'libdw')
                ours = self.script(data, 'sframe')
                self.assertGreaterEqual(len(libdw), MIN_SAMPLES, cpu_record.too_few(
                    'libdw', len(libdw), RECORD_MS, 500, common.PERF, data))
                self.assertHybridIsLibdw(ours, libdw)

    def assertHybridIsLibdw(self, ours, libdw):
        """The hybrid style's chains are libdw's, but where libdw stops
        short and the hybrid walk goes on to the same outermost frame as
        the whole stacks: a sample in an epilogue after "pop %rbp", whose
        CFI still says the FP is saved, below the SP now; libdw cannot
        read that slot and loses the FP, the walk (SFrame or .eh_frame
        rows) keeps the register's value.  Whether a recording has such
        a sample depends on where it sampled: a few are allowed."""
        self.assertEqual(len(ours), len(libdw))
        last = collections.Counter(c[-1] for c in libdw if c).most_common(1)[0][0]
        further = [i for i in range(len(libdw))
                   if len(ours[i]) > len(libdw[i]) and
                   ours[i][:len(libdw[i])] == libdw[i] and ours[i][-1] == last]
        diff = [i for i in range(len(libdw))
                if ours[i] != libdw[i] and i not in further]
        self.assertEqual(diff, [], 'first differing sample: %s\nvs\n%s' %
                         (ours[diff[0]], libdw[diff[0]]) if diff else '')
        self.assertLess(len(further), len(libdw) // 20,
                        'beyond libdw in too many samples')

    def fde_ranges(self, path):
        return sframe_dump.fde_ranges(common.run([common.PERF, 'sframe', 'dump', path]).stdout)

    def test_sframe_only_up_to_first_frame_without_sframe(self):
        for (v, var), data in self.data.items():
            with self.subTest(case=(v, var)):
                own = {var, 'libcorpus.so'}
                # Non-PIE: PCs are vaddrs, and the static libc inside the
                # executable has no .sframe, so check the FDEs themselves.
                fdes = None if var == 'pie' else \
                    self.fde_ranges(os.path.join(self.dir, 'v%d' % v, var))

                def covered(f):
                    if f[1] not in own:
                        return False
                    return fdes is None or f[1] != var or \
                        any(a <= f[0] < b for a, b in fdes)
                libdw = self.script(data, 'libdw')
                ours = self.script(data, 'sframe-only')
                self.assertEqual(len(ours), len(libdw))
                reached = total = further = 0
                for o, d in zip(ours, libdw):
                    # Without CFI, the frame SFrame stops at could be a
                    # signal trampoline, whose PC libdw does not move back
                    # into a call: compare it to one byte.
                    if o and len(d) >= len(o) and o[-1][0] == d[len(o) - 1][0] - 1:
                        o = o[:-1] + [d[len(o) - 1]]
                    # libdw stopping short where SFrame goes on (a sample
                    # in an epilogue: see test_hybrid_is_libdw): whether
                    # a recording has one depends on where it sampled.
                    if d and len(o) > len(d) and o[:len(d)] == d:
                        further += 1
                        continue
                    self.assertEqual(o, d[:len(o)], 'not a prefix of libdw')
                    k = next((i for i, f in enumerate(d) if not covered(f)),
                             len(d) - 1)
                    # Past the first frame without .sframe and still
                    # libdw's frames (the prefix check above): rare, and
                    # bounded with the samples that go further below.
                    if len(o) > k + 1:
                        further += 1
                        continue
                    total += 1
                    reached += len(o) == k + 1
                # Frames in crt code or PLTs have no SFrame either: a few
                # samples stop before the first foreign DSO.
                self.assertGreater(reached, total * 0.95, (reached, total))
                self.assertLess(further, len(libdw) // 20,
                                'SFrame beyond libdw in too many samples')

    def test_deep_chains(self):
        """The 30 deep recursion shows up whole through SFrame."""
        data = self.data[(3, 'pie')]
        ours = self.script(data, 'sframe-only')
        # A count first: an empty recording fails with why, not in max().
        self.assertGreaterEqual(len(ours), MIN_SAMPLES, cpu_record.too_few(
            'sframe-only', len(ours), RECORD_MS, 500, common.PERF, data))
        self.assertGreater(max(len(c) for c in ours), 30)

    def test_invalid_sframe_is_warned_and_skipped(self):
        """A DSO whose .sframe is corrupt: a warning naming it, and the
        hybrid style still gives libdw's chains."""
        src = os.path.join(self.dir, 'v3')
        d = os.path.join(self.tmp, 'bad')
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(src, 'libcorpus.so'), d)
        sec, _ = corpus.section(os.path.join(src, 'pie'), self.tmp)
        data = bytearray(open(sec, 'rb').read())
        data[0] ^= 0xff
        with open(sec + '.bad', 'wb') as f:
            f.write(data)
        exe = os.path.join(d, 'pie')
        common.run(['objcopy', '--update-section', '.sframe=' + sec + '.bad',
                    os.path.join(src, 'pie'), exe])
        out = os.path.join(self.tmp, 'bad.data')
        corpus.record_dwarf(exe, out, 150, 16384, period_us=1000)
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        self.assertIn('%s: invalid .sframe (bad magic)' % exe, r.stderr)
        self.assertEqual(r.stderr.count('invalid .sframe'), 1, r.stderr)
        self.assertHybridIsLibdw(perf_script.unwound(r.stdout), self.script(out, 'libdw'))
        # The end-of-run block counts it and names it again, with why.
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['sections rejected'], 1, r.stderr)
        self.assertIn('\n    %s: bad magic\n' % exe, r.stderr)
        # perf report --stats unwinds nothing, but says what was rejected
        # only when something loaded the section: here nothing did.
        r = common.run([common.PERF, 'report', '--stats', '-i', out])
        self.assertNotIn('SFrame unwinding', r.stdout)

    def test_fde_moved_off_its_function_is_rejected(self):
        """The last lying mutant of bench/sframe/mutants.py: an FDE start
        moved 128 bytes back into the gap before its function.  The section
        is still valid SFrame; only the symbol table tells, and perf rejects
        it for that reason (perf sframe dump says so too)."""
        src = os.path.join(self.dir, 'v3', 'pie')
        sec, addr = corpus.section(src, self.tmp)
        with open(sec, 'rb') as f:
            data = bytearray(f.read())
        nr, fde_off = struct.unpack_from('<I', data, 8)[0], struct.unpack_from('<I', data, 20)[0]
        prev_end = 0
        for i in range(nr):
            pos = 28 + fde_off + i * 16    # v3 FDE: s64 PC-relative start, u32 size
            rel, size = struct.unpack_from('<qI', data, pos)
            start = addr + pos + rel
            if start - 128 >= prev_end and i:
                break
            prev_end = start + size
        else:
            self.skipTest('no FDE with 128 bytes free before it')
        struct.pack_into('<q', data, pos, rel - 128)
        with open(sec + '.moved', 'wb') as f:
            f.write(data)
        d = os.path.join(self.tmp, 'moved')
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(self.dir, 'v3', 'libcorpus.so'), d)
        exe = os.path.join(d, 'pie')
        common.run(['objcopy', '--update-section', '.sframe=' + sec + '.moved', src, exe])
        why = ('FDE takes in the start of a function not its own: function %d at %#x'
               % (i, start - 128))
        r = common.run([common.PERF, 'sframe', 'dump', '-s', exe])
        self.assertIn('%s: .sframe not used for unwinding: %s' % (exe, why), r.stderr)
        out = os.path.join(self.tmp, 'moved.data')
        corpus.record_dwarf(exe, out, 150, 16384, period_us=1000)
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        self.assertIn('%s: invalid .sframe (%s' % (exe, why), r.stderr)
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['sections rejected'], 1, r.stderr)
        self.assertHybridIsLibdw(perf_script.unwound(r.stdout), self.script(out, 'libdw'))

    def test_stats_block(self):
        """perf script prints the SFrame counters when SFrame unwound, and
        only then."""
        data = self.data[(3, 'pie')]
        libdw = self.script(data, 'libdw')
        # A sample with no user stack copied is unwound by no style.
        bare = len(corpus.bare_samples(data))
        self.assertEqual(sum(not c for c in libdw), bare)
        n = len(libdw) - bare
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'ip',
                        '--unwind-style', 'libdw'])
        self.assertNotIn('SFrame unwinding', r.stderr)
        for style in ('sframe', 'sframe-only'):
            with self.subTest(style=style):
                r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                                '--unwind-style', style])
                st = perf_counters.block(r.stderr, 'SFrame unwinding')
                frames = sum(len(c) for c in perf_script.unwound(r.stdout))
                self.assertEqual(st['samples unwound'], n, r.stderr)
                self.assertEqual(st['sections rejected'], 0)
                self.assertEqual(st['deferred snapshots'], 0)
                # Each sample's first frame is its registers; each caller
                # frame is counted once, by what found it.  perf script
                # may show a frame twice (a signal handler's), so the sum
                # is the frames shown but for a handful.
                by = st['samples unwound'] + st['frames by SFrame'] + \
                    st['frames by .eh_frame'] + st['frames by libdw after']
                self.assertLessEqual(by, frames, r.stderr)
                self.assertGreater(by, frames * 0.99, r.stderr)
                self.assertGreater(st['frames by SFrame'], frames / 2)
                self.assertEqual(st['frames by fp after'], 0)
                if style == 'sframe-only':
                    self.assertEqual(st['frames by libdw after'], 0)
                    self.assertEqual(st['frames by .eh_frame'], 0)
                    # libc's start code has no .sframe: every stack ends
                    # there, and perf says so once.
                    self.assertEqual(st['samples stopped early'], n)
                    self.assertEqual(r.stderr.count('sframe-only: no .sframe row for'),
                                     1, r.stderr)
                else:
                    # .eh_frame rows carry SFrame through libc's start code.
                    self.assertGreater(st['frames by .eh_frame'], n / 2)
                    self.assertLess(st['samples stopped early'], n / 20)
                    self.assertNotIn('sframe-only:', r.stderr)
                self.assertLess(st['samples without .sframe'], n / 20)
                self.assertNotIn('none of the', r.stderr)

    def test_failed_stack_copy(self):
        """A sample whose user stack the kernel could not copy (dyn_size
        0) has no user frames: perf script prints it with none and no
        SFrame counter counts it, the other samples unwind as before; as
        a deferred sample without its record it is "[user stack lost]"."""
        src = self.data[(3, 'pie')]
        before = self.script(src, 'sframe')
        n = len(before)
        bad = {n // 4, n // 2, 3 * n // 4}
        data = os.path.join(self.tmp, 'nostack.data')
        corpus.fail_stack_copies(src, data, bad)
        bare_before = corpus.bare_samples(src)
        bare = corpus.bare_samples(data)
        self.assertEqual(bare, bare_before | bad)
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        after = perf_script.unwound(r.stdout)
        # perf script's order is time order, not file order: the samples
        # made bare are the ones that lost their chains, whichever.
        self.assertEqual(len(after), n)
        lost = [i for i in range(n) if after[i] != before[i]]
        self.assertEqual([after[i] for i in lost], [[]] * len(lost))
        self.assertEqual(len(lost), len(bare - bare_before))
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['samples unwound'], n - len(bare), r.stderr)
        defer = os.path.join(self.tmp, 'nostack.defer')
        dwarf_to_deferred(data, defer)
        st = perf_counters.deferred(
            common.run([common.PERF, 'report', '--stats', '-i', defer]).stdout)
        self.assertEqual(st['deferred samples'], n)
        self.assertEqual(st['user stack lost'], len(bare), st)

    def test_styles_tried_in_order(self):
        """sframe-only,libdw: SFrame alone where the sample's first frame
        has .sframe, libdw for the samples whose first frame has none."""
        data = self.data[(3, 'pie')]
        only = self.script(data, 'sframe-only')
        libdw = self.script(data, 'libdw')
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe-only,libdw'])
        both = perf_script.unwound(r.stdout)
        self.assertEqual(len(both), len(only))
        bare = len(corpus.bare_samples(data))
        passed = same = 0
        for o, d, b in zip(only, libdw, both):
            if b != o:
                # Left to libdw: SFrame had no row for the first frame.
                self.assertEqual(len(o), 1)
                self.assertEqual(b, d)
                passed += 1
            same += len(o) == 1 and o == d
        # Only the samples SFrame unwound are counted as such.
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertLessEqual(st['samples unwound'], len(only) - passed)
        self.assertGreaterEqual(st['samples unwound'], len(only) - passed - same - bare)
        self.assertEqual(st['samples without .sframe'], 0)

    def test_report_stats_block(self):
        """perf report --stats resolves no callchains, and unwinds nothing
        only to count: with an sframe style its output has no SFrame block
        for a --call-graph dwarf recording.  The stdio report says in its
        header what unwinding did, as perf script's block does."""
        data = self.data[(3, 'pie')]
        for style in ('sframe', 'sframe-only'):
            with self.subTest(style=style):
                s = common.run([common.PERF, 'script', '-i', data, '-F', 'ip',
                                '--unwind-style', style])
                want = perf_counters.block(s.stderr, 'SFrame unwinding')
                r = common.run([common.PERF, 'report', '--stats', '-i', data,
                                '--unwind-style', style])
                self.assertNotIn('SFrame unwinding', r.stdout)
                r = common.run([common.PERF, 'report', '--stdio', '-i', data,
                                '--unwind-style', style])
                self.assertIn('# SFrame unwinding: %d samples, 0 deferred snapshots; '
                              'caller frames by .sframe %d, .eh_frame %d, libdw %d, '
                              'frame pointers 0; ' %
                              (want['samples unwound'], want['frames by SFrame'],
                               want['frames by .eh_frame'],
                               want['frames by libdw after']), r.stdout)
        r = common.run([common.PERF, 'report', '--stats', '-i', data,
                        '--unwind-style', 'libdw'])
        self.assertNotIn('SFrame unwinding', r.stdout)

    def test_no_sframe_counted_and_warned(self):
        """A program without .sframe: the counters say that no frame came
        from SFrame, the hybrid style says so once and gives libdw's
        chains, sframe-only says once that it cut the stacks."""
        d = os.path.join(self.tmp, 'nosf')
        os.makedirs(d, exist_ok=True)
        exe = os.path.join(d, 'nopie')
        common.run(['objcopy', '--remove-section', '.sframe',
                    os.path.join(self.dir, 'v3', 'nopie'), exe])
        out = corpus.record_dwarf(exe, os.path.join(self.tmp, 'nosf.data'),
                                  200, 16384)
        libdw = self.script(out, 'libdw')
        # 200 ms at a sample every 500 us of it (cpu_record): with none,
        # the checks below would pass on nothing or fail in max().
        self.assertGreaterEqual(len(libdw), cpu_record.expected(200, 500) // 2,
                                cpu_record.too_few('libdw', len(libdw), 200, 500,
                                                   common.PERF, out))
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        self.assertHybridIsLibdw(perf_script.unwound(r.stdout), libdw)
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        n = st['samples unwound']
        self.assertEqual(n, len(libdw) - len(corpus.bare_samples(out)))
        self.assertEqual(st['frames by SFrame'], 0, r.stderr)
        self.assertEqual(st['samples without .sframe'], n)
        self.assertGreater(st['frames by .eh_frame'] + st['frames by libdw after'],
                           n * 10)
        self.assertEqual(r.stderr.count(
            'SFrame: none of the %d samples unwound had a .sframe row' % n), 1,
            r.stderr)
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe-only'])
        self.assertEqual(max(len(c) for c in perf_script.unwound(r.stdout)), 1)
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['samples stopped early'], n)
        self.assertEqual(st['frames by SFrame'] + st['frames by .eh_frame'] +
                         st['frames by libdw after'], 0)
        self.assertEqual(r.stderr.count('sframe-only: no .sframe row for'), 1)
        self.assertIn(': user stacks end there', r.stderr)
        # Tried in order: sframe-only has nothing for these samples.
        self.assertEqual(self.script(out, 'sframe-only,libdw'), libdw)
        self.assertIn('SFrame: none of the %d samples unwound had a .sframe row' % n,
                      r.stderr)

    def test_lying_sections_rejected(self):
        """Sections whose bytes decode but contradict the file around
        them: each rejected with its reason, never unwound through."""
        src = os.path.join(self.dir, 'v3')
        d = os.path.join(self.tmp, 'lie')
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(src, 'libcorpus.so'), d)
        exe = os.path.join(d, 'pie')
        shutil.copy(os.path.join(src, 'pie'), exe)
        out = os.path.join(self.tmp, 'lie.data')
        corpus.record_dwarf(exe, out, 150, 16384)
        sec, _ = corpus.section(os.path.join(src, 'pie'), self.tmp)
        with open(sec, 'rb') as f:
            good = f.read()
        cases = (
            # The example: v3 flags cleared, 1 frame instead of 26.
            ({3: 0}, 'FDEs not sorted in a linked object'),
            # AMD64 made AArch64: its fixed RA offset gives it away, and
            # without that the file's machine does.
            ({4: 2}, 'fixed RA offset not the ABI\'s'),
            ({4: 2, 6: 0}, 'ABI AARCH64 (little endian), not the file\'s machine (62)'),
            ({6: 0xf0}, 'fixed RA offset not the ABI\'s'),
            ({8: good[8] - 1}, 'FDE count does not fill the FDE sub-section'),
        )
        for change, why in cases:
            with self.subTest(change=change):
                bad = bytearray(good)
                for off, val in change.items():
                    bad[off] = val
                with open(sec + '.lie', 'wb') as f:
                    f.write(bad)
                # Same build ID: perf reads it at the recorded path.
                common.run(['objcopy', '--update-section', '.sframe=' + sec + '.lie',
                            os.path.join(src, 'pie'), exe])
                r = common.run([common.PERF, 'script', '-i', out, '-F', 'ip',
                                '--unwind-style', 'sframe-only'])
                self.assertIn('%s: invalid .sframe (%s)' % (exe, why), r.stderr)
                st = perf_counters.block(r.stderr, 'SFrame unwinding')
                self.assertEqual(st['sections rejected'], 1, r.stderr)

    def test_unreadable_section_rejected(self):
        """A .sframe whose section header points past the end of the file
        is rejected with the reason and counted, like an invalid one."""
        src = os.path.join(self.dir, 'v3')
        d = os.path.join(self.tmp, 'eof')
        os.makedirs(d, exist_ok=True)
        shutil.copy(os.path.join(src, 'pie'), d)
        lib = os.path.join(d, 'libcorpus.so')
        with open(os.path.join(src, 'libcorpus.so'), 'rb') as f:
            elf = bytearray(f.read())
        shoff, = struct.unpack_from('<Q', elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3a)
        stroff, = struct.unpack_from('<Q', elf, shoff + shstrndx * shentsize + 0x18)
        for i in range(shnum):
            sh = shoff + i * shentsize
            name, = struct.unpack_from('<I', elf, sh)
            if elf[stroff + name:].startswith(b'.sframe\0'):
                struct.pack_into('<Q', elf, sh + 0x18, len(elf) + 0x1000)
        with open(lib, 'wb') as f:
            f.write(elf)
        out = os.path.join(self.tmp, 'eof.data')
        corpus.record_dwarf(os.path.join(d, 'pie'), out, 150, 16384)
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        why = 'section at offset %#x, ' % (len(elf) + 0x1000)
        self.assertIn('%s: invalid .sframe (%s' % (lib, why), r.stderr)
        self.assertEqual(r.stderr.count('invalid .sframe'), 1, r.stderr)
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['sections rejected'], 1, r.stderr)
        self.assertIn('\n    %s: %s' % (lib, why), r.stderr)
        self.assertIn('past the end of the file (%d bytes)' % len(elf), r.stderr)

if __name__ == '__main__':
    unittest.main()
