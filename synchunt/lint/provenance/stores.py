"""A dotted attribute stored just before it is read, in the same function: ``a.b.c = x.to("cpu")`` then
``a.b.c.tolist()``.

The class-wide guess for ``self.x`` joins every method's assignments, and a nested attribute
(``self.forward_metadata.prefix_lens``) has no binding at all; but when the function itself stores the
attribute in a statement that *dominates* the read (an earlier statement of a block the read lies in) and
stores it nowhere else, the read sees that value. Only a host answer is taken from it (see
:func:`dominating_store`): a store never makes a read look more device-like than the class-wide guess.
"""

from __future__ import annotations

import ast

from synchunt.lint.provenance.syntax import dotted_name
from synchunt.lint.scopes import Scope

_BLOCKS = ("body", "orelse", "finalbody", "handlers")
# (function) → dotted target → [(the storing statement, the end line of the block it dominates)]
_Index = dict[str, list[tuple[ast.stmt, int]]]


def dominating_store(memo: dict[int, _Index], node: ast.Attribute, scope: Scope, line: int) -> ast.stmt | None:
    """The statement of ``scope``'s function that stores ``node``'s dotted name, dominates ``line`` and is the
    function's only store of that name (else ``None``)."""
    function = scope.node
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    dotted = dotted_name(node)
    if dotted is None or "." not in dotted:
        return None
    index = memo.get(id(function))
    if index is None:
        index = memo[id(function)] = _stores(function)
    found = index.get(dotted)
    if not found or len(found) != 1:
        return None
    statement, block_end = found[0]
    end = statement.end_lineno or statement.lineno
    if not end < line <= block_end or not _plain(statement, node):
        return None
    parts = dotted.split(".")
    for cut in range(1, len(parts)):  # `a.b = ...` between the store and the read: another object
        for other, _ in index.get(".".join(parts[:cut]), ()):
            if statement.lineno <= other.lineno < line:
                return None
    return statement


def _plain(statement: ast.stmt, node: ast.Attribute) -> bool:
    """``a.b.c = value`` (or annotated): the value is the attribute's, not a tuple's part or a loop's."""
    if isinstance(statement, ast.Assign):
        return len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Attribute)
    return isinstance(statement, ast.AnnAssign) and statement.value is not None


def _stores(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Index:
    index: _Index = {}

    def visit(body: list[ast.stmt]) -> None:
        if not body:
            return
        block_end = body[-1].end_lineno or body[-1].lineno
        for statement in body:
            for target in _targets(statement):
                dotted = dotted_name(target) if isinstance(target, ast.Attribute) else None
                if dotted is not None:
                    index.setdefault(dotted, []).append((statement, block_end))
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue  # its own scope
            for name in _BLOCKS:
                children = getattr(statement, name, None)
                if isinstance(children, list):
                    if name == "handlers":
                        for handler in children:
                            visit(handler.body)
                    else:
                        visit(children)
            if isinstance(statement, ast.Match):
                for case in statement.cases:
                    visit(case.body)

    visit(function.body)
    return index


def _targets(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, ast.Assign):
        found: list[ast.expr] = []
        for target in statement.targets:
            found.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        return found
    if isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        return [statement.target]
    if isinstance(statement, (ast.For, ast.AsyncFor)):
        return [statement.target]
    if isinstance(statement, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in statement.items if item.optional_vars is not None]
    return []
