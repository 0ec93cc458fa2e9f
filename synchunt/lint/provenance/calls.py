"""Where a call's result lives: torch factories and ops, tensor methods, builtins, and functions of the same
module (whose ``return`` statements, or return annotation, say what they give back)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from synchunt.lint.callsites import NOT_PASSED, argument_of
from synchunt.lint.provenance import contents, passing
from synchunt.lint.provenance.syntax import constant_device, dotted_name, is_true, keyword
from synchunt.lint.provenance.tables import (
    FACTORIES,
    HOST_METHODS,
    PICKING_BUILTINS,
    PLAIN_VALUE_METHODS,
    TENSOR_NAMESPACES,
    TENSOR_ONLY_METHODS,
    TYPED_CONSTRUCTORS,
    VALUE_BUILTINS,
    VALUE_METHODS,
    VALUE_NAMESPACES,
    VALUE_TORCH_CALLS,
)
from synchunt.lint.scopes import ITER, Scope, Step
from synchunt.lint.where import (
    MODULE_TENSORS,
    Where,
    annotation_part_where,
    annotation_where,
    join,
    name_says_host,
)

if TYPE_CHECKING:
    from synchunt.lint.provenance import Classifier

_ELEMENT_METHODS = frozenset({"get", "pop", "setdefault", "popleft", "__getitem__"})  # one element back
_COPIES = frozenset({"tensor", "as_tensor", "asarray"})  # built from their data: a tensor's stays put


def classify(c: Classifier, node: ast.Call, scope: Scope, line: int) -> Where:
    func = node.func
    if _torch_path(c, func).rsplit(".", 1)[-1] in MODULE_TENSORS:
        data = node.args[0] if node.args else keyword(node, "data")
        if isinstance(data, ast.Call) and keyword(data, "device") is not None:
            return c.where(data, scope, line)  # `nn.Parameter(torch.zeros(n, device="cpu"))`: placed on purpose
        return Where.TENSOR  # `nn.Parameter(torch.empty(n))`: built on the host, it follows its module's device
    torch_name = c.torch_function_name(func)
    if torch_name is not None:
        return _torch_call(c, torch_name, node, scope, line)
    if constant_device(keyword(node, "return_tensors") or ast.Constant(None)) == "pt":
        return Where.CPU  # a tokenizer's or processor's output: host tensors
    if c.numpy_root(func):
        return Where.VALUE
    if _is_processor(func):
        return Where.CPU  # a (multimodal) processor's or tokenizer's output: host tensors
    if isinstance(func, ast.Name):
        return _name_call(c, func.id, node, scope, line)
    if not isinstance(func, ast.Attribute):
        return Where.UNKNOWN
    method, receiver = func.attr, func.value
    if method in HOST_METHODS:
        return Where.CPU
    if method in VALUE_METHODS and method not in _ELEMENT_METHODS:
        return Where.VALUE
    if method == "cuda":
        return Where.DEVICE
    if method == "to":
        return _to_call(c, node, scope, line)
    local = passing.called_function(func, scope, line)
    if local is not None:
        return passing.returns_at(c, local[0], node, scope, line, local[1])
    source = c.where(receiver, scope, line)
    if source.is_tensor:
        return source
    if method in _ELEMENT_METHODS and node.args and isinstance(node.args[0], ast.Constant) and (
            node.args[0].value in c.host_fields):
        return Where.CPU  # `kwargs.pop("num_crops")` of a field kept on the host
    if method in _ELEMENT_METHODS and not is_module(receiver, scope, line):
        key = node.args[0] if node.args and isinstance(node.args[0], ast.Constant) and isinstance(
            node.args[0].value, str) else None  # `d.get("k")`: that key's entry; `d.get(k)`: any entry
        return contents.follow(c, receiver, (contents.key_step(key) if key is not None else None,), scope, line)
    if source is Where.VALUE:
        # the methods of plain values (numbers, strings, containers, numpy arrays) give plain values
        # (`np.arange(n).sum()`); a module's function or an object's method may return anything
        if method in PLAIN_VALUE_METHODS and not is_module(receiver, scope, line):
            return Where.VALUE
    elif method in TENSOR_ONLY_METHODS:
        return Where.TENSOR
    return Where.CPU_NAMED if passing.host_in_host_out(c, node, scope, line) else Where.UNKNOWN


def _torch_path(c: Classifier, func: ast.expr) -> str:
    """What torch calls ``func`` in the module's imports (``nn.Parameter`` for ``nn.Parameter`` after ``from torch
    import nn``, or for ``Parameter`` after ``from torch.nn import Parameter``); "" for anything not torch's."""
    dotted = dotted_name(func)
    if dotted is None:
        return ""
    root, _, rest = dotted.partition(".")
    if root in c.torch_aliases:
        return f"{c.torch_aliases[root]}{rest}".strip(".")
    if root in c.torch_functions:
        return f"{c.torch_functions[root]}.{rest}".strip(".")
    return ""


