"""Tailored rewrites attached to a set of findings: each file parsed once, each finding tailored at its node."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable

from synchunt.findings import Finding
from synchunt.fixes.source import Module
from synchunt.fixes.tailor import finish, propose


def tailor_findings(findings: Iterable[Finding], read: Callable[[str], str | None], *,
                    check: bool = False, parsed: dict[str, Module] | None = None) -> list[Finding]:
    """``findings`` with ``fix`` set where a pattern fits. ``read(path)`` returns a file's text (``None``:
    unreadable, its findings stay as they are); ``parsed`` holds modules already parsed, by path
    (``Module.of(text, tree)`` with the lint's own tree saves the second parse). A rewrite whose check fails is
    not attached."""
    modules: dict[str, Module | None] = dict(parsed or {})
    result = []
    for finding in findings:
        if finding.is_problem or finding.fix is not None:
            result.append(finding)
            continue
        if finding.path not in modules:
            text = read(finding.path)
            modules[finding.path] = Module.parse(text) if text is not None else None
        module = modules[finding.path]
        proposal = propose(finding.code, module, finding.line, finding.column) if module is not None else None
        rewrite = finish(proposal, check=check) if proposal is not None else None
        result.append(dataclasses.replace(finding, fix=rewrite) if rewrite is not None else finding)
    return result
