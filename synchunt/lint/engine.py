"""Walks one module's syntax tree, runs the detectors of the selected rules, and turns hits into findings.

The walk knows what no detector should have to: the enclosing function, whether the node runs in a loop or
inside a ``with ...stream(...)`` block (severity rises: that is where one sync serializes many), whether the
host already waited (an earlier ``.synchronize()``, an ``if event.query():`` guard: confidence falls),
and which lines carry suppressions.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

from synchunt.findings import Confidence, Finding, Severity
from synchunt.lint.bindings import build_scopes, exits_block
from synchunt.lint.context import ContextFinder, ContextRules, RunContext, called_name, statement_is_cold
from synchunt.lint.forms import Form, Hit, resolve
from synchunt.lint.helpers import HelperSyncs, none_test
from synchunt.lint.hostside import host_branch, host_side_class, host_side_module, platform_name
from synchunt.lint.imports import imports_torch_helpers, module_imports
from synchunt.lint.provenance import Classifier
from synchunt.lint.provenance.host_fields import declared_host_fields
from synchunt.lint.provenance.package import PackageFacts
from synchunt.lint.scopes import ITER, Scope, bind_target, function_scope
from synchunt.lint.suppress import find_suppressions, is_suppressed
from synchunt.lint.walk import FastVisitor
from synchunt.lint.where import Where
from synchunt.rules import Kind, Rule
from synchunt.source_map import parser_lines

_KERNEL_DECORATORS = frozenset({"jit", "njit", "kernel", "prim_func", "autotune", "heuristics", "triton_op"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_CHECK_STATEMENTS = (ast.If, ast.Assert, ast.Raise)
_HOT_CONTEXT_CALLS = {"stream": "inside `with ...stream(...)`", "graph": "inside CUDA graph capture"}



@dataclass(frozen=True)
class PlanEntry:
    rule: Rule
    form: Form
    argument: str | None


@dataclass(frozen=True)
class Plan:
    """The detectors to run: per node type, and for calls per callee name."""

    by_type: dict[type[ast.AST], list[PlanEntry]]
    calls_by_name: dict[str, list[PlanEntry]]
    calls_by_suffix: tuple[tuple[str, list[PlanEntry]], ...] = ()

    def calls_named(self, callee: str) -> list[PlanEntry] | None:
        found = self.calls_by_name.get(callee)
        if found is None and callee:
            for suffix, entries in self.calls_by_suffix:
                if callee.endswith(suffix):
                    return entries
        return found


def build_plan(rules: Sequence[Rule]) -> Plan:
    """The detectors of the rules' ``lint_forms``; an unknown form raises ``KeyError``."""
    by_type: dict[type[ast.AST], list[PlanEntry]] = {}
    calls_by_name: dict[str, list[PlanEntry]] = {}
    calls_by_suffix: dict[str, list[PlanEntry]] = {}
    for rule in rules:
        for spec in rule.lint_forms:
            form, argument = resolve(spec)
            entry = PlanEntry(rule, form, argument)
            for node_type in form.node_types:
                if node_type is ast.Call:
                    for name in form.callees(argument):
                        calls_by_name.setdefault(name, []).append(entry)
                    if form.call_suffix:
                        calls_by_suffix.setdefault(form.call_suffix, []).append(entry)
                else:
                    by_type.setdefault(node_type, []).append(entry)
    return Plan(by_type, calls_by_name, tuple(calls_by_suffix.items()))