def _name_call(c: Classifier, name: str, node: ast.Call, scope: Scope, line: int) -> Where:
    found = scope.lookup(name, line)
    if found is not None:
        binding = found[0]
        if binding.defined is not None:
            return passing.returns_at(c, binding.defined, node, scope, line, False)
        if binding.kind == "class":
            return Where.VALUE  # an object of a class of this module
        if binding.kind != "module" and binding.fixed is None:
            return Where.UNKNOWN  # a local callable named like a builtin
    if name in PICKING_BUILTINS and node.args:
        if len(node.args) > 1:  # max(a, b): one of them
            return join([c.where(arg, scope, line) for arg in node.args])
        return contents.follow(c, node.args[0], (ITER,), scope, line)  # max(xs): one element
    if name == "sum" and node.args:
        found_sum = contents.follow(c, node.args[0], (ITER,), scope, line)
        return found_sum if found_sum in (Where.VALUE, *_TENSOR_WHERES) else Where.UNKNOWN
    if name == "abs" and node.args:
        return c.where(node.args[0], scope, line)
    if name in VALUE_BUILTINS:
        return Where.VALUE
    unseen = found is None or found[0].module
    return Where.CPU_NAMED if unseen and passing.host_in_host_out(c, node, scope, line) else Where.UNKNOWN


def _is_processor(func: ast.expr) -> bool:
    """``processor(...)``, ``self.hf_processor(...)``, ``tokenizer(...)``: callables that turn requests into host
    tensors. (A logits processor runs on the device.)"""
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    name = name.lower()
    return name.endswith(("processor", "tokenizer", "feature_extractor")) and "logit" not in name


_TENSOR_WHERES = (Where.DEVICE, Where.TENSOR, Where.CPU, Where.CPU_NAMED)


def local_method(func: ast.Attribute, scope: Scope) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method of the enclosing class that ``self.<name>(...)`` calls, if the class defines it."""
    if isinstance(func.value, ast.Name) and func.value.id == "self" and scope.klass is not None:
        return scope.klass.methods.get(func.attr)
    return None


def local_function(func: ast.expr, scope: Scope, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function or method of this module that a call's callee names, if any."""
    if isinstance(func, ast.Attribute):
        return local_method(func, scope)
    if isinstance(func, ast.Name):
        found = scope.lookup(func.id, line)
        return found[0].defined if found is not None else None
    return None


def returns(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, path: tuple[Step, ...],
            body_only: bool = False) -> Where:
    """Where what ``function`` returns lives (or what ``path`` reaches inside it): its annotation, unless it
    only says "a tensor" and the ``return`` statements show host tensors; ``body_only``: the statements."""
    return c.guarded(("returns", id(function), path, body_only), lambda: _returns(c, function, path, body_only))


def _returns(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, path: tuple[Step, ...],
             body_only: bool) -> Where:
    declared = None
    if not body_only:
        declared = annotation_part_where(function.returns, path) if path else annotation_where(function.returns)
    if declared is not None and declared is not Where.TENSOR:
        return declared
    found = _returned(c, function, path)
    if declared is Where.TENSOR:  # `-> torch.Tensor` over `return x.cpu()`: the statements say more
        return found if found in (Where.CPU, Where.CPU_NAMED) else declared
    return found


def _returned(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, path: tuple[Step, ...]) -> Where:
    scope = c.scopes.get(id(function))
    if scope is None:
        return Where.UNKNOWN
    values, generator = function_outputs(function)
    if generator:
        if not path or path[0] != ITER:
            return Where.VALUE  # a generator object
        path = path[1:]
    found = [contents.follow(c, value, path, scope, value.lineno) if value is not None else Where.VALUE
             for value in values]
    return join(found) if found else Where.VALUE


