# SPDX-License-Identifier: GPL-2.0
"""The counter blocks perf prints ("Deferred callchains:", "SFrame
unwinding:", "Damaged input:" in perf report --stats, perf script and
perf inject), read with the labels perf's C source prints.

A block is its title line, then one line a counter, "  LABEL  VALUE"
(and lines of other formats the same functions print, such as the
rejected sections after "SFrame unwinding:").  The labels are not copied
here: they are read from the function that prints the title, in the
built tree's tools/perf/util/*.c (build/ours: the overlay applied), and
from the *__fprintf*() functions it calls.  A block that prints a label
the source does not have fails, and so does asking for a label the
source does not print:

    st = perf_counters.block(text, 'Deferred callchains')
    st['stitched late']             # KeyError for a label perf has not
    perf_counters.by_key(st)        # {'stitched_late': ..., ...}
"""
import glob
import os
import re

import common

_SOURCES = None
_BLOCKS = {}
_STR = r'"(?:[^"\\]|\\.)*"'


def _sources():
    """{path: text} of the C files perf's counter blocks may live in."""
    global _SOURCES
    if _SOURCES is None:
        perf = os.path.join(common.TREE, 'tools', 'perf')
        common.need(perf)
        _SOURCES = {}
        for p in sorted(glob.glob(os.path.join(perf, 'util', '*.c')) +
                        glob.glob(os.path.join(perf, 'builtin-*.c'))):
            with open(p, errors='replace') as f:
                _SOURCES[p] = f.read()
    return _SOURCES


def _function_at(text, pos):
    """The body of the C function (kernel style: '{' and '}' in column 0)
    around offset @pos of @text."""
    start = text.rfind('\n{\n', 0, pos)
    end = text.find('\n}\n', pos)
    return text[start:end]


def _function(name):
    for text in _sources().values():
        m = re.search(r'^\w[^;{]*\b%s\([^;{]*\)\n\{\n' % re.escape(name), text, re.M)
        if m:
            return _function_at(text, m.end() - 1)
    return ''


def _literal(tokens):
    """The string of C literals and PRI* macros @tokens, PRIu64 as 'u'."""
    out = ''
    for t in re.findall(r'%s|PRI\w+' % _STR, tokens):
        out += t[-1] if t.startswith('PRI') else \
            t[1:-1].encode().decode('unicode_escape')
    return out


def _format_regex(fmt):
    """A printf format as a regex of the lines it prints."""
    out = ''
    for part in re.split(r'(%[-0-9.]*(?:l|ll|z)?[sudxc])', fmt.strip('\n')):
        if part.startswith('%'):
            out += r'.*' if part.endswith('s') or part.endswith('c') else r'\s*[0-9a-f]+'
        else:
            out += re.escape(part)
    return re.compile('^' + out + '$')


def _scan(body, labels, others, seen):
    # Rows of a table: { "label", value },
    labels += [m.strip() for m in re.findall(r'\{\s*"((?:[^"\\]|\\.)*)"\s*,', body)]
    for m in re.finditer(r'fprintf\(\s*\w+\s*,\s*((?:%s|PRI\w+|\s)+)(,[^;]*)?\);' % _STR,
                         body):
        fmt = _literal(m.group(1))
        args = (m.group(2) or '').lstrip(',').strip()
        if '%-24s' in fmt and args.startswith('"'):
            labels.append(_literal(args.split(',', 1)[0]).strip())
        elif fmt.strip('\n') and not fmt.endswith(':\n') and '%-24s' not in fmt:
            others.append(_format_regex(fmt))
    for name in re.findall(r'\b(\w+__fprintf\w*)\(', body):
        if name not in seen:
            seen.add(name)
            _scan(_function(name), labels, others, seen)


def source_block(title):
    """(labels, other line regexes) of perf's "TITLE:" block, from the C
    source; AssertionError when no function prints it."""
    if title not in _BLOCKS:
        lit = '"\\n%s:\\n"' % title
        for path, text in _sources().items():
            pos = text.find(lit)
            if pos >= 0:
                labels, others = [], []
                _scan(_function_at(text, pos), labels, others, set())
                _BLOCKS[title] = (labels, others)
                break
        else:
            raise AssertionError('no function of %s prints %s' %
                                 (os.path.join(common.TREE, 'tools/perf'), lit))
        if not _BLOCKS[title][0]:
            raise AssertionError('%s: found no counter labels in the source' % title)
    return _BLOCKS[title]


def labels(title):
    """The counter labels of the "TITLE:" block, in the order perf prints them."""
    return list(source_block(title)[0])


class Counters(dict):
    """A block's {label: value}; only labels perf prints can be asked for."""

    def __init__(self, title, values):
        super().__init__(values)
        self.title = title

    def _known(self, label):
        if label not in labels(self.title):
            raise KeyError('%r is not a counter perf prints under "%s:" (it has: %s)' %
                           (label, self.title, ', '.join(labels(self.title))))

    def __getitem__(self, label):
        self._known(label)
        return super().__getitem__(label)

    def get(self, label, default=None):
        self._known(label)
        return super().get(label, default)


_COUNTER = re.compile(r'^\s+(\S.*?)\s+(\d+)$')


def block(text, title):
    """The "TITLE:" block of @text as Counters ({} when there is none)."""
    known, others = source_block(title)
    values = {}
    sect = text.split('\n' + title + ':\n', 1)
    if len(sect) < 2 and text.startswith(title + ':\n'):
        sect = ['', text[len(title) + 2:]]
    for line in (sect[1] if len(sect) == 2 else '').splitlines():
        m = _COUNTER.match(line)
        if m and m.group(1) in known:
            values[m.group(1)] = int(m.group(2))
        elif any(r.match(line) for r in others):
            continue
        elif m and not values.keys() >= set(known):
            raise AssertionError('"%s:" block: counter %r is not one perf\'s source '
                                 'prints (%s)' % (title, m.group(1), ', '.join(known)))
        else:
            break
    return Counters(title, values)


def key(label):
    """A label as a Python name: 'fell back (fp)' -> 'fell_back_fp'."""
    return re.sub(r'\W+', '_', label).strip('_').lower()


def by_key(counters):
    """Counters by key(label)."""
    return {key(k): v for k, v in counters.items()}


def stats(perf, data, title, **kw):
    """The "TITLE:" block of perf report --stats -i @data."""
    return block(common.run([perf, 'report', '--stats', '-i', data], **kw).stdout, title)


def deferred(text):
    """The "Deferred callchains:" block of @text."""
    return block(text, 'Deferred callchains')


def accounted(st):
    """How many deferred samples the "Deferred callchains" block @st says
    ended somewhere: stitched, stitched late, fell back (by any walk) or
    lost.  Each is counted once: the sum is its "deferred samples"."""
    return sum(v for k, v in st.items()
               if k in ('stitched', 'stitched late', 'user stack lost') or
               k.startswith('fell back ('))


# How much the stitcher held, not what became of the samples: a file mapped
# whole has its records known ahead and holds nearly nothing, a pipe holds
# the samples that wait for their record (deferred-callchain.h).
HOLDING = ('max_pending', 'max_queued', 'max_pending_kib', 'max_held_kib')


def outcome(counters):
    """@counters (by label or by key) without the HOLDING ones."""
    return {k: v for k, v in counters.items() if key(k) not in HOLDING}
