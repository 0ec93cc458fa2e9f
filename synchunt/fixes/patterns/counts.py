"""Sizes the host already knows or need not know: `repeat_interleave(..., output_size=)`, a device count instead
of `nonzero(...).shape[0]`, and device-side `max`/`min` instead of Python's builtins."""

from __future__ import annotations

import ast

from synchunt.fixes.model import CheckSpec, Feed
from synchunt.fixes.patterns import Site, pattern
from synchunt.fixes.patterns.common import expression_check, path_feed
from synchunt.fixes.source import Module, dotted

_CHAINED = ("to", "cuda", "long", "int", "contiguous")


def _unchained(node: ast.expr) -> ast.expr:
    """``torch.tensor(L)`` of ``torch.tensor(L).to(device).long()``: the call under device and dtype moves."""
    while (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _CHAINED):
        node = node.func.value
    return node


def _callee(node: ast.AST, torch: str | None) -> str | None:
    """``tensor`` for ``torch.tensor(...)``; ``None`` for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and dotted(node.func.value) == torch:
        return node.func.attr
    return None


def _known_total(module: Module, repeats: ast.expr, call: ast.Call, torch: str) -> tuple[str, str | None, str] | None:
    """``(total, condition, how)``: a host expression equal to ``repeats.sum()``, from how ``repeats`` was made."""
    if not isinstance(repeats, ast.Name):
        return None
    name = repeats.id
    value = module.binding(name, call)
    if value is not None:
        made = _unchained(value)
        if _callee(made, torch) in ("tensor", "as_tensor") and made.args:  # type: ignore[union-attr]
            data = made.args[0]  # type: ignore[union-attr]
            if isinstance(data, ast.List | ast.Tuple) and all(
                    isinstance(item, ast.Constant) and type(item.value) is int for item in data.elts):
                return str(sum(item.value for item in data.elts)), None, "literal"  # type: ignore[attr-defined]
            if dotted(data) is not None:
                return (f"sum({module.segment(data)})",
                        f"`{module.segment(data)}` is a flat list of ints, unchanged since `{name}` was built from it",
                        "list")
        if (_callee(made, torch) == "bincount" or (isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute)
                                                   and made.func.attr == "bincount")) and not any(
                keyword.arg == "weights" for keyword in made.keywords):  # type: ignore[union-attr]
            counted = made.args[0] if _callee(made, torch) == "bincount" else made.func.value  # type: ignore[union-attr]
            if dotted(counted) is not None:
                return f"{module.segment(counted)}.numel()", None, "bincount"
    for item in ast.walk(module.function(call)):
        if (isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name)
                and (item.end_lineno or 0) < call.lineno and _reads_sum_of(item.value, name)):
            return (item.targets[0].id, f"`{name}` is unchanged since `{item.targets[0].id}` was read",
                    "read")
    return None


def _reads_sum_of(value: ast.expr, name: str) -> bool:
    """``int(r.sum())``, ``r.sum().item()``, ``int(r.sum().item())``: a host read of ``name``'s total."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "int" and value.args:
        value = value.args[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "item":
        value = value.func.value
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "sum"
            and not value.args and dotted(value.func.value) == name)


@pattern("repeat-interleave-output-size", "`repeat_interleave(..., output_size=total)` with the total the host "
         "knows", ast.Call)