def function_outputs(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[list[ast.expr | None], bool]:
    """The values a function returns (or yields), not looking into nested functions and classes."""
    returned: list[ast.expr | None] = []
    yielded: list[ast.expr | None] = []
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            returned.append(node.value)
        elif isinstance(node, (ast.Yield, ast.YieldFrom)):
            yielded.append(node.value)
        stack.extend(ast.iter_child_nodes(node))
    return (yielded, True) if yielded else (returned, False)


def parameter_where(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                    path: tuple[Step, ...] = ()) -> Where:
    """What the module's calls pass for a parameter that says nothing itself.

    Every call must agree. A public function may have callers elsewhere, so its callers only ever prove
    "a tensor"; a private one (``_name``, or nested in a function) is taken at its callers' word."""
    return c.guarded(("parameter", id(function), name, path), lambda: _parameter_where(c, function, name, path))


def _parameter_where(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str,
                     path: tuple[Step, ...]) -> Where:
    passed = passing.passed_where(c, function, name, path)
    if passed is not None:
        return passed  # the one call being read (see passing)
    if not _callers_may_say(c, function, name):
        return Where.UNKNOWN
    sites = c.call_sites().get(id(function), [])
    if not sites:
        return Where.UNKNOWN
    found: set[Where] = set()
    for call, scope, through_self in sites:
        value = argument_of(call, function, name, through_self)
        if value is NOT_PASSED:
            return Where.UNKNOWN
        if scope.node is function and not path and _own_parameter(value, name, scope, call.lineno):
            continue  # a recursive call handing the parameter on: it passes what the outer calls passed
        found.add(contents.follow(c, value, path, scope, call.lineno))
    if not found:
        return Where.UNKNOWN
    agreed = next((where for where, allowed in _AGREEMENTS if found <= allowed), None)
    if agreed is None:
        return Where.UNKNOWN
    private = (function.name.startswith("_") and not function.name.endswith("__")) or (
        id(function) in c.nested_functions())
    if private:
        return agreed
    if agreed in (Where.CPU, Where.CPU_NAMED):
        return Where.CPU_NAMED  # the module passes host copies; callers elsewhere might not: a weak host hint
    return Where.TENSOR if agreed in (Where.DEVICE, Where.TENSOR) else Where.UNKNOWN


def _callers_may_say(c: Classifier, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    """A parameter annotated with a class the lint cannot read is asked about at its callers only when the
    class is the module's own (a schema or record the module builds: its callers show what it holds); an
    imported one (`path: Path`) says "not what the lint knows", and callers' guesses would overrule it."""
    arguments = function.args
    parameter = next((item for item in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs,
                                         arguments.vararg, arguments.kwarg) if item is not None and item.arg == name),
                     None)
    if parameter is None or parameter.annotation is None or annotation_where(parameter.annotation) is not None:
        return True
    node = parameter.annotation
    while isinstance(node, ast.Subscript):  # `Optional[Inputs]`: the class inside
        node = node.slice
    named = ast.unparse(node).strip("'\"").rsplit(".", 1)[-1]
    module = c.scopes.get(id(c.tree)) if c.tree is not None else None
    found = module.lookup(named, 10**9) if module is not None else None
    return found is not None and found[0].kind == "class"


def _own_parameter(value: ast.expr, name: str, scope: Scope, line: int) -> bool:
    """``value`` is the parameter ``name`` itself, not rebound before ``line``."""
    if not isinstance(value, ast.Name) or value.id != name:
        return False
    found = scope.lookup(name, line)
    return found is not None and found[1] is scope and found[0].kind == "parameter"


_AGREEMENTS = ((Where.DEVICE, {Where.DEVICE}), (Where.TENSOR, {Where.DEVICE, Where.TENSOR}),
               (Where.CPU, {Where.CPU}), (Where.CPU_NAMED, {Where.CPU, Where.CPU_NAMED}), (Where.VALUE, {Where.VALUE}))


def is_module(node: ast.expr, scope: Scope, line: int) -> bool:
    if not isinstance(node, ast.Name):
        return False
    found = scope.lookup(node.id, line)
    return found is not None and found[0].module


def _torch_call(c: Classifier, name: str, node: ast.Call, scope: Scope, line: int) -> Where:
    namespace, _, short = name.rpartition(".")
    if namespace == "cuda" and short in TYPED_CONSTRUCTORS:
        return Where.DEVICE  # torch.cuda.LongTensor([...])
    if name in VALUE_TORCH_CALLS or short.startswith(("is_", "get_", "set_")) or short in VALUE_TORCH_CALLS:
        return Where.VALUE
    if namespace and namespace.split(".")[0] not in TENSOR_NAMESPACES:
        return Where.VALUE if namespace.split(".")[0] in VALUE_NAMESPACES else Where.UNKNOWN
    if name == "load":  # whatever was saved: a dict, a model, a tensor on the device it was saved from
        location = constant_device(keyword(node, "map_location") or ast.Constant(None))
        return Where.CPU if location is not None and location.startswith("cpu") else Where.UNKNOWN
    device = keyword(node, "device")
    if name in FACTORIES or short in FACTORIES:
        if device is not None:
            return device_where(c, device, scope, line)
        if any(item.arg is None for item in node.keywords):
            return Where.TENSOR  # `torch.full(shape, v, **cuda_kwargs)`: the device may be among them
        if is_true(keyword(node, "pin_memory")):
            return Where.CPU
        if node.args and (name.endswith("_like") or name in _COPIES):
            data = c.where(node.args[0], scope, line)
            if name.endswith("_like") or data.is_tensor:
                return data  # `torch.as_tensor(t)` stays where `t` is
        return Where.CPU  # the default device is the host
    if name in {"from_numpy", "frombuffer"}:
        return Where.CPU
    if device is not None:
        return device_where(c, device, scope, line)
    arguments = [item for arg in node.args
                 for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])]
    parts = [c.where(arg, scope, line) for arg in arguments]
    # `torch.stack(rows)` of a list built elsewhere: where its elements live
    parts = [contents.follow(c, arg, (ITER,), scope, line) if part is Where.VALUE and isinstance(
        arg, (ast.Name, ast.ListComp, ast.GeneratorExp)) else part for arg, part in zip(arguments, parts, strict=True)]
    found = join([part for part in parts if part.is_tensor])
    return found if found.is_tensor else Where.TENSOR


