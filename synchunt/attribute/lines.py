"""Exact lines for trace call sites: Kineto names a frame by its function's first line, so a trace sync points at
the ``def``; where the source is readable, the lint's own form matchers find the line inside that function that
matches the sync's rule (``line_source: exact``). Ambiguous or unreadable: the first line stays (``def``)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from synchunt.attribute.model import Sync
from synchunt.lint.locate import locate
from synchunt.source_map import find_source, source_roots
from synchunt.trace import Trace


def exact_lines(records: Sequence[Sync], trace: Trace) -> tuple[Sync, ...]:
    """``records`` with each ``def``-line call site resolved to its syncing line where the source shows it."""
    roots = tuple(source_roots([trace.synchunt]))
    cache: dict[tuple[str, int, str, str], int | None] = {}  # one read and one lint per function and rule
    resolved = []
    for record in records:
        site = record.call_site
        if site is None or site.line_source != "def" or not site.line:
            resolved.append(record)
            continue
        key = (site.file, site.def_line or site.line, site.function, record.rule)
        if key not in cache:
            cache[key] = _line(site.file, roots, *key[1:])
        line = cache[key]
        if line is None:
            resolved.append(record)
            continue
        exact = msgspec.structs.replace(site, line=line, def_line=site.def_line or site.line, line_source="exact")
        resolved.append(msgspec.structs.replace(record, call_site=exact))
    return tuple(resolved)


def _line(file: str, roots: tuple[str, ...], def_line: int, function: str, rule: str) -> int | None:
    path = find_source(file, roots)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError):
        return None
    found = locate(source, path, def_line, function, [rule])
    return found.lines[0] if found.line_source == "exact" and len(found.lines) == 1 else None
