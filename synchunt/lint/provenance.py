"""Where a value lives, as far as the source shows: a small, flow-insensitive guess per expression.

The lint only knows syntax, so it asks: is this expression a tensor, and is it on the device? Evidence,
strongest first: the call that built it (`.cuda()`, `device=...`, `.cpu()`, a `torch.*` factory without a
device, `numpy`), what it was derived from (`x % n == r` lives where `x` lives), annotations, then names
(`seq_lens_cpu`, `host_indices`). A guess that is wrong costs one finding's confidence, never a crash.
"""

from __future__ import annotations

import ast

from synchunt.lint.scopes import Binding, Scope
from synchunt.lint.where import Where, join, name_says_host

FACTORIES = frozenset({
    "tensor", "as_tensor", "asarray", "zeros", "ones", "empty", "full", "arange", "range", "linspace", "logspace",
    "eye", "rand", "randn", "randint", "randperm", "empty_strided", "zeros_like", "ones_like", "empty_like",
    "full_like", "rand_like", "randn_like", "randint_like",
})
VALUE_TORCH_CALLS = frozenset({
    "equal", "allclose", "is_tensor", "numel", "is_floating_point", "is_complex", "get_default_dtype",
    "device", "dtype", "Size", "Generator", "Event", "Stream", "current_stream", "default_stream",
    "get_device_module", "is_available", "device_count", "current_device", "compile", "no_grad",
    "inference_mode", "finfo", "iinfo", "set_grad_enabled",
})
# torch submodules whose functions compute tensors, and those whose functions answer questions.
TENSOR_NAMESPACES = frozenset({"nn", "linalg", "special", "fft", "ops", "sparse", "nested"})
VALUE_NAMESPACES = frozenset({"cuda", "accelerator", "distributed", "backends", "npu", "xpu", "hpu", "mps",
                              "cpu", "version", "compiler", "_dynamo", "utils", "jit", "fx", "library",
                              "testing", "profiler", "autograd", "hub", "multiprocessing", "_C"})
VALUE_BUILTINS = frozenset({
    "len", "int", "float", "bool", "str", "range", "list", "tuple", "dict", "set", "frozenset", "sorted",
    "isinstance", "issubclass", "hasattr", "getattr", "enumerate", "zip", "repr", "id", "type", "round",
    "print", "map", "filter", "reversed", "any", "all", "divmod", "hash", "ord", "chr", "format", "open",
})
VALUE_METHODS = frozenset({
    "numel", "dim", "ndimension", "size", "nelement", "element_size", "data_ptr", "is_contiguous", "stride",
    "storage_offset", "get_device", "is_pinned", "query", "item", "tolist", "record", "wait", "keys", "values",
    "items", "get", "append", "extend", "pop", "split_with_sizes_list", "untyped_storage", "record_stream",
    "is_floating_point", "is_complex", "type", "format", "join", "startswith", "endswith", "index", "count",
})
HOST_METHODS = frozenset({"cpu", "numpy", "pin_memory"})
# Methods only a tensor has: an unknown receiver called with one of them is a tensor.
TENSOR_ONLY_METHODS = frozenset({
    "long", "int", "bool", "float", "half", "bfloat16", "double", "short", "byte", "contiguous", "unsqueeze",
    "masked_fill", "masked_fill_", "index_select", "clone", "detach", "narrow", "expand", "expand_as",
    "index_add_", "index_put_", "scatter_", "scatter", "gather", "masked_scatter_", "view_as", "type_as",
    "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "eq", "ne", "gt", "ge", "lt", "le",
    "logical_and", "logical_or", "logical_not", "bitwise_and", "bitwise_or", "flip", "roll", "cumsum_",
    "copy_", "fill_", "zero_", "add_", "sub_", "mul_", "div_", "clamp_", "clamp", "clamp_min", "clamp_max",
    "unsqueeze_", "squeeze_", "repeat_interleave", "softmax", "log_softmax", "topk", "argmax", "argmin",
    "isin", "isnan", "isinf", "isfinite", "sigmoid", "exp", "to", "cuda", "permute", "transpose",
})