def _to_call(c: Classifier, node: ast.Call, scope: Scope, line: int) -> Where:
    receiver = c.where(node.func.value, scope, line)  # type: ignore[attr-defined]
    target = keyword(node, "device") or (node.args[0] if node.args else None)
    if target is None or is_dtype(c, target):
        return receiver if receiver.is_tensor else Where.TENSOR
    found = device_where(c, target, scope, line)
    return Where.TENSOR if found is Where.UNKNOWN else found


def device_where(c: Classifier, device: ast.expr, scope: Scope, line: int) -> Where:
    """Where a tensor built with ``device=<device>`` lives."""
    text = constant_device(device)
    if text is not None:
        return Where.CPU if text.startswith("cpu") else Where.DEVICE
    if isinstance(device, ast.Attribute) and device.attr == "device":  # `device=x.device`
        found = c.where(device.value, scope, line)
        return found if found.is_tensor else Where.TENSOR
    if isinstance(device, ast.Call):
        if c.torch_function_name(device.func) == "device" and device.args:
            return device_where(c, device.args[0], scope, line)
        callee = (dotted_name(device.func) or "").rsplit(".", 1)[-1].lower()
        return Where.DEVICE if "device" in callee or "cuda" in callee else Where.TENSOR
    if isinstance(device, ast.Name):  # `device = input_ids.device`: where that tensor is
        found = scope.lookup(device.id, line)
        if found is not None and found[0].value is not None and not found[0].path:
            binding, owner = found
            return c.guarded(("device", id(binding.value)), lambda: device_where(
                c, binding.value, owner, binding.line))  # type: ignore[arg-type]
        if found is not None and found[0].parameter and found[0].function is not None:
            # the call being read passes (or leaves to its default) this device: `_cache(n)` of
            # `def _cache(self, n, device="cpu")` builds on the host
            passed = c.passed_in.get((id(found[0].function), found[0].parameter))
            if passed is not None and device_where(c, passed[0], passed[1], passed[2]) is Where.CPU:
                return Where.CPU  # any other device passed leaves it to the name, as before
    name = dotted_name(device) or ""
    if name_says_host(name.rsplit(".", 1)[-1]):
        return Where.CPU_NAMED
    return Where.DEVICE if "device" in name.lower() or "cuda" in name.lower() else Where.TENSOR


def is_dtype(c: Classifier, node: ast.expr) -> bool:
    if isinstance(node, ast.IfExp):  # `.to(torch.int32 if t is None else t)`: one dtype or the other
        return is_dtype(c, node.body) or is_dtype(c, node.orelse)
    return (isinstance(node, ast.Attribute) and c.torch_root(node.value) and node.attr != "device") or (
        "dtype" in (dotted_name(node) or ""))
