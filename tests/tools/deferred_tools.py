# SPDX-License-Identifier: GPL-2.0
"""Helpers shared by the perf tools tests on the real deferred recordings."""
import os
import shutil

import common
import perf_dump
import perf_report
import perf_script
from common import REAL, BUILD, run

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


class ToolsCase(common.PerfTestCase):
    """Temp dir with the symfs and kallsyms the real recordings need."""
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.kallsyms = common.kallsyms(cls.tmp)
        cls.symfs = os.path.join(cls.tmp, 'symfs')
        os.makedirs(os.path.join(cls.symfs, 'in'))
        shutil.copy(os.path.join(REAL, 'workload'), os.path.join(cls.symfs, 'in', 'workload'))

    def sym_args(self):
        return ['--symfs', self.symfs, '--kallsyms', self.kallsyms]

    def path(self, name):
        return os.path.join(self.tmp, name)


def event_count(perf, data, name):
    """Count of a record type in perf report --stats (e.g. CALLCHAIN_DEFERRED)."""
    return perf_report.event_counts(run([perf, 'report', '--stats', '-i', data]).stdout).get(name, 0)


def deferred_records(perf, data):
    """(pid, cookie, ips) of every PERF_RECORD_CALLCHAIN_DEFERRED in perf report -D."""
    return [(e.pid, e.cookie, e.callchain)
            for e in perf_dump.dump(perf, data, types=('CALLCHAIN_DEFERRED',))]


def script_stacks(perf, data, extra, env=None):
    """Every sample as (tid time, tuple of "ip sym"), from perf script."""
    # With ip alone perf 6.1 prints user ips relative to their map: add sym.
    fields = 'tid,time,ip,sym'
    r = run([perf, 'script', '-i', data, '-F', fields] + extra, env=env)
    return sorted(('%d %s' % (s.tid, s.time), tuple('%x %s' % (f.addr, f.sym or '')
                                                    for f in s.frames))
                  for s in perf_script.samples(r.stdout, fields))
