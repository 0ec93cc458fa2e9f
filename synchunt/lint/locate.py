"""Exact lines for trace findings: which lines of a function match a rule's static forms.

Kineto names a Python frame by its function's first line (the ``def``, or its first decorator), so a sync seen
in a trace points there. :func:`locate` runs the lint's own form matchers over that function and answers with
the lines that match the rules the trace detector named.

The rule for ambiguity: per rule code, the candidate lines are the function's own lines (not those of nested
functions or lambdas, which are frames of their own) where a form of that rule matches, at any confidence,
suppressed or not. The strongest confidence among them wins; if exactly one line holds it, that line is the
rule's answer, and if several do, the rule is ambiguous. ``lines`` are the answers of the rules that have one,
``"exact"``; when no rule has one, or any rule is ambiguous, the answer is ``(def_line,)`` and ``"def"``, as it
is for unreadable source or a function not found at ``def_line``.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from synchunt.lint.engine import ModuleLinter, build_plan
from synchunt.rules import RULES


@dataclass(frozen=True)
class Located:
    lines: tuple[int, ...]
    line_source: Literal["exact", "def"]


def locate(source: str, filename: str, def_line: int, function: str, rule_codes: Sequence[str]) -> Located:
    """The lines inside ``function`` (defined at ``def_line``) that match ``rule_codes`` (see the module doc)."""
    fallback = Located((def_line,), "def")
    rules = [rule for rule in RULES if rule.code in set(rule_codes) and rule.has_static_form]
    if not rules:
        return fallback
    try:
        tree = ast.parse(source, filename=filename)
        target = _function_at(tree, def_line, function.rsplit(".", 1)[-1])
        if target is None:
            return fallback
        linter = ModuleLinter(tree, source, filename, build_plan(rules), honor_suppressions=False)
        findings = linter.run()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return fallback
    qualname = linter.scopes[id(target)].qualname
    lines: set[int] = set()
    for rule in rules:
        own = [finding for finding in findings if finding.code == rule.code and finding.scope == qualname]
        if not own:
            continue
        strongest = max(finding.confidence.rank for finding in own)
        candidates = {finding.line for finding in own if finding.confidence.rank == strongest}
        if len(candidates) > 1:
            return fallback
        lines.update(candidates)
    return Located(tuple(sorted(lines)), "exact") if lines else fallback


def _function_at(tree: ast.Module, def_line: int, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
            if def_line in (node.lineno, first):
                return node
    return None
