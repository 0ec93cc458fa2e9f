"""The tailored rewrite of each exact call site whose source is readable: the user's own expression rewritten with
the user's own names (``synchunt.fixes``), found once per line and rule of a trace.

Rewrites here are not checked (checking runs torch; an analysis never imports it): outputs show them as
suggestions with the condition under which they are equivalent; ``synchunt lint --check-fixes`` checks them.
"""

from __future__ import annotations

from collections.abc import Sequence

from synchunt.attribute.model import SiteRewrite, Sync
from synchunt.source_map import captured_sources
from synchunt.trace import Trace

EXACT = ("exact", "runtime")


def site_rewrites(records: Sequence[Sync], trace: Trace) -> tuple[SiteRewrite, ...]:
    """A rewrite per (file, line, rule) of the syncs' exact call sites where a pattern fits."""
    wanted: dict[str, set[tuple[int, str]]] = {}
    for record in records:
        site = record.call_site
        if site is not None and site.line_source in EXACT and site.line > 0:
            wanted.setdefault(site.file, set()).add((site.line, record.rule))
    if not wanted:
        return ()
    from synchunt.fixes import finish, propose
    from synchunt.fixes.source import Module

    sources = captured_sources([trace.synchunt])
    found = []
    for file, asked in sorted(wanted.items()):
        path = sources.find(file)
        if path is None:
            continue
        try:
            with open(path, encoding="utf-8") as handle:
                module = Module.parse(handle.read())
        except (OSError, UnicodeDecodeError):
            continue
        if module is None:
            continue
        for line, rule in sorted(asked):
            proposal = propose(rule, module, line)
            rewrite = None if proposal is None else finish(proposal, check=False)
            if rewrite is not None:
                found.append(SiteRewrite(file=file, line=line, rule=rule, rewrite=rewrite))
    return tuple(found)
