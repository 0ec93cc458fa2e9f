"""Small syntax helpers shared by the provenance rules and the detectors."""

from __future__ import annotations

import ast

from synchunt.lint.scopes import Binding, Scope


def self_attributes(node: ast.Attribute, scope: Scope) -> list[tuple[Binding, Scope]] | None:
    """The bindings of ``self.<attr>`` in the methods of the enclosing class, when ``node`` is one."""
    if isinstance(node.value, ast.Name) and node.value.id == "self" and scope.klass is not None:
        return scope.klass.attributes.get(node.attr)
    return None


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in node.keywords if item.arg == name), None)


def is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def constant_device(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def dotted_name(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
