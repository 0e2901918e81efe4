# SPDX-License-Identifier: GPL-2.0
"""Inline chains (util/libdw-inline.c): perf script and perf report with
inlined frames must print exactly what perf-upstream prints, and the chains
must be those of addr2line -i.

The program is generated (gen_inline.py): one big CU with thousands of
inlined subroutines (layers of always_inline functions, some from a header)
and two small CUs, built with -O2 -g: an amalgamation in miniature, built in
seconds (the sqlite3 amalgamation itself is in bench/inline). The samples
are written by inlinedata.py, one at every instruction of .text, so every
address of the program is looked up.
"""
import os
import re
import shutil
import unittest

import common
import gen_inline
import inlinedata
import perf_report


class TestInline(common.PerfTestCase):
    need_upstream = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        common.need_tools('gcc', 'objdump', 'addr2line')
        srcs = gen_inline.generate(cls.tmp)
        cls.prog = os.path.join(cls.tmp, 'inl')
        common.run(['gcc', '-O2', '-g', '-o', cls.prog] + srcs)
        cls.addrs = inlinedata.text_insns(cls.prog)
        cls.data = os.path.join(cls.tmp, 'perf.data')
        inlinedata.write_samples(cls.prog, cls.addrs, cls.data, callers=1)
        cls.out = {}

    def script(self, perf, *args):
        key = (perf,) + args
        if key not in self.out:
            self.out[key] = common.run([perf, 'script', '-i', self.data] +
                                       list(args)).stdout
        return self.out[key]

    def same_as_upstream(self, *args):
        ours = self.script(common.PERF, *args)
        up = self.script(common.PERF_UPSTREAM, *args)
        self.assertGreater(len(ours), 0)
        if ours != up:
            ol, ul = ours.splitlines(), up.splitlines()
            for i, (a, b) in enumerate(zip(ol, ul)):
                if a != b:
                    self.fail('perf script %s differs from upstream at line %d:\n'
                              'ours:     %r\nupstream: %r' % (' '.join(args), i + 1, a, b))
            self.fail('perf script %s: %d lines, upstream %d' %
                      (' '.join(args), len(ol), len(ul)))

    def test_program_is_an_amalgamation(self):
        """The big CU really has deep inline chains (else the test proves little)."""
        ch = inlinedata.chains(self.script(common.PERF))
        self.assertEqual(len(ch), len(self.addrs))
        depths = [len(f) for _, f in ch]
        self.assertGreater(sum(1 for d in depths if d > 1), len(ch) // 2)
        self.assertGreaterEqual(max(depths), 6)

    def test_script_default_same_as_upstream(self):
        self.same_as_upstream()

    def test_script_srcline_same_as_upstream(self):
        self.same_as_upstream('-F', 'ip,sym,srcline')

    def test_script_sym_srcline_callee_order_same_as_upstream(self):
        self.same_as_upstream('-F', 'comm,tid,ip,sym,symoff,dso,srcline', '-G')

    def test_report_caller_same_as_upstream(self):
        """perf report builds chains in caller order (the other branch of
        libdw_a2l_cb's parent pick)."""
        args = ['report', '-i', self.data, '--stdio', '-g', 'caller',
                '--sort', 'sym,srcline', '--percent-limit', '0']
        ours = common.run([common.PERF] + args).stdout
        up = common.run([common.PERF_UPSTREAM] + args).stdout
        self.assertEqual(perf_report.body(ours), perf_report.body(up))

    def test_chains_same_as_addr2line(self):
        """Function names and file:line of each frame, for a sample of the
        addresses, against binutils' addr2line -f -i."""
        ch = [c for c in inlinedata.chains(self.script(common.PERF)) if len(c[1]) > 1]
        sample = ch[::max(1, len(ch) // 300)]
        a2l = inlinedata.addr2line_frames(self.prog, [a for a, _ in sample])
        srcl = inlinedata.srclines(self.script(common.PERF, '-F', 'ip,sym,symoff,dso,srcline'))
        checked = 0
        for addr, frames in sample:
            names = [n for n, _ in frames]
            want = a2l[addr]
            self.assertEqual(len(names), len(want), '%#x: %s vs %s' % (addr, names, want))
            # inlined frames by DWARF name; the outer one is the ELF symbol
            self.assertEqual(names[:-1], [n for n, _ in want[:-1]], '%#x' % addr)
            self.assertEqual(names[-1].split('.')[0], want[-1][0].split('.')[0], '%#x' % addr)
            self.assertEqual(srcl[addr], [w for _, w in want], '%#x' % addr)
            checked += 1
        self.assertGreater(checked, 100)

    def test_dwz_same_as_upstream(self):
        """After dwz (Debian's debug files are dwz'd): partial units and
        DW_TAG_imported_unit, abstract origins in another unit. Indexed
        all the same, and the same output."""
        if not shutil.which('dwz'):
            self.skipTest('dwz missing (apt-get install dwz)')
        prog = os.path.join(self.tmp, 'inl-dwz')
        shutil.copy(self.prog, prog)
        common.run(['dwz', prog])
        r = common.run(['readelf', '--debug-dump=info', prog])
        self.assertIn('DW_TAG_imported_unit', r.stdout)
        data = os.path.join(self.tmp, 'dwz.data')
        inlinedata.write_samples(prog, inlinedata.text_insns(prog)[::2], data, callers=1)
        ours = common.run([common.PERF, 'script', '-v', '-i', data])
        up = common.run([common.PERF_UPSTREAM, 'script', '-i', data])
        self.assertTrue(ours.stdout == up.stdout, 'dwz: perf script differs from upstream')
        self.assertNotIn('cannot be indexed', ours.stderr)
        self.assertIn('libdw inline index: %s: CU' % prog, ours.stderr)

    def test_libdw_alone_below_64k(self):
        """libdw alone (addr2line.style = libdw) answers below 64 KiB too.
        libdwfl places a PIE at 64 KiB: looked up by its file address, an
        address below that missed the module and fell to the next style
        (LLVM's, which parses the whole DWARF again). Most of this small
        program's .text is there."""
        low = set(inlinedata.runtime_addr(self.prog, a)
                  for a in self.addrs if a < 0x10000)
        self.assertGreater(len(low), len(self.addrs) // 2)
        cfg = os.path.join(self.tmp, 'libdw-alone.config')
        with open(cfg, 'w') as f:
            f.write('[addr2line]\n\tstyle = libdw\n')
        fields = ('-F', 'ip,sym,symoff,dso,srcline')
        alone = common.run([common.PERF, 'script', '-i', self.data] + list(fields),
                           env=dict(os.environ, PERF_CONFIG=cfg)).stdout
        alone = inlinedata.srclines(alone)
        every = inlinedata.srclines(self.script(common.PERF, *fields))
        checked = 0
        for addr in sorted(low):
            # where DWARF has no line, the styles word "none" differently
            if any(s.startswith('??') or s.endswith(':0') for s in every[addr]):
                continue
            self.assertEqual(alone[addr], every[addr], '%#x' % addr)
            checked += 1
        self.assertGreater(checked, len(low) // 2)

    def test_index_reported(self):
        """-v tells what the index of each CU costs."""
        r = common.run([common.PERF, 'script', '-v', '-i', self.data])
        m = re.findall(r'libdw inline index: %s: CU 0x[0-9a-f]+: (\d+) DIEs, (\d+) ranges, '
                       r'(\d+) bytes' % re.escape(self.prog), r.stderr)
        self.assertEqual(len(m), 3, r.stderr[-2000:])
        dies = max(int(d) for d, _, _ in m)
        self.assertGreater(dies, 1000)


if __name__ == '__main__':
    unittest.main()
