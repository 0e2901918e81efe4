# SPDX-License-Identifier: GPL-2.0
"""The deferred-callchain fallback with SFrame, on real samples.

This host cannot defer callchains, so a real --call-graph dwarf recording of
the SFrame corpus (-O2, so without frame pointers, and -Wa,--gsframe) is
rewritten into a fp,defer,snapshot recording whose
PERF_RECORD_CALLCHAIN_DEFERRED never came: each sample ends its callchain
with PERF_CONTEXT_USER_DEFERRED and a cookie, and keeps its user regs and
stack.  The stitcher's fallback must then give, from the snapshot, the user
frames libdw gives for the same samples of the dwarf recording, where a
frame pointer walk gives far fewer."""
import unittest

import common
import cpu_record
import perf_counters
import perf_script
import sframe_corpus as corpus
from snapshot_rewrite import SNAPSHOT_REGS, dwarf_to_deferred, fp_walk

CASES = ((3, 'pie'), (2, 'nopie'))
# Each runs RECORD_MS of CPU time, sampled every 500 us of it (cpu_record):
# half the samples that gives is a floor no load can take away.
RECORD_MS = 300
MIN_SAMPLES = cpu_record.expected(RECORD_MS, 500) // 2


def prefix(short, chain):
    """@short's frames begin @chain (libdw moves callers' PCs back into the
    call: one byte apart)."""
    return len(short) <= len(chain) and all(
        a[1] == b[1] and b[0] - a[0] in (0, 1) for a, b in zip(short, chain))


