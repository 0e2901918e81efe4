# SPDX-License-Identifier: GPL-2.0
"""Our perf built with ASan and UBSan (make SAN=1: build/bin/perf-san) on
everything that reads untrusted data: the "Deferred callchains" perf test
suite, perf script and perf report (--stats and the callchain report) on the
real 7.2 recording, and generated
files with missing, duplicate and malformed deferred records, in file and
pipe mode, both byte orders.

Also the SFrame unwinder (perf report --unwind-style sframe) and the
deferred fallback with SFrame on the SFrame corpus.

Any ASan or UBSan report fails.  LeakSanitizer runs too: perf itself
leaks at exit (upstream), so only a leak whose stack goes through our
stitcher (deferred-callchain.c) or SFrame code (sframe.c,
unwind-sframe.c) fails.

The sanitizer build is made here if missing (make SAN=1 perf: a few
minutes, once); PERF_SAN=path uses another binary.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest

import common
import cpu_record
import perf_counters
import perf_test_output
import sframe_corpus
from deferred_scenario import scenario
from snapshot_rewrite import dwarf_to_deferred

PERF_SAN = os.environ.get('PERF_SAN', os.path.join(common.BUILD, 'bin', 'perf-san'))
DEFER = os.path.join(common.REAL, 'defer-st.data')
OUR_FILES = ('deferred-callchain.c', 'sframe.c')    # sframe.c: unwind-sframe.c too
# Without line information in perf's frames, the functions tell: the
# stitcher's and the SFrame decoder's and unwinder's.
OUR_FUNCS = re.compile(r' in (deferred_callchain\w*|dc_\w+|\w*sframe\w*|dso__sframe_cfi_row|'
                       r'dso__sframe_vaddr_bias)[ (]')
SAN_ENV = {
    'ASAN_OPTIONS': 'detect_leaks=1:abort_on_error=0:halt_on_error=1:'
                    'allocator_may_return_null=1:print_summary=1',
    'UBSAN_OPTIONS': 'print_stacktrace=1:halt_on_error=1',
    'LSAN_OPTIONS': 'exitcode=23',
}
LSAN_EXIT = 23


def build_san():
    if os.path.exists(PERF_SAN):
        return
    if 'PERF_SAN' in os.environ:
        raise unittest.SkipTest('%s missing' % PERF_SAN)
    env = dict(os.environ)
    env.setdefault('JOBS', '2')
    r = subprocess.run(['make', '-C', common.TOP, 'SAN=1', 'B=' + common.BUILD, 'perf'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors='replace', env=env)
    if r.returncode or not os.path.exists(PERF_SAN):
        raise AssertionError('make SAN=1 perf failed:\n' + r.stdout[-4000:])


def leak_blocks(text):
    """LeakSanitizer's report, one string per leaked allocation."""
    return re.findall(r'^(?:Direct|Indirect) leak of .*?(?=^\s*$)', text, re.M | re.S)


def san_errors(text):
    """ASan/UBSan reports and leaks through our code in @text."""
    errs = []
    for m in re.finditer(r'^==\d+==ERROR: (AddressSanitizer|LeakSanitizer): ?(.*)$',
                         text, re.M):
        if m.group(1) == 'AddressSanitizer':
            errs.append(m.group(0))
    errs += [m.group(0) for m in re.finditer(r'^.*runtime error: .*$', text, re.M)]
    for block in leak_blocks(text):
        if any(f in block for f in OUR_FILES) or OUR_FUNCS.search(block):
            errs.append('leak through our code:\n' + block)
    return errs


