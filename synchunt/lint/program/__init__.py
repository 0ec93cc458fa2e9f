"""The files linted together as one program: who calls what across them, and what nothing calls.

Each linted file is summarized from the tree its lint read (:func:`summarize_file`); once all are, the index
(:class:`ProgramIndex`) resolves the calls and :func:`unreached` finds the functions no possible caller reaches.
:func:`mark_unreached` then lowers the findings inside those functions to low confidence (reported with
``--min-confidence low``), with the reason in their message: a sync there never runs when the package runs as
shipped. With one file (a pre-commit hook) there is no program, and nothing is lowered.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable

from synchunt.findings import Confidence, Finding, Severity
from synchunt.lint.program.index import ProgramIndex
from synchunt.lint.program.names import module_names
from synchunt.lint.program.reach import unreached
from synchunt.lint.program.summary import ModuleSummary, summarize


def summarize_file(tree: ast.Module, path: str) -> ModuleSummary | None:
    """A file's summary under the longest name it may be imported by (the least likely to be another file's);
    ``None`` when it is nested too deeply to walk."""
    name, is_package, longer = module_names(path)
    try:
        return summarize(tree, longer[-1] if longer else name, path, is_package, (name, *longer[:-1]))
    except RecursionError:
        return None


def mark_unreached(findings: Iterable[Finding], summaries: list[ModuleSummary]) -> list[Finding]:
    """``findings`` with those inside functions nothing in the program calls lowered to low confidence (a note,
    context ``cold``), saying so."""
    index = ProgramIndex(summaries)
    never = unreached(index)
    marked = []
    for finding in findings:
        function = _enclosing(index, finding) if not finding.is_problem else None
        if function is not None and function in never:
            finding = dataclasses.replace(
                finding, confidence=Confidence.LOW, severity=Severity.NOTE, context="cold",
                message=f"{finding.message} — nothing in the files linted calls `{function[1]}`")
        marked.append(finding)
    return marked


def _enclosing(index: ProgramIndex, finding: Finding) -> tuple[str, str] | None:
    """The module-level function or method a finding is in (its scope, or the function around it)."""
    summary = index.by_path.get(finding.path)
    if summary is None or summary.name not in index.modules or not finding.scope:
        return None
    parts = finding.scope.split(".")
    for end in range(1, len(parts) + 1):
        qualname = ".".join(parts[:end])
        if qualname in summary.functions:
            return summary.name, qualname
    return None


__all__ = ["ModuleSummary", "ProgramIndex", "mark_unreached", "summarize_file", "unreached"]
