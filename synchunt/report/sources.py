"""The source line of each call site, read when the report is built, so that the fix can sit next to it.

Only a line the analysis knows exactly (``line_source`` "exact" or "runtime") of a ``.py`` file that is a
regular file on this machine, found as named, under the capture's project root or search path, or under the
working directory. Anything else (a trace from another machine, a file that moved) gives no line: the report
then shows the catalogue's example alone. The text is trace-independent source, but it still reaches the page
only as data (see ``synchunt.render.html.escape``).
"""

from __future__ import annotations

import linecache
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
    if site.line_source not in EXACT_SOURCES or not site.file or not site.line or site.line < 1:
        return None
    path = find_source(site.file, roots)
    if path is None:
        return None
    return linecache.getline(path, site.line).strip() or None
