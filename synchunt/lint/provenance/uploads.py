"""A name the same function copies to the device asynchronously is a host tensor: ``seq_lens.to(device,
non_blocking=True)`` then ``int(seq_lens.max())`` reads the host copy's source, not the device.

Nobody writes ``non_blocking=True`` to move a tensor that is already on the device, so the copy is evidence
about its source. It is weaker than a host build (the name rule's strength: :attr:`Where.CPU_NAMED`) and holds
only for the binding the copy read: after ``x = x.to(device, non_blocking=True)``, ``x`` is the device copy.
"""

from __future__ import annotations

import ast

from synchunt.lint.provenance.syntax import constant_device, function_index, keyword, own_nodes
from synchunt.lint.scopes import Binding, Scope
from synchunt.lint.where import name_says_host

# (function) → name → lines where it is copied to the device without blocking
_Index = dict[str, list[int]]


def uploaded(memo: dict[int, _Index], name: str, line: int, binding: Binding, scope: Scope,
             lines: list[str]) -> bool:
    """Whether ``scope``'s function copies ``name``, as ``binding`` binds it, to the device without blocking on
    a line other than ``line`` (the copy is no evidence about itself). ``lines``: the module's source lines."""
    index = function_index(memo, scope, lines, "non_blocking", _uploads, {})
    for copied in (index or {}).get(name, ()):
        if copied != line:
            found = scope.lookup(name, copied)
            if found is not None and found[0] is binding:
                return True
    return False


def _uploads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> _Index:
    index: _Index = {}
    for node in own_nodes(function):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and _to_device_async(node)):
            index.setdefault(node.func.value.id, []).append(node.lineno)
    return index


def _to_device_async(call: ast.Call) -> bool:
    """``x.cuda(non_blocking=True)`` or ``x.to(<a device>, non_blocking=True)`` (not to the host, not a dtype)."""
    flag = keyword(call, "non_blocking")
    if not (isinstance(flag, ast.Constant) and flag.value is True):
        return False
    method = call.func.attr  # type: ignore[attr-defined]
    if method == "cuda":
        return True
    if method != "to":
        return False
    target = keyword(call, "device") or (call.args[0] if call.args else None)
    if isinstance(target, ast.Call) and target.args:  # `torch.device("cpu")`, `torch.device("cuda", 1)`
        target = target.args[0]
    if target is None:
        return False
    text = constant_device(target)
    if text is not None:
        return not text.startswith(("cpu", "meta"))
    spelled = ast.unparse(target)
    return "device" in spelled.lower() and "dtype" not in spelled and not name_says_host(
        spelled.rsplit(".", 1)[-1])
