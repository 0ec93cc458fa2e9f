"""Host tensors in, host tensor out: what a call gives back, judged from what this one call passes.

``out = self.calc_length(torch.tensor(feat_in))``, where ``calc_length`` only computes on its parameter, returns
a host tensor, whatever its annotation says (``-> torch.Tensor``) and whatever other callers pass it. Two rules:

- a function or method of the module (``f(x)``, ``self.m(x)``, ``Class.m(x)``) called with at least one tensor
  provably on the host has its returns read again with each parameter bound to what this call passes; when
  they are host tensors, so is the call's result (its body names no device, or it would say so);
- a callee the module cannot see, called with at least one tensor on the host (provably, or named as a host
  copy: ``lens_cpu``) and nothing else that could live on the device (only plain values and host tensors,
  no ``device=``), is taken to return host tensors too, as a weak hint (low confidence): functions that
  compute on their inputs keep them where they are, and a device-side callee would have been handed device
  tensors.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from synchunt.lint.callsites import NOT_PASSED, argument_of, is_static
from synchunt.lint.scopes import ITER, Scope, Step
from synchunt.lint.where import Where

if TYPE_CHECKING:
    from synchunt.lint.provenance import Classifier

FunctionDef = ast.FunctionDef | ast.AsyncFunctionDef
MAX_CALL_DEPTH = 4  # call sites read at once (a helper calling a helper ...); past this, the plain answer
MAX_READS = 300  # call-site readings per module (each reads a body afresh); past this, the plain answer
_HOST = (Where.CPU, Where.CPU_NAMED)
_RECEIVERS = frozenset({"self", "cls"})


def called_function(func: ast.expr, scope: Scope, line: int) -> tuple[FunctionDef, bool] | None:
    """The module's function a callee names, and whether the call passes its first parameter implicitly:
    ``f(...)``, ``self.m(...)``, ``Class.m(...)`` for a class of this module."""
    if isinstance(func, ast.Name):
        found = scope.lookup(func.id, line)
        function = found[0].defined if found is not None else None
        return (function, False) if function is not None else None
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None
    if func.value.id == "self" and scope.klass is not None:
        method = scope.klass.methods.get(func.attr)
        return (method, not is_static(method)) if method is not None else None
    found = scope.lookup(func.value.id, line)
    if found is None or found[0].kind != "class" or found[0].klass is None:
        return None
    method = found[0].klass.methods.get(func.attr)
    if method is None:
        return None
    return method, any(isinstance(item, ast.Name) and item.id == "classmethod" for item in method.decorator_list)


def returns_at(c: Classifier, function: FunctionDef, call: ast.Call, scope: Scope, line: int, through_self: bool,
               path: tuple[Step, ...] = ()) -> Where:
    """What ``function`` returns to this ``call`` (or what ``path`` reaches inside it)."""
    from synchunt.lint.provenance.calls import returns  # calls imports this module

    found = returns(c, function, path)
    if found not in (Where.TENSOR, Where.UNKNOWN, Where.CPU_NAMED) or len(c.passed_in) >= MAX_CALL_DEPTH or any(
            key[0] == id(function) for key in c.passed_in) or c.readings >= MAX_READS:
        return found
    refined = c.guarded(("at-call", id(call), path), lambda: _read_with_arguments(
        c, function, call, scope, line, through_self, path))
    return Where.CPU if refined is Where.CPU else found


def _read_with_arguments(c: Classifier, function: FunctionDef, call: ast.Call, scope: Scope, line: int,
                         through_self: bool, path: tuple[Step, ...]) -> Where:
    from synchunt.lint.provenance.calls import returns  # calls imports this module

    passed: dict[tuple[int, str], tuple[ast.expr, Scope, int, Where]] = {}
    arguments = function.args
    for parameter in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs):
        if parameter.arg in _RECEIVERS:
            continue
        value = argument_of(call, function, parameter.arg, through_self)
        if value is not NOT_PASSED:
            passed[id(function), parameter.arg] = (value, scope, line, c.where(value, scope, line))
    if not any(entry[3] is Where.CPU for entry in passed.values()):
        return Where.UNKNOWN  # nothing proven on the host comes in: the plain answer stands
    c.readings += 1
    # Answers read under these arguments are theirs only, and so is what is being read: a fresh memo and a
    # fresh set of evaluations in progress (the depth bound and the one-reading-per-function rule end it).
    saved = c.memo, c.active, c.passed_in
    c.memo, c.active, c.passed_in = {}, set(), {**c.passed_in, **passed}
    try:
        return returns(c, function, path, body_only=True)
    finally:
        c.memo, c.active, c.passed_in = saved


def passed_where(c: Classifier, function: FunctionDef, name: str, path: tuple[Step, ...]) -> Where | None:
    """What the call being read passes for a parameter (``None`` outside such a reading)."""
    from synchunt.lint.provenance import contents  # imports this module's users

    entry = c.passed_in.get((id(function), name))
    if entry is None:
        return None
    value, scope, line, where = entry
    return where if not path else contents.follow(c, value, path, scope, line)


def host_in_host_out(c: Classifier, call: ast.Call, scope: Scope, line: int) -> bool:
    """An unseen callee handed at least one host tensor and nothing that could live on the device (the
    receiver of a method is an object, not an input: a tensor receiver is answered before this is asked)."""
    from synchunt.lint.provenance import contents  # imports this module's users

    if any(item.arg == "device" for item in call.keywords):
        return False
    found: list[Where] = []
    copies = False  # an argument named as a host copy: `context_lens_cpu`
    for value in call.args:
        if isinstance(value, ast.Starred):
            found.append(contents.follow(c, value.value, (ITER,), scope, line))
        elif not (isinstance(value, ast.Name) and value.id in _RECEIVERS):
            found.append(c.where(value, scope, line))
            copies = copies or (found[-1] is Where.CPU_NAMED and _names_host_copy(value))
    for item in call.keywords:
        found.append(c.where(item.value, scope, line) if item.arg is not None
                     else contents.follow(c, item.value, (None,), scope, line))  # `**kwargs`: its values
        copies = copies or (found[-1] is Where.CPU_NAMED and _names_host_copy(item.value))
    # The `_cpu` suffix, the serving code bases' name for a host copy, counts as a host tensor here (the
    # answer is the weak hint anyway); other host-sounding names (`chunk_list` of device tensors) do not.
    return (Where.CPU in found or copies) and all(where in (*_HOST, Where.VALUE) for where in found)


def _names_host_copy(value: ast.expr) -> bool:
    name = value.id if isinstance(value, ast.Name) else value.attr if isinstance(value, ast.Attribute) else ""
    return "cpu" in name.lower().strip("_").split("_")
