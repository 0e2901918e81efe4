# SPDX-License-Identifier: GPL-2.0
"""The guest checks (test_guest.Checks) on the real 7.2 recordings kept in
tests/fixtures/guest-7.2: host only, no qemu needed."""
import gzip
import os
import shutil
import tempfile
import unittest

import common
from test_guest import Checks

FIX = os.path.join(common.FIXTURES, 'guest-7.2')


def gunzip(src, dst):
    with gzip.open(src, 'rb') as f, open(dst, 'wb') as o:
        shutil.copyfileobj(f, o)


class GuestFixtures(Checks, unittest.TestCase):
    MIN_SAMPLES = 100
    figures = {}

    @classmethod
    def setUpClass(cls):
        for p in (common.PERF, common.PERF_UPSTREAM):
            common.need(p)
        cls.tmp = tempfile.mkdtemp(prefix='guest-fixtures.')
        cls.out = FIX
        cls.kallsyms = os.path.join(cls.tmp, 'kallsyms')
        gunzip(os.path.join(FIX, 'guest-kallsyms.gz'), cls.kallsyms)
        dwork = os.path.join(cls.tmp, 'dwork')
        gunzip(os.path.join(FIX, 'dwork.gz'), dwork)
        cls.bid = os.path.join(cls.tmp, 'buildid')
        common.run([common.PERF, '--buildid-dir', cls.bid, 'buildid-cache', '-a', dwork])
        cls.init_caches()

    @classmethod
    def tearDownClass(cls):
        cls.print_figures()
        shutil.rmtree(cls.tmp, ignore_errors=True)


if __name__ == '__main__':
    unittest.main()
