# SPDX-License-Identifier: GPL-2.0
"""perf data convert --to-json on a recording made elsewhere: with
--kallsyms and --symfs it names the frames as perf script does with the
same options (before them it could only use this host's kernel symbols
and binaries: a guest recording got the host's kernel names)."""
import json
import os

import deferred_tools
import perf_script
from common import PERF, run

KERNEL_MIN = 0xffff800000000000


def json_samples(path):
    """{(tid, ns): [(ip, symbol or None)]} of a perf data convert --to-json
    file."""
    with open(path) as f:
        doc = json.load(f)
    out = {}
    for s in doc['samples']:
        out.setdefault((s['tid'], s['timestamp']), []).append(
            [(int(e['ip'], 16), e.get('symbol')) for e in s.get('callchain', [])])
    return out


def script_samples(args):
    """The same map from perf script (no inlined frames: the JSON has the
    callchain's entries only)."""
    r = run([PERF, 'script', '--ns', '--no-inline', '-F', 'tid,time,ip,sym'] + args)
    out = {}
    for s in perf_script.samples(r.stdout, 'tid,time,ip,sym'):
        out.setdefault((s.tid, s.ns), []).append(
            [(f.addr, None if f.sym == '[unknown]' else f.sym) for f in s.frames])
    return out


class ConvertJson(deferred_tools.ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.json = os.path.join(cls.tmp, 'defer.json')
        run([PERF, 'data', 'convert', '-i', deferred_tools.DEFER, '--to-json', cls.json,
             '--kallsyms', cls.kallsyms, '--symfs', cls.symfs])
        cls.got = json_samples(cls.json)
        cls.want = script_samples(['-i', deferred_tools.DEFER, '--kallsyms', cls.kallsyms,
                                   '--symfs', cls.symfs])

    def frames(self, samples, kernel):
        return {k: [[f for f in chain if (f[0] >= KERNEL_MIN) == kernel] for chain in v]
                for k, v in samples.items()}

    def test_every_sample(self):
        self.assertEqual(sum(map(len, self.got.values())), deferred_tools.NR_SAMPLES)
        self.assertEqual(self.got.keys(), self.want.keys())

    def test_kernel_frames(self):
        """The guest's kernel names, as perf script --kallsyms gives them."""
        got, want = self.frames(self.got, True), self.frames(self.want, True)
        self.assertEqual(got, want)
        names = {f[1] for v in got.values() for chain in v for f in chain}
        self.assertIn('entry_SYSCALL_64_after_hwframe', names)
        self.assertNotIn(None, names)

    def test_user_frames(self):
        """The workload's names, found under --symfs; the stitched user
        stacks, no cookie."""
        got, want = self.frames(self.got, False), self.frames(self.want, False)
        self.assertEqual(got, want)
        names = {f[1] for v in got.values() for chain in v for f in chain}
        self.assertIn('main', names)
