"""A faster ``ast.NodeVisitor``: per-type dispatch cached, leaf nodes (contexts, operators) skipped.

The lint walks every node of large trees twice (bindings, then detectors); the standard visitor's
``iter_fields``/``getattr`` dispatch costs more than parsing itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any


class FastVisitor:
    def __init__(self) -> None:
        self._dispatch: dict[type[ast.AST], Callable[[Any], None]] = {}

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        method = self._dispatch.get(kind)
        if method is None:
            method = getattr(self, "visit_" + kind.__name__, self.generic_visit)
            self._dispatch[kind] = method
        method(node)

    def generic_visit(self, node: ast.AST) -> None:
        for field in node._fields:
            value = getattr(node, field, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST) and item._fields:
                        self.visit(item)
            elif isinstance(value, ast.AST) and value._fields:
                self.visit(value)
