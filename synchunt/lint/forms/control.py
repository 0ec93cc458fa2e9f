"""Python control flow on tensor values, and explicit host waits."""

from __future__ import annotations

import ast

from synchunt.findings import Confidence
from synchunt.lint.forms import Context, Hit, excerpt, method_call, read_confidence, register
from synchunt.lint.where import Where
from synchunt.rules import Rule

_REDUCTIONS_TO_BOOL = frozenset({"any", "all"})


def _tested_parts(test: ast.expr, seen: set[int] | None = None) -> list[ast.expr]:
    """The sub-expressions whose truth Python evaluates: operands of `and`/`or`/`not`, else the test. The
    `and`/`or`/`not` nodes walked through are added to ``seen`` (their parts are this test's)."""
    if isinstance(test, ast.BoolOp):
        if seen is not None:
            seen.add(id(test))
        return [part for value in test.values for part in _tested_parts(value, seen)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        if seen is not None:
            seen.add(id(test))
        return _tested_parts(test.operand, seen)
    return [test]


def _truth_confidence(part: ast.expr, context: Context) -> Confidence | None:
    where = context.where(part)
    if where is Where.CPU_NAMED:
        return None  # `if host_ready:`, `if seq_lens_cpu.any():` — a flag or a host tensor: no device read
    if where.is_tensor:
        return read_confidence(where)
    reduction = method_call(part)
    if where is Where.UNKNOWN and reduction is not None:
        receiver, call = reduction
        if call.func.attr in _REDUCTIONS_TO_BOOL:  # type: ignore[attr-defined]
            # `(x > 0).any()`: numpy arrays have it too, but in tensor code it is a tensor
            return None if context.where(receiver) in (Where.VALUE, Where.CPU) else Confidence.MEDIUM
    return None  # an unknown value in an `if` is ordinary Python


def _test_of(node: ast.AST, seen: set[int]) -> list[ast.expr]:
    if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
        return _tested_parts(node.test, seen)
    if isinstance(node, ast.comprehension):
        return [part for condition in node.ifs for part in _tested_parts(condition, seen)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "bool" and (
            len(node.args) == 1):
        return [node.args[0]]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not) and id(node) not in seen:
        return _tested_parts(node, seen)  # `done = not t.any()`
    if isinstance(node, ast.BoolOp) and id(node) not in seen:
        # `ok = a and b`: Python tests each operand but the last, which it returns as it is
        return [part for value in node.values[:-1] for part in _tested_parts(value, seen)]
    return []


def runtime_line(statement: ast.If | ast.While, part: ast.expr) -> int:
    """The line Python reports for the truth test of ``part`` in a (multi-line) ``if``/``while`` test, as the
    runtime guard sees it: the line of the comparison compiled last before the jump, else the ``if``
    statement's first line (a ``while``: its test's). Measured on CPython 3.11's line table."""
    line = statement.lineno if isinstance(statement, ast.If) else statement.test.lineno
    for candidate in _tested_parts(statement.test):
        if isinstance(candidate, ast.Compare):
            line = candidate.lineno
        if candidate is part:
            break
    return line


@register("truthiness", ast.If, ast.While, ast.IfExp, ast.Assert, ast.comprehension, ast.Call, ast.UnaryOp,
          ast.BoolOp, call_names=("bool",))
def detect_truthiness(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    seen: set[int] = context.tested  # `and`/`or`/`not` already read as part of an enclosing test
    for part in _test_of(node, seen):
        confidence = _truth_confidence(part, context)
        if confidence is not None:
            line = runtime_line(node, part) if isinstance(node, (ast.If, ast.While)) else None
            return Hit(part, f"`{excerpt(part)}` is a tensor used as a Python bool: its value is read back from "
                       "the device", confidence, line=line)
    return None


@register("builtin-scalar", ast.Call, takes_argument=True)
def detect_builtin_scalar(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """``int(t)``, ``float(t)``, ``complex(t)`` on a tensor: Python reads the value (``.item()`` in disguise)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == argument
            and len(node.args) == 1 and not node.keywords):
        return None
    where = context.where(node.args[0])
    confidence = read_confidence(where) if where.is_tensor and where is not Where.CPU_NAMED else None
    if confidence is None:
        return None
    return Hit(node, f"`{excerpt(node)}` converts a tensor to a Python number: its value is read back from the "
               "device", confidence)


# -- explicit synchronization --------------------------------------------------------------------------
_EVENT_WORDS = ("event", "done", "ready", "finish", "complete", "fence")
_STREAM_WORDS = ("stream",)
_DEVICE_WORDS = ("module", "cuda", "device", "accelerator", "platform", "npu", "xpu", "mps", "torch")


def synchronize_target(receiver: ast.expr, context: Context) -> tuple[str, Confidence]:
    """What ``receiver.synchronize()`` waits for (``device``, ``event``, ``stream``), and how sure."""
    classifier = context.classifier
    if classifier.torch_root(receiver):
        return "device", Confidence.HIGH  # torch.cuda.synchronize(), torch.accelerator.synchronize()
    if isinstance(receiver, ast.Call):
        name = classifier.torch_function_name(receiver.func) or _last_name(receiver.func)
        if name.endswith(("current_stream", "default_stream", "Stream")):
            return "stream", Confidence.HIGH
        if name.endswith("Event"):
            return "event", Confidence.HIGH
        if name.endswith("get_device_module"):
            return "device", Confidence.HIGH
    constructor = _constructor_name(receiver, context)
    if constructor is not None:
        if constructor.endswith("Event"):
            return "event", Confidence.HIGH
        if constructor.endswith("Stream") or constructor.endswith("_stream"):
            return "stream", Confidence.HIGH
    name = _last_name(receiver).lower()
    for target, words in (("stream", _STREAM_WORDS), ("event", _EVENT_WORDS), ("device", _DEVICE_WORDS)):
        if any(word in name for word in words):
            return target, Confidence.HIGH
    return "event", Confidence.MEDIUM  # something with `.synchronize()`: an event in most code


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call):
        return _last_name(node.func)
    if isinstance(node, ast.Subscript):
        return _last_name(node.value)
    return ""


def _constructor_name(receiver: ast.expr, context: Context) -> str | None:
    if not isinstance(receiver, ast.Name):
        return None
    found = context.scope.lookup(receiver.id, getattr(receiver, "lineno", 0))
    if found is None or not isinstance(found[0].value, ast.Call):
        return None
    return _last_name(found[0].value.func)


@register("synchronize", ast.Call, call_names=("synchronize",), call_suffix="synchronize")
def detect_synchronize(node: ast.AST, context: Context, rule: Rule, argument: str | None) -> Hit | None:
    """One form for SH301-SH303: the rule's name (``<target>-synchronize``) says which receiver it takes.
    A helper named ``*synchronize`` (``device_synchronize()``) is taken for a device wait."""
    assert isinstance(node, ast.Call)
    found = method_call(node, "synchronize")
    if found is None:
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if not name.endswith("synchronize") or (isinstance(node.func, ast.Attribute) and name == "synchronize"):
            return None
        exact = context.classifier.torch_function_name(node.func) in {"cuda.synchronize", "accelerator.synchronize"}
        target, confidence = "device", Confidence.HIGH if exact else Confidence.MEDIUM
    else:
        target, confidence = synchronize_target(found[0], context)
    if not rule.name.startswith(target + "-"):
        return None
    what = {"device": "every stream of the device", "event": "the event", "stream": "the stream"}[target]
    return Hit(node, f"`{excerpt(node)}` blocks the host until {what} has finished", confidence)
