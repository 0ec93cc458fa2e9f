"""Syncs one helper call down: ``assert _sizes_ok(offs)`` where ``_sizes_ok`` calls ``offs.tolist()``.

A private function of the module (``_name``, or one nested in another function) hides its syncs from the
code that calls it. Each call to one is reported too, with the helper's strongest finding per rule, one
confidence level lower (the helper may not reach that line on every call). Only one level: a helper's own
calls to helpers are not followed.

A call that passes plain values or host tensors is read again with them: the helper's body is probed with
its parameters bound to what this call passes (as ``provenance.passing`` reads returns), and only what is
still a sync there is reported. ``self._update_cache(max_seqlen)`` with ``max_seqlen: int`` does not reach
the device read that ``seqlen > self._cached`` would be for a tensor; ``self._walk(holes_cpu)`` reads host
memory whatever other callers pass.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from synchunt.findings import Confidence, Finding
from synchunt.lint.callsites import NOT_PASSED, argument_of, is_static
from synchunt.lint.forms import Hit, excerpt
from synchunt.lint.provenance.calls import function_outputs, local_function
from synchunt.lint.provenance.passing import called_function
from synchunt.lint.scopes import Scope
from synchunt.lint.where import Where
from synchunt.rules import RULES_BY_CODE, Rule

if TYPE_CHECKING:
    from synchunt.lint.engine import ModuleLinter

_LOWER = {Confidence.HIGH: Confidence.MEDIUM, Confidence.MEDIUM: Confidence.LOW}
_RECEIVERS = frozenset({"self", "cls"})
_NOT_ON_DEVICE = (Where.CPU, Where.VALUE)  # what a call passes that can only make a helper's reads weaker
MAX_PROBES = 200  # helper bodies probed with one call's arguments, per module; past this, the plain answer
FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef


class HelperSyncs:
    def __init__(self, linter: ModuleLinter) -> None:
        self.linter = linter
        self.memo: dict[int, list[Finding]] = {}
        self.probes = 0

    def at_call(self, call: ast.Call, scope: Scope) -> list[tuple[Rule, Hit]]:
        function = local_function(call.func, scope, call.lineno)
        if function is None or not self._private(function):
            return []
        plain = self._findings(function)
        # Read with this call's arguments, a finding may go or weaken, never strengthen: the helper is still
        # reported one level lower than its own plain reading at most.
        ceiling = {finding.code: max(other.confidence.rank for other in plain if other.code == finding.code)
                   for finding in plain}
        findings = self._findings_with_arguments(function, call, scope, plain) if plain else plain
        strongest: dict[str, Finding] = {}
        for finding in findings:
            if finding.code not in ceiling:
                continue
            if finding.confidence.rank > ceiling[finding.code]:
                finding = next(other for other in plain if other.code == finding.code
                               and other.confidence.rank == ceiling[finding.code])
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


    def _findings_with_arguments(self, function: FunctionDef, call: ast.Call, scope: Scope,
                                 findings: list[Finding]) -> list[Finding]:
        """The helper's findings when its body reads what this call passes (``findings`` when the call
        passes nothing known to be off the device)."""
        classifier = self.linter.classifier
        through_self = isinstance(call.func, ast.Attribute) and not is_static(function)
        passed: dict[tuple[int, str], tuple[ast.expr, Scope, int, Where]] = {}
        not_none: set[str] = set()
        arguments = function.args
        for parameter in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
            if parameter.arg in _RECEIVERS:
                continue
            value = argument_of(call, function, parameter.arg, through_self)
            if value is NOT_PASSED:
                continue
            where = classifier.where(value, scope, call.lineno)
            if where is not Where.UNKNOWN:  # unknown: the helper's other evidence (its callers) stands
                passed[id(function), parameter.arg] = (value, scope, call.lineno, where)
            if not _may_be_none(value, scope, call.lineno, self.linter.scopes):
                not_none.add(parameter.arg)
        if not (any(entry[3] in _NOT_ON_DEVICE for entry in passed.values()) or _tests_none(function, not_none)) or (
                self.probes >= MAX_PROBES or classifier.passed_in):
            return findings
        self.probes += 1
        from synchunt.lint.engine import ModuleLinter  # the engine imports this module

        linter = self.linter
        saved = classifier.memo, classifier.active, classifier.passed_in
        classifier.memo, classifier.active, classifier.passed_in = {}, set(), passed
        try:
            probe = ModuleLinter(linter.tree, "\n".join(linter.lines), linter.path, linter.plan,
                                 honor_suppressions=True, parent=linter)
            probe.suppressions = linter.suppressions
            probe.not_none = frozenset(not_none)
            probe.visit(function)
        finally:
            classifier.memo, classifier.active, classifier.passed_in = saved
        qualname = linter.scopes[id(function)].qualname if id(function) in linter.scopes else None
        return [finding for finding in probe.findings if finding.scope == qualname]


def none_test(test: ast.expr, not_none: frozenset[str]) -> bool | None:
    """For ``if p is None:`` on a parameter passed a value: ``True`` (the body is not run); ``if p is not
    None:``: ``False`` (the ``else`` is not run); otherwise ``None``."""
    if not not_none or not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(
            test.left, ast.Name) and test.left.id in not_none):
        return None
    right = test.comparators[0]
    if not (isinstance(right, ast.Constant) and right.value is None):
        return None
    if isinstance(test.ops[0], ast.Is):
        return True
    return False if isinstance(test.ops[0], ast.IsNot) else None


def _may_be_none(value: ast.expr, scope: Scope, line: int, scopes: dict[int, Scope], depth: int = 0) -> bool:
    """Whether an argument could be ``None``: the constant, a conditional with it, a name bound to one, or
    anything unknown (a name without a binding here, an attribute, a call of another module). A name
    unpacked from a call of the module's own function (``wm, holes = self._absorb(x)``) is what that
    component of its ``return`` statements is."""
    if depth > 4:
        return True
    if isinstance(value, ast.Constant):
        return value.value is None
    if isinstance(value, ast.IfExp):
        return any(_may_be_none(side, scope, line, scopes, depth + 1) for side in (value.body, value.orelse))
    if isinstance(value, ast.Name):
        found = scope.lookup(value.id, line)
        if found is None or found[0].value is None:
            return True
        binding, owner = found
        if not binding.path:
            return _may_be_none(binding.value, owner, binding.line, scopes, depth + 1)
        if len(binding.path) != 1 or not isinstance(binding.path[0], int) or not isinstance(binding.value, ast.Call):
            return True
        local = called_function(binding.value.func, owner, binding.line)
        inner = scopes.get(id(local[0])) if local is not None else None
        if local is None or inner is None:
            return True
        values, generator = function_outputs(local[0])
        component = binding.path[0]
        return generator or not values or any(
            not isinstance(returned, ast.Tuple) or not -len(returned.elts) <= component < len(returned.elts)
            or _may_be_none(returned.elts[component], inner, returned.lineno, scopes, depth + 1)
            for returned in values)
    if isinstance(value, ast.Subscript):
        return not isinstance(value.slice, ast.Slice)  # `xs[:n]` is a sequence; `d[k]` may hold None
    # built here: literals, arithmetic, comparisons
    return not isinstance(value, (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.BinOp, ast.JoinedStr,
                                  ast.DictComp, ast.SetComp, ast.Compare))


def _tests_none(function: FunctionDef, names: set[str]) -> bool:
    """``function`` has an ``if <name> is None:`` on one of ``names``."""
    return bool(names) and any(
        isinstance(node, ast.If) and none_test(node.test, frozenset(names)) is not None for node in ast.walk(function))


def _shorten(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