class SFrameFallback(corpus.CorpusTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cases = {}
        for key, dwarf in cls.record_cases(CASES, RECORD_MS, 32768).items():
            defer = dwarf[:-len('.dwarf')] + '.defer'
            cls.cases[key] = (dwarf, defer, dwarf_to_deferred(dwarf, defer))

    def script(self, data, *extra):
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso'] +
                       list(extra))
        return perf_script.unwound(r.stdout), r.stderr

    def test_fallback_is_libdw(self):
        """Samples walked with SFrame have libdw's frames (libdw moves
        callers' PCs back into the call: one byte apart)."""
        for key, (dwarf, defer, snaps) in self.cases.items():
            with self.subTest(case=key):
                libdw, _ = self.script(dwarf, '--unwind-style', 'libdw')
                ours, err = self.script(defer)
                st = perf_counters.deferred(
                    common.run([common.PERF, 'report', '--stats', '-i', defer]).stdout)
                self.assertEqual(len(ours), len(libdw))
                self.assertGreaterEqual(len(ours), MIN_SAMPLES, cpu_record.too_few(
                    'fallback', len(ours), RECORD_MS, 500, common.PERF, dwarf))
                self.assertEqual(st['deferred samples'], len(ours))
                # A sample the kernel copied no user regs or stack for
                # (seen: one of 588) has nothing to walk: that one is
                # "[user stack lost]", as it must be.
                bare = len(corpus.bare_samples(dwarf))
                self.assertEqual(st['fell back (sframe)'] + st['fell back (fp)'],
                                 len(ours) - bare, st)
                self.assertEqual(st['user stack lost'], bare, st)
                # Only samples whose whole stack lacks .sframe (the dynamic
                # loader's and libc's start-up code) walk frame pointers.
                self.assertGreater(st['fell back (sframe)'], len(ours) * 0.95, st)
                self.assertIn('fell back to frame pointers, %d to SFrame' %
                              st['fell back (sframe)'], err)
                same = further = 0
                for o, d in zip(ours, libdw):
                    if len(o) == len(d) and prefix(d, o):
                        same += 1
                    elif len(o) > len(d) and prefix(d, o):
                        further += 1
                # Further: a PC in an epilogue after "pop %rbp", where libdw
                # cannot read the FP slot the CFI still names and stops
                # short; SFrame keeps the register (tests/sframe/test_unwind).
                self.assertLess(further, len(ours) // 20, (same, further, st))
                self.assertGreaterEqual(same + further, st['fell back (sframe)'],
                                        (same, further, st))

    def test_more_than_frame_pointers(self):
        """Frame pointers alone (the fallback without SFrame, replayed on the
        same snapshots) stop at the first function without one."""
        for key, (dwarf, defer, snaps) in self.cases.items():
            with self.subTest(case=key):
                ours, _ = self.script(defer)
                # A count first: an empty recording fails with why, not
                # in max() (nor passes the bounds on frame pointers).
                self.assertGreaterEqual(len(ours), MIN_SAMPLES, cpu_record.too_few(
                    'fallback', len(ours), RECORD_MS, 500, common.PERF, dwarf))
                fp = [fp_walk(regs, stack) for regs, stack in snaps]
                n_ours = sum(map(len, ours))
                n_fp = sum(map(len, fp))
                self.assertGreater(n_ours, 3 * n_fp, (n_ours, n_fp))
                # The 30 deep recursion, whole; callers in the executable.
                self.assertGreater(max(map(len, ours)), 30)
                self.assertLess(max(map(len, fp)), 10)
                callers = sum(any(f[1] == key[1] for f in c[1:]) for c in ours)
                self.assertGreater(callers, len(ours) * 0.9)

    def test_no_libdw_frames_appended(self):
        """The snapshot of a deferred recording is the fallback's: perf does
        not also unwind it with libdw after the frames it already has."""
        dwarf, defer, snaps = self.cases[CASES[0]]
        ours, _ = self.script(defer)
        libdw, _ = self.script(dwarf, '--unwind-style', 'libdw')
        self.assertEqual(len(ours), len(libdw))
        self.assertGreaterEqual(len(ours), MIN_SAMPLES, cpu_record.too_few(
            'fallback', len(ours), RECORD_MS, 500, common.PERF, dwarf))
        # Appended frames made every chain longer than libdw's; only the
        # few samples where libdw stops short in an epilogue may be.
        longer = [i for i, (o, d) in enumerate(zip(ours, libdw)) if len(o) > len(d)]
        self.assertLess(len(longer), len(ours) // 20, longer[:5])
        self.assertLessEqual(max(map(len, ours)), max(map(len, libdw)))

    def test_unwind_style_named(self):
        """With unwind styles named, the fallback is their walk: on the
        snapshot perf record takes (IP, SP and BP only) each style gives the
        frames it gives for the dwarf recording, and the samples are counted
        as "fell back (unwind-style)", none as SFrame or frame pointers."""
        dwarf, defer, snaps = self.cases[CASES[0]]
        small = defer + '.snapregs'
        dwarf_to_deferred(dwarf, small, regs_mask=SNAPSHOT_REGS)
        bare = len(corpus.bare_samples(dwarf))
        for style in ('libdw', 'sframe-only'):
            with self.subTest(style=style):
                want, _ = self.script(dwarf, '--unwind-style', style)
                ours, err = self.script(small, '--unwind-style', style)
                self.assertEqual(len(ours), len(want))
                self.assertGreaterEqual(len(ours), MIN_SAMPLES, cpu_record.too_few(
                    'fallback', len(ours), RECORD_MS, 500, common.PERF, dwarf))
                st = perf_counters.deferred(common.run(
                    [common.PERF, 'report', '--stats', '--unwind-style', style,
                     '-i', small]).stdout)
                self.assertEqual(st['fell back (unwind-style)'], len(ours) - bare, st)
                self.assertEqual(st['fell back (sframe)'] + st['fell back (fp)'], 0, st)
                self.assertEqual(st['user stack lost'], bare, st)
                self.assertIn('to SFrame, %d to the unwind styles named' %
                              st['fell back (unwind-style)'], err)
                # The bare samples aside, the same frames: the registers a
                # frame pointer walk needs are all the CFA rules of -O2 code
                # and libc's .eh_frame use.
                same = sum(o == w for o, w in zip(ours, want))
                self.assertGreaterEqual(same, len(ours) - bare - len(ours) // 50,
                                        (style, same, len(ours), bare))
                r = common.run([common.PERF, 'report', '--stdio', '--unwind-style', style,
                                '-i', small])
                self.assertRegex(r.stdout, r'# Deferred callchains: \d+ samples, 0 stitched, '
                                 r'0 stitched late, 0 frame pointer fallback, 0 SFrame '
                                 r'fallback, %d unwind-style fallback, %d user stack lost' % (
                                     len(ours) - bare, bare))

    def test_stats_block(self):
        dwarf, defer, snaps = self.cases[CASES[0]]
        out = common.run([common.PERF, 'report', '--stats', '-i', defer]).stdout
        st = perf_counters.deferred(out)
        sf = perf_counters.block(out, 'SFrame unwinding')
        self.assertEqual(sf['deferred snapshots'], st['fell back (sframe)'])
        self.assertGreater(sf['frames by SFrame'], 20 * sf['deferred snapshots'])
        self.assertEqual(sf['sections rejected'], 0)
        self.assertEqual(sf['samples unwound'], 0)
        # A sample the kernel copied no user regs or stack for is lost,
        # in both views alike (test_fallback_is_libdw).
        bare = len(corpus.bare_samples(dwarf))
        self.assertEqual(st['user stack lost'], bare, st)
        r = common.run([common.PERF, 'report', '--stdio', '-i', defer])
        self.assertRegex(r.stdout, r'# Deferred callchains: \d+ samples, 0 stitched, '
                         r'0 stitched late, %d frame pointer fallback, %d SFrame '
                         r'fallback, 0 unwind-style fallback, %d user stack lost' % (
                             st['fell back (fp)'], st['fell back (sframe)'], bare))


if __name__ == '__main__':
    unittest.main()
