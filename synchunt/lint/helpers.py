"""Syncs one helper call down: ``assert _sizes_ok(offs)`` where ``_sizes_ok`` calls ``offs.tolist()``.

A private function of the module (``_name``, or one nested in another function) hides its syncs from the
code that calls it. Each call to one is reported too, with the helper's strongest finding per rule, one
confidence level lower (the helper may not reach that line on every call). Only one level: a helper's own
calls to helpers are not followed.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from synchunt.findings import Confidence, Finding
from synchunt.lint.forms import Hit, excerpt
from synchunt.lint.provenance.calls import local_function
from synchunt.lint.scopes import Scope
from synchunt.rules import RULES_BY_CODE, Rule

if TYPE_CHECKING:
    from synchunt.lint.engine import ModuleLinter

_LOWER = {Confidence.HIGH: Confidence.MEDIUM, Confidence.MEDIUM: Confidence.LOW}
FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


class HelperSyncs:
    def __init__(self, linter: ModuleLinter) -> None:
        self.linter = linter
        self.memo: dict[int, list[Finding]] = {}

    def at_call(self, call: ast.Call, scope: Scope) -> list[tuple[Rule, Hit]]:
        function = local_function(call.func, scope, call.lineno)
        if function is None or not self._private(function):
            return []
        strongest: dict[str, Finding] = {}
        for finding in self._findings(function):
            known = strongest.get(finding.code)
            if finding.confidence in _LOWER and (known is None or finding.confidence.rank > known.confidence.rank):
                strongest[finding.code] = finding
        return [(RULES_BY_CODE[code], Hit(
            call, f"`{excerpt(call)}` calls `{function.name}`, which waits for the device at line {finding.line}: "
            f"`{_shorten(finding.snippet or '')}`", _LOWER[finding.confidence]))
            for code, finding in sorted(strongest.items())]

    def _private(self, function: FunctionDef) -> bool:
        name = function.name
        return (name.startswith("_") and not name.endswith("__")) or (
            id(function) in self.linter.classifier.nested_functions())

    def _findings(self, function: FunctionDef) -> list[Finding]:
        if id(function) not in self.memo:
            from synchunt.lint.engine import ModuleLinter  # the engine imports this module

            linter = self.linter
            probe = ModuleLinter(linter.tree, "\n".join(linter.lines), linter.path, linter.plan,
                                 honor_suppressions=True, parent=linter)
            probe.suppressions = linter.suppressions
            qualname = linter.scopes[id(function)].qualname if id(function) in linter.scopes else None
            probe.visit(function)
            self.memo[id(function)] = [finding for finding in probe.findings if finding.scope == qualname]
        return self.memo[id(function)]


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
