"""Copies between host and device: a fill instead of a copied constant, a stack instead of element reads, the
host's own copy instead of a read back, and `non_blocking` copies."""

from __future__ import annotations

import ast

from synchunt.fixes.model import CheckSpec, Feed
from synchunt.fixes.patterns import Site, pattern
from synchunt.fixes.patterns.common import expression_check, follows, operand, path_feed
from synchunt.fixes.patterns.counts import _callee
from synchunt.fixes.source import Module, dotted
from synchunt.rules import RULES_BY_CODE, Kind

_DEVICE_WORDS = ("device", "dev", "cuda", "gpu", "rank")


def _device_like(node: ast.expr) -> bool:
    """A `.to(x)` argument that names a device, not a dtype: a string, `torch.device(...)`, `t.device`, or a
    name that says so (`device`, `dev`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.Call) and "device" in ((dotted(node.func) or "").split(".")[-1]).lower():
        return True  # `torch.device(...)`, `get_accelerator().current_device()`
    path = dotted(node) or ""
    return path.endswith(".device") or any(word in path.split(".")[-1].lower() for word in _DEVICE_WORDS)


def _move(node: ast.AST) -> tuple[ast.Call, ast.Call, str | None] | None:
    """``(outer, inner, device text)`` for ``inner.cuda()`` / ``inner.to(dev)`` / ``inner.to(device=dev)``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Call)):
        return None
    inner, name = node.func.value, node.func.attr
    if name == "cuda" and not node.keywords and not node.args:
        return node, inner, '"cuda"'
    if name == "to" and len(node.args) == 1 and not node.keywords and _device_like(node.args[0]):
        return node, inner, None
    if name == "to" and not node.args and [keyword.arg for keyword in node.keywords] == ["device"]:
        return node, inner, None
    return None


def _outermost_move(module: Module, node: ast.AST) -> ast.AST:
    """``t.cuda()`` when the finding points at ``t`` (the tensor a move copies), else ``node``."""
    parent = module.parent(node)
    outer = module.parent(parent) if isinstance(parent, ast.Attribute) else None
    return outer if isinstance(outer, ast.Call) and _move(outer) else node


def _constant_fill(data: ast.AST) -> tuple[str, object] | None:
    """``(shape, value)`` of a constant or a rectangular nested list of one repeated constant."""
    if isinstance(data, ast.Constant) and type(data.value) in (int, float, bool):
        return "()", data.value
    if not isinstance(data, ast.List | ast.Tuple) or not data.elts:
        return None
    rows = [_constant_fill(item) for item in data.elts]
    if any(row is None for row in rows) or len({(row[0], repr(row[1])) for row in rows}) != 1:  # type: ignore[index]
        return None
    inner, value = rows[0]  # type: ignore[misc]
    dims = [len(data.elts), *([] if inner == "()" else [int(part) for part in inner.strip("()").split(",") if part])]
    return (str(dims[0]) if len(dims) == 1 else "(" + ", ".join(map(str, dims)) + ")"), value


@pattern("constant-factory", "a device-side fill `torch.zeros(...)` instead of copying a constant to the device",
         ast.Call)
def constant_factory(site: Site) -> object:
    """`torch.tensor(c, ...)` or `torch.tensor([c, c, ...], ...)` of one repeated constant, also followed by
    `.cuda()` or `.to(device)`: `torch.zeros`, `torch.ones` or `torch.full` of the same shape, dtype and device
    fill it on the device, with no copy from the host. Always equivalent (the dtype `torch.tensor` infers is
    written out)."""
    node, module, torch = site.node, site.module, site.torch
    node = _outermost_move(module, node)
    moved = _move(node)
    outer, made = (moved[0], moved[1]) if moved else (node, node)
    if torch is None or _callee(made, torch) != "tensor" or len(made.args) != 1:  # type: ignore[union-attr]
        return None
    fill = _constant_fill(made.args[0])  # type: ignore[union-attr]
    if fill is None:
        return None
    shape, value = fill
    keywords = {keyword.arg: module.segment(keyword.value) for keyword in made.keywords}  # type: ignore[union-attr]
    if None in keywords or not set(keywords) <= {"dtype", "device", "requires_grad"}:
        return None
    if moved:
        if "device" in keywords:
            return None
        call = moved[0]
        keywords["device"] = moved[2] or module.segment(call.args[0] if call.args else call.keywords[0].value)
    if "dtype" not in keywords and type(value) is not float:
        keywords = {"dtype": f"{torch}.{'bool' if type(value) is bool else 'long'}", **keywords}
    if (value == 0 and type(value) is not bool) or value is False:
        factory, arguments = "zeros", [shape]
    elif (value == 1 and type(value) is not bool) or value is True:
        factory, arguments = "ones", [shape]
    else:
        factory, arguments = "full", [shape, repr(value)]
    arguments += [f"{key}={text}" for key, text in keywords.items()]
    replacement = f"{torch}.{factory}({', '.join(arguments)})"
    check = expression_check(module, module.segment(outer), replacement, inputs="the constant itself")
    return site.proposal("constant-factory", outer, replacement, condition=None, check=check)


