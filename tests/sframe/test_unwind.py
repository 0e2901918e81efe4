# SPDX-License-Identifier: GPL-2.0
"""Unwind real --call-graph dwarf recordings of the corpus with the sframe
styles and compare with libdw: "sframe" (hybrid) must give libdw's chains
exactly; "sframe-only" must give their prefix up to the first frame outside
the corpus binaries (libc has no .sframe), and stop cleanly there."""
import collections
import os
import re
import shutil
import tempfile
import unittest

import common
import corpus

HEAD = re.compile(r'^\S.*:\s*$|^\s*\S+\s+\d+\s')
FRAME = re.compile(r'^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$')

# (version, variant) pairs recorded; v3 in every link mode.
CASES = ((1, 'pie'), (2, 'pie'), (3, 'pie'), (3, 'nopie'), (3, 'static'))


def chains(text):
    """[[(ip, dso basename)]] per sample, from perf script -F tid,ip,sym,dso."""
    out = []
    cur = None
    for line in text.splitlines():
        m = FRAME.match(line)
        if m and m.group(3) == 'inlined':
            continue  # perf's srcline inlining, not an unwound frame
        if m and cur is not None:
            cur.append((int(m.group(1), 16), os.path.basename(m.group(3))))
        elif line.strip():
            cur = []
            out.append(cur)
    return out


class Unwind(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        common.need(common.PERF)
        cls.dir = corpus.build()
        cls.tmp = tempfile.mkdtemp(prefix='sframe-unw-')
        cls.data = {}
        for v, var in CASES:
            out = os.path.join(cls.tmp, 'v%d-%s.data' % (v, var))
            cls.data[(v, var)] = corpus.record_dwarf(
                os.path.join(cls.dir, 'v%d' % v, var), out, 400, 16384)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def script(self, data, style):
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', style])
        return chains(r.stdout)

    def test_hybrid_is_libdw(self):
        for key, data in self.data.items():
            with self.subTest(case=key):
                libdw = self.script(data, 'libdw')
                ours = self.script(data, 'sframe')
                self.assertGreater(len(libdw), 100)
                self.assertEqual(len(ours), len(libdw))
                # Where libdw stops short and SFrame goes on to the same
                # outermost frame as the whole stacks: a sample in an
                # epilogue after "pop %rbp", whose CFI still says the FP
                # is saved, below the SP now; libdw cannot read that slot
                # and loses the FP, SFrame keeps the register's value.
                last = collections.Counter(c[-1] for c in libdw if c).most_common(1)[0][0]
                further = [i for i in range(len(libdw))
                           if len(ours[i]) > len(libdw[i]) and
                           ours[i][:len(libdw[i])] == libdw[i] and ours[i][-1] == last]
                diff = [i for i in range(len(libdw))
                        if ours[i] != libdw[i] and i not in further]
                self.assertEqual(diff, [], 'first differing sample: %s\nvs\n%s' %
                                 (ours[diff[0]], libdw[diff[0]]) if diff else '')
                self.assertLess(len(further), len(libdw) // 20,
                                'SFrame beyond libdw in too many samples')

    def fde_ranges(self, path):
        out = common.run([common.PERF, 'sframe', 'dump', path]).stdout
        return [(int(a, 16), int(a, 16) + int(n)) for a, n in
                re.findall(r'pc = (0x[0-9a-f]+), size = (\d+) bytes', out)]

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
                reached = total = 0
                for o, d in zip(ours, libdw):
                    # Without CFI, the frame SFrame stops at could be a
                    # signal trampoline, whose PC libdw does not move back
                    # into a call: compare it to one byte.
                    if o and len(d) >= len(o) and o[-1][0] == d[len(o) - 1][0] - 1:
                        o = o[:-1] + [d[len(o) - 1]]
                    self.assertEqual(o, d[:len(o)], 'not a prefix of libdw')
                    k = next((i for i, f in enumerate(d) if not covered(f)),
                             len(d) - 1)
                    self.assertLessEqual(len(o), k + 1)
                    total += 1
                    reached += len(o) == k + 1
                # Frames in crt code or PLTs have no SFrame either: a few
                # samples stop before the first foreign DSO.
                self.assertGreater(reached, total * 0.95, (reached, total))

    def test_deep_chains(self):
        """The 30 deep recursion shows up whole through SFrame."""
        data = self.data[(3, 'pie')]
        ours = self.script(data, 'sframe-only')
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
        common.run([common.PERF, 'record', '-q', '-e', 'cpu-clock:u', '-F', '1000',
                    '--call-graph', 'dwarf,16384', '-o', out, '--', exe, '150'])
        r = common.run([common.PERF, 'script', '-i', out, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', 'sframe'])
        self.assertIn('%s: invalid .sframe (bad magic)' % exe, r.stderr)
        self.assertEqual(r.stderr.count('invalid .sframe'), 1, r.stderr)
        self.assertEqual(chains(r.stdout), self.script(out, 'libdw'))
        # The end-of-run block counts it and names it again, with why.
        st = common.stats_block(r.stderr, 'SFrame unwinding')
        self.assertEqual(st['sections rejected'], 1, r.stderr)
        self.assertIn('\n    %s: bad magic\n' % exe, r.stderr)
        # perf report --stats unwinds nothing, but says what was rejected
        # only when something loaded the section: here nothing did.
        r = common.run([common.PERF, 'report', '--stats', '-i', out])
        self.assertNotIn('SFrame unwinding', r.stdout)

    def test_stats_block(self):
        """perf script prints the SFrame counters when SFrame unwound, and
        only then."""
        data = self.data[(3, 'pie')]
        n = len(self.script(data, 'libdw'))
        r = common.run([common.PERF, 'script', '-i', data, '-F', 'ip',
                        '--unwind-style', 'libdw'])
        self.assertNotIn('SFrame unwinding', r.stderr)
        for style in ('sframe', 'sframe-only'):
            with self.subTest(style=style):
                r = common.run([common.PERF, 'script', '-i', data, '-F', 'tid,ip,sym,dso',
                                '--unwind-style', style])
                st = common.stats_block(r.stderr, 'SFrame unwinding')
                frames = sum(len(c) for c in chains(r.stdout))
                self.assertEqual(st['samples unwound'], n, r.stderr)
                self.assertEqual(st['sections rejected'], 0)
                self.assertEqual(st['deferred snapshots'], 0)
                # The frames shown came from SFrame or, in the hybrid
                # style, from libdw after it; not counted: samples without
                # a stack copy, and in the hybrid style those left wholly
                # to libdw (no row for their first frame).
                by = st['frames by SFrame'] + st['frames by libdw after']
                self.assertLessEqual(by, frames, r.stderr)
                self.assertGreater(by, frames * 0.99, r.stderr)
                self.assertGreater(st['frames by SFrame'], frames / 2)
                if style == 'sframe-only':
                    self.assertEqual(st['frames by libdw after'], 0)


if __name__ == '__main__':
    unittest.main()
