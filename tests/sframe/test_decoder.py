# SPDX-License-Identifier: GPL-2.0
"""perf's SFrame decoder against libsframe and readelf --sframe, on the
corpus built by binutils 2.40 (v1), 2.44 (v2) and 2.47 (v3), plus a v2
section rewritten with PC relative start addresses and corrupted ones."""
import os
import re
import struct
import subprocess
import unittest

import common
import perf_test_output
import sframe_dump
import sframe_corpus as corpus

class Decoder(corpus.CorpusTestCase):
    def ours(self, path):
        return common.run([common.PERF, 'sframe', 'dump', path]).stdout

    def test_perf_test_suite(self):
        r, res = perf_test_output.run(common.PERF, ['SFrame'])
        self.assertNotIn('FAILED', r.stdout)
        # 'SFrame' also matches cases of other suites ("SFrame walk of a
        # stack snapshot" in "Deferred callchains"): the suite's own cases.
        cases = perf_test_output.cases(common.PERF, 'SFrame')
        self.assertTrue(cases, r.stdout)
        self.assertEqual(res.get('SFrame'), ['Ok'] * len(cases), r.stdout)

    def test_same_rows_as_libsframe(self):
        for v in corpus.VERSIONS:
            for var in corpus.VARIANTS:
                with self.subTest(version=v, binary=var):
                    path = os.path.join(self.dir, 'v%d' % v, var)
                    sec, addr = corpus.section(path, self.tmp)
                    r = common.run([os.path.join(self.dir, 'v%d' % v, 'oracle'),
                                    sec, hex(addr)])
                    theirs = sframe_dump.parse(r.stdout, v1_ra_undefined=(v == 1))
                    ours = sframe_dump.parse(self.ours(path))
                    self.assertTrue(ours)
                    self.assertEqual(ours, theirs)

    def test_same_rows_as_readelf(self):
        for v in corpus.VERSIONS:
            for var in corpus.VARIANTS:
                with self.subTest(version=v, binary=var):
                    path = os.path.join(self.dir, 'v%d' % v, var)
                    r = common.run([corpus.readelf(v), '--sframe', path])
                    self.assertEqual(sframe_dump.parse(self.ours(path)),
                                     sframe_dump.parse(r.stdout, v1_ra_undefined=(v == 1)))

    def test_header_and_coverage(self):
        for v in corpus.VERSIONS:
            out = self.ours(os.path.join(self.dir, 'v%d' % v, 'pie'))
            self.assertIn('Version: %d' % v, out)
            self.assertIn('SFRAME_F_FDE_SORTED', out)
            # Only the crt code around main lacks FREs.
            cov = sframe_dump.coverage(out)
            self.assertTrue(cov and cov[0] <= 2, out[-500:])
            self.assertIn('split.cold', subprocess.run(
                ['nm', os.path.join(self.dir, 'v%d' % v, 'pie')],
                stdout=subprocess.PIPE, text=True).stdout)

    def test_relocatable_objects(self):
        """A .o: its function starts are relocations, applied before the
        dump: each FDE at its function's offset in its section, named, and
        .text's functions covered."""
        for v, suite in corpus.VERSIONS.items():
            with self.subTest(version=v):
                tc = corpus.toolchain(suite)
                obj = os.path.join(self.tmp, 'corpus-v%d.o' % v)
                cc = ['gcc', '-O2', '-g', '-c', '-Wa,--gsframe']
                if tc:
                    cc.append('-B%s/bin/' % tc)
                common.run(cc + ['-o', obj, os.path.join(corpus.SRC, 'corpus.c')])
                r = common.run([common.PERF, 'sframe', 'dump', obj])
                self.assertEqual(r.stderr, '')
                named = sframe_dump.named_fdes(r.stdout)
                nm = common.run(['nm', '-S', obj]).stdout
                syms = {f[3]: (int(f[0], 16), int(f[1], 16)) for f in
                        (line.split() for line in nm.splitlines())
                        if len(f) == 4 and f[2] in 'tT'}
                self.assertIn('recurse', named)
                self.assertIn('main', named)
                for name, where in named.items():
                    self.assertEqual(where, syms[name], name)
                without, total = sframe_dump.coverage(r.stdout)
                self.assertEqual(without, 0, r.stdout)
                self.assertGreater(total, 5)

    def test_dump_layout(self):
        """No line of a dump ends in blanks; the summary of a static
        binary counts the functions without FREs rather than listing
        them, the full dump lists them."""
        for v in corpus.VERSIONS:
            for var in corpus.VARIANTS:
                path = os.path.join(self.dir, 'v%d' % v, var)
                out = self.ours(path)
                self.assertEqual([l for l in out.splitlines() if l != l.rstrip()],
                                 [], path)
        static = os.path.join(self.dir, 'v3', 'static')
        s = common.run([common.PERF, 'sframe', 'dump', '-s', static]).stdout
        self.assertGreater(sframe_dump.coverage(s)[0], 1000)
        self.assertNotIn('functions without FREs:', s)
        self.assertLess(len(s.splitlines()), 20)
        full = self.ours(static)
        self.assertIn('functions without FREs:', full)
        self.assertIn('\n      __libc_start_main\n', full)

    def rewrite(self, path, fn):
        """Copy of ELF PATH whose .sframe is FN(bytes, address)."""
        sec, addr = corpus.section(path, self.tmp)
        data = bytearray(open(sec, 'rb').read())
        fn(data, addr)
        new = sec + '.new'
        with open(new, 'wb') as f:
            f.write(data)
        out = os.path.join(self.tmp, 'rewritten-' + os.path.basename(path))
        common.run(['objcopy', '--update-section', '.sframe=' + new, path, out])
        return out

    def test_v2_pcrel(self):
        """binutils 2.45/2.46 output: v2 with FUNC_START_PCREL, made from a
        v2 section by rewriting each FDE's start field."""
        def pcrel(data, addr):
            nr = struct.unpack_from('<I', data, 8)[0]
            fdeoff = struct.unpack_from('<I', data, 20)[0]
            data[3] |= 4
            for i in range(nr):
                pos = 28 + fdeoff + i * 20
                start = struct.unpack_from('<i', data, pos)[0]
                struct.pack_into('<i', data, pos, start - pos)
        path = os.path.join(self.dir, 'v2', 'pie')
        new = self.rewrite(path, pcrel)
        out = self.ours(new)
        self.assertIn('SFRAME_F_FDE_FUNC_START_PCREL', out)
        self.assertEqual(sframe_dump.parse(out), sframe_dump.parse(self.ours(path)))

    def test_corrupt_sections(self):
        path = os.path.join(self.dir, 'v3', 'pie')

        def magic(data, addr):
            data[0] ^= 0xff

        def unsorted(data, addr):
            # Move the last FDE's start before the first one's.
            nr = struct.unpack_from('<I', data, 8)[0]
            pos = 28 + (nr - 1) * 16
            struct.pack_into('<q', data, pos, 0x800 - addr - pos)

        def fre_off(data, addr):
            struct.pack_into('<I', data, 28 + 12, 0xfffff)

        for fn, why in ((magic, 'bad magic'), (unsorted, 'FDEs not sorted'),
                        (fre_off, 'beyond the FRE sub-section')):
            with self.subTest(why=why):
                new = self.rewrite(path, fn)
                r = common.run([common.PERF, 'sframe', 'dump', new], check=False)
                self.assertNotEqual(r.returncode, 0)
                self.assertIn(why, r.stderr)


