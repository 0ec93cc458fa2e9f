"""Small helpers the patterns share: check recipes for expressions, operands in parentheses, elementwise masks."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from synchunt.fixes.model import CheckSpec, Compare, Feed
from synchunt.fixes.source import Module, dotted

_ATOMS = (ast.Name, ast.Attribute, ast.Constant, ast.Call, ast.Subscript, ast.List, ast.Tuple, ast.Dict, ast.Set,
          ast.ListComp, ast.GeneratorExp, ast.SetComp, ast.DictComp, ast.JoinedStr)
# Elementwise functions and methods: a mask computed with them from `x` alone has `x`'s shape.
ELEMENTWISE = frozenset({
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "signbit", "logical_not", "logical_and",
    "logical_or", "logical_xor", "bitwise_not", "bitwise_and", "bitwise_or", "eq", "ne", "lt", "le", "gt", "ge",
    "greater", "less", "greater_equal", "less_equal", "not_equal", "isin", "bool", "abs", "sign", "isclose"})


def operand(module: Module, node: ast.AST) -> str:
    """The node's text, in parentheses unless it is an atom (safe as an operand of any operator)."""
    text = module.segment(node)
    return text if isinstance(node, _ATOMS) else f"({text})"


def expression_check(module: Module, original: str, rewritten: str, feeds: Iterable[tuple[str, Feed]] = (), *,
                     compare: Compare = "exact", inputs: str = "generated inputs", allowed_syncs: int = 0,
                     ) -> CheckSpec:
    """A recipe that compares the values of two expressions."""
    return CheckSpec(original=f"result = ({original})", rewritten=f"result = ({rewritten})", feeds=tuple(feeds),
                     compare=compare, inputs=inputs, allowed_syncs=allowed_syncs,
                     torch_name=module.torch or "torch")


def path_feed(node: ast.AST, feed: Feed) -> list[tuple[str, Feed]]:
    """``[(path, feed)]`` when the node is a name or attribute chain (a constant needs no feed)."""
    path = dotted(node)
    return [(path, feed)] if path is not None else []


def mask_feeds(mask: ast.AST, like: str) -> list[tuple[str, Feed]]:
    """Boolean masks shaped like ``like`` for the names a mask combines (``m``, ``~m``, ``a & b``); none when
    the mask is computed from other values (``x > 0``: those are fed by how they are used)."""
    parts, leaves = [mask], []
    while parts:
        part = parts.pop()
        if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Invert | ast.Not):
            parts.append(part.operand)
        elif isinstance(part, ast.BinOp) and isinstance(part.op, ast.BitAnd | ast.BitOr | ast.BitXor):
            parts += [part.left, part.right]
        elif dotted(part) is not None:
            leaves.append(dotted(part))
        else:
            return []
    return [(path, Feed("mask", like=like)) for path in dict.fromkeys(leaves) if path]


def plain_value(node: ast.AST) -> bool:
    """A name, attribute chain or number constant: a value the checker can feed, or needs not."""
    return dotted(node) is not None or (isinstance(node, ast.Constant) and isinstance(node.value, int | float)
                                        and not isinstance(node.value, bool))


def follows(mask: ast.AST, subject: ast.AST, torch: str | None) -> bool:
    """Whether ``mask`` is computed elementwise from ``subject`` and constants alone, so it has ``subject``'s
    shape: ``x > 0``, ``~torch.isnan(x)``, ``(x >= 1) & (x != 5)``."""
    target = dotted(subject)
    valid, mentions = _elementwise(mask, target, torch) if target is not None else (False, False)
    return valid and mentions


def _elementwise(node: ast.AST, target: str | None, torch: str | None) -> tuple[bool, bool]:
    """(whether ``node`` is elementwise in ``target`` and constants, whether it mentions ``target``)."""
    if isinstance(node, ast.Constant):
        return True, False
    if dotted(node) == target:
        return True, True
    if isinstance(node, ast.Compare):
        parts = [node.left, *node.comparators]
    elif isinstance(node, ast.BinOp):
        parts = [node.left, node.right]
    elif isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
        parts = [node.operand]
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ELEMENTWISE
          and not node.keywords):
        receiver = node.func.value
        parts = list(node.args) if torch is not None and dotted(receiver) == torch else [receiver, *node.args]
    else:
        return False, False
    results = [_elementwise(part, target, torch) for part in parts]
    return all(valid for valid, _ in results), any(mentions for _, mentions in results)