@pattern("where-to-masked-fill", "`torch.masked_fill(x, m, v)` instead of `torch.where(m, x.new_tensor(v), x)`",
         ast.Call)
def where_masked_fill(site: Site) -> object:
    """`torch.where(m, x.new_tensor(v), x)` (or `torch.tensor(v)` in the middle), `v` a Python number: the fill
    value needs no tensor, so nothing is copied to the device. Equivalent when `m` broadcasts to `x`'s shape
    (always, when `m` is computed elementwise from `x`)."""
    node, module, torch = site.node, site.module, site.torch
    where = node if _callee(node, torch) == "where" else module.parent(node)
    if torch is None or _callee(where, torch) != "where" or len(where.args) != 3:  # type: ignore[union-attr]
        return None
    mask, filled, kept = where.args  # type: ignore[union-attr]
    if not isinstance(filled, ast.Call) or len(filled.args) != 1 or filled.keywords:
        return None
    is_new = isinstance(filled.func, ast.Attribute) and filled.func.attr == "new_tensor" and ast.dump(
        filled.func.value) == ast.dump(kept)
    if not (is_new or _callee(filled, torch) == "tensor") or dotted(kept) is None:
        return None
    value = filled.args[0]
    if not (dotted(value) is not None or (isinstance(value, ast.Constant) and type(value.value) in (int, float))):
        return None
    replacement = f"{torch}.masked_fill({module.segment(kept)}, {module.segment(mask)}, {module.segment(value)})"
    conditions = [] if follows(mask, kept, torch) else [
        f"`{module.segment(mask)}` broadcasts to `{module.segment(kept)}`'s shape"]
    if not isinstance(value, ast.Constant):
        conditions.append(f"`{module.segment(value)}` is a Python number")
    if not is_new:
        conditions.append(f"`{module.segment(value)}` has `{module.segment(kept)}`'s dtype")
    feeds = [(dotted(kept) or "", Feed("tensor", dtype="int")), *path_feed(value, Feed("number", dtype="int"))]
    check = expression_check(module, module.segment(where), replacement, feeds,
                             inputs="integer tensors and Python ints")
    return site.proposal("where-to-masked-fill", where, replacement,  # type: ignore[arg-type]
                         condition="; ".join(conditions) or None, check=check)


@pattern("stack-device-scalars", "`torch.stack(values)` instead of `torch.tensor(values)` of device scalars",
         ast.Call)
def stack_scalars(site: Site) -> object:
    """`torch.tensor(values)` or `torch.Tensor(values)` (also followed by `.to(device)`) where `values` holds
    0-dim tensors: each element is read to the host and copied back; `torch.stack` stays on the device.
    Equivalent when the elements are 0-dim tensors of one dtype on one device, at least one; the result stays
    on their device (and keeps their dtype where `torch.Tensor` made float32)."""
    node, module, torch = site.node, site.module, site.torch
    node = _outermost_move(module, node)
    moved = _move(node)
    outer, made = (moved[0], moved[1]) if moved else (node, node)
    if torch is None or _callee(made, torch) not in ("tensor", "Tensor", "as_tensor") or len(made.args) != 1:  # type: ignore[union-attr]
        return None
    data = made.args[0]  # type: ignore[union-attr]
    literal = isinstance(data, ast.List | ast.Tuple)
    if literal and (not data.elts or any(isinstance(item, ast.Constant | ast.List | ast.Tuple | ast.Starred)
                                         for item in data.elts)):  # type: ignore[union-attr]
        return None
    if not literal and dotted(data) is None and not isinstance(data, ast.Subscript):
        return None
    if not literal and RULES_BY_CODE[site.rule].kind is Kind.BLOCKING_COPY:
        return None  # the lint found host data: a list of Python numbers, most likely, not of tensors
    keywords = {keyword.arg: module.segment(keyword.value) for keyword in made.keywords}  # type: ignore[union-attr]
    if None in keywords or not set(keywords) <= {"dtype", "device"}:
        return None
    replacement = f"{torch}.stack({module.segment(data)})"
    if "dtype" in keywords:
        replacement += f".to({keywords['dtype']})"
    where = keywords.get("device") or (module.segment(moved[0].args[0]) if moved and moved[0].args else None)
    placed = f" on `{where}`" if where else "; the result stays on their device"
    condition = (f"`{module.segment(data)}` holds 0-dim tensors of one dtype{placed}, at least one"
                 + ("; float32 like `torch.Tensor` made" if _callee(made, torch) == "Tensor" else ""))
    if literal:
        feeds = [(dotted(item) or "", Feed("scalar_tensor", dtype="float")) for item in data.elts if dotted(item)]  # type: ignore[union-attr]
    elif isinstance(data, ast.Subscript) and dotted(data.value) is not None:  # `scores[idx]`: any key, one list
        feeds = [(dotted(data.value) or "", Feed("scalar_table", min_size=1))]
    else:
        feeds = path_feed(data, Feed("scalar_list", min_size=1))
    check = expression_check(module, module.segment(outer), replacement, feeds, compare="number",
                             inputs="lists of 0-dim float tensors")
    return site.proposal("stack-device-scalars", outer, replacement, condition=condition, check=check)


