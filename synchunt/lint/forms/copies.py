"""Blocking host-to-device copies: building a device tensor from host data, moving a host tensor over, and
``copy_`` between host and device buffers without ``non_blocking``."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, method_call, register
from synchunt.lint.provenance import constant_device, keyword
from synchunt.lint.where import Where
from synchunt.rules import Rule

_SETUP_FUNCTIONS = frozenset({"__init__", "__post_init__", "__new__", "<module>", "<class>"})
_HOST = (Where.CPU, Where.CPU_NAMED)


def in_setup_code(context: Context) -> bool:
    """Constructors and module or class bodies run once: a copy there is the fix, not the bug."""
    return context.scope.qualname.rsplit(".", 1)[-1] in _SETUP_FUNCTIONS


def _target_confidence(target: ast.expr, context: Context) -> Confidence | None:
    """How sure ``device=target`` / ``.to(target)`` names an accelerator (``None``: the host or a dtype)."""
    if context.classifier.is_dtype(target):
        return None
    text = constant_device(target)
    if text is not None:
        return None if text.startswith(("cpu", "meta")) else Confidence.HIGH
    where = context.classifier.device_where(target, context.scope, getattr(target, "lineno", 0))
    return {Where.DEVICE: Confidence.HIGH, Where.TENSOR: Confidence.MEDIUM}.get(where)


def _data_confidence(data: ast.expr | None, context: Context) -> Confidence | None:
    """How sure ``data`` is host data that must travel (``None``: a tensor already on the device)."""
    if data is None or (isinstance(data, (ast.List, ast.Tuple)) and not data.elts):
        return None  # `torch.tensor([], device=d)`: nothing to copy
    where = context.where(data)
    if where is Where.DEVICE or (where is Where.TENSOR and not isinstance(data, (ast.List, ast.Tuple))):
        return None
    if where in (Where.VALUE, *_HOST):
        return Confidence.HIGH
    return Confidence.LOW  # a value we know nothing about may already be a device tensor


def _weakest(*levels: Confidence | None) -> Confidence | None:
    if any(level is None for level in levels):
        return None
    return min(levels, key=lambda level: level.rank)  # type: ignore[union-attr]


def _finish(node: ast.AST, context: Context, confidence: Confidence | None, what: str) -> Hit | None:
    if confidence is None:
        return None
    if in_setup_code(context):
        confidence = Confidence.LOW
    return Hit(node, f"`{excerpt(node)}` {what}: the host waits for the transfer (and the stream's queued work)",
               confidence)


def _pinned_source(node: ast.expr, context: Context) -> bool:
    """``x.pin_memory()`` or ``torch.*(..., pin_memory=True)``, directly or through the name it was bound to."""
    if isinstance(node, ast.Name):
        found = context.scope.lookup(node.id, getattr(node, "lineno", 0))
        if found is None or found[0].value is None or found[0].path:
            return False
        node = found[0].value
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "pin_memory":
        return True
    return _requested(keyword(node, "pin_memory"))


def _requested(flag: ast.expr | None) -> bool:
    """``non_blocking=True``, ``pin_memory=True``, or a flag the code computes (``pin_memory=self.use_pinned``,
    ``non_blocking=not is_cpu``): asked for wherever it can be had (where it cannot, there is no device)."""
    return flag is not None and not (isinstance(flag, ast.Constant) and not flag.value)


@register("host-to-device", ast.Call, takes_argument=True)
def detect_host_to_device(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """The catalogue names the calls: torch builders with ``device=`` (``host-to-device:tensor``), typed
    device constructors (``:cuda.LongTensor``), and the methods ``t.new_tensor(data)``, ``.cuda()`` and
    ``.to(d)`` of a tensor built on the host, without a pinned, non-blocking path."""
    assert isinstance(node, ast.Call)
    classifier = context.classifier
    name = classifier.torch_function_name(node.func)
    data = node.args[0] if node.args else keyword(node, "data")
    if name is not None:
        if name != argument:
            return None
        device = keyword(node, "device")
        if argument.startswith("cuda."):  # `torch.cuda.LongTensor(data)`: built on the device
            return _finish(node, context, _data_confidence(data, context), "copies host data to the device") if (
                data is not None) else None
        if device is not None:
            return _finish(node, context, _weakest(_target_confidence(device, context),
                                                   _data_confidence(data, context)),
                           "copies host data to the device while building the tensor")
        return None
    found = method_call(node, argument)
    if found is None or classifier.torch_root(found[0]):
        return None
    receiver, call = found
    method = call.func.attr  # type: ignore[attr-defined]
    if method == "new_tensor":
        # only tensors have `new_tensor`: an unknown receiver is a tensor of unknown device
        owner = {Where.DEVICE: Confidence.HIGH, Where.TENSOR: Confidence.MEDIUM,
                 Where.UNKNOWN: Confidence.MEDIUM}.get(context.where(receiver))
        return _finish(node, context, _weakest(owner, _data_confidence(data, context)),
                       "copies host data to the device of the tensor it is called on")
    if method not in {"cuda", "to"} or context.where(receiver) not in _HOST:
        return None
    if method == "cuda":
        target: Confidence | None = Confidence.HIGH
    else:
        device = keyword(call, "device") or (call.args[0] if call.args else None)
        target = _target_confidence(device, context) if device is not None else None
    if target is None:
        return None
    if _requested(keyword(call, "non_blocking")):
        if _pinned_source(receiver, context):
            return None
        target = Confidence.LOW  # pageable memory: the copy is staged through the driver first
    source = Confidence.HIGH if context.where(receiver) is Where.CPU else Confidence.MEDIUM
    return _finish(node, context, _weakest(target, source), "copies a host tensor to the device")


@register("copy-into", ast.Call, takes_argument=True, call_names=("copy_",))
def detect_copy_into(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``dst.copy_(src)`` without ``non_blocking=True`` between host and device, into the side the argument
    names: ``copy-into:device`` (``device_buf.copy_(host_tensor)``), ``copy-into:host`` (the reverse)."""
    found = method_call(node, "copy_")
    if found is None or not found[1].args or _requested(keyword(found[1], "non_blocking")):
        return None
    destination, source = context.where(found[0]), context.where(found[1].args[0])
    into_host = argument == "host"
    device_side, host_side = (source, destination) if into_host else (destination, source)
    if host_side not in _HOST:
        return None
    confidence = {Where.DEVICE: Confidence.HIGH, Where.TENSOR: Confidence.MEDIUM}.get(device_side)
    if confidence is None:
        return None
    if host_side is Where.CPU_NAMED:
        confidence = Confidence.LOW if confidence is Confidence.MEDIUM else Confidence.MEDIUM
    direction = "a device tensor into a host buffer" if into_host else "host data into a device buffer"
    return Hit(node, f"`{excerpt(node)}` copies {direction} without `non_blocking=True`: the host waits for the "
               "copy and the stream's queued work", confidence)
