# SPDX-License-Identifier: GPL-2.0
"""series/manifest: which commit of the series carries each overlay item.

Debian control style: 'Field: value', continuation lines start with a
space, ' .' is an empty line, stanzas end at a blank line, '#' starts a
comment line.  The first stanza is the cover letter's; each other one is
a commit, its overlay items in 'Files'.

Two readers: scripts/series.py (the commits) and scripts/overlay.py (the
order in which the layers of one upstream file apply: series order).
"""
import os
import re

MANIFEST = os.path.join('series', 'manifest')
FIELDS = ('Subject', 'Message-From', 'Body', 'Fixes', 'Files', 'Split',
          'Cover-Subject', 'Cover')


class ManifestError(Exception):
    pass


def parse_stanzas(text):
    """[(fields, first line number)] of TEXT."""
    stanzas, cur, field, start = [], {}, None, 0
    for n, raw in enumerate(text.splitlines() + [''], 1):
        if raw.startswith('#'):
            continue
        if not raw.strip():
            if cur:
                stanzas.append((cur, start))
            cur, field = {}, None
            continue
        if raw[0] in ' \t':
            if field is None:
                raise ManifestError('%s:%d: continuation line outside a field' % (MANIFEST, n))
            line = raw.strip()
            cur[field] += '\n' + ('' if line == '.' else line)
            continue
        m = re.match(r'([A-Za-z-]+):\s*(.*)$', raw)
        if not m or m.group(1) not in FIELDS:
            raise ManifestError('%s:%d: not a field of the manifest: %s' % (MANIFEST, n, raw))
        if not cur:
            start = n
        field = m.group(1)
        if field in cur:
            raise ManifestError('%s:%d: %s given twice' % (MANIFEST, n, field))
        cur[field] = m.group(2)
    return stanzas


def read(top):
    """The stanzas of TOP's manifest, [] when it has none."""
    try:
        with open(os.path.join(top, MANIFEST)) as f:
            return parse_stanzas(f.read())
    except FileNotFoundError:
        return []


def item_order(top):
    """{overlay item: its position in the series}, in commit order and,
    within a commit, in the order its Files give."""
    order = {}
    for fields, _ in read(top):
        for f in fields.get('Files', '').split():
            order.setdefault(f, len(order))
    return order
