# SPDX-License-Identifier: GPL-2.0
"""perf script reading a pipe (perf inject -i FILE -o - | perf script)
prints what it prints reading FILE, with the fields of -F as given.

A pipe's attrs come in the stream: perf script turned ip and sym on for
each event with callchains as its attr came, over what -F asked for
(-F tid,ip printed symbols from a pipe, none from the file), in
pristine 7.2.13 too."""
import subprocess

from common import PERF, run
from deferred_tools import DEFER, FP, ToolsCase

FIELDS = [None, 'tid,ip', 'tid,ip,sym', 'tid,time', 'comm,tid,time,ip,sym,dso']


class PipeLikeFile(ToolsCase):

    def script_pipe(self, data, args):
        inj = subprocess.Popen([PERF, 'inject', '-i', data, '-o', '-'],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            return run([PERF, 'script', '-i', '-'] + args, stdin=inj.stdout).stdout
        finally:
            inj.stdout.close()
            inj.wait()

    def check(self, data):
        for fields in FIELDS:
            args = (['-F', fields] if fields else []) + self.sym_args()
            with self.subTest(data=data, fields=fields):
                want = run([PERF, 'script', '-i', data] + args).stdout
                self.assertEqual(self.script_pipe(data, args), want)

    def test_frame_pointers(self):
        self.check(FP)

    def test_deferred(self):
        """Stitched from the pipe as from the file."""
        self.check(DEFER)
