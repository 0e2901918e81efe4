# SPDX-License-Identifier: GPL-2.0
"""perf report output, parsed in one place: the event counts of --stats
("CALLCHAIN_DEFERRED events: 1481"), the "# ..." header lines of
--header-only and of every --stdio report, and a --stdio report's body.
The counter blocks of --stats ("Deferred callchains:", ...) are
perf_counters.py's."""
import re


def event_counts(text):
    """perf report --stats: {record type: count} ("SAMPLE", "COMM", ...)."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r'^\s*(\S+) events:\s+(\d+)', text, re.M)}


def header(text):
    """The header lines, "# " and the trailing blanks stripped."""
    return [ln[1:].strip() for ln in text.splitlines() if ln.startswith('#')]


def header_line(text, prefix):
    """The first header line that starts with @prefix ("missing features:",
    "Deferred callchains:"), or None."""
    return next((ln for ln in header(text) if ln.startswith(prefix)), None)


def header_numbers(text, prefix):
    """The numbers of header line @prefix, in order, or None: "Deferred
    callchain records: 1479, 0 orphans, 2 duplicates" -> [1479, 0, 2]."""
    line = header_line(text, prefix)
    return None if line is None else \
        [int(n) for n in re.findall(r'\d+', line[len(prefix):])]


def body(text):
    """A --stdio report without its header lines."""
    return '\n'.join(ln for ln in text.splitlines() if not ln.startswith('#'))


def body_lines(text):
    """The non-blank lines of a --stdio report's body, right-stripped."""
    return [ln.rstrip() for ln in body(text).splitlines() if ln.strip()]
