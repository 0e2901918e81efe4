# SPDX-License-Identifier: GPL-2.0
"""Helpers shared by the perf tools tests on the real deferred recordings."""
import os
import re
import shutil
import tempfile
import unittest

import common
from common import PERF, PERF_UPSTREAM, REAL, TREE, BUILD, run

DEFER = os.path.join(REAL, 'defer-st.data')
FP = os.path.join(REAL, 'fp-st.data')
DISTRO_PERF = os.environ.get('PERF_DISTRO', '/usr/bin/perf')
NR_RECORDS = 1481
NR_SAMPLES = 6756
ARTIFACTS = os.path.join(BUILD, 'test-artifacts')


def distro_perf_works():
    """Debian's /usr/bin/perf is a wrapper looking for perf_$(uname -r)."""
    if not os.path.exists(DISTRO_PERF):
        return False
    r = run([DISTRO_PERF, 'version'], check=False)
    return r.returncode == 0


class ToolsCase(unittest.TestCase):
    """Temp dir with the symfs and kallsyms the real recordings need."""

    @classmethod
    def setUpClass(cls):
        common.need(PERF)
        cls.tmp = tempfile.mkdtemp(prefix='perf-tools-test-')
        cls.kallsyms = common.kallsyms(cls.tmp)
        cls.symfs = os.path.join(cls.tmp, 'symfs')
        os.makedirs(os.path.join(cls.symfs, 'in'))
        shutil.copy(os.path.join(REAL, 'workload'), os.path.join(cls.symfs, 'in', 'workload'))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def sym_args(self):
        return ['--symfs', self.symfs, '--kallsyms', self.kallsyms]

    def path(self, name):
        return os.path.join(self.tmp, name)


def event_count(perf, data, name):
    """Count of a record type in perf report --stats (e.g. CALLCHAIN_DEFERRED)."""
    r = run([perf, 'report', '--stats', '-i', data])
    m = re.search(r'^\s*%s events:\s+(\d+)' % name, r.stdout, re.M)
    return int(m.group(1)) if m else 0


def deferred_records(perf, data):
    """(pid/tid, cookie, ips) of every PERF_RECORD_CALLCHAIN_DEFERRED in perf report -D."""
    r = run([perf, 'report', '-D', '-i', data])
    recs = []
    cur = None
    for line in r.stdout.splitlines():
        m = re.search(r'PERF_RECORD_CALLCHAIN_DEFERRED\(IP, 0x[0-9a-f]+\): (\d+)/(\d+): (0x[0-9a-f]+)', line)
        if m:
            cur = [m.group(1), m.group(3), []]
            recs.append(cur)
            continue
        m = re.match(r'\.{5}\s+\d+: ([0-9a-f]+)$', line)
        if m and cur is not None:
            cur[2].append(m.group(1))
        elif not line.startswith('.'):
            cur = None
    return recs


def script_stacks(perf, data, extra, env=None):
    """Every sample as (tid time, tuple of "ip sym"), from perf script."""
    # With ip alone perf 6.1 prints user ips relative to their map: add sym.
    r = run([perf, 'script', '-i', data, '-F', 'tid,time,ip,sym'] + extra, env=env)
    stacks = []
    cur = None
    for line in r.stdout.splitlines():
        m = re.match(r'\s*(\d+)\s+(\d+\.\d+):', line)
        if m:
            cur = [m.group(1) + ' ' + m.group(2), []]
            stacks.append(cur)
            continue
        m = re.match(r'\s+([0-9a-f]+)\s+(\S*)', line)
        if m and cur is not None:
            cur[1].append(m.group(1) + ' ' + m.group(2))
    return sorted((t, tuple(ips)) for t, ips in stacks)