def output_size(site: Site) -> object:
    """`repeat_interleave` with tensor repeats `r` and no `output_size`, where the host knows `r`'s total:
    `r` was built from a host list (`sum(lens)`), counts a tensor with `bincount` (`ids.numel()`), or its total
    was already read (`total = int(r.sum())`). Equivalent when the total is that value."""
    node, module, torch = site.node, site.module, site.torch
    if torch is None or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr != "repeat_interleave" or any(keyword.arg == "output_size" for keyword in node.keywords):
        return None
    method = dotted(node.func.value) != torch
    arguments = [node.func.value, *node.args] if method else list(node.args)
    repeats = arguments[1] if len(arguments) > 1 else next(
        (keyword.value for keyword in node.keywords if keyword.arg == "repeats"), None)
    if repeats is None:
        return None
    known = _known_total(module, repeats, node, torch)
    if known is None:
        return None
    total, condition, how = known
    text = module.segment(node)
    head = text[:text.rindex(")")]
    body = head.rstrip()
    separator = " " if body.endswith(("(", ",")) else ", "
    replacement = f"{body}{separator}output_size={total}{head[len(body):]})"
    check = _output_size_check(module, node, arguments[0], repeats, replacement, how, torch)
    return site.proposal("repeat-interleave-output-size", node, replacement, condition=condition, check=check)


def _output_size_check(module: Module, call: ast.Call, source: ast.expr, repeats: ast.Name, replacement: str,
                       how: str, torch: str) -> CheckSpec | None:
    dims = [keyword for keyword in call.keywords if keyword.arg == "dim"]
    if dotted(source) is None or (dims and not (isinstance(dims[0].value, ast.Constant) and dims[0].value.value == 0)):
        return None
    name = repeats.id
    value = module.binding(name, call)
    if how == "read":
        made = next(item for item in ast.walk(module.function(call)) if isinstance(item, ast.Assign)
                    and isinstance(item.targets[0], ast.Name) and _reads_sum_of(item.value, name))
        setup, feeds = module.segment(made), [(name, Feed("counts"))]
    else:
        assert value is not None
        setup = f"{name} = {module.segment(value)}"
        made = _unchained(value)
        data = made.args[0] if made.args else None  # type: ignore[union-attr]
        counted = data if how != "bincount" else (
            made.args[0] if _callee(made, torch) == "bincount" else made.func.value)  # type: ignore[union-attr]
        feeds = path_feed(counted, Feed("count_list" if how == "list" else "small_ints")) if counted is not None else []
    values = f"{torch}.arange(len({name}) * 3).reshape(len({name}), 3)" if dims else f"{torch}.arange(len({name}))"
    return CheckSpec(setup=f"{setup}\n{module.segment(source)} = {values}", original=f"result = {module.segment(call)}",
                     rewritten=f"result = {replacement}", feeds=tuple(feeds), torch_name=torch,
                     inputs="repeat counts of several lengths, zeros included")


@pattern("count-nonzero", "a device count `torch.count_nonzero(m)` instead of `nonzero(m).shape[0]`", ast.Call)
def count_nonzero(site: Site) -> object:
    """`torch.nonzero(m).shape[0]`, `.size(0)` or `len(torch.nonzero(m))` (also `m.nonzero()`, `argwhere`):
    only the count is used, which the device can keep. Equivalent when whatever reads the count takes a 0-dim
    tensor."""
    node, module, torch = site.node, site.module, site.torch
    if torch is None or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr not in ("nonzero", "argwhere") or node.keywords:
        return None
    function = dotted(node.func.value) == torch
    if (function and len(node.args) != 1) or (not function and node.args):
        return None
    mask = node.args[0] if function else node.func.value
    user = _count_use(module, node)
    if user is None:
        return None
    replacement = f"{torch}.count_nonzero({module.segment(mask)})"
    check = expression_check(module, module.segment(user), replacement, path_feed(mask, Feed("mask")),
                             compare="number", inputs="masks of several shapes, empty ones included")
    return site.proposal("count-nonzero", user, replacement, check=check,
                         condition="whatever reads the count takes a 0-dim tensor (it stays on the device)")


def _device_value(module: Module, node: ast.expr) -> tuple[ast.expr, str]:
    """``(value, text)``: the tensor under a host read (``t`` of ``t.item()``) with its text, else the node."""
    from synchunt.fixes.patterns.reads import read_of, receiver_text

    found = read_of(node)
    if found is not None and found[1] == "item":
        return found[0], receiver_text(module, node, found[0])  # type: ignore[arg-type]
    return node, module.segment(node)