class ModuleLinter(FastVisitor):
    """Lints one parsed module; :meth:`run` returns its findings."""

    def __init__(self, tree: ast.Module, source: str, path: str, plan: Plan, *,
                 honor_suppressions: bool = True, parent: ModuleLinter | None = None,
                 context_rules: ContextRules | None = None, package: PackageFacts | None = None) -> None:
        super().__init__()
        self.tree = tree
        self.path = path
        self.plan = plan
        self.lines = source.splitlines()
        if parent is None:
            torch_aliases, numpy_aliases, torch_functions = module_imports(tree)
            self.scopes = build_scopes(tree)
            self.classifier = Classifier(torch_aliases, numpy_aliases, torch_functions, self.scopes, tree)
            self.classifier.host_fields = declared_host_fields(tree, source)
            self.classifier.lines = parser_lines(source)
            if package is not None:
                self.classifier.package_host_fields = package.host_fields - self.classifier.host_fields
                self.classifier.package_array_fields = package.array_fields
            self.uses_torch = bool(torch_aliases or torch_functions) or imports_torch_helpers(tree)
            self.helpers = HelperSyncs(self)
            self.contexts = ContextFinder(path, context_rules or ContextRules(), self.classifier.call_sites())
        else:  # a probe of one helper function: same module, no derived findings of its own
            self.scopes, self.classifier, self.uses_torch = parent.scopes, parent.classifier, parent.uses_torch
            self.helpers, self.contexts = None, parent.contexts
        self.scope: Scope = self.scopes[id(tree)]
        self.suppressions = find_suppressions(source) if honor_suppressions else {}
        self.host_side = host_side_module(path)  # processors, tokenizers, CPU backends (see hostside)
        self.host_path = False  # inside the host branch of a device check (see hostside.host_branch)
        self.loop_depth = 0
        self.hot_context: str | None = None
        self.host_waited = False
        self.cold_depth = 0  # inside graph capture, an error path, a debug branch
        self.tested: set[int] = set()
        self.statement: ast.stmt | None = None
        # a helper probed with one call's arguments (see helpers): the parameters that call passes a value
        # that is not None, whose `if <name> is None:` branch it never runs
        self.not_none: frozenset[str] = frozenset()
        self.findings: list[Finding] = []
        self._seen: set[tuple[str, int, int]] = set()

    # The detectors' view (forms.Context).
    def where(self, node: ast.AST | None) -> Where:
        return self.classifier.where(node, self.scope)

    def run(self) -> list[Finding]:
        self.visit(self.tree)
        return self.findings

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind is ast.Call:
            callee = _callee_name(node.func, self.classifier.torch_functions)  # type: ignore[attr-defined]
            entries = self.plan.calls_named(callee)
            if entries:  # `torch.tensor([r.sum() for r in rows])`: the detector reads the comprehension first
                for argument in node.args:  # type: ignore[attr-defined]
                    if isinstance(argument, _COMPREHENSIONS):
                        self._bind_generators(argument)
        else:
            callee, entries = "", self.plan.by_type.get(kind)
        if entries:
            cold = kind in _CHECK_STATEMENTS and statement_is_cold(node)  # type: ignore[arg-type]
            self.cold_depth += cold  # `if not ok.all(): raise ...`: the test is the error check
            for entry in entries:
                hit = entry.form.detect(node, self, entry.rule, entry.argument)
                if hit is not None:
                    self._record(entry.rule, hit)
            self.cold_depth -= cold
        if kind is ast.Call and self.helpers is not None:
            for rule, hit in self.helpers.at_call(node, self.scope):  # type: ignore[arg-type]
                self._record(rule, hit)
        if callee == "synchronize" and isinstance(node.func, ast.Attribute):  # type: ignore[attr-defined]
            self.host_waited = True  # what follows in this function reads finished work
        super().visit(node)

    # -- context ---------------------------------------------------------------------------------------
    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            outer, self.statement = self.statement, node
            super().generic_visit(node)
            self.statement = outer
        else:
            super().generic_visit(node)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        if not isinstance(node, ast.Lambda) and self._is_device_kernel(node):
            return  # Triton/Numba/CuTe kernels: Python syntax, device semantics
        saved = (self.scope, self.loop_depth, self.hot_context, self.host_waited, self.host_side, self.host_path)
        if not isinstance(node, ast.Lambda) and platform_name(node.name):
            self.host_side = True  # `forward_cpu`, `_mlx_step`: platform code with host tensors
        scope = self.scopes.get(id(node))
        if scope is None:  # a lambda: its scope is made when the walk reaches it
            scope = function_scope(node, f"{self.scope.qualname}.<lambda>", self.scope)
        self.scope = scope
        self.loop_depth, self.hot_context, self.host_waited = 0, None, False
        self.generic_visit(node)
        self.scope, self.loop_depth, self.hot_context, self.host_waited, self.host_side, self.host_path = saved

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _visit_function

    def _is_device_kernel(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if called_name(target) in _KERNEL_DECORATORS and not self.classifier.torch_root(target):
                return True
        return False

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        bind_target(self.scope, node.target, node.value, node.lineno)
        self.generic_visit(node)

    def _visit_loop(self, node: ast.For | ast.AsyncFor | ast.While) -> None:
        outer = self.statement
        self.statement = node
        if isinstance(node, ast.While):
            self.loop_depth += 1
            self.visit(node.test)
        else:
            self.visit(node.iter)  # evaluated once, before the loop
            self.loop_depth += 1
            self.visit(node.target)
        outer_waited = self.host_waited
        for statement in node.body:
            self.visit(statement)
        self.loop_depth -= 1
        self.host_waited = outer_waited
        for statement in node.orelse:
            self.visit(statement)
        self.statement = outer

    visit_For = visit_AsyncFor = visit_While = _visit_loop

    def _bind_generators(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        for generator in node.generators:
            bind_target(self.scope, generator.target, generator.iter, generator.iter.lineno, (ITER,))

    def _visit_comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> None:
        self._bind_generators(node)
        self.loop_depth += 1
        self.generic_visit(node)
        self.loop_depth -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _visit_comprehension

    def _visit_with(self, node: ast.With | ast.AsyncWith) -> None:
        outer_statement, outer_context = self.statement, self.hot_context
        self.statement = node
        cold = statement_is_cold(node)
        self.cold_depth += cold
        for item in node.items:
            self.visit(item)
            name = called_name(item.context_expr)
            for suffix, label in _HOT_CONTEXT_CALLS.items():
                if name.endswith(suffix):
                    self.hot_context = label
        for statement in node.body:
            self.visit(statement)
        self.cold_depth -= cold
        self.statement, self.hot_context = outer_statement, outer_context

    visit_With = visit_AsyncWith = _visit_with

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        outer = self.host_side
        self.host_side = outer or host_side_class(node)
        self.generic_visit(node)
        self.host_side = outer

    def visit_If(self, node: ast.If) -> None:
        outer_statement, outer_waited = self.statement, self.host_waited
        self.statement = node
        cold = statement_is_cold(node)  # an error check (test and body) or a debug branch
        self.cold_depth += cold
        self.visit(node.test)
        # A wait inside one branch says nothing about the code after the `if`.
        self.host_waited = outer_waited or _mentions_query(node)  # `if done.query():` the work is finished
        outer_host, on_host = self.host_path, host_branch(node.test)  # `if not x.is_cuda:` the host path
        self.host_path = outer_host or on_host is True
        unreached = none_test(node.test, self.not_none)  # the branch this call of a helper never runs
        for statement in node.body if unreached is not True else ():
            self.visit(statement)
        self.cold_depth -= cold
        self.host_waited = outer_waited
        self.host_path = outer_host or on_host is False
        for statement in node.orelse if unreached is not False else ():
            self.visit(statement)
        self.host_waited = outer_waited
        # `if x.is_cuda: return ...`: the rest of the function is the host path
        self.host_path = outer_host or (on_host is False and not node.orelse and exits_block(node.body))
        self.statement = outer_statement

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        outer = self.host_path  # `not x.is_cuda and torch.equal(x, y)`: the right side runs on the host path
        for value in node.values:
            self.visit(value)
            self.host_path = self.host_path or host_branch(value) is isinstance(node.op, ast.And)
        self.host_path = outer

    def _visit_cold(self, node: ast.AST) -> None:
        self.cold_depth += 1
        self.generic_visit(node)
        self.cold_depth -= 1

    visit_Assert = visit_Raise = visit_ExceptHandler = _visit_cold

    def run_context(self) -> RunContext:
        return RunContext.COLD if self.cold_depth else self.contexts.of_scope(self.scope)

    # -- findings --------------------------------------------------------------------------------------
    def _record(self, rule: Rule, hit: Hit) -> None:
        node = hit.node
        line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
        end_line = getattr(node, "end_lineno", None) or line
        if hit.line is not None and hit.line != line:
            line, column = hit.line, _first_column(self.lines, hit.line)
        key = (rule.code, line, column)
        if key in self._seen:
            return
        self._seen.add(key)
        first, last = self._suppression_span(line, end_line)
        if is_suppressed(rule.code, first, last, self.suppressions):
            return
        confidence = hit.confidence
        # Waiting again after a wait is still an explicit sync; a read after one only reads finished work.
        data_rule = rule.kind is not Kind.EXPLICIT_SYNC
        caps = [not self.uses_torch, self.host_waited and data_rule,
                self.host_side and data_rule and confidence is Confidence.MEDIUM,
                # the host path of a device check: uploads are what it does, the rest reads host tensors
                self.host_path and data_rule and confidence is Confidence.MEDIUM and rule.copy_direction != "HtoD"]
        if any(caps):
            confidence = Confidence.LOW
        context = self.run_context()
        severity, where = Severity.WARNING, ""
        if self.hot_context or self.loop_depth:
            severity = Severity.ERROR
            where = f" ({self.hot_context or 'inside a loop'})"
        # SARIF levels follow where the code runs: the step path first, cold code as notes.
        if context is RunContext.STEP:
            severity = Severity.ERROR
        if confidence is Confidence.LOW or context is RunContext.COLD:
            severity = Severity.NOTE
        source_line = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        end_column = getattr(node, "end_col_offset", None)
        end_text = self.lines[end_line - 1] if 0 < end_line <= len(self.lines) else ""
        self.findings.append(Finding(
            code=rule.code, message=hit.message + where, path=self.path, line=line,
            column=_character_column(source_line, column),
            end_line=end_line,
            end_column=_character_column(end_text, end_column) if end_column is not None else None,
            severity=severity, confidence=confidence,
            scope=None if self.scope.qualname == "<module>" else self.scope.qualname,
            snippet=source_line.strip() or None, context=context.value,
        ))

    def _suppression_span(self, line: int, end_line: int) -> tuple[int, int]:
        """The node's lines plus its statement's own lines (a compound statement's header only)."""
        statement = self.statement
        if statement is None:
            return line, end_line
        first = statement.lineno
        body = getattr(statement, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            last = max(first, body[0].lineno - 1)
        else:
            last = statement.end_lineno or first
        return min(first, line), max(last, end_line)


def _callee_name(func: ast.expr, aliases: dict[str, str]) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return aliases.get(func.id, func.id)
    return ""


def _mentions_query(node: ast.If) -> bool:
    return any(isinstance(part, ast.Attribute) and part.attr == "query" for part in ast.walk(node.test))



# Columns of a finding: from ast's UTF-8 byte offsets to 1-based characters.
def _first_column(lines: list[str], line: int) -> int:
    """The byte offset of a line's first non-blank character."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    stripped = text.lstrip()
    return len(text[: len(text) - len(stripped)].encode("utf-8"))


def _character_column(line: str, byte_offset: int) -> int:
    """1-based character column from ``ast``'s UTF-8 byte offset."""
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