class CrossDecoder(corpus.CorpusTestCase):
    """AArch64 (both byte orders, PAuth) and s390x sections from Debian's
    cross binutils: every FDE and row of perf sframe dump against libsframe
    of the same SFrame version and the cross readelf --sframe."""
    def dumps(self, arch, suite, version, endian):
        """Our dump, and ours, the oracle's and readelf's parsed, and the
        rows of each function by name."""
        path = corpus.cross_build(arch, suite, version, endian)
        out = common.run([common.PERF, 'sframe', 'dump', path]).stdout
        sec, addr = corpus.elf_section(path, '.sframe', self.tmp)
        oracle = common.run([os.path.join(self.dir, 'v%d' % version, 'oracle'),
                             sec, hex(addr)]).stdout
        readelf = os.path.join(corpus.TC, 'cross-%s-%s' % (suite, arch),
                               'bin', 'readelf')
        theirs = common.run([readelf, '--sframe', path]).stdout
        ours = sframe_dump.parse(out)
        syms = {}
        for line in common.run([readelf, '-sW', path]).stdout.splitlines():
            f = line.split()
            if len(f) == 8 and f[3] == 'FUNC':
                syms[int(f[1], 16)] = f[7]
        funcs = {syms[f[0]]: f for f in ours if f[0] in syms}
        return out, ours, sframe_dump.parse(oracle), sframe_dump.parse(theirs), funcs

    def each(self):
        for arch, suite, version, endians in corpus.CROSS:
            for endian in endians:
                with self.subTest(arch=arch, version=version, endian=endian):
                    try:
                        yield (arch, version, endian) + \
                            self.dumps(arch, suite, version, endian)
                    except unittest.SkipTest as e:
                        self.skipTest(str(e))

    def test_same_rows(self):
        for arch, version, endian, out, ours, oracle, readelf, _ in self.each():
            m = re.search(r'Num FDEs: (\d+)\n\s*Num FREs: (\d+)', out)
            self.assertEqual(len(ours), int(m.group(1)))
            self.assertEqual(sum(len(f[5]) for f in ours), int(m.group(2)))
            self.assertGreaterEqual(len(ours), 8)
            self.assertEqual(ours, oracle)
            self.assertEqual(ours, readelf)
            self.assertIn('Version: %d' % version, out)
            self.assertIn('big endian' if endian != 'EL' else 'little endian',
                          out)
            print('%s v%d %s: %d FDEs, %d FREs, same as libsframe and readelf'
                  % (arch, version, endian or '', len(ours),
                     sum(len(f[5]) for f in ours)))

    @staticmethod
    def rows(fde):
        return [r[1:] for r in fde[5]]

    def test_aarch64_shapes(self):
        for arch, version, endian, _, ours, _, _, fn in self.each():
            if arch != 'aarch64':
                continue
            self.assertEqual(self.rows(fn['leaf']), [('sp+0', 'u', 'u')])
            # Frame record, then CFA from x29.
            self.assertEqual(self.rows(fn['fp_based']),
                             [('sp+0', 'u', 'u'), ('sp+32', 'c-32', 'c-24'),
                              ('fp+32', 'c-32', 'c-24'), ('sp+0', 'u', 'u')])
            # 2- and 4-byte data words.
            self.assertIn(('sp+4096', 'c-3600', 'c-3592'),
                          self.rows(fn['sp_2byte']))
            self.assertIn(('sp+1048592', 'c-16', 'c-8'),
                          self.rows(fn['sp_4byte']))
            self.assertIn(('sp+16', 'u', 'c-16'), self.rows(fn['ra_only']))
            # 4-byte FRE start addresses.
            body = fn['long_body']
            self.assertEqual(len(body[5]), 5)
            self.assertGreater(body[5][3][0] - body[0], 65535)
            # PAuth: the RA is signed from paciasp to autiasp; B key.
            self.assertEqual(self.rows(fn['pauth_a']),
                             [('sp+0', 'u', 'u'), ('sp+0', 'u', 'u[s]'),
                              ('sp+16', 'c-16', 'c-8[s]'),
                              ('sp+0', 'u', 'u[s]'), ('sp+0', 'u', 'u')])
            self.assertEqual([fn['pauth_a'][4], fn['pauth_b'][4]],
                             [False, True])
            self.assertIn(('fp+32', 'c-32', 'c-24[s]'),
                          self.rows(fn['pauth_b']))
            # .cfi_undefined x30 and .cfi_signal_frame: v3 only.
            self.assertEqual(self.rows(fn['outermost']) == [('u', 'u', 'u')],
                             version == 3)
            self.assertEqual(fn['sigframe'][3], 'S' if version == 3 else '')

    def test_s390x_shapes(self):
        for arch, version, endian, out, ours, _, _, fn in self.each():
            if arch != 's390x':
                continue
            self.assertIn('S390X (big endian)', out)
            # The CFA is SP + 160 on entry; the usual prologue, CFA from r11.
            self.assertEqual(self.rows(fn['leaf']), [('sp+160', 'u', 'u')])
            self.assertEqual(self.rows(fn['fp_based']),
                             [('sp+160', 'u', 'u'), ('sp+160', 'c-72', 'c-48'),
                              ('sp+320', 'c-72', 'c-48'),
                              ('fp+320', 'c-72', 'c-48'),
                              ('sp+160', 'u', 'u')])
            self.assertIn(('sp+4256', 'u', 'c-48'), self.rows(fn['sp_2byte']))
            self.assertIn(('sp+1048736', 'c-72', 'c-48'),
                          self.rows(fn['sp_4byte']))
            # FP saved without RA: the RA word is padding.
            self.assertIn(('sp+160', 'c-72', 'u'), self.rows(fn['fp_only']))
            # RA and FP kept in FPRs (DWARF 16, 17): a flexible FDE.
            self.assertEqual(fn['in_fprs'][3], 'F')
            self.assertIn(('sp+160', 'r17+0', 'r16+0'), self.rows(fn['in_fprs']))
            self.assertEqual(self.rows(fn['outermost']), [('u', 'u', 'u')])
            body = fn['long_body']
            self.assertGreater(body[5][3][0] - body[0], 65535)
            # The PLT entry of ext_func: a PCMASK FDE.
            self.assertEqual(sum(f[2] for f in ours), 1)

    def test_s390x_cfa_overflow(self):
        """A 4-byte s390x CFA word whose offset, scaled back by 8, does not
        fit 32 bits: the section is rejected, with the reason."""
        try:
            path = corpus.cross_build('s390x', 'sid', 3, None)
        except unittest.SkipTest as e:
            self.skipTest(str(e))
        sec, _ = corpus.elf_section(path, '.sframe', self.tmp)
        with open(sec, 'rb') as f:
            sframe = f.read()
        with open(path, 'rb') as f:
            elf = bytearray(f.read())
        # sp_4byte's CFA of SP + 1048736, stored as (1048736 - 160) / 8.
        word = struct.pack('>i', (1048736 - 160) // 8)
        pos = elf.index(sframe) + sframe.index(word)
        self.assertEqual(sframe.count(word), 1)
        elf[pos:pos + 4] = struct.pack('>i', 0x7fffffff)
        bad = os.path.join(self.tmp, 'cfa-overflow.so')
        with open(bad, 'wb') as f:
            f.write(elf)
        r = common.run([common.PERF, 'sframe', 'dump', bad], check=False)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn('CFA offset out of range', r.stderr)

if __name__ == '__main__':
    unittest.main()
