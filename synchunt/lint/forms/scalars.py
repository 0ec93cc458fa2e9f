"""Python reading device scalars without saying ``.item()``: builtin ``max``/``min`` comparing tensors,
``torch.tensor([...])`` of tensors, sizes and ranges taken from tensors, ``[x] * t``."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, read_confidence, register
from synchunt.lint.scopes import ITER
from synchunt.lint.where import Where
from synchunt.rules import Rule

_READ = "its value is read back from the device"


def _tensor_confidence(where: Where) -> Confidence | None:
    """A device read only when the evidence says tensor (a host tensor or an unknown value: no finding)."""
    if where in (Where.CPU, Where.CPU_NAMED) or not where.is_tensor:
        return None
    return read_confidence(where)


def _builtin(node: ast.Call, context: Context, names: frozenset[str]) -> str | None:
    """The builtin a plain-name call invokes, unless the module rebinds that name."""
    if not isinstance(node.func, ast.Name) or node.func.id not in names:
        return None
    found = context.scope.lookup(node.func.id, node.lineno)
    return node.func.id if found is None else None


@register("builtin-minmax", ast.Call, takes_argument=True)
def detect_builtin_minmax(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``max(a, b)`` and ``max(xs)`` compare their candidates in Python: ``b > a`` on tensors is a bool read.
    (``sum()`` only adds, on the device: not a read.)"""
    assert isinstance(node, ast.Call)
    name = _builtin(node, context, frozenset({argument or ""}))
    if name is None or not node.args or any(item.arg == "key" for item in node.keywords):
        return None
    if len(node.args) > 1:
        confidences = [_tensor_confidence(context.where(arg)) for arg in node.args]
    else:
        confidences = [_tensor_confidence(context.classifier.element(node.args[0], context.scope, (ITER,)))]
    found = [level for level in confidences if level is not None]
    if not found:
        return None
    confidence = max(found, key=lambda level: level.rank)
    return Hit(node, f"`{excerpt(node)}` compares tensors with Python's `{name}()`: each comparison's result "
               f"is read back from the device", confidence)


