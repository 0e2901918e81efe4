# SPDX-License-Identifier: GPL-2.0
"""perf inject --convert-callchain --unwind-style sframe: a --call-graph
dwarf recording of the SFrame corpus turned into plain callchains with
SFrame (upstream 7.1+ converts with libdw only).  The converted file must
print the stacks perf script --unwind-style sframe prints on the original,
and libdw's conversion's; it must be plain (no registers, no stack
copies) and much smaller.  The CPU time of both conversions is printed,
one run each, never asserted."""
import os
import resource
import sys
import unittest

import common
import cpu_record
import perf_script
import sframe_corpus as corpus


def stacks(text):
    """[[frame line]] per sample, from perf script -F ip,sym (no header
    line: a sample is its frame lines, then a blank line)."""
    return [[f.line for f in s.frames] for s in perf_script.samples(text, 'ip,sym')]


def cpu_run(cmd):
    """common.run(@cmd) and the CPU seconds (user + system) it took."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = common.run(cmd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def further(ours, libdw, last):
    """Does @ours go on past where @libdw stops, to the outermost frame
    @last of the whole stacks?  See test_unwind.test_hybrid_is_libdw: a
    sample in an epilogue after "pop %rbp", where libdw loses the FP."""
    return len(ours) > len(libdw) and ours[:len(libdw)] == libdw and ours[-1] == last


# The corpus runs RECORD_MS of CPU time, sampled every 500 us of it
# (cpu_record): half the samples that gives is a floor no load takes away.
RECORD_MS = 800
MIN_SAMPLES = cpu_record.expected(RECORD_MS, 500) // 2


class Convert(corpus.CorpusTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.data = corpus.record_dwarf(os.path.join(cls.dir, 'v3', 'pie'),
                                       os.path.join(cls.tmp, 'dwarf.data'), RECORD_MS, 16384)
        cls.conv, cls.cpu, cls.stderr = {}, {}, {}
        for style in ('sframe', 'libdw', 'sframe-only'):
            out = os.path.join(cls.tmp, style + '.data')
            r, cls.cpu[style] = cpu_run([common.PERF, 'inject', '--convert-callchain',
                                         '--unwind-style', style,
                                         '-i', cls.data, '-o', out])
            cls.conv[style], cls.stderr[style] = out, r.stderr
        sys.stderr.write('\nconvert-callchain CPU: sframe %.2f s, libdw %.2f s (%.1fx); '
                         'size %d -> %d bytes\n' %
                         (cls.cpu['sframe'], cls.cpu['libdw'],
                          cls.cpu['libdw'] / max(cls.cpu['sframe'], 1e-3),
                          os.path.getsize(cls.data), os.path.getsize(cls.conv['sframe'])))

    def script(self, data, *args):
        return stacks(common.run([common.PERF, 'script', '-i', data, '-F', 'ip,sym'] +
                                 list(args)).stdout)

    def test_same_as_script_sframe(self):
        """Inlined frames included: the conversion must not keep them (a
        function inlined into itself, handler(), was kept, then expanded
        again when read: twice the frames)."""
        want = self.script(self.data, '--unwind-style', 'sframe')
        got = self.script(self.conv['sframe'])
        self.assertGreaterEqual(len(want), MIN_SAMPLES, cpu_record.too_few(
            'perf script', len(want), RECORD_MS, 500, common.PERF, self.data))
        self.assertGreater(sum(len(s) for s in want) / len(want), 10, 'stacks too shallow')
        self.assertEqual(len(got), len(want))
        diff = [i for i in range(len(want)) if got[i] != want[i]]
        self.assertEqual(diff, [], 'first differing sample: %s\nvs\n%s' %
                         (got[diff[0]], want[diff[0]]) if diff else '')

    def test_style_honoured(self):
        """sframe-only stops at the first frame without .sframe (libc's):
        the style reached the unwinder."""
        sf = self.script(self.conv['sframe'])
        only = self.script(self.conv['sframe-only'])
        self.assertEqual(len(only), len(sf))
        # All but the last frame: where it is a signal trampoline without
        # .sframe, sframe-only cannot know it and moves its PC back by one.
        for i in range(len(sf)):
            self.assertEqual(only[i][:-1], sf[i][:len(only[i]) - 1], 'sample %d' % i)
        cut = sum(len(only[i]) < len(sf[i]) for i in range(len(sf)))
        self.assertGreater(cut, len(sf) * 9 // 10)
        self.assertIn('sframe-only: no .sframe row', self.stderr['sframe-only'])

    def test_as_libdw_conversion(self):
        """Equal, but where libdw stops short in an epilogue and SFrame
        goes on to the outermost frame (none in most runs)."""
        sf = self.script(self.conv['sframe'])
        dw = self.script(self.conv['libdw'])
        self.assertEqual(len(sf), len(dw))
        # A count first: an empty conversion fails with why, not in max().
        self.assertGreaterEqual(len(dw), MIN_SAMPLES, cpu_record.too_few(
            'libdw conversion', len(dw), RECORD_MS, 500, common.PERF, self.data))
        last = max(set(s[-1] for s in dw if s), key=[s[-1] for s in dw if s].count)
        diff = [i for i in range(len(dw)) if sf[i] != dw[i] and
                not further(sf[i], dw[i], last)]
        self.assertEqual(diff, [], 'first differing sample: %s\nvs\n%s' %
                         (sf[diff[0]], dw[diff[0]]) if diff else '')

    def test_plain_and_smaller(self):
        r = common.run([common.PERF, 'evlist', '-v', '-i', self.conv['sframe']])
        self.assertNotIn('STACK_USER', r.stdout)
        self.assertNotIn('REGS_USER', r.stdout)
        self.assertIn('CALLCHAIN', r.stdout)
        self.assertLess(os.path.getsize(self.conv['sframe']) * 10,
                        os.path.getsize(self.data))


if __name__ == '__main__':
    unittest.main()
