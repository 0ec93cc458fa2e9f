"""Small syntax helpers shared by the provenance rules and the detectors."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import TypeVar

from synchunt.lint.scopes import Binding, Scope
from synchunt.lint.where import Where


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


def device_check(test: ast.expr) -> tuple[str, Where] | None:
    """``x.is_cuda`` → ``("x", DEVICE)``; ``x.device.type == "cpu"`` / ``a.b.is_cpu`` → ``("x", CPU)`` /
    ``("a.b", CPU)``; ``not ...`` and ``!=`` flip the answer."""
    flipped = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, flipped = test.operand, not flipped
    name, on_host = None, None
    if isinstance(test, ast.Attribute) and test.attr in {"is_cuda", "is_cpu"}:
        name, on_host = dotted_name(test.value), test.attr == "is_cpu"
    elif (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
          and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value in {"cpu", "cuda"}):
        subject = test.left
        if isinstance(subject, ast.Attribute) and subject.attr == "type":
            subject = subject.value
        if isinstance(subject, ast.Attribute) and subject.attr == "device":
            name, on_host = dotted_name(subject.value), test.comparators[0].value == "cpu"
            flipped ^= isinstance(test.ops[0], ast.NotEq)
    if name is None or on_host is None:
        return None
    return name, Where.CPU if on_host != flipped else Where.DEVICE


def asserted_checks(node: ast.Assert) -> list[tuple[str, Where]]:
    """What ``assert a and b`` says of where names live: each conjunct's `device_check`."""
    test = node.test
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return [found for found in map(device_check, tests) if found is not None]


T = TypeVar("T")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def function_index(memo: dict[int, T], scope: Scope, lines: list[str], word: str,
                   build: Callable[[ast.FunctionDef | ast.AsyncFunctionDef], T], empty: T) -> T | None:
    """``build`` of ``scope``'s function, once per function (``None`` outside one); ``empty`` when none of its
    lines says ``word`` (``lines``: the module's source lines; none known: every function is built)."""
    function = scope.node
    if not isinstance(function, _FUNCTIONS):
        return None
    index = memo.get(id(function))
    if index is None:
        says = not lines or any(word in text for text in lines[function.lineno - 1:function.end_lineno])
        index = memo[id(function)] = build(function) if says else empty
    return index


def own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's body, but not those of the functions, lambdas, classes and comprehensions in it
    (their statements run elsewhere, or their names are their own)."""
    pending: list[ast.AST] = list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        if isinstance(node, (*_FUNCTIONS, ast.Lambda, ast.ClassDef, *_COMPREHENSIONS)):
            continue
        pending.extend(ast.iter_child_nodes(node))
        yield node