@pattern("host-copy", "the host list the tensor was built from instead of reading it back with `.tolist()`",
         ast.Call)
def host_copy(site: Site) -> object:
    """`t.tolist()` where `t = torch.tensor(values, ...)` earlier in the function and nothing writes into `t`:
    the host already has the values. Equivalent when `values` holds numbers exact in `t`'s dtype (ints, or
    floats already of that precision) and nothing changes `values` after `t` is built."""
    node, module, torch = site.node, site.module, site.torch
    if torch is None or not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    if node.func.attr != "tolist" or node.args or not isinstance(node.func.value, ast.Name):
        return None
    name = node.func.value.id
    value = module.binding(name, node)
    made = value
    while isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr in ("to", "cuda"):
        made = made.func.value
    if value is None or _callee(made, torch) not in ("tensor", "as_tensor") or not made.args:  # type: ignore[union-attr]
        return None
    if _written_into(module, node, name):
        return None
    data = made.args[0]  # type: ignore[union-attr]
    if isinstance(data, ast.List | ast.Tuple):
        replacement = "[" + module.segment(data)[1:-1] + "]" if isinstance(data, ast.Tuple) else module.segment(data)
    elif dotted(data) is not None:
        replacement = f"list({module.segment(data)})"
    else:
        return None
    condition = (f"`{module.segment(data)}` holds numbers exact in `{name}`'s dtype (ints, or floats of that "
                 f"precision) and nothing changes it after `{name}` is built")
    check = CheckSpec(setup=f"{name} = {module.segment(value)}", original=f"result = {module.segment(node)}",
                      rewritten=f"result = {replacement}", feeds=tuple(path_feed(data, Feed("count_list"))),
                      torch_name=torch, inputs="host lists of ints")
    return site.proposal("host-copy", node, replacement, condition=condition, check=check)


def _written_into(module: Module, node: ast.AST, name: str) -> bool:
    for item in ast.walk(module.function(node)):
        if isinstance(item, ast.Subscript) and isinstance(item.ctx, ast.Store) and dotted(item.value) == name:
            return True
        if isinstance(item, ast.Call) and isinstance(item.func, ast.Attribute) and item.func.attr.endswith("_") \
                and dotted(item.func.value) == name:
            return True
    return False


_HOST_READ_AFTER = ("numpy", "tolist", "item")


@pattern("non-blocking-copy", "a `non_blocking=True` copy, read after an event instead of waited for here",
         ast.Call)
def non_blocking(site: Site) -> object:
    """`t.cpu()`, `t.to("cpu")`, `t.to(device)`, `t.cuda()` or `host.copy_(t)` whose result is stored or
    returned, not read at once: the copy runs asynchronously. Equivalent when the host reads the result (or
    changes the source, for a host-to-device copy) only after an event or stream wait, and host memory is
    pinned (an upload from pageable memory does not wait for the device either, but the call first copies the
    data to a staging buffer, so it overlaps less)."""
    node, module = site.node, site.module
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name, keywords = node.func.attr, {keyword.arg for keyword in node.keywords}
    if "non_blocking" in keywords or None in keywords:
        return None
    text = module.segment(node)
    if name == "cpu" and not node.args and not node.keywords:
        receiver = module.segment(node)[: -len(".cpu()")] if text.endswith(".cpu()") else None
        if receiver is None:
            return None
        replacement = f'{receiver}.to("cpu", non_blocking=True)'
    elif name in ("to", "cuda", "copy_") and (name != "to" or (len(node.args) == 1 and _device_like(node.args[0]))
                                              or (not node.args and keywords == {"device"})):
        if name == "copy_" and len(node.args) != 1:
            return None
        head = text[:text.rindex(")")]
        body = head.rstrip()
        separator = "" if body.endswith("(") else " " if body.endswith(",") else ", "
        replacement = f"{body}{separator}non_blocking=True{head[len(body):]})"
    else:
        return None
    d2h = name == "cpu" or (name == "to" and node.args and isinstance(node.args[0], ast.Constant | ast.Call)
                            and "cpu" in module.segment(node.args[0])) or name == "copy_"
    parent = module.parent(node)
    if d2h and name != "copy_" and not isinstance(parent, ast.Assign | ast.AnnAssign | ast.Return | ast.keyword
                                                  | ast.Tuple):
        return None  # a host copy read at once (`.numpy()`, `int(...)`) would be read before it has arrived
    if d2h:
        condition = ("the host reads the result only after an event or stream wait (the copy may still be running "
                     "when this returns)")
    else:
        condition = (f"`{operand(module, node.func.value)}` is in pinned memory and not changed on the host until the "
                     "copy has finished (from pageable memory the call does not wait for the device either, but it "
                     "first copies the data to a staging buffer: pinned memory lets the copy overlap)")
    check = expression_check(module, text, replacement, inputs="tensors copied on this machine's device")
    if name == "copy_":
        check = None  # the destination is the user's buffer: a copy on one device says nothing about the race
    return site.proposal("non-blocking-copy", node, replacement, condition=condition, check=check,
                         unchecked="the race it avoids cannot be run on generated inputs" if check is None else "")
