"""Where a value lives, as far as the source shows: a small, flow-insensitive guess per expression.

The lint only knows syntax, so it asks: is this expression a tensor, and is it on the device? Evidence,
strongest first: the call that built it (`.cuda()`, `device=...`, `.cpu()`, a `torch.*` factory without a
device, `numpy`), what it was derived from (`x % n == r` lives where `x` lives), what a container was filled
with (`xs.append(t)`, then `xs[i]`), what a function of the same module returns, annotations, then names
(`seq_lens_cpu`, `host_indices`). A guess that is wrong costs one finding's confidence, never a crash.

This module holds the :class:`Classifier` and the rules for names, attributes, operators and subscripts;
``calls`` classifies calls and ``contents`` follows elements through containers, loops and unpacking.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

from synchunt.lint.callsites import CallSite, index_calls
from synchunt.lint.provenance import asserted, calls, contents, stores, uploads
from synchunt.lint.provenance.syntax import constant_device, dotted_name, is_true, keyword, self_attributes
from synchunt.lint.provenance.tables import HOST_CONTAINER_ATTRIBUTES, TENSOR_ONLY_ATTRIBUTES
from synchunt.lint.scopes import ITER, Binding, Scope, Step
from synchunt.lint.where import Where, join, name_says_host

__all__ = ["Classifier", "constant_device", "dotted_name", "is_true", "keyword", "self_attributes"]

T = TypeVar("T")
MAX_NESTING = 30  # evaluations in progress at once; past this, "unknown" (and no deep recursion)
_ARITHMETIC_ONLY_ON_ARRAYS = (ast.Sub, ast.Div, ast.FloorDiv, ast.MatMult, ast.Pow)


_UNPLACED = (Where.TENSOR, Where.UNKNOWN)  # what package-wide host evidence may settle (never DEVICE)
_FIELD_METHODS = frozenset({"get", "pop", "setdefault", "__getitem__"})


def _field_name(node: ast.AST) -> str | None:
    """The field an expression reads: ``x.name``, ``x["name"]``, ``x.pop("name")`` (names: see ``_Name``)."""
    if isinstance(node, ast.Attribute):
        # `self.config.video_token_id`: a model configuration's fields are Python values, not batch fields
        return None if "config" in (dotted_name(node.value) or "").lower() else node.attr
    key: ast.expr | None = None
    if isinstance(node, ast.Subscript):
        key = node.slice
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _FIELD_METHODS
          and node.args):
        key = node.args[0]
    return key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None


class Classifier:
    """Classifies expressions within one module; ``torch``/``numpy`` aliases come from its imports and
    ``scopes`` (from :func:`synchunt.lint.bindings.build_scopes`) lets calls read local functions' returns."""

    def __init__(self, torch_aliases: dict[str, str], numpy_aliases: set[str], torch_functions: dict[str, str],
                 scopes: dict[int, Scope] | None = None, tree: ast.Module | None = None):
        self.torch_aliases = torch_aliases
        self.numpy_aliases = numpy_aliases
        self.torch_functions = torch_functions  # `from torch import unique as u` → {"u": "unique"}
        self.scopes = scopes or {}
        self.tree = tree
        self.active: set[tuple[object, ...]] = set()  # what is being evaluated now: no infinite recursion
        self.memo: dict[tuple[object, ...], object] = {}
        self._call_sites: dict[int, list[CallSite]] | None = None
        self.host_fields: frozenset[str] = frozenset()  # declared `keep_on_cpu` (see host_fields)
        # declared `keep_on_cpu` by the other files linted together (see package): weaker evidence
        self.package_host_fields: frozenset[str] = frozenset()
        # annotated as numpy arrays (and nowhere as tensors) by the files linted together (see package)
        self.package_array_fields: frozenset[str] = frozenset()
        self._nested: set[int] | None = None
        # while one call's return is read with its arguments (see passing): (function, parameter) → the
        # argument, its scope and line, and where it lives
        self.passed_in: dict[tuple[int, str], tuple[ast.expr, Scope, int, Where]] = {}
        self.readings = 0  # call sites read so far (bounded: see passing.MAX_READS)
        self.stores: dict[int, dict[str, list[tuple[ast.stmt, int]]]] = {}  # per function (see stores)
        self.uploads: dict[int, dict[str, list[int]]] = {}  # per function (see uploads)
        self.asserted: dict[int, asserted._Index] = {}  # per function (see asserted)
        self.lines: list[str] = []  # the module's source lines, when known: functions that never say
        # `non_blocking` or `assert` are not walked for those (empty: every function is)

    def call_sites(self) -> dict[int, list[CallSite]]:
        """The module's calls to its own functions (found on first use)."""
        if self._call_sites is None:
            self._call_sites = index_calls(self.tree, self.scopes) if self.tree is not None else {}
        return self._call_sites

    def nested_functions(self) -> set[int]:
        """``id()`` of functions defined inside other functions (closures: called only where they are seen)."""
        if self._nested is None:
            self._nested = {id(scope.node) for scope in self.scopes.values()
                            if scope.node is not None and scope.parent is not None and scope.parent.node is not None}
        return self._nested

    def where(self, node: ast.AST | None, scope: Scope, line: int | None = None) -> Where:
        if node is None:
            return Where.UNKNOWN
        line = line if line is not None else getattr(node, "lineno", 0)
        method = getattr(self, "_" + type(node).__name__, None)
        found = method(node, scope, line) if method else Where.UNKNOWN
        if self.package_host_fields and found in _UNPLACED and _field_name(node) in self.package_host_fields:
            return Where.CPU  # a field another file linted with this one declares kept on the host
        if found in _UNPLACED and type(node) is ast.Attribute and node.attr in self.package_array_fields:
            # `input_batch.num_scheduled_tokens`, declared a numpy array in another file: host memory, by a name
            # (another object's field may share it), so as strong as a name that says so
            return Where.CPU_NAMED
        return found

    def element(self, node: ast.expr, scope: Scope, path: tuple[Step, ...] = (ITER,), line: int | None = None) -> Where:
        """Where what ``path`` reaches inside ``node`` lives (default: one element of iterating it)."""
        return contents.follow(self, node, path, scope, line if line is not None else getattr(node, "lineno", 0))

    def guarded(self, key: tuple[object, ...], compute: Callable[[], T]) -> T | Where:
        """``compute()``, once per ``key`` (bindings, containers and attributes are read many times), and
        ``UNKNOWN`` while ``key`` is being computed (a value defined through itself)."""
        if key in self.memo:
            return self.memo[key]  # type: ignore[return-value]
        if key in self.active or len(self.active) > MAX_NESTING:
            return Where.UNKNOWN
        self.active.add(key)
        try:
            result = compute()
        finally:
            self.active.discard(key)
        self.memo[key] = result
        return result

    # -- names and attributes -------------------------------------------------------------------------
    def _Name(self, node: ast.Name, scope: Scope, line: int) -> Where:
        if node.id in self.torch_aliases or node.id in self.numpy_aliases:
            return Where.VALUE
        if node.id in self.host_fields:
            return Where.CPU
        found = scope.lookup(node.id, line)
        result = Where.UNKNOWN
        if found is not None:
            binding, owner = found
            result = self.binding(binding, owner, key=(id(owner), node.id))
        if (node.id in self.package_host_fields and result in _UNPLACED
                and (found is None or found[0].value is None)):
            # a parameter or a name bound elsewhere, never a local value computed here (`lens = mask.sum(1)`)
            return Where.CPU
        if result in _UNPLACED and found is not None and uploads.uploaded(
                self.uploads, node.id, line, found[0], found[1], self.lines):
            return Where.CPU_NAMED  # the function copies it to the device without blocking: a host tensor
        return _named(node.id, result)

    def _Attribute(self, node: ast.Attribute, scope: Scope, line: int) -> Where:
        if node.attr in HOST_CONTAINER_ATTRIBUTES or node.attr in {"is_cuda", "layout", "requires_grad", "is_cpu"}:
            return Where.VALUE
        if node.attr in {"data", "T", "mT", "real", "imag", "grad"}:
            found = self.where(node.value, scope, line)
            return Where.TENSOR if found is Where.UNKNOWN and node.attr in TENSOR_ONLY_ATTRIBUTES else found
        if self.torch_root(node.value) or self.numpy_root(node):
            return Where.VALUE
        if node.attr in self.host_fields:
            return Where.CPU
        said = asserted.asserted_where(self.asserted, node, scope, line, self.lines)
        if said is not None:
            return said  # `assert batch.lens.is_cpu` earlier in the function
        store = stores.dominating_store(self.stores, node, scope, line)
        if store is not None and self.guarded(("store", id(store)), lambda: self.where(
                store.value, scope, store.lineno)) is Where.CPU:  # type: ignore[attr-defined]
            return Where.CPU  # `m.lens = x.to("cpu")` just before: this read sees the host copy
        if not isinstance(node.value, ast.Name) or node.value.id != "self":
            owner = self.where(node.value, scope, line)
            if owner is Where.CPU:
                return Where.CPU  # a field of a host batch (`inputs.input_ids` of a processor's output)
        attributes = self_attributes(node, scope)
        if attributes is not None:
            key = (id(attributes), node.attr)
            found = self.guarded(("attribute", *key), lambda: join(
                [self.binding(binding, owner, key=key) for binding, owner in attributes]))
            return _named(node.attr, found)
        return _named(node.attr, Where.UNKNOWN)

    def binding(self, binding: Binding, owner: Scope, key: tuple[int, str]) -> Where:
        if binding.fixed is not None:
            return binding.fixed
        if binding.parameter and binding.function is not None:
            found = calls.parameter_where(self, binding.function, binding.parameter)
            return binding.hint if found is Where.UNKNOWN and binding.hint is not None else found
        if binding.value is None:
            return Where.UNKNOWN
        if binding.path:
            found = self.guarded((*key, binding.line), lambda: contents.follow(
                self, binding.value, binding.path, owner, binding.line))  # type: ignore[arg-type]
        else:
            found = self.guarded((*key, binding.line), lambda: self.where(binding.value, owner, binding.line))
        if binding.default_device is not None and found is Where.CPU:
            return calls.device_where(self, binding.default_device, owner, binding.line)
        return binding.at_least if binding.at_least is not None and not found.is_tensor else found

    # -- calls ----------------------------------------------------------------------------------------
    def _Call(self, node: ast.Call, scope: Scope, line: int) -> Where:
        return calls.classify(self, node, scope, line)

    def device_where(self, device: ast.expr, scope: Scope, line: int) -> Where:
        return calls.device_where(self, device, scope, line)

    def is_dtype(self, node: ast.expr) -> bool:
        return calls.is_dtype(self, node)

    # -- operators and literals -----------------------------------------------------------------------
    def _Compare(self, node: ast.Compare, scope: Scope, line: int) -> Where:
        if any(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in node.ops):
            return Where.VALUE
        if any(isinstance(side, ast.Constant) and isinstance(side.value, (str, bytes))
               for side in (node.left, *node.comparators)):
            return Where.VALUE  # `backend.get_name() == "FLASH"`: a tensor never compares with a string
        return self._elementwise([node.left, *node.comparators], scope, line)

    def _BinOp(self, node: ast.BinOp, scope: Scope, line: int) -> Where:
        found = self._elementwise([node.left, node.right], scope, line)
        if found is Where.UNKNOWN and isinstance(node.op, _ARITHMETIC_ONLY_ON_ARRAYS) and any(
                _is_slice(side) for side in (node.left, node.right)):
            return Where.TENSOR  # `offsets[1:] - offsets[:-1]`: Python sequences have no `-` or `/`
        return found

    def _UnaryOp(self, node: ast.UnaryOp, scope: Scope, line: int) -> Where:
        return Where.VALUE if isinstance(node.op, ast.Not) else self.where(node.operand, scope, line)

    def _BoolOp(self, node: ast.BoolOp, scope: Scope, line: int) -> Where:
        return self._operands(node.values, scope, line)

    def _IfExp(self, node: ast.IfExp, scope: Scope, line: int) -> Where:
        return self._operands([node.body, node.orelse], scope, line)

    def _Subscript(self, node: ast.Subscript, scope: Scope, line: int) -> Where:
        index = node.slice
        if isinstance(index, ast.Constant) and index.value in self.host_fields:
            return Where.CPU  # `kwargs["image_grid_thw"]` of a field kept on the host
        found = self.where(node.value, scope, line)
        if found.is_tensor or isinstance(index, ast.Slice):
            return found
        if isinstance(index, ast.Tuple) and any(
                isinstance(part, ast.Slice) or (isinstance(part, ast.Constant) and part.value is Ellipsis)
                for part in index.elts):
            return Where.TENSOR if found is Where.UNKNOWN else found  # `x[:, 0]`: only arrays take these
        return contents.follow(self, node.value, (contents.key_step(index),), scope, line)

    def _Starred(self, node: ast.Starred, scope: Scope, line: int) -> Where:
        return self.where(node.value, scope, line)

    def _NamedExpr(self, node: ast.NamedExpr, scope: Scope, line: int) -> Where:
        return self.where(node.value, scope, line)

    def _Await(self, node: ast.Await, scope: Scope, line: int) -> Where:
        return self.where(node.value, scope, line)

    def _elementwise(self, operands: list[ast.expr], scope: Scope, line: int) -> Where:
        """An elementwise op's result. Beside a tensor provably on the host, a tensor of unknown device is on
        the host too: torch refuses to mix devices (``is_mm & (ids_cpu == t)`` is a host mask). The one
        exception, a 0-dim host tensor beside a device tensor, is a scalar, not the masks and index tensors
        that `.cpu()` copies; device evidence on any side still wins."""
        parts = [self.where(operand, scope, line) for operand in operands]
        if Where.CPU in parts and all(part in (Where.CPU, Where.CPU_NAMED, Where.TENSOR, Where.VALUE, Where.UNKNOWN)
                                      for part in parts):
            return Where.CPU
        return join(parts)

    def _operands(self, operands: list[ast.expr], scope: Scope, line: int) -> Where:
        return join([self.where(operand, scope, line) for operand in operands])

    def _literal(self, node: ast.AST, scope: Scope, line: int) -> Where:
        return Where.VALUE

    _Constant = _List = _Tuple = _Dict = _Set = _JoinedStr = _ListComp = _DictComp = _SetComp = _Lambda = _literal
    _GeneratorExp = _literal

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


def _is_slice(node: ast.expr) -> bool:
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)


def _named(name: str, found: Where) -> Where:
    """A name that says host memory wins over evidence that only says "a tensor"."""
    if found in (Where.TENSOR, Where.UNKNOWN) and name_says_host(name):
        return Where.CPU_NAMED
    return found
