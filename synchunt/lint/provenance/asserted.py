"""A dotted attribute the function asserts to be on the host (or the device): ``assert result.accept_lens.is_cpu``
then ``result.accept_lens.tolist()``. The assertion holds from its line until the function stores that
attribute (or an object on its path) again; plain names are narrowed by the scopes
(:mod:`synchunt.lint.bindings`)."""

from __future__ import annotations

import ast

from synchunt.lint.provenance.syntax import device_check, dotted_name
from synchunt.lint.scopes import Scope
from synchunt.lint.where import Where

# (function) → dotted name → [(line, where the assertion says it is)]; and dotted name → lines that store it
_Index = tuple[dict[str, list[tuple[int, Where]]], dict[str, list[int]]]


def asserted_where(memo: dict[int, _Index], node: ast.Attribute, scope: Scope, line: int,
                   lines: list[str]) -> Where | None:
    """Where an ``assert`` of ``scope``'s function before ``line`` says ``node`` is, or None. ``lines``: the
    module's source lines."""
    function = scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    index = memo.get(id(function))
    if index is None:
        says = any("assert" in text for text in lines[function.lineno - 1:function.end_lineno])
        index = memo[id(function)] = _index(function) if says or not lines else ({}, {})
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
    stores: dict[str, list[int]] = {}
    pending: list[ast.AST] = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue  # their statements run elsewhere
        pending.extend(ast.iter_child_nodes(node))
        if isinstance(node, ast.Assert):
            tests = node.test.values if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And) \
                else [node.test]
            for test in tests:
                found = device_check(test)
                if found is not None and "." in found[0]:
                    checks.setdefault(found[0], []).append((node.lineno, found[1]))
        elif isinstance(node, (ast.Attribute, ast.Name)) and isinstance(node.ctx, ast.Store):
            stored = dotted_name(node)
            if stored is not None:
                stores.setdefault(stored, []).append(node.lineno)
    for found in checks.values():
        found.sort(key=lambda item: item[0])
    return checks, stores
