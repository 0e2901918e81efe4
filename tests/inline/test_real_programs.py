# SPDX-License-Identifier: GPL-2.0
"""Inline chains on the real programs of bench/inline (the sqlite3
amalgamation, zstd, the C++ eigen-work: its names are checked
against upstream only), when they are built (bench/inline/build-progs.sh, into
cache/inline-src/): one sample at each of ~300 instructions spread over
.text, perf script the same as perf-upstream's, default and with srcline,
and the frames' names the same as addr2line -i's. Skipped when the
programs are not there: building them from Debian's source packages takes
minutes, the generated program of test_inline.py stands in for them.
"""
import os
import unittest

import common
import inlinedata

SRC = os.environ.get('INLINE_SRC_DIR', os.path.join(common.TOP, 'cache', 'inline-src'))
PROGS = {
    'sqlite3': os.path.join(SRC, 'sqlite3', 'bin', 'sqlite3'),
    'zstd': os.path.join(SRC, 'zstd', 'bin', 'zstd'),
    'eigen-work': os.path.join(SRC, 'eigen3', 'bin', 'eigen-work'),
}
N_ADDRS = 300


class TestRealPrograms(common.PerfTestCase):
    need_upstream = True

    def check(self, name):
        prog = PROGS[name]
        if not os.path.exists(prog):
            self.skipTest('%s not built (bench/inline/build-progs.sh)' % prog)
        insns = inlinedata.text_insns(prog)
        addrs = insns[::max(1, len(insns) // N_ADDRS)]
        data = os.path.join(self.tmp, name + '.data')
        inlinedata.write_samples(prog, addrs, data, callers=1)
        out = {}
        for args in ([], ['-F', 'ip,sym,symoff,dso,srcline']):
            ours = common.run([common.PERF, 'script', '-i', data] + args).stdout
            up = common.run([common.PERF_UPSTREAM, 'script', '-i', data] + args).stdout
            self.assertTrue(ours == up, '%s: perf script %s differs from upstream' %
                            (name, ' '.join(args)))
            out[tuple(args)] = ours
        ch = [c for c in inlinedata.chains(out[()]) if len(c[1]) > 1]
        self.assertGreater(len(ch), 20)
        if name == 'eigen-work':
            # Upstream takes many of its chains from LLVM's symbolizer
            # (bench/inline/README.md), whose C++ chains binutils'
            # addr2line does not always agree with: upstream's output
            # is the reference here.
            return
        sample = ch[::max(1, len(ch) // 50)]
        a2l = inlinedata.addr2line_frames(prog, [a for a, _ in sample])
        for addr, frames in sample:
            names = [n for n, _ in frames]
            self.assertEqual(names[:-1], [n for n, _ in a2l[addr][:-1]],
                             '%s %#x' % (name, addr))

    def test_sqlite3_amalgamation(self):
        self.check('sqlite3')

    def test_zstd(self):
        self.check('zstd')

    def test_eigen_templates(self):
        self.check('eigen-work')


if __name__ == '__main__':
    unittest.main()
