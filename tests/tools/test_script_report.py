# SPDX-License-Identifier: GPL-2.0
"""perf script and perf report on deferred callchains."""
import os
import unittest

import common
import perf_report
from common import PERF, PERF_UPSTREAM, run
from deferred_tools import DEFER, NR_RECORDS, NR_SAMPLES, ToolsCase

HANDLER = '''
import collections
counts = collections.Counter()
syms = set()

def process_event(param_dict):
    counts['sample'] += 1
    if 'deferred_cookie' in param_dict['sample']:
        counts['cookie'] += 1
    for node in param_dict.get('callchain', []):
        if 'sym' in node:
            syms.add(node['sym']['name'])

def process_callchain_deferred(param_dict):
    counts['record'] += 1
    counts['record_frames'] += len(param_dict['callchain'])
    for node in param_dict['callchain']:
        if 'sym' in node:
            syms.add(node['sym']['name'])

def trace_end():
    for k in sorted(counts):
        print('%s=%d' % (k, counts[k]))
    print('main' in syms and 'level_a' in syms and 'syms=ok' or 'syms=missing')
'''


class Script(ToolsCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.script = os.path.join(cls.tmp, 'handler.py')
        with open(cls.script, 'w') as f:
            f.write(HANDLER)
        cls.env = dict(os.environ)

    def run_script(self, extra):
        r = run([PERF, 'script', '-i', DEFER] + self.sym_args() + extra +
                ['-s', self.script], env=self.env)
        return dict(line.split('=', 1) for line in r.stdout.splitlines() if '=' in line)

    def test_merged_default(self):
        r = run([PERF, 'script', '-i', DEFER, '-F', 'comm,ip,sym'] + self.sym_args())
        self.assertFalse('DEFERRED CALLCHAIN' in r.stdout)
        self.assertTrue('level_a' in r.stdout and ' main' in r.stdout, 'no stitched frames')

    def test_raw_mode(self):
        r = run([PERF, 'script', '--no-merge-callchains', '-i', DEFER] + self.sym_args())
        self.assertEqual(r.stdout.count('DEFERRED CALLCHAIN'), NR_RECORDS)

    def test_stats(self):
        r = run([PERF, 'script', '--deferred-stats', '-i', DEFER, '-F', 'ip'] + self.sym_args())
        self.assertIn('Deferred callchains:', r.stderr)
        self.assertFalse('Deferred callchains:' in r.stdout)
        self.assertRegex(r.stderr, r'deferred samples\s+%d' % NR_SAMPLES)

    def test_python_merged(self):
        got = self.run_script([])
        self.assertEqual(int(got['sample']), NR_SAMPLES)
        self.assertNotIn('record', got)
        self.assertNotIn('cookie', got)
        self.assertEqual(got['syms'], 'ok')

    def test_python_raw(self):
        got = self.run_script(['--no-merge-callchains'])
        self.assertEqual(int(got['sample']), NR_SAMPLES)
        self.assertEqual(int(got['cookie']), NR_SAMPLES)
        self.assertEqual(int(got['record']), NR_RECORDS)
        self.assertGreater(int(got['record_frames']), NR_RECORDS)
        self.assertEqual(got['syms'], 'ok')


class Report(ToolsCase):
    def report(self, perf, data, extra=()):
        return run([perf, 'report', '--stdio', '-i', data, '--no-children',
                    '-g', 'caller', '--percent-limit', '0'] + self.sym_args() + list(extra))

    def test_header_stats(self):
        r = self.report(PERF, DEFER)
        # "# Deferred callchains: N samples, N stitched, N stitched late, ..."
        n = perf_report.header_numbers(r.stdout, 'Deferred callchains:')
        self.assertIsNotNone(n, r.stdout[:2000])
        self.assertEqual(n[0], NR_SAMPLES)
        self.assertGreater(n[1] + n[2], NR_SAMPLES * 9 // 10)
        # "# Deferred callchain records: N, N orphans, N duplicates"
        n = perf_report.header_numbers(r.stdout, 'Deferred callchain records:')
        self.assertIsNotNone(n, r.stdout[:2000])
        self.assertEqual(n[0] + n[2], NR_RECORDS)

    def test_stats_option(self):
        r = run([PERF, 'report', '--stats', '-i', DEFER])
        self.assertIn('Deferred callchains:', r.stdout)

    def test_no_header_without_defer(self):
        r = self.report(PERF, os.path.join(common.REAL, 'fp-st.data'))
        self.assertNotIn('Deferred callchains', r.stdout)

    def test_warning_when_lost(self):
        """Records dropped (as pristine 7.2 perf inject does): a warning says so."""
        common.need(PERF_UPSTREAM)
        stripped = self.path('stripped.data')
        run([PERF_UPSTREAM, 'inject', '-i', DEFER, '-o', stripped])
        r = self.report(PERF, stripped)
        self.assertRegex(r.stderr, r'deferred samples .* got no user callchain record')
        self.assertTrue('[user stack lost]' in r.stdout, 'no [user stack lost] frame')

    def test_merged_file_same_callchains(self):
        """From 8.9 s on: the first samples, taken while the workload was
        exec'ed, are resolved after the exec's COMM and MMAPs when stitched
        from the original (they wait for their record), before them from
        the merged file (in time order), so comm and user maps differ."""
        merged = self.path('merged.data')
        run([PERF, 'inject', '--merge-callchains', '-i', DEFER, '-o', merged])
        want = perf_report.body_lines(self.report(PERF, DEFER, ['--time', '8.9,']).stdout)
        got = perf_report.body_lines(self.report(PERF, merged, ['--time', '8.9,']).stdout)
        self.assertGreater(len(want), 1000)
        diff = [(a, b) for a, b in zip(got, want) if a != b]
        self.assertEqual((len(got), diff[:3]), (len(want), []))
        self.assertTrue(any('level_a' in line for line in got))


if __name__ == '__main__':
    unittest.main()
