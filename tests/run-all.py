#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Run every test of the project and end with one summary line.

Host-side tests are Python unittest modules, tests/<area>/test_*.py; each
area may also be run alone: tests/run-all.py deferred sframe.
"""
import os
import sys
import time
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))


class Result(unittest.TextTestResult):
    def startTest(self, test):
        self._t0 = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self.stream.write('    (%.1fs)\n' % (time.monotonic() - self._t0))


def main():
    areas = sys.argv[1:]
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    tests = os.path.join(TOP, 'tests')
    known = [a for a in sorted(os.listdir(tests))
             if os.path.isdir(os.path.join(tests, a)) and a not in ('lib', 'fixtures')]
    unknown = [a for a in areas if a not in known]
    if unknown:
        print('run-all: no test area %s (areas: %s)' % (', '.join(unknown), ' '.join(known)),
              file=sys.stderr)
        sys.exit(2)
    for area in sorted(os.listdir(tests)):
        d = os.path.join(tests, area)
        if not os.path.isdir(d) or area in ('lib', 'fixtures'):
            continue
        if areas and area not in areas:
            continue
        suite.addTests(loader.discover(d, pattern='test_*.py', top_level_dir=d))
    runner = unittest.TextTestRunner(verbosity=2, resultclass=Result, stream=sys.stdout)
    res = runner.run(suite)
    failed = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    skipped = len(res.skipped)
    passed = res.testsRun - failed - skipped
    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    sys.exit(1 if failed or res.testsRun == 0 else 0)


if __name__ == '__main__':
    main()
