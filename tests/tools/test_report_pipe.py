# SPDX-License-Identifier: GPL-2.0
"""perf report reading a pipe (perf inject -i FILE -o - | perf report -i -)
prints what it prints reading FILE, in every view.

A pipe's attrs come in the stream, after perf report has chosen its
columns: it used to take the pipe for a recording without callchains
and drop the Children column (--children, the default), in pristine
7.2.13 too."""
import os
import re
import subprocess

import common
import deferred_scenario
import deferred_tools
from common import PERF, GUEST_FIXTURES, run
from perf_abi import S_IP, S_TID, S_TIME
from perfdata_writer import Evsel, Writer

VIEWS = [[], ['--children'], ['--no-children'], ['--children', '-g', 'caller'],
         ['--no-children', '-g', 'folded,0,callee']]
_TIP = re.compile(r'^# \(Tip: .*\)$', re.M)
_DRAWING = re.compile(r'[\s|-]+')


def report_text(text):
    """A --stdio report as compared: its header lines (the column names
    among them) less the random tip, and its body lines sorted, with the
    graph's drawing characters squeezed: entries and callchain branches
    of equal weight come in an order perf does not fix (it varies with
    the run)."""
    lines = _TIP.sub('', text).splitlines()
    head = [ln for ln in lines if ln.startswith('#')]
    body = sorted(_DRAWING.sub(' ', ln).strip() for ln in lines
                  if ln.strip() and not ln.startswith('#'))
    return '\n'.join(head + body)


def report_pipe(data, args, pre=()):
    """perf @pre inject -i @data -o - | perf @pre report -i - @args."""
    inj = subprocess.Popen([PERF] + list(pre) + ['inject', '-i', data, '-o', '-'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        r = run([PERF] + list(pre) + ['report', '-i', '-', '--stdio'] + args,
                stdin=inj.stdout)
    finally:
        inj.stdout.close()
        inj.wait()
    return r.stdout


def no_callchain_file(path):
    """A recording whose samples have no callchain."""
    w = Writer([Evsel(sample_type=S_IP | S_TID | S_TIME)])
    base = deferred_scenario.USER_TEXT[0]
    w.comm(100, 100, 'workload', exec=True)
    w.mmap2(100, 100, base, 0x1000, deferred_scenario.USER_TEXT_PGOFF,
            deferred_scenario.workload_path())
    for i in range(200):
        w.sample(base + 0x10 * (i % 7), 100, 100, 1000 + i)
    return w.save(path)


class PipeLikeFile(deferred_tools.ToolsCase):

    def check(self, data, views=VIEWS, extra=(), pre=()):
        """@extra: the symbol options, so that kernel frames are named alike
        (a pipe has no build-id to tell a foreign kernel from this one's)."""
        for view in views:
            args = list(view) + list(extra)
            with self.subTest(data=os.path.basename(data), view=' '.join(view)):
                want = report_text(run([PERF] + list(pre) +
                                       ['report', '-i', data, '--stdio'] + args).stdout)
                got = report_text(report_pipe(data, args, pre))
                self.assertEqual(got, want)

    def test_real_deferred(self):
        """The real 7.2 recording: Children and Self columns, stitched
        stacks, in every view."""
        self.check(deferred_tools.DEFER, extra=self.sym_args())
        out = report_pipe(deferred_tools.DEFER, ['--children'] + self.sym_args())
        self.assertRegex(out, r'(?m)^# Children\s+Self\s')

    def test_two_events(self):
        """Two events sharing the records (cpu-clock, task-clock)."""
        kallsyms, buildid = common.guest_symbols(self.tmp)
        self.check(os.path.join(GUEST_FIXTURES, 'two-defer.data'), views=VIEWS[:3],
                   extra=['--kallsyms', kallsyms], pre=['--buildid-dir', buildid])

    def test_no_callchain(self):
        """Samples without a callchain: no Children column, from a file
        or a pipe."""
        data = no_callchain_file(self.path('nocc.data'))
        self.check(data, views=VIEWS[:2])
        self.assertRegex(report_pipe(data, []), r'(?m)^# Overhead\s')
