# SPDX-License-Identifier: GPL-2.0
"""Build the SFrame corpus: src/*.c and src/asm.S assembled with --gsframe
by binutils 2.40 (v1, the host's), 2.44 (v2, trixie) and 2.47 (v3, sid), as
a PIE with a shared library, a non-PIE and a static executable; and the
libsframe oracle of each release.  Nothing is committed: it is all built
here, once per source change, under $CACHE_DIR/sframe-corpus."""
import hashlib
import os
import shutil
import subprocess
import unittest

import common

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, 'src')
CACHE = os.environ.get('CACHE_DIR', os.path.join(common.TOP, 'cache'))
TC = os.path.join(CACHE, 'sframe-tc')

# version -> (suite, readelf able to read it)
VERSIONS = {1: None, 2: 'trixie', 3: 'sid'}
VARIANTS = ('pie', 'nopie', 'static', 'libcorpus.so')


def toolchain(suite):
    """Folder of as/ld/readelf wrappers for SUITE's binutils (None: host)."""
    if suite is None:
        return None
    dest = os.path.join(TC, suite)
    r = subprocess.run([os.path.join(HERE, 'toolchain.sh'), suite, dest],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode:
        raise unittest.SkipTest('no %s binutils: %s' % (suite, r.stdout[-500:]))
    return dest


def readelf(version):
    tc = toolchain(VERSIONS[version])
    return os.path.join(tc, 'bin', 'readelf') if tc else 'readelf'


def _digest():
    h = hashlib.sha256()
    for name in sorted(os.listdir(SRC)) + ['toolchain.sh']:
        path = os.path.join(SRC, name) if name != 'toolchain.sh' else \
            os.path.join(HERE, name)
        h.update(name.encode())
        with open(path, 'rb') as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def _run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode:
        raise AssertionError('%s failed:\n%s' % (' '.join(cmd), r.stdout[-3000:]))


def build():
    """Return the corpus folder: <dir>/v<N>/{pie,nopie,static,libcorpus.so,
    oracle}."""
    out = os.path.join(CACHE, 'sframe-corpus', _digest())
    if os.path.exists(os.path.join(out, '.done')):
        return out
    tmp = out + '.tmp'
    shutil.rmtree(tmp, ignore_errors=True)
    src = lambda n: os.path.join(SRC, n)
    for v, suite in VERSIONS.items():
        tc = toolchain(suite)
        d = os.path.join(tmp, 'v%d' % v)
        os.makedirs(d)
        cc = ['gcc', '-O2', '-g', '-Wa,--gsframe']
        if tc:
            cc.append('-B%s/bin/' % tc)
        _run(cc + ['-fPIC', '-shared', '-o', os.path.join(d, 'libcorpus.so'),
                   src('lib.c')])
        _run(cc + ['-o', os.path.join(d, 'pie'), src('corpus.c'), src('asm.S'),
                   '-L' + d, '-lcorpus', '-Wl,-rpath,$ORIGIN'])
        _run(cc + ['-no-pie', '-o', os.path.join(d, 'nopie'), src('corpus.c'),
                   src('asm.S'), src('lib.c')])
        _run(cc + ['-static', '-o', os.path.join(d, 'static'), src('corpus.c'),
                   src('asm.S'), src('lib.c')])
        # The oracle links the libsframe of the same binutils, statically.
        root = os.path.join(tc, 'root') if tc else '/'
        lib = os.path.join(root, 'usr/lib/x86_64-linux-gnu/libsframe.a')
        if not os.path.exists(lib):
            raise unittest.SkipTest('%s missing (binutils-dev)' % lib)
        _run(['gcc', '-O1', '-I' + os.path.join(root, 'usr/include'),
              '-o', os.path.join(d, 'oracle'), src('oracle.c'), '-static', lib])
    open(os.path.join(tmp, '.done'), 'w').close()
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    return out


def section(path, tmpdir):
    """(.sframe bytes written to a file, its address) of ELF PATH."""
    out = os.path.join(tmpdir, os.path.basename(path) + '.sframe')
    _run(['objcopy', '-O', 'binary', '--only-section=.sframe', path, out])
    r = subprocess.run(['readelf', '-SW', path], stdout=subprocess.PIPE,
                       text=True)
    for line in r.stdout.splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 3 and f[1] == '.sframe':
            return out, int(f[3], 16)
    raise AssertionError('%s: no .sframe' % path)
