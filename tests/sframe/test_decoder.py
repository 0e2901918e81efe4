# SPDX-License-Identifier: GPL-2.0
"""perf's SFrame decoder against libsframe and readelf --sframe, on the
corpus built by binutils 2.40 (v1), 2.44 (v2) and 2.47 (v3), plus a v2
section rewritten with PC relative start addresses and corrupted ones."""
import os
import re
import shutil
import struct
import subprocess
import tempfile
import unittest

import common
import corpus

FUNC = re.compile(r'^\s*func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes')
ROW = re.compile(r'^\s*([0-9a-f]{16})\s+(\S+)\s+(\S+)\s+(\S+)\s*$')


def parse(text, v1_ra_undefined=False):
    """[(func line fields, [(start, cfa, fp, ra)])] from a dump.  RA: 'f'
    (the header's fixed offset, here CFA-8) is written c-8."""
    out = []
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            # The oracle says MASK on this line, readelf and perf in the
            # row header.
            mask = 'MASK' in line
            out.append([int(m.group(2), 16), int(m.group(3)), mask, []])
            continue
        if 'STARTPC[m]' in line and out:
            out[-1][2] = True
            continue
        m = ROW.match(line)
        if m and out:
            start, cfa, fp, ra = m.groups()
            ra = ra.replace('[s]', '')
            if ra == 'f' or (v1_ra_undefined and ra == 'u' and cfa != 'u'):
                ra = 'c-8'
            fp = 'u' if fp == 'f' else fp
            out[-1][3].append((int(start, 16), cfa, fp, ra))
    return out


class Decoder(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        common.need(common.PERF)
        cls.dir = corpus.build()
        cls.tmp = tempfile.mkdtemp(prefix='sframe-dec-')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def ours(self, path):
        return common.run([common.PERF, 'sframe', 'dump', path]).stdout

    def test_perf_test_suite(self):
        r = common.run([common.PERF, 'test', 'SFrame'], check=False)
        self.assertNotIn('FAILED', r.stdout + r.stderr)
        out = r.stdout + r.stderr
        # 'SFrame' also matches cases of other suites ("SFrame walk of a
        # stack snapshot" in "Deferred callchains"): count the suite's own.
        suite = re.search(r'^\s*(\d+): SFrame\s*:', out, re.M)
        self.assertTrue(suite, out)
        self.assertEqual(len(re.findall(r'^\s*%s\.\d+: .*: Ok' % suite.group(1), out,
                                        re.M)), 3, out)

    def test_same_rows_as_libsframe(self):
        for v in corpus.VERSIONS:
            for var in corpus.VARIANTS:
                with self.subTest(version=v, binary=var):
                    path = os.path.join(self.dir, 'v%d' % v, var)
                    sec, addr = corpus.section(path, self.tmp)
                    r = common.run([os.path.join(self.dir, 'v%d' % v, 'oracle'),
                                    sec, hex(addr)])
                    theirs = parse(r.stdout, v1_ra_undefined=(v == 1))
                    ours = parse(self.ours(path))
                    self.assertTrue(ours)
                    self.assertEqual(ours, theirs)

    def test_same_rows_as_readelf(self):
        for v in corpus.VERSIONS:
            for var in corpus.VARIANTS:
                with self.subTest(version=v, binary=var):
                    path = os.path.join(self.dir, 'v%d' % v, var)
                    r = common.run([corpus.readelf(v), '--sframe', path])
                    self.assertEqual(parse(self.ours(path)),
                                     parse(r.stdout, v1_ra_undefined=(v == 1)))

    def test_header_and_coverage(self):
        for v in corpus.VERSIONS:
            out = self.ours(os.path.join(self.dir, 'v%d' % v, 'pie'))
            self.assertIn('Version: %d' % v, out)
            self.assertIn('SFRAME_F_FDE_SORTED', out)
            # Only the crt code around main lacks FREs.
            m = re.search(r'(\d+) of (\d+) functions in .text without FREs', out)
            self.assertTrue(m and int(m.group(1)) <= 2, out[-500:])
            self.assertIn('split.cold', subprocess.run(
                ['nm', os.path.join(self.dir, 'v%d' % v, 'pie')],
                stdout=subprocess.PIPE, text=True).stdout)

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
        self.assertEqual(parse(out), parse(self.ours(path)))

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


if __name__ == '__main__':
    unittest.main()
