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

from synchunt.findings import Finding
from synchunt.lint.engine import ModuleLinter, build_plan
from synchunt.rules import RULES


@dataclass(frozen=True)
class Located:
    lines: tuple[int, ...]
    line_source: Literal["exact", "def"]


@dataclass(frozen=True)
class Query:
    """Which lines of ``function`` (defined at ``def_line``) match ``rule_codes``."""

    def_line: int
    function: str
    rule_codes: tuple[str, ...]


def locate(source: str, filename: str, def_line: int, function: str, rule_codes: Sequence[str]) -> Located:
    """The lines inside ``function`` (defined at ``def_line``) that match ``rule_codes`` (see the module doc)."""
    query = Query(def_line, function, tuple(rule_codes))
    return locate_all(source, filename, [query])[query]


def locate_all(source: str, filename: str, queries: Sequence[Query]) -> dict[Query, Located]:
    """:func:`locate` for many functions of one file: the source is parsed and linted once for all of them."""
    wanted = {code for query in queries for code in query.rule_codes}
    rules = [rule for rule in RULES if rule.code in wanted and rule.has_static_form]
    fallback = {query: Located((query.def_line,), "def") for query in queries}
    if not rules:
        return fallback
    try:
        tree = ast.parse(source, filename=filename)
        linter = ModuleLinter(tree, source, filename, build_plan(rules), honor_suppressions=False)
        findings = linter.run()
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return fallback
    answers = {}
    for query in queries:
        target = _function_at(tree, query.def_line, query.function.rsplit(".", 1)[-1])
        answers[query] = fallback[query] if target is None else _answer(
            findings, linter.scopes[id(target)].qualname, query, fallback[query])
    return answers


def _answer(findings: Sequence[Finding], qualname: str, query: Query, fallback: Located) -> Located:
    lines: set[int] = set()
    for code in dict.fromkeys(query.rule_codes):
        own = [finding for finding in findings if finding.code == code and finding.scope == qualname]
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
