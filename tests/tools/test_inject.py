# SPDX-License-Identifier: GPL-2.0
"""perf inject on deferred callchains: records kept, remapped, or merged."""
import os
import shutil
import subprocess
import unittest

import common
import cpu_record
import perf_counters
import perf_report
import perf_script
from common import PERF, PERF_UPSTREAM, run
from deferred_tools import (DEFER, NR_RECORDS, NR_SAMPLES, DISTRO_PERF, ToolsCase,
                            deferred_records, distro_perf_works, event_count,
                            script_stacks)


def pipe(producer, consumer, out):
    """producer | consumer > out"""
    with open(out, 'wb') as o:
        p1 = subprocess.Popen(producer, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        p2 = subprocess.run(consumer, stdin=p1.stdout, stdout=o, stderr=subprocess.PIPE)
        p1.stdout.close()
        p1.wait()
    if p2.returncode:
        raise AssertionError('%s: %s' % (' '.join(consumer), p2.stderr[-2000:]))


class InjectPassthrough(ToolsCase):
    """Every mode of perf inject keeps the type-22 records."""

    def check_records(self, out):
        self.assertEqual(event_count(PERF, out, 'CALLCHAIN_DEFERRED'), NR_RECORDS)
        self.assertEqual(event_count(PERF, out, 'SAMPLE'), NR_SAMPLES)

    def test_plain(self):
        out = self.path('plain.data')
        run([PERF, 'inject', '-i', DEFER, '-o', out])
        self.check_records(out)

    def test_build_ids(self):
        out = self.path('bid.data')
        run([PERF, 'inject', '-b', '-i', DEFER, '-o', out])
        self.check_records(out)

    def test_pipe(self):
        """File to pipe (attributes synthesized), then pipe to pipe."""
        out1, out2 = self.path('pipe1.data'), self.path('pipe2.data')
        pipe(['true'], [PERF, 'inject', '-i', DEFER, '-o', '-'], out1)
        self.check_records(out1)
        pipe(['cat', out1], [PERF, 'inject'], out2)
        self.check_records(out2)

    def test_upstream_drops_them(self):
        """What this fixes: pristine 7.2 loses every record."""
        common.need(PERF_UPSTREAM)
        out = self.path('upstream.data')
        run([PERF_UPSTREAM, 'inject', '-i', DEFER, '-o', out])
        self.assertEqual(event_count(PERF, out, 'CALLCHAIN_DEFERRED'), 0)

    def test_aslr_remaps_records(self):
        out = self.path('aslr.data')
        run([PERF, 'inject', '--aslr', '-i', DEFER, '-o', out])
        orig = deferred_records(PERF, DEFER)
        new = deferred_records(PERF, out)
        self.assertEqual(len(orig), NR_RECORDS)
        self.assertEqual(len(new), NR_RECORDS)
        changed = 0
        for (tid0, cookie0, ips0), (tid1, cookie1, ips1) in zip(orig, new):
            self.assertEqual((tid0, cookie0, len(ips0)), (tid1, cookie1, len(ips1)))
            changed += ips0 != ips1
        self.assertGreater(changed, NR_RECORDS * 9 // 10)
        # The remapped user frames still resolve against the remapped maps.
        r = run([PERF, 'script', '-i', out, '-F', 'ip,sym'] + self.sym_args())
        self.assertTrue('level_a' in r.stdout, 'no stitched user frame')


class InjectMerge(ToolsCase):
    """perf inject --merge-callchains: a file any perf reads alike."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.merged = os.path.join(cls.tmp, 'merged.data')
        r = run([PERF, 'inject', '--merge-callchains', '-i', DEFER, '-o', cls.merged])
        cls.inject_stderr = r.stderr
        cls.want = script_stacks(PERF, DEFER, cls.sym_args(cls))

    def test_stats_printed(self):
        st = perf_counters.deferred(self.inject_stderr)
        self.assertTrue(st, self.inject_stderr)
        self.assertEqual(st['deferred samples'], NR_SAMPLES)
        self.assertEqual(st['deferred records'] + st['duplicate records'], NR_RECORDS)

    def test_header_has_only_upstream_features(self):
        """No private header feature: nothing a future upstream feature
        number could collide with. perf report --header-only lists the
        same features, and the same missing ones, as pristine 7.2 does."""
        for data in (self.merged, DEFER):
            ours = run([PERF, 'report', '--header-only', '-i', data]).stdout
            up = run([PERF_UPSTREAM, 'report', '--header-only', '-i', data])
            for text in (ours, up.stdout + up.stderr):
                self.assertNotIn('unknown feature', text)
                self.assertNotIn('DEFERRED', text)
            missing = [perf_report.header_line(t, 'missing features:')
                       for t in (ours, up.stdout)]
            self.assertIsNotNone(missing[0], ours)
            self.assertEqual(missing[0], missing[1], data)

    def test_file_is_plain(self):
        self.assertEqual(event_count(PERF, self.merged, 'CALLCHAIN_DEFERRED'), 0)
        self.assertEqual(event_count(PERF, self.merged, 'SAMPLE'), NR_SAMPLES)
        r = run([PERF, 'evlist', '-v', '-i', self.merged])
        self.assertNotIn('defer_callchain', r.stdout)
        self.assertNotIn('defer_output', r.stdout)

    def test_want_is_stitched(self):
        user = sum(1 for _, ips in self.want if len(ips) > 1 and
                   any(not ip.startswith('ffff') for ip in ips))
        self.assertGreater(user, NR_SAMPLES * 9 // 10)

    def check_reader(self, perf, syms_only=False):
        got = script_stacks(perf, self.merged, self.sym_args())
        want = self.want
        if syms_only:
            def name(frame):
                sym = frame.split(' ', 1)[1]
                # 6.1 names PLT entries by the section's first symbol (_init).
                return '<plt>' if sym.endswith('@plt') or sym == '_init' else sym

            def syms(stacks):
                return [(t, tuple(name(f) for f in frames)) for t, frames in stacks]
            got, want = syms(got), syms(want)
        self.assertEqual(len(got), len(want))
        diff = [(a, b) for a, b in zip(got, want) if a != b]
        self.assertEqual(len(diff), 0, 'first differences: %r' % diff[:2])

    def test_ours(self):
        self.check_reader(PERF)

    def test_upstream_7_2(self):
        common.need(PERF_UPSTREAM)
        self.check_reader(PERF_UPSTREAM)

    def test_debian_6_1(self):
        if not distro_perf_works():
            raise unittest.SkipTest('%s does not run here' % DISTRO_PERF)
        # perf 6.1 prints user ips relative to their map: compare symbols.
        self.check_reader(DISTRO_PERF, syms_only=True)

    def test_alias_and_pipe(self):
        out1, out = self.path('pipe-in.data'), self.path('merged-pipe.data')
        pipe(['true'], [PERF, 'inject', '-i', DEFER, '-o', '-'], out1)
        pipe(['cat', out1], [PERF, 'inject', '--merge-deferred'], out)
        self.assertEqual(event_count(PERF, out, 'CALLCHAIN_DEFERRED'), 0)
        self.assertTrue(script_stacks(PERF, out, self.sym_args()) == self.want,
                        'stacks differ')

    def test_aslr_merge(self):
        out = self.path('merged-aslr.data')
        run([PERF, 'inject', '--aslr', '--merge-callchains', '-i', DEFER, '-o', out])
        r = run([PERF, 'script', '-i', out, '-F', 'ip,sym'] + self.sym_args())
        self.assertTrue('level_a' in r.stdout, 'no stitched user frame')
        self.assertEqual(event_count(PERF, out, 'CALLCHAIN_DEFERRED'), 0)


# The bottom of a 200 deep recursion spins until the process has used
# argv[2] ms of CPU time (CLOCK_PROCESS_CPUTIME_ID, measured by itself):
# at cpu-clock's period of DEEP_PERIOD_US of that time, the samples there
# are a property of the work, not of the machine's load.
DEEP_C = r'''
#include <stdlib.h>
#include <time.h>
volatile unsigned long sink;
static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
__attribute__((noinline)) unsigned long rec(int d, double until)
{
	unsigned long x = d;

	if (d == 0) {
		while (cpu_ms() < until)
			for (unsigned long i = 0; i < 100000UL; i++)
				sink += i;
		return sink;
	}
	x += rec(d - 1, until);
	sink = x;
	return x;
}
int main(int argc, char **argv)
{
	rec(argc > 1 ? atoi(argv[1]) : 200, argc > 2 ? atof(argv[2]) : 100);
	return 0;
}
'''
DEEP_CPU_MS = 100
DEEP_PERIOD_US = 5000
DEEP_STACK = 32768


class InjectMergeTwoEvents(common.PerfTestCase):
    """A real recording with the records on a dummy event (-a; perf record
    of a task since the records have ring buffers of their own): its
    merged file has two attrs, shrunk to the smallest attr size in place
    (a gap before the data), and reads as what it is."""

    def test_reads_clean(self):
        src = os.path.join(common.GUEST_FIXTURES, 'sys-defer.data')
        out = os.path.join(self.tmp, 'merged-two.data')
        run([PERF, 'inject', '--merge-callchains', '-i', src, '-o', out])
        r = run([PERF, 'evlist', '-i', out])
        self.assertEqual(r.stdout.split(), ['cpu-clock', 'dummy:u'])
        self.assertNotIn('WARNING', r.stderr)
        r = run([PERF, 'script', '-F', 'tid,ip', '-i', out])
        self.assertNotIn('WARNING', r.stderr)
        self.assertEqual(event_count(PERF, out, 'SAMPLE'), event_count(PERF, src, 'SAMPLE'))
        ours = [s.frames for s in perf_script.samples(r.stdout, 'tid,ip')]
        self.assertEqual(len(ours), event_count(PERF, src, 'SAMPLE'))


class ConvertCallchain(ToolsCase):
    """perf inject --convert-callchain on samples with more user frames than
    a callchain holds (upstream 7.2.13 writes one u64 past its buffer)."""

    def test_deep_stack_in_bounds(self):
        valgrind = shutil.which('valgrind')
        if not valgrind:
            self.skipTest('valgrind missing (scripts/install-deps.sh)')
        src, prog = self.path('deep.c'), self.path('deep')
        with open(src, 'w') as f:
            f.write(DEEP_C)
        run(['gcc', '-O1', '-g', '-fno-omit-frame-pointer', '-o', prog, src])
        data = self.path('deep.data')
        r = run([PERF, 'record', '-q', '-o', data] +
                cpu_record.args(DEEP_CPU_MS, DEEP_PERIOD_US, 'cpu-clock', DEEP_STACK) +
                ['--call-graph', 'dwarf,%d' % DEEP_STACK, '--', prog, '200',
                 str(DEEP_CPU_MS)], check=False)
        if r.returncode:
            self.skipTest('perf record does not work here: ' + r.stderr[-300:])
        # --no-inline: count the callchain's entries, not the frames inline
        # expansion adds (a sample in cpu_ms(), inlined in rec(), shows one
        # more), which would make the bound below depend on where the
        # deepest sample happened to land.
        frames = [len(s.frames) for s in perf_script.script(PERF, data, 'ip',
                                                            extra=('--no-inline',))[1]]
        deep = [n for n in frames if n >= 126]
        self.assertTrue(deep, cpu_record.too_few('samples with 126 frames or more', len(deep),
                                                 DEEP_CPU_MS, DEEP_PERIOD_US, PERF, data))
        for perf, bad in ((PERF, False), (PERF_UPSTREAM, True)):
            out = self.path('conv.data')
            r = run([valgrind, '-q', '--error-exitcode=99', perf, 'inject',
                     '--convert-callchain', '-i', data, '-o', out], check=False)
            self.assertEqual(r.returncode == 99, bad, r.stderr[-3000:])
            if not bad:
                self.assertNotIn('Invalid write', r.stderr)
                conv = [len(s.frames) for s in perf_script.script(PERF, out, 'ip',
                                                                  extra=('--no-inline',))[1]]
                self.assertEqual(len(conv), len(frames))
                self.assertEqual(max(conv), 126)


if __name__ == '__main__':
    unittest.main()
