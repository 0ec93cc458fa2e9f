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
import textwrap

from synchunt.attribute import Analysis, SiteSummary
from synchunt.source_map import CapturedSources, captured_sources, file_digest, parser_lines

EXACT_SOURCES = ("exact", "runtime")


def site_sources(analysis: Analysis) -> dict[str, str]:
    """Call site label → the stripped text of its line, for the sites whose line could be read as it was when
    the traces of its syncs were captured (a before/after comparison reads the file as it is now: the line of
    the trace before the edit is not shown from the edited file)."""
    metadata = {info.path: info.synchunt for info in analysis.traces}
    traces_of: dict[str, set[str]] = {}
    for record in analysis.records:
        traces_of.setdefault(record.site, set()).add(record.trace)
    sources_of: dict[frozenset[str], CapturedSources] = {}
    found = {}
    for site in analysis.sites:
        traces = frozenset(traces_of.get(site.site, ()))
        if traces not in sources_of:
            sources_of[traces] = captured_sources(metadata[path] for path in sorted(traces) if path in metadata)
        text = source_line(site, sources_of[traces])
        if text:
            found[site.site] = text
    return found


def source_line(site: SiteSummary, sources: CapturedSources) -> str | None:
    """The text of the statement at the site's line: that line, or the whole statement when one spreads over a few
    lines (``if a and (\n b):``), dedented; ``None`` when it cannot be read."""
    if site.line_source not in EXACT_SOURCES or not site.file or not site.line or site.line < 1:
        return None
    path = sources.find(site.file)
    if path is None:
        return None
    text, tree = _read(path, file_digest(path))  # per content: a file edited in this process is read anew
    first, last = _statement_lines(tree, site.line)
    lines = [text[number - 1].rstrip() for number in range(first, last + 1) if number <= len(text)]
    return textwrap.dedent("\n".join(lines)).strip() or None


MAX_STATEMENT_LINES = 10


def _statement_lines(tree: ast.Module | None, line: int) -> tuple[int, int]:
    """The first and last line of the innermost statement holding ``line`` (at most a few lines: a compound
    statement's header only), or the line alone."""
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
def _read(path: str, digest: str | None) -> tuple[list[str], ast.Module | None]:
    """The file's lines and syntax tree (none when it does not parse), cached per path and content."""
    try:
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
    except (OSError, UnicodeDecodeError):
        return [], None
    lines = parser_lines(source)
    try:
        return lines, ast.parse(source, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return lines, None