class Classifier:
    """Classifies expressions within one module; ``torch``/``numpy`` aliases come from its imports."""

    def __init__(self, torch_aliases: dict[str, str], numpy_aliases: set[str], torch_functions: dict[str, str]):
        self.torch_aliases = torch_aliases
        self.numpy_aliases = numpy_aliases
        self.torch_functions = torch_functions  # `from torch import unique as u` → {"u": "unique"}
        self._active: set[tuple[int, str]] = set()

    def where(self, node: ast.AST | None, scope: Scope, line: int | None = None) -> Where:
        if node is None:
            return Where.UNKNOWN
        line = line if line is not None else getattr(node, "lineno", 0)
        method = getattr(self, "_" + type(node).__name__, None)
        return method(node, scope, line) if method else Where.UNKNOWN

    # -- names and attributes -------------------------------------------------------------------------
    def _Name(self, node: ast.Name, scope: Scope, line: int) -> Where:
        if node.id in self.torch_aliases or node.id in self.numpy_aliases:
            return Where.VALUE
        found = scope.lookup(node.id, line)
        result = Where.UNKNOWN
        if found is not None:
            binding, owner = found
            result = self._binding(binding, owner, key=(id(owner), node.id))
        return _named(node.id, result)

    def _Attribute(self, node: ast.Attribute, scope: Scope, line: int) -> Where:
        if node.attr in {"shape", "device", "dtype", "ndim", "is_cuda", "layout", "requires_grad", "is_cpu"}:
            return Where.VALUE
        if node.attr in {"data", "T", "mT", "real", "imag", "grad"}:
            return self.where(node.value, scope, line)
        if self.torch_root(node.value) or self.numpy_root(node):
            return Where.VALUE
        if isinstance(node.value, ast.Name) and node.value.id == "self":
            attributes = scope.self_attributes()
            if node.attr in attributes:
                key = (id(attributes), node.attr)
                found = [self._binding(binding, owner, key=key) for binding, owner in attributes[node.attr]]
                return _named(node.attr, join(found))
        return _named(node.attr, Where.UNKNOWN)

    def _binding(self, binding: Binding, owner: Scope, key: tuple[int, str]) -> Where:
        if binding.fixed is not None:
            return binding.fixed
        if key in self._active:  # a name defined through itself (`x = x.long()` in a loop)
            return Where.UNKNOWN
        self._active.add(key)
        try:
            found = self.where(binding.value, owner, binding.line)
        finally:
            self._active.discard(key)
        if binding.element:  # `for row in t`, `a, b = torch.sort(x)`, `for i in range(n)`
            if found.is_tensor:
                return found
            is_range = isinstance(binding.value, ast.Call) and isinstance(binding.value.func, ast.Name) and (
                binding.value.func.id == "range")
            return Where.VALUE if is_range else Where.UNKNOWN
        return found

    # -- calls ----------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call, scope: Scope, line: int) -> Where:
        func = node.func
        torch_name = self.torch_function_name(func)
        if torch_name is not None:
            return self._torch_call(torch_name, node, scope, line)
        if self.numpy_root(func):
            return Where.VALUE
        if isinstance(func, ast.Name):
            return Where.VALUE if func.id in VALUE_BUILTINS else Where.UNKNOWN
        if not isinstance(func, ast.Attribute):
            return Where.UNKNOWN
        method, receiver = func.attr, func.value
        if method in HOST_METHODS:
            return Where.CPU
        if method in VALUE_METHODS:
            return Where.VALUE
        if method == "cuda":
            return Where.DEVICE
        if method == "to":
            return self._to_call(node, scope, line)
        source = self.where(receiver, scope, line)
        if source.is_tensor:
            return source
        if source is Where.VALUE:
            # a method of a plain value is a plain value (`np.arange(n).sum()`); a module's function
            # (`utils.gather(x)`) may return anything
            return Where.UNKNOWN if self._is_module(receiver, scope, line) else Where.VALUE
        if method in TENSOR_ONLY_METHODS:
            return Where.TENSOR
        return Where.UNKNOWN

    def _is_module(self, node: ast.expr, scope: Scope, line: int) -> bool:
        if not isinstance(node, ast.Name):
            return False
        found = scope.lookup(node.id, line)
        return found is not None and found[0].module

    def _torch_call(self, name: str, node: ast.Call, scope: Scope, line: int) -> Where:
        namespace, _, short = name.rpartition(".")
        if name in VALUE_TORCH_CALLS or short.startswith(("is_", "get_", "set_")) or short in VALUE_TORCH_CALLS:
            return Where.VALUE
        if namespace and namespace.split(".")[0] not in TENSOR_NAMESPACES:
            return Where.VALUE if namespace.split(".")[0] in VALUE_NAMESPACES else Where.UNKNOWN
        device = keyword(node, "device")
        if name in FACTORIES or name.rsplit(".", 1)[-1] in FACTORIES:
            if device is not None:
                return self.device_where(device, scope, line)
            if is_true(keyword(node, "pin_memory")):
                return Where.CPU
            if name.endswith("_like") and node.args:
                return self.where(node.args[0], scope, line)
            return Where.CPU  # the default device is the host
        if name in {"from_numpy", "frombuffer"}:
            return Where.CPU
        if device is not None:
            return self.device_where(device, scope, line)
        arguments = [item for arg in node.args
                     for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])]
        parts = [self.where(arg, scope, line) for arg in arguments]
        found = join([part for part in parts if part.is_tensor])
        return found if found.is_tensor else Where.TENSOR

    def _to_call(self, node: ast.Call, scope: Scope, line: int) -> Where:
        receiver = self.where(node.func.value, scope, line)  # type: ignore[attr-defined]
        target = keyword(node, "device") or (node.args[0] if node.args else None)
        if target is None or self.is_dtype(target):
            return receiver if receiver.is_tensor else Where.TENSOR
        found = self.device_where(target, scope, line)
        return Where.TENSOR if found is Where.UNKNOWN else found

    def device_where(self, device: ast.expr, scope: Scope, line: int) -> Where:
        """Where a tensor built with ``device=<device>`` lives."""
        text = constant_device(device)
        if text is not None:
            return Where.CPU if text.startswith("cpu") else Where.DEVICE
        if isinstance(device, ast.Attribute) and device.attr == "device":  # `device=x.device`
            found = self.where(device.value, scope, line)
            return found if found.is_tensor else Where.TENSOR
        if isinstance(device, ast.Call) and self.torch_function_name(device.func) == "device" and device.args:
            return self.device_where(device.args[0], scope, line)
        name = dotted_name(device) or ""
        if name_says_host(name.rsplit(".", 1)[-1]):
            return Where.CPU_NAMED
        return Where.DEVICE if "device" in name.lower() or "cuda" in name.lower() else Where.TENSOR

    def is_dtype(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and self.torch_root(node.value) and node.attr != "device") or (
            "dtype" in (dotted_name(node) or ""))

    # -- operators and literals -----------------------------------------------------------------------
    def _Compare(self, node: ast.Compare, scope: Scope, line: int) -> Where:
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return Where.VALUE
        return self._operands([node.left, *node.comparators], scope, line)

    def _BinOp(self, node: ast.BinOp, scope: Scope, line: int) -> Where:
        return self._operands([node.left, node.right], scope, line)

    def _UnaryOp(self, node: ast.UnaryOp, scope: Scope, line: int) -> Where:
        return Where.VALUE if isinstance(node.op, ast.Not) else self.where(node.operand, scope, line)

    def _BoolOp(self, node: ast.BoolOp, scope: Scope, line: int) -> Where:
        return self._operands(node.values, scope, line)

    def _IfExp(self, node: ast.IfExp, scope: Scope, line: int) -> Where:
        return self._operands([node.body, node.orelse], scope, line)

    def _Subscript(self, node: ast.Subscript, scope: Scope, line: int) -> Where:
        found = self.where(node.value, scope, line)
        index = node.slice
        if found is Where.UNKNOWN and isinstance(index, ast.Tuple) and any(
                isinstance(part, ast.Slice) or (isinstance(part, ast.Constant) and part.value is Ellipsis)
                for part in index.elts):
            return Where.TENSOR  # `x[:, 0]`, `x[..., 1]`: only arrays take multi-dimensional slices
        return found

    def _Starred(self, node: ast.Starred, scope: Scope, line: int) -> Where:
        return self.where(node.value, scope, line)

    def _NamedExpr(self, node: ast.NamedExpr, scope: Scope, line: int) -> Where:
        return self.where(node.value, scope, line)

    def _operands(self, operands: list[ast.expr], scope: Scope, line: int) -> Where:
        return join([self.where(operand, scope, line) for operand in operands])

    def _literal(self, node: ast.AST, scope: Scope, line: int) -> Where:
        return Where.VALUE

    _Constant = _List = _Tuple = _Dict = _Set = _JoinedStr = _ListComp = _DictComp = _SetComp = _Lambda = _literal

    # -- module names ---------------------------------------------------------------------------------
    def torch_root(self, node: ast.expr) -> bool:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in self.torch_aliases

    def numpy_root(self, node: ast.expr) -> bool:
        root = node
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in self.numpy_aliases

    def torch_function_name(self, func: ast.expr) -> str | None:
        """``"unique"`` for ``torch.unique``, ``"cuda.synchronize"`` for ``torch.cuda.synchronize``."""
        if isinstance(func, ast.Name):
            return self.torch_functions.get(func.id)
        if isinstance(func, ast.Attribute) and self.torch_root(func.value):
            dotted = dotted_name(func)
            if dotted is None:
                return None
            alias, _, rest = dotted.partition(".")
            return self.torch_aliases[alias] + rest
        return None


def _named(name: str, found: Where) -> Where:
    """A name that says host memory wins over evidence that only says "a tensor"."""
    if found in (Where.TENSOR, Where.UNKNOWN) and name_says_host(name):
        return Where.CPU_NAMED
    return found


def keyword(node: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in node.keywords if item.arg == name), None)


def is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def constant_device(node: ast.expr) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def dotted_name(node: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None