def _atomic(node: ast.expr) -> bool:
    return isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript | ast.Constant)


def _count_use(module: Module, node: ast.Call) -> ast.expr | None:
    parent = module.parent(node)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
        return parent
    if isinstance(parent, ast.Attribute) and parent.value is node:
        outer = module.parent(parent)
        if parent.attr == "shape" and isinstance(outer, ast.Subscript) and isinstance(outer.slice, ast.Constant) \
                and outer.slice.value == 0:
            return outer
        if parent.attr == "size" and isinstance(outer, ast.Call) and len(outer.args) == 1 and isinstance(
                outer.args[0], ast.Constant) and outer.args[0].value == 0:
            return outer
    return None


@pattern("device-min-max", "`t.clamp(min=c)`, `torch.maximum(a, b)` or `torch.stack([...]).max()` instead of "
         "Python's `max`/`min` on tensors", ast.Call)
def device_min_max(site: Site) -> object:
    """Python's `max`/`min` on tensors: `max(t, c)` with a number `c` becomes `t.clamp(min=c)`, `max(a, b)`
    `torch.maximum(a, b)`, `max(f(x) for x in xs)` `torch.stack([f(x) for x in xs]).max()`. Equivalent when
    the values are tensors (0-dim for the generator form, at least one) and whatever reads the result takes a
    tensor."""
    node, module, torch = site.node, site.module, site.torch
    parent = module.parent(node)
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and node in parent.args:
        node = parent  # a read `t.item()` among the builtin's arguments
    if torch is None or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.keywords:
        return None
    name = node.func.id
    if name not in ("max", "min"):
        return None
    numbers = [item for item in node.args if isinstance(item, ast.Constant) and isinstance(item.value, int | float)]
    feeds: list[tuple[str, Feed]] = []
    if len(node.args) == 2 and len(numbers) == 1:
        tensor, text = _device_value(module, next(item for item in node.args if item is not numbers[0]))
        bound = "min" if name == "max" else "max"
        base = text if text.startswith("(") or _atomic(tensor) else f"({text})"
        replacement = f"{base}.clamp({bound}={module.segment(numbers[0])})"
        feeds = path_feed(tensor, Feed("scalar_tensor"))
        condition = f"`{module.segment(tensor)}` is a tensor and whatever reads the result takes one"
    elif len(node.args) == 2 and not numbers:
        first, second = (_device_value(module, item) for item in node.args)
        function = "maximum" if name == "max" else "minimum"
        replacement = f"{torch}.{function}({first[1]}, {second[1]})"
        feeds = [*path_feed(first[0], Feed("scalar_tensor")), *path_feed(second[0], Feed("scalar_tensor"))]
        condition = "both are tensors that broadcast together, and whatever reads the result takes a tensor"
    elif len(node.args) == 1 and isinstance(node.args[0], ast.GeneratorExp | ast.ListComp):
        generator = node.args[0]
        inner = module.segment(generator)
        if isinstance(generator, ast.GeneratorExp):  # its text includes the call's parentheses on 3.10+
            wrapped = inner.startswith("(") and not inner.startswith(module.segment(generator.elt))
            inner = f"[{inner[1:-1] if wrapped else inner}]"
        listed = inner
        replacement = f"{torch}.stack({listed}).{name}()"
        for comprehension in generator.generators:
            feeds += path_feed(comprehension.iter, Feed("tensor_list", min_size=1))
        condition = ("the values are 0-dim tensors on one device, at least one, and whatever reads the result takes "
                     "a 0-dim tensor")
    else:
        return None
    check = expression_check(module, module.segment(node), replacement, feeds, compare="number",
                             inputs="tensors and numbers")
    return site.proposal("device-min-max", node, replacement, condition=condition, check=check)
