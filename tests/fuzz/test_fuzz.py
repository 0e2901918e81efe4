# SPDX-License-Identifier: GPL-2.0
"""libFuzzer targets of fuzz/ (see fuzz/README.md): the committed regression
inputs and seed corpora replayed, and a smoke run of about a minute per
target (but perf-data, the slow one) on its seed corpus.  The targets are
built here if missing (make fuzz: clang 14, a few minutes once);
FUZZ_SMOKE_TIME=seconds changes the smoke run's length.
"""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import common

FUZZ_DIR = os.path.join(common.TOP, 'fuzz')
TARGETS = ['deferred-stream', 'sframe-decode', 'perf-data', 'elf-symbols']
# perf-data takes a whole perf.data file per input (about 250 a second):
# its corpus is replayed, not fuzzed, here.
# elf-symbols (the symbol loader, upstream code) is replayed only: a 60 s
# run here could find a new upstream bug and fail CI by chance;
# make fuzz-run FUZZ_TARGET=elf-symbols fuzzes it (fuzz/README.md).
SMOKE_TARGETS = ['deferred-stream', 'sframe-decode']
SMOKE_TIME = int(os.environ.get('FUZZ_SMOKE_TIME', '60'))
ENV = {
    'ASAN_OPTIONS': 'detect_leaks=1:allocator_may_return_null=1',
    'UBSAN_OPTIONS': 'halt_on_error=1:print_stacktrace=1',
}
# Fuzz runs suppress the UBSan reports already reported (fuzz/ubsan.supp:
# none at present); the regression inputs are replayed without it.
SUPP = os.path.join(FUZZ_DIR, 'ubsan.supp')
# Regression inputs of crashes not fixed yet: {target: {file: why}}.  None:
# ubsan-misaligned-event-after-unaligned-size (events after a record whose
# size is not a multiple of 8, read in place, misaligned) is a regression
# input like the others since the reader copies such events aligned.
KNOWN = {}

def binary(target):
    return os.path.join(common.BUILD, 'bin', 'fuzz-' + target)


def build():
    if all(os.path.exists(binary(t)) for t in TARGETS):
        return
    if not shutil.which(os.environ.get('FUZZ_CC', 'clang-14')):
        raise unittest.SkipTest('clang-14 not installed')
    r = subprocess.run(['make', '-C', common.TOP, 'B=' + common.BUILD, 'fuzz'],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors='replace')
    if r.returncode:
        raise AssertionError('make fuzz failed:\n' + r.stdout[-4000:])


def run(target, args, timeout, suppress=False):
    env = dict(os.environ)
    env.update(ENV)
    if suppress:
        env['UBSAN_OPTIONS'] += ':suppressions=' + SUPP
    return subprocess.run([binary(target)] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors='replace',
                          env=env, timeout=timeout)


class Fuzz(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        build()

    def test_regressions(self):
        for target in TARGETS:
            d = os.path.join(FUZZ_DIR, 'regressions', target)
            files = sorted(os.listdir(d)) if os.path.isdir(d) else []
            for name in files:
                with self.subTest(target=target, input=name):
                    r = run(target, [os.path.join(d, name)], timeout=120)
                    why = KNOWN.get(target, {}).get(name)
                    if why:
                        self.assertNotEqual(r.returncode, 0,
                                            '%s no longer crashes (%s): take it off '
                                            'KNOWN' % (name, why))
                    else:
                        self.assertEqual(r.returncode, 0, r.stdout[-6000:])

    def test_corpus(self):
        """Every committed seed, once: no crash, no leak."""
        for target in TARGETS:
            with self.subTest(target=target):
                r = run(target, ['-runs=0', '-timeout=25', '-rss_limit_mb=2048',
                                 os.path.join(FUZZ_DIR, 'corpus', target)],
                        timeout=300, suppress=True)
                self.assertEqual(r.returncode, 0, r.stdout[-6000:])
                self.assertRegex(r.stdout, r'INITED|DONE', r.stdout[-2000:])

    def test_smoke(self):
        for target in SMOKE_TARGETS:
            with self.subTest(target=target), tempfile.TemporaryDirectory() as tmp:
                corpus = os.path.join(tmp, 'corpus')
                os.mkdir(corpus)
                r = run(target, ['-max_total_time=%d' % SMOKE_TIME, '-max_len=16384',
                                 '-timeout=25', '-rss_limit_mb=2048',
                                 '-artifact_prefix=%s/' % tmp, '-print_final_stats=1',
                                 corpus, os.path.join(FUZZ_DIR, 'corpus', target)],
                        timeout=SMOKE_TIME + 300, suppress=True)
                crashes = [f for f in os.listdir(tmp) if f != 'corpus']
                self.assertEqual(r.returncode, 0, '%s crashed (%s):\n%s' %
                                 (target, crashes, r.stdout[-6000:]))
                m = re.search(r'stat::number_of_executed_units:\s*(\d+)', r.stdout)
                self.assertTrue(m and int(m.group(1)) > 0, r.stdout[-2000:])
