# SPDX-License-Identifier: GPL-2.0
"""The guest checks (test_guest.Checks) on the real 7.2 recordings kept in
tests/fixtures/guest-7.2 (and, from boots of their own, the harsher
workloads in its harsh/, the task lifecycle workloads in its lifecycle/):
host only, no qemu needed."""
import os
import shutil
import tempfile
import unittest

import common
from test_guest import Checks, HARSH_RUNS, LIFECYCLE_RUNS

FIX = common.GUEST_FIXTURES


class GuestFixtures(Checks, unittest.TestCase):
    MIN_SAMPLES = 100
    DIR = FIX
    figures = {}

    @classmethod
    def setUpClass(cls):
        for p in (common.PERF, common.PERF_UPSTREAM):
            common.need(p)
        cls.tmp = tempfile.mkdtemp(prefix='guest-fixtures.')
        cls.out = cls.DIR
        cls.kallsyms, cls.bid = common.guest_symbols(cls.tmp, cls.DIR)
        cls.init_caches()

    def data(self, name):
        """NAME.data, or NAME.data.gz unpacked once into the temporary
        directory."""
        path = super().data(name)
        if not os.path.exists(path) and os.path.exists(path + '.gz'):
            path = os.path.join(self.tmp, os.path.basename(path))
            if not os.path.exists(path):
                common.gunzip(os.path.join(self.out, os.path.basename(path) + '.gz'), path)
        return path

    @classmethod
    def tearDownClass(cls):
        cls.print_figures()
        shutil.rmtree(cls.tmp, ignore_errors=True)


class HarshFixtures(GuestFixtures):
    """The harsher workloads of tests/guest/record.sh: fork/exec storm
    under -a, --threads, -z, pipe, pid namespace, 48 threads."""
    DIR = os.path.join(FIX, 'harsh')
    figures = {}

    def test_record_after_exit(self):
        """storm-defer.data has samples taken in do_exit() whose record
        comes ~50 us after the task's EXIT: they stitch all the same."""
        self.check_record_after_exit(list(HARSH_RUNS))


class LifecycleFixtures(GuestFixtures):
    """The task lifecycle workloads of tests/guest/record.sh (issue #24),
    smaller than the guest suite makes them: off-CPU under -a with
    sched_switch, signals on a sigaltstack, page faults inside read(), an
    exec storm (non-leader exec, vfork+exec), :u, :k, records deeper than
    perf_event_max_stack."""
    DIR = os.path.join(FIX, 'lifecycle')
    MIN_SAMPLES = 50
    # The kept files come from a run of 8 rounds (README.md): the :u one
    # has 18 samples below its recursion, the 400 deep one 8.
    MIN_LIFECYCLE = 30
    MIN_DEEP = 5
    figures = {}

    def test_all_there(self):
        for name in LIFECYCLE_RUNS:
            self.assertTrue(os.path.exists(self.data(name)), name)

if __name__ == '__main__':
    unittest.main()