def run_san(args, input=None, cwd=None):
    """@input (bytes) goes through a real pipe, as perf record | perf report."""
    env = dict(os.environ)
    env.update(SAN_ENV)
    r = subprocess.run([PERF_SAN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       input=input, env=env, cwd=cwd, timeout=900)
    r.stdout = r.stdout.decode(errors='replace')
    r.stderr = r.stderr.decode(errors='replace')
    return r


def file_to_pipe(buf):
    """A little-endian file-mode perf.data as a pipe stream: pipe header,
    one PERF_RECORD_HEADER_ATTR per attr (with its ids), the data section."""
    if buf[:8] != b'PERFILE2':
        raise ValueError('not a little-endian perf.data file')
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    out = [b'PERFILE2' + struct.pack('<Q', 16)]
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        asz, = struct.unpack_from('<I', buf, a + 4)
        ids_off, ids_size = struct.unpack_from('<QQ', buf, a + attr_size - 16)
        body = buf[a:a + asz] + buf[ids_off:ids_off + ids_size]
        out.append(struct.pack('<IHH', 64, 0, 8 + len(body)) + body)
    out.append(buf[data_off:data_off + data_size])
    return b''.join(out)


class Sanitized(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build_san()
        cls.tmp = tempfile.mkdtemp()
        cls.kallsyms = common.kallsyms(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, args, input=None, cwd=None, what=None):
        r = run_san(args, input=input, cwd=cwd)
        out = r.stdout + r.stderr
        errs = san_errors(r.stderr)
        self.assertFalse(errs, '%s: sanitizer reports:\n%s\n\n%s' %
                         (what or ' '.join(args), '\n'.join(errs), r.stderr[-6000:]))
        # Exit 23: LeakSanitizer found only upstream leaks.
        self.assertIn(r.returncode, (0, LSAN_EXIT),
                      '%s exited %d:\n%s' % (' '.join(args), r.returncode, out[-4000:]))
        return r

    def test_perf_test_suite(self):
        name = 'Deferred callchains'
        r = self.check(['test', '-F', '-v', name], cwd=perf_test_output.tree_cwd())
        out = r.stdout + r.stderr
        # -F prints the cases without their suite's line: one suite ran.
        results = perf_test_output.case_results(out)
        # Every case the suite has (perf test list), not a count kept here.
        cases = perf_test_output.cases(common.PERF, name)
        self.assertTrue(cases, out[-4000:])
        self.assertEqual(len(results), len(cases), out[-4000:])
        self.assertTrue(all(v == 'Ok' for v in results), out[-4000:])

    def test_sframe(self):
        """perf report with the sframe styles on a --call-graph dwarf
        recording of the SFrame corpus, and perf script on the same samples
        made deferred without their records (the SFrame fallback): each
        dso's SFrame state is freed with the dso, nothing leaks."""
        d = sframe_corpus.build()
        dwarf = os.path.join(self.tmp, 'sframe.data')
        # 150 ms of CPU time, a sample every ms of it (cpu_record)
        sframe_corpus.record_dwarf(os.path.join(d, 'v3', 'pie'), dwarf, 150, 16384,
                                   period_us=1000)
        for style in ('sframe', 'sframe-only'):
            r = self.check(['report', '--stdio', '-i', dwarf, '--unwind-style', style])
            self.assertIn('spin', r.stdout)
        defer = os.path.join(self.tmp, 'sframe-defer.data')
        dwarf_to_deferred(dwarf, defer)
        r = self.check(['script', '-i', defer])
        st = perf_counters.block(r.stderr, 'SFrame unwinding')
        self.assertGreaterEqual(st.get('deferred snapshots', 0),
                                cpu_record.expected(150, 1000) // 2, r.stderr[-2000:])

    def test_real_recording(self):
        common.need(DEFER)
        ks = ['--kallsyms', self.kallsyms]
        self.check(['script', '-i', DEFER] + ks)
        r = self.check(['report', '--stats', '-i', DEFER])
        self.assertIn('Deferred callchains:', r.stdout)
        self.check(['report', '--stdio', '-g', 'caller', '-i', DEFER] + ks)
        self.check(['report', '--stdio', '--no-children', '-i', DEFER, '-F',
                    'overhead,sym'] + ks)

    def test_real_recording_pipe_cut(self):
        """The real recording as a pipe (perf inject would drop the type-22
        records: see docs/robustness.md), whole and cut mid-record: what
        comes before the cut is processed and stitched, perf says the stream
        ended early, and every deferred sample is accounted for."""
        common.need(DEFER)
        with open(DEFER, 'rb') as f:
            data = file_to_pipe(f.read())
        whole = perf_counters.deferred(self.check(['report', '--stats', '-i', '-'], input=data).stdout)
        self.assertEqual(whole.get('deferred samples'), 6756, whole)
        self.assertEqual(whole.get('user stack lost'), 0, whole)
        for frac in (0.3, 0.7):
            cut = int(len(data) * frac) | 3     # never on an 8-byte boundary
            what = 'report --stats of the pipe cut at %d of %d' % (cut, len(data))
            r = self.check(['report', '--stats', '-i', '-'], input=data[:cut], what=what)
            self.assertIn('unexpected end of event stream', r.stderr, what)
            st = perf_counters.deferred(r.stdout)
            self.assertGreater(st.get('stitched', 0), 1000 * frac, '%s: %s' % (what, st))
            self.assertEqual(perf_counters.accounted(st), st['deferred samples'], what)

    def test_generated(self):
        files = []
        for name, kw, wkw in (
                ('missing', dict(missing_fraction=0.1), {}),
                ('dup-late', dict(dup_fraction=0.2, late_fraction=0.3), {}),
                ('snapshot', dict(regs_stack=True, missing_fraction=0.3), {}),
                ('big-endian', dict(missing_fraction=0.1), dict(endian='>')),
                ('pipe', dict(missing_fraction=0.1), dict(pipe=True)),
                ('no-sample-id-all', {}, dict(sample_id_all=False))):
            path = os.path.join(self.tmp, 'gen-%s.data' % name)
            sc = scenario(threads=8, samples=3000, seed=7, **kw)
            sc.write(path, **wkw)
            files.append(path)
        for path in files:
            with self.subTest(path=os.path.basename(path)):
                self.check(['report', '--stats', '-i', path])
                self.check(['script', '-i', path])


if __name__ == '__main__':
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
    unittest.main()
