"""Calls that size their output from device data or copy it to the host."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, method_call, read_confidence, register
from synchunt.lint.provenance import constant_device, is_true, keyword
from synchunt.lint.where import Where
from synchunt.rules import Rule

_WHY = {
    "item": "reads a device value into a Python number",
    "tolist": "copies a device tensor into a Python list",
    "cpu": "copies a device tensor to host memory and waits for it",
    "numpy": "copies a device tensor to host memory and waits for it",
    "equal": "answers with a Python bool: the comparison's result is read back from the device",
    "allclose": "answers with a Python bool: the comparison's result is read back from the device",
}
_SIZES_OUTPUT = "sizes its output from device data, which the host must wait for"


def _first_input(call: ast.Call, name: str = "input") -> ast.expr | None:
    return call.args[0] if call.args else keyword(call, name)


@register("call", ast.Call, takes_argument=True)
def detect_torch_call(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    assert isinstance(node, ast.Call)
    if context.classifier.torch_function_name(node.func) != argument:
        return None
    confidence = read_confidence(context.where(_first_input(node)))
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` {_WHY.get(argument or '', _SIZES_OUTPUT)}", confidence)


@register("method", ast.Call, takes_argument=True)
def detect_tensor_method(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    found = method_call(node, argument)
    if found is None:
        return None
    receiver, call = found
    classifier = context.classifier
    if classifier.torch_root(receiver) or classifier.numpy_root(receiver):
        return None  # `torch.nonzero(...)` is the call form; `np.unique(...)` is not a tensor op
    if argument == "numpy" and not is_true(keyword(call, "force")):
        return None  # `.numpy()` refuses device tensors; only `force=True` copies
    confidence = read_confidence(context.where(receiver))
    if confidence is None:
        return None
    why = _WHY.get(argument or "", _SIZES_OUTPUT)
    return Hit(call, f"`{excerpt(call)}` {why}", confidence)


@register("where-one-arg", ast.Call, call_names=("where",))
def detect_where_one_arg(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    assert isinstance(node, ast.Call)
    if context.classifier.torch_function_name(node.func) != "where":
        return None
    arguments = [*node.args, *(item.value for item in node.keywords)]
    if len(arguments) != 1:
        return None
    confidence = read_confidence(context.where(arguments[0]))
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` (one-argument `torch.where`) is `nonzero`: it {_SIZES_OUTPUT}",
               confidence)


def _repeats_confidence(repeats: ast.expr | None, context: Context) -> Confidence | None:
    """Integer repeats never sync; tensor repeats do unless ``output_size`` is given."""
    if repeats is None:
        return None
    # `x.repeat_interleave(num_heads)` and `... (n // k)` are the common, harmless uses: without tensor
    # evidence the repeats are most likely an int.
    return read_confidence(context.where(repeats), unknown=Confidence.LOW)


@register("repeat-interleave-no-output-size", ast.Call, call_names=("repeat_interleave",))
def detect_repeat_interleave(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    assert isinstance(node, ast.Call)
    if keyword(node, "output_size") is not None:
        return None
    if context.classifier.torch_function_name(node.func) == "repeat_interleave":
        positional = node.args[1] if len(node.args) > 1 else None
        repeats = keyword(node, "repeats") or positional
        if repeats is None and len(node.args) == 1:
            repeats = node.args[0]  # `torch.repeat_interleave(repeats)`
    elif method_call(node, "repeat_interleave") is not None and not context.classifier.torch_root(node.func):
        repeats = keyword(node, "repeats") or (node.args[0] if node.args else None)
    else:
        return None
    confidence = _repeats_confidence(repeats, context)
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` has tensor repeats and no `output_size=`: the total is read back "
               "from the device", confidence)


@register("histc-default-range", ast.Call, call_names=("histc",))
def detect_histc_default_range(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    assert isinstance(node, ast.Call)
    if context.classifier.torch_function_name(node.func) == "histc":
        data, offset = _first_input(node), 2
    elif method_call(node, "histc") is not None and not context.classifier.torch_root(node.func):
        data, offset = node.func.value, 1  # type: ignore[attr-defined]
    else:
        return None
    low = keyword(node, "min") or (node.args[offset] if len(node.args) > offset else None)
    high = keyword(node, "max") or (node.args[offset + 1] if len(node.args) > offset + 1 else None)
    explicit = low is not None and high is not None
    if explicit and not (isinstance(low, ast.Constant) and isinstance(high, ast.Constant)
                         and low.value == high.value):
        return None
    confidence = read_confidence(context.where(data))
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` leaves the range to the data: its min and max are read back from "
               "the device", confidence)


@register("to-cpu", ast.Call, call_names=("to",))
def detect_to_cpu(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    found = method_call(node, "to")
    if found is None:
        return None
    receiver, call = found
    target = keyword(call, "device") or (call.args[0] if call.args else None)
    if target is None or not _is_cpu_device(target, context):
        return None
    confidence = read_confidence(context.where(receiver))
    if confidence is None:
        return None
    if is_true(keyword(call, "non_blocking")):
        confidence = Confidence.LOW  # lands in pinned memory without a wait; reading it early is the bug
    return Hit(call, f"`{excerpt(call)}` copies a device tensor to host memory and waits for it", confidence)


def _is_cpu_device(node: ast.expr, context: Context) -> bool:
    text = constant_device(node)
    if text is not None:
        return text.startswith("cpu")
    if isinstance(node, ast.Call) and context.classifier.torch_function_name(node.func) == "device" and node.args:
        return _is_cpu_device(node.args[0], context)
    if isinstance(node, ast.Attribute) and node.attr == "device":  # `.to(host_tensor.device)`
        return context.where(node.value) is Where.CPU
    return False
