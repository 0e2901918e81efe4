# SPDX-License-Identifier: GPL-2.0
"""PLT entries in srcline's fallback (util/srcline.c): perf names them
itself (dso__synthesize_plt_symbols()), no DWARF describes them, and once
the first addr2line style finds no line there, perf asks no other. Upstream
went on to binutils' addr2line: a process, reading all of the dso's DWARF
(all of libc6-dbg's for a sample in libc's PLT) to answer "??:0".

The addr2line perf runs is a wrapper that logs its calls. The output must
be upstream's, in every mode, with no call; upstream's calls say that the
case is the one meant.
"""
import os
import shutil
import stat
import unittest

import common
import inlinedata
import perf_report

PROG_C = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) int sq(int x)
{
	return x * x;
}

int work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += sq(i) ^ (s >> 3);
	return s;
}

int main(int argc, char **argv)
{
	char *p = malloc(64);

	strcpy(p, argv[0]);
	puts(p);
	free(p);
	return work(argc * 1000) & 1;
}
'''


class TestPlt(common.PerfTestCase):
    need_upstream = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        common.need_tools('gcc', 'objdump', 'addr2line')
        src = os.path.join(cls.tmp, 'prog.c')
        with open(src, 'w') as f:
            f.write(PROG_C)
        cls.prog = os.path.join(cls.tmp, 'prog')
        common.run(['gcc', '-O2', '-g', '-o', cls.prog, src])
        # an addr2line that logs its calls, then is binutils'
        cls.bindir = os.path.join(cls.tmp, 'bin')
        os.mkdir(cls.bindir)
        cls.log = os.path.join(cls.tmp, 'addr2line.log')
        wrapper = os.path.join(cls.bindir, 'addr2line')
        with open(wrapper, 'w') as f:
            f.write('#!/bin/sh\necho "$@" >> %s\nexec %s "$@"\n' %
                    (cls.log, shutil.which('addr2line')))
        os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IXUSR)
        cls.plt = inlinedata.objdump_insns(cls.prog, (), r'.*@plt')
        cls.lines = inlinedata.objdump_insns(cls.prog, (), r'work')
        cls.data = os.path.join(cls.tmp, 'perf.data')
        inlinedata.write_samples(cls.prog, cls.plt + cls.lines, cls.data, callers=1)

    def run_perf(self, perf, *args):
        """perf's output, and the addr2line calls it made."""
        if os.path.exists(self.log):
            os.unlink(self.log)
        env = dict(os.environ, PATH=self.bindir + os.pathsep + os.environ['PATH'])
        out = common.run([perf] + list(args), env=env).stdout
        calls = []
        if os.path.exists(self.log):
            with open(self.log) as f:
                calls = f.read().splitlines()
        return out, calls

    def same_without_addr2line(self, *args, body=lambda out: out):
        ours, ours_calls = self.run_perf(common.PERF, *args)
        up, up_calls = self.run_perf(common.PERF_UPSTREAM, *args)
        self.assertEqual(body(ours), body(up), 'perf %s differs from upstream' %
                         ' '.join(args))
        self.assertTrue(up_calls, 'upstream ran no addr2line: nothing tested')
        self.assertEqual(ours_calls, [])
        return ours

    def test_program_has_plt_samples(self):
        self.assertGreaterEqual(len(self.plt), 6)
        self.assertGreater(len(self.lines), 5)
        out = common.run([common.PERF, 'script', '-F', 'ip,sym', '-i', self.data]).stdout
        self.assertIn('puts@plt', out)
        # the .plt.got entry (an 8-byte jmp) named by its relocation
        self.assertIn('__cxa_finalize@plt', out)
        self.assertNotIn('offset_0x', out)

    def test_script(self):
        self.same_without_addr2line('script', '-i', self.data)

    def test_script_srcline(self):
        out = self.same_without_addr2line('script', '-i', self.data, '-F',
                                          'ip,sym,symoff,dso,srcline')
        # the lines perf does find are still found
        srcl = inlinedata.srclines(out)
        for a in self.lines:
            where = srcl[inlinedata.runtime_addr(self.prog, a)]
            self.assertTrue(where[-1].startswith('prog.c:'), '%#x: %s' % (a, where))

    def test_report_srcline(self):
        self.same_without_addr2line('report', '-i', self.data, '--stdio',
                                    '--sort', 'sym,srcline', '-g', 'caller,0.5,srcline',
                                    body=perf_report.body)


if __name__ == '__main__':
    unittest.main()
