"""The source line of each call site, read when the report is built, so that the fix can sit next to it.

Only a line the analysis knows exactly (``line_source`` "exact" or "runtime") of a ``.py`` file that is a
regular file on this machine, found as named, under the capture's project root or search path, or under the
working directory. Anything else (a trace from another machine, a file that moved) gives no line: the report
then shows the catalogue's example alone. The text is trace-independent source, but it still reaches the page
only as data (see ``synchunt.render.html.escape``).
"""

from __future__ import annotations

import ast
import functools
import linecache
import textwrap
from collections.abc import Iterable

from synchunt.attribute import Analysis, SiteSummary
from synchunt.source_map import find_source, source_roots

EXACT_SOURCES = ("exact", "runtime")


def site_sources(analysis: Analysis) -> dict[str, str]:
    """Call site label → the stripped text of its line, for the sites whose line could be read."""
    roots = source_roots(info.synchunt for info in analysis.traces)
    found = {}
    for site in analysis.sites:
        text = source_line(site, roots)
        if text:
            found[site.site] = text
    return found


def source_line(site: SiteSummary, roots: Iterable[str] = ()) -> str | None:
    """The text of the statement at the site's line: that line, or the whole statement when one spreads over a few
    lines (``if a and (\n b):``), dedented; ``None`` when it cannot be read."""
    if site.line_source not in EXACT_SOURCES or not site.file or not site.line or site.line < 1:
        return None
    path = find_source(site.file, roots)
    if path is None:
        return None
    first, last = _statement_lines(path, site.line)
    lines = [linecache.getline(path, number).rstrip() for number in range(first, last + 1)]
    return textwrap.dedent("\n".join(lines)).strip() or None


MAX_STATEMENT_LINES = 10


def _statement_lines(path: str, line: int) -> tuple[int, int]:
    """The first and last line of the innermost statement holding ``line`` (at most a few lines: a compound
    statement's header only), or the line alone."""
    tree = _parsed(path)
    best = (line, line)
    if tree is None:
        return best
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or not node.lineno <= line <= (node.end_lineno or node.lineno):
            continue
        body = getattr(node, "body", None)
        end = body[0].lineno - 1 if isinstance(body, list) and body and body[0].lineno > node.lineno else \
            (node.end_lineno or node.lineno)
        fits = node.lineno <= line <= end and end - node.lineno < MAX_STATEMENT_LINES
        if fits and (best == (line, line) or end - node.lineno <= best[1] - best[0]):
            best = (node.lineno, end)
    return best


@functools.lru_cache(maxsize=64)
def _parsed(path: str) -> ast.Module | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return ast.parse(handle.read(), filename=path)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