@register("tensor-of-tensors", ast.Call, takes_argument=True)
def detect_tensor_of_tensors(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``torch.tensor([a, b])``, ``torch.Tensor(scores)`` where the elements are tensors: each one is read
    back to build the new tensor on the host (``torch.stack`` keeps them on the device)."""
    assert isinstance(node, ast.Call)
    name = context.classifier.torch_function_name(node.func)
    if name is None or name.rsplit(".", 1)[-1] != argument:  # `torch.tensor`, `torch.cuda.LongTensor`
        return None
    if not node.args or context.where(node.args[0]).is_tensor:
        return None  # `torch.tensor(t)` copies a tensor as a whole
    confidence = _tensor_confidence(context.classifier.element(node.args[0], context.scope, (ITER,)))
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` builds a tensor from tensor elements: each element's value is read "
               "back from the device (`torch.stack` would not)", confidence)


def _size_parts(node: ast.Call, name: str) -> list[ast.expr]:
    """The arguments that are sizes, bounds or fill values (read as Python numbers)."""
    parts = list(node.args)
    for keyword in node.keywords:
        if keyword.arg in {"size", "end", "start", "step", "steps", "n", "m", "high", "low", "fill_value"}:
            parts.append(keyword.value)
    return [item for part in parts for item in (part.elts if isinstance(part, (ast.List, ast.Tuple)) else [part])]


@register("size-from-tensor", ast.Call, takes_argument=True)
def detect_size_from_tensor(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``torch.arange(n)``, ``torch.zeros(n, d)``, ``torch.full(shape, v)``, ``range(n)`` with a tensor ``n``
    or ``v``: the size or value is read as a Python number first."""
    assert isinstance(node, ast.Call)
    name = context.classifier.torch_function_name(node.func)
    if argument == "range":  # the builtin
        if name is not None or _builtin(node, context, frozenset({"range"})) is None:
            return None
        name = "range"
    elif name != argument:
        return None
    for part in _size_parts(node, name):
        confidence = _tensor_confidence(context.where(part))
        if confidence is not None:
            return Hit(node, f"`{excerpt(node)}` takes a size or bound from a tensor (`{excerpt(part, 40)}`): "
                       f"{_READ}", confidence)
    return None


@register("sequence-repeat", ast.BinOp)
def detect_sequence_repeat(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``[x] * t`` with a tensor ``t``: Python asks the tensor for an int (``__index__``)."""
    assert isinstance(node, ast.BinOp)
    if not isinstance(node.op, ast.Mult):
        return None
    for sequence, count in ((node.left, node.right), (node.right, node.left)):
        if isinstance(sequence, (ast.List, ast.Tuple, ast.ListComp)) or (
                isinstance(sequence, ast.Constant) and isinstance(sequence.value, str)):
            confidence = _tensor_confidence(context.where(count))
            if confidence is not None:
                return Hit(node, f"`{excerpt(node)}` repeats a Python sequence a tensor's number of times: "
                           f"{_READ}", confidence)
    return None


@register("tensor-contains", ast.Compare)
def detect_tensor_contains(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``x in t`` with a tensor ``t``: ``Tensor.__contains__`` is ``(x == t).any().item()``."""
    assert isinstance(node, ast.Compare)
    for op, container in zip(node.ops, node.comparators, strict=True):
        if isinstance(op, (ast.In, ast.NotIn)):
            confidence = _tensor_confidence(context.where(container))
            if confidence is not None:
                return Hit(node, f"`{excerpt(node)}` asks a tensor whether it holds a value "
                           f"(`Tensor.__contains__` is `(x == t).any().item()`): {_READ}", confidence)
    return None


_REDUCTIONS = frozenset({"sum", "max", "min", "argmax", "argmin", "prod", "count_nonzero", "amax", "amin", "any",
                         "all"})
_CASTS = frozenset({"long", "int", "to", "detach", "clone", "contiguous"})
_MAX_NAME_HOPS = 3


def _zero_dim(node: ast.expr, context: Context, hops: int = 0) -> bool:
    """Whether the source shows ``node`` is a 0-dim tensor: a reduction over every element (``t.sum()``,
    ``torch.argmax(t)``, no ``dim``), arithmetic of one with numbers, or a name bound to one."""
    if isinstance(node, ast.Call):
        if any(item.arg in {"dim", "axis"} for item in node.keywords):
            return False
        name = context.classifier.torch_function_name(node.func)
        if name is not None:
            return name in _REDUCTIONS and len(node.args) == 1
        if not isinstance(node.func, ast.Attribute):
            return False
        if node.func.attr in _CASTS:  # `t.sum().long()`: same shape
            return _zero_dim(node.func.value, context, hops)
        return node.func.attr in _REDUCTIONS and not node.args
    if isinstance(node, ast.BinOp):  # `best - step`: a 0-dim tensor with numbers
        sides = (node.left, node.right)
        return any(_zero_dim(side, context, hops) for side in sides) and all(
            _zero_dim(side, context, hops) or context.where(side) is Where.VALUE for side in sides)
    if isinstance(node, ast.UnaryOp):
        return _zero_dim(node.operand, context, hops)
    if isinstance(node, ast.Name) and hops < _MAX_NAME_HOPS:
        found = context.scope.lookup(node.id, node.lineno)
        if found is not None and found[0].value is not None and not found[0].path:
            return _zero_dim(found[0].value, context, hops + 1)
    return False


@register("scalar-index", ast.Subscript)
def detect_scalar_index(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``alphas[t]`` with a 0-dim integer tensor ``t`` (``t = ids.argmax()``): indexing turns such an index
    into a Python int with ``t.item()`` before selecting (advanced indexing with a 1-dim index does not)."""
    assert isinstance(node, ast.Subscript)
    if not context.where(node.value).is_tensor:
        return None  # a dict hashes a tensor key by identity; a list is rarely indexed so
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    for part in parts:
        confidence = _tensor_confidence(context.where(part)) if _zero_dim(part, context) else None
        if confidence is not None:
            return Hit(node, f"`{excerpt(node)}` indexes with a 0-dim tensor (`{excerpt(part, 40)}`): the index is "
                       f"turned into a Python int first, so {_READ}", confidence)
    return None
