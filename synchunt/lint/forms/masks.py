"""Boolean-mask indexing: ``x[mask]`` reads and ``x[mask] = values`` writes."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, read_confidence, register, weakest
from synchunt.lint.where import Where
from synchunt.rules import Rule

# Calls and methods whose result is a boolean tensor.
MASK_FUNCTIONS = frozenset({
    "logical_and", "logical_or", "logical_not", "logical_xor", "isin", "isnan", "isinf", "isfinite", "isneginf",
    "isposinf", "eq", "ne", "gt", "ge", "lt", "le", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "bool", "signbit", "isclose",
})
_NOT_MASK_COMPARISONS = (ast.Is, ast.IsNot, ast.In, ast.NotIn)
_JOINS = frozenset({"cat", "concat", "concatenate", "stack"})


class MaskEvidence:
    """Why an index expression is a boolean mask: its shape (``STRUCTURE``) or only its name (``NAME``)."""

    STRUCTURE = "structure"
    NAME = "name"


def mask_evidence(node: ast.expr, context: Context, depth: int = 0) -> str | None:
    if depth > 4:
        return None
    if isinstance(node, ast.Compare):
        return None if any(isinstance(op, _NOT_MASK_COMPARISONS) for op in node.ops) else MaskEvidence.STRUCTURE
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        sides = [mask_evidence(side, context, depth + 1) for side in (node.left, node.right)]
        return MaskEvidence.STRUCTURE if MaskEvidence.STRUCTURE in sides else (
            MaskEvidence.NAME if MaskEvidence.NAME in sides else None)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        inner = mask_evidence(node.operand, context, depth + 1)
        if inner is not None:
            return inner
        # `~x` of anything but a Python int is a tensor op; in an index, a negated mask
        return None if context.where(node.operand) is Where.VALUE else MaskEvidence.STRUCTURE
    if isinstance(node, ast.Call):
        return _call_is_mask(node, context)
    if isinstance(node, ast.Name):
        found = context.scope.lookup(node.id, getattr(node, "lineno", 0))
        if found is not None and found[0].value is not None and not found[0].path:
            return mask_evidence(found[0].value, context, depth + 1)
        return MaskEvidence.NAME if _named_mask(node.id) else None
    if isinstance(node, ast.Attribute):
        return MaskEvidence.NAME if _named_mask(node.attr) else None
    return None


def _call_is_mask(node: ast.Call, context: Context) -> str | None:
    func = node.func
    name = context.classifier.torch_function_name(func)
    if name is None and isinstance(func, ast.Attribute) and not context.classifier.numpy_root(func):
        name = func.attr
    if name in MASK_FUNCTIONS:
        return MaskEvidence.STRUCTURE
    if name in _JOINS and node.args:  # torch.cat(masks), torch.stack([m1, m2])
        parts = node.args[0].elts if isinstance(node.args[0], (ast.List, ast.Tuple)) else [node.args[0]]
        found = {mask_evidence(part, context) for part in parts if not isinstance(part, ast.Starred)}
        return MaskEvidence.STRUCTURE if MaskEvidence.STRUCTURE in found else (
            MaskEvidence.NAME if MaskEvidence.NAME in found else None)
    dtype = next((keyword.value for keyword in node.keywords if keyword.arg == "dtype"), None)
    if dtype is not None and isinstance(dtype, ast.Attribute) and dtype.attr == "bool":
        return MaskEvidence.STRUCTURE  # torch.zeros(n, dtype=torch.bool) or .to(dtype=torch.bool)
    if isinstance(func, ast.Attribute) and func.attr == "to" and node.args and isinstance(
            node.args[0], ast.Attribute) and node.args[0].attr == "bool":
        return MaskEvidence.STRUCTURE
    return None


def _named_mask(name: str) -> bool:
    tokens = name.lower().strip("_").split("_")
    return "mask" in tokens or name.lower().endswith("mask")


def _index_parts(node: ast.Subscript) -> list[ast.expr]:
    index = node.slice
    return list(index.elts) if isinstance(index, ast.Tuple) else [index]


def _mask_confidence(subscript: ast.Subscript, context: Context) -> tuple[Confidence, ast.expr] | None:
    """The confidence that ``subscript`` indexes a device tensor with a boolean mask, and the mask."""
    for part in _index_parts(subscript):
        evidence = mask_evidence(part, context)
        if evidence is None:
            continue
        receiver = context.where(subscript.value)
        if receiver is Where.VALUE:
            return None  # a dict or a list: not a tensor
        where = receiver if receiver.is_tensor else context.where(part)
        confidence = read_confidence(where)
        if confidence is None:
            return None
        if evidence is MaskEvidence.NAME and confidence is not Confidence.HIGH:
            confidence = Confidence.LOW if where is Where.UNKNOWN else confidence
        return confidence, part
    return None


@register("mask-subscript", ast.Subscript, ast.AugAssign)
def detect_mask_subscript(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    if isinstance(node, ast.AugAssign):  # `x[mask] += v` reads through the mask first
        subscript = node.target
        if not isinstance(subscript, ast.Subscript):
            return None
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
        subscript = node
    else:
        return None
    found = _mask_confidence(subscript, context)
    if found is None:
        return None
    confidence, mask = found
    return Hit(subscript, f"`{excerpt(subscript)}` indexes with a boolean mask (`{excerpt(mask, 40)}`): the "
               "result's size is read back from the device", confidence)


def _value_confidence(value: ast.expr, context: Context) -> Confidence | None:
    """A Python scalar takes the masked-fill fast path (no sync); a tensor value does not."""
    where = context.where(value)
    if where.is_tensor:
        return Confidence.HIGH if where is Where.DEVICE else (
            Confidence.MEDIUM if where is not Where.CPU_NAMED else Confidence.LOW)
    if where is Where.VALUE:
        return None
    if isinstance(value, ast.Subscript) and any(mask_evidence(part, context) for part in _index_parts(value)):
        return Confidence.MEDIUM  # `x[mask] = y[mask]`
    return Confidence.MEDIUM if isinstance(value, ast.Call) else Confidence.LOW


@register("mask-assign", ast.Assign)
def detect_mask_assign(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    assert isinstance(node, ast.Assign)
    for target in node.targets:
        if not isinstance(target, ast.Subscript):
            continue
        found = _mask_confidence(target, context)
        if found is None:
            continue
        value_confidence = _value_confidence(node.value, context)
        if value_confidence is None:
            return None
        # A device value implies a device target; otherwise the weaker evidence decides.
        confidence = value_confidence if value_confidence is Confidence.HIGH else weakest(found[0], value_confidence)
        assert confidence is not None
        return Hit(node, f"`{excerpt(target)} = {excerpt(node.value, 40)}` writes a tensor through a boolean "
                   "mask: the positions are counted on the device first", confidence)
    return None
