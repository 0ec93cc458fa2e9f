"""A dotted attribute the function asserts to be on the host (or the device): ``assert result.accept_lens.is_cpu``
then ``result.accept_lens.tolist()``. An assertion among the function's own statements (not inside a branch, a
loop or a ``try``: every path meets it) holds from its line until the function stores that attribute (or an
object on its path) again; plain names are narrowed by the scopes
(:mod:`synchunt.lint.bindings`)."""

from __future__ import annotations

import ast

from synchunt.lint.provenance.syntax import asserted_checks, dotted_name, function_index, own_nodes
from synchunt.lint.scopes import Scope
from synchunt.lint.where import Where

# (function) → dotted name → [(line, where the assertion says it is)]; and dotted name → lines that store it
_Index = tuple[dict[str, list[tuple[int, Where]]], dict[str, list[int]]]


def asserted_where(memo: dict[int, _Index], node: ast.Attribute, scope: Scope, line: int,
                   lines: list[str]) -> Where | None:
    """Where an ``assert`` of ``scope``'s function before ``line`` says ``node`` is, or None. ``lines``: the
    module's source lines."""
    index = function_index(memo, scope, lines, "assert", _index, ({}, {}))
    if index is None:
        return None
    checks, stores = index
    dotted = dotted_name(node)
    if dotted is None or dotted not in checks:
        return None
    before = [(at, where) for at, where in checks[dotted] if at < line]
    if not before:
        return None
    at, where = before[-1]
    parts = dotted.split(".")
    prefixes = [".".join(parts[:end]) for end in range(1, len(parts) + 1)]
    if any(at < stored < line for prefix in prefixes for stored in stores.get(prefix, ())):
        return None  # stored again since the assertion: another value
    return where


def _index(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Index:
    checks: dict[str, list[tuple[int, Where]]] = {}
    for statement in function.body:  # an assertion among its own statements: every path meets it (in order)
        if isinstance(statement, ast.Assert):
            for name, where in asserted_checks(statement):
                if "." in name:
                    checks.setdefault(name, []).append((statement.lineno, where))
    stores: dict[str, list[int]] = {}
    for node in own_nodes(function):
        if isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Store):
            stored = dotted_name(node)
            if stored is not None:
                stores.setdefault(stored, []).append(node.lineno)
    return checks, stores
