"""The provenance vocabulary: where a value lives, as far as the source shows."""

from __future__ import annotations

import ast
from enum import Enum


class Where(Enum):
    DEVICE = "device"  # a tensor with evidence that it lives on an accelerator
    TENSOR = "tensor"  # a tensor, device unknown
    CPU = "cpu"  # a tensor provably on the host (built there, or copied there)
    CPU_NAMED = "cpu-named"  # the name says host memory (`*_cpu`, `host_*`, `*_np`)
    VALUE = "value"  # not a tensor: a Python value, a numpy array, an object
    UNKNOWN = "unknown"

    @property
    def is_tensor(self) -> bool:
        return self in _TENSORISH


_TENSORISH = frozenset({Where.DEVICE, Where.TENSOR, Where.CPU, Where.CPU_NAMED})
_JOIN_ORDER = (Where.DEVICE, Where.TENSOR, Where.CPU, Where.CPU_NAMED)
# "host" is not among them: `host_indices` in KV-cache code index the host pool and often live on the device.
HOST_NAME_TOKENS = frozenset({"cpu", "np", "numpy", "pinned", "list", "lst", "py"})
_PLAIN_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes", "ndarray", "NDArray"})
_TENSOR_TYPES = ("Tensor", "Parameter", "Buffer")
_CONTAINERS = frozenset({"list", "List", "dict", "Dict", "tuple", "Tuple", "Sequence", "set", "Set", "Iterable",
                         "Iterator", "Mapping", "MutableMapping", "Generator", "deque", "Deque", "FrozenSet",
                         "frozenset", "Callable", "DefaultDict", "OrderedDict"})


def join(values: list[Where]) -> Where:
    """The most device-like tensor evidence; ``VALUE`` only when every part is a plain value."""
    for candidate in _JOIN_ORDER:
        if candidate in values:
            return candidate
    if values and all(value is Where.VALUE for value in values):
        return Where.VALUE
    return Where.UNKNOWN


def name_says_host(name: str) -> bool:
    tokens = name.lower().strip("_").split("_")
    return any(token in HOST_NAME_TOKENS for token in tokens)


def name_where(name: str) -> Where:
    """What a name alone says: host memory by convention, or nothing."""
    return Where.CPU_NAMED if name_says_host(name) else Where.UNKNOWN


def annotation_where(annotation: ast.expr | None) -> Where | None:
    """``Tensor``/``Optional[Tensor]`` says tensor; plain Python types, containers (even of tensors) and
    numpy arrays say value; anything else says nothing."""
    if annotation is None:
        return None
    node = _strip_optional(annotation)
    text = ast.unparse(node).strip("'\"")
    if text.rsplit(".", 1)[-1].endswith(_TENSOR_TYPES):
        return Where.TENSOR
    head = node.value if isinstance(node, ast.Subscript) else node
    head_name = ast.unparse(head).rsplit(".", 1)[-1]
    if head_name in _PLAIN_ANNOTATIONS or head_name in _CONTAINERS:
        return Where.VALUE
    return None


def contained_annotation_where(annotation: ast.expr | None) -> Where | None:
    """What the elements of an annotated container are: ``List[Tensor]`` → tensor, ``Dict[str, int]`` →
    value, ``Tuple[Tensor, ...]`` → tensor; ``None`` when the annotation is not a container or says nothing."""
    if annotation is None:
        return None
    node = _strip_optional(annotation)
    if not isinstance(node, ast.Subscript):
        return None
    head_name = ast.unparse(node.value).rsplit(".", 1)[-1]
    if head_name not in _CONTAINERS:
        return None
    parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
    if head_name in {"dict", "Dict", "Mapping", "MutableMapping", "DefaultDict", "OrderedDict"} and len(parts) == 2:
        parts = parts[1:]  # the values, not the keys
    found = [Where.TENSOR if contained_annotation_where(part) is Where.TENSOR else annotation_where(part)
             for part in parts if not (isinstance(part, ast.Constant) and part.value is Ellipsis)]
    if any(item is Where.TENSOR for item in found):
        return Where.TENSOR
    return Where.VALUE if found and all(item is Where.VALUE for item in found) else None


def _strip_optional(node: ast.expr) -> ast.expr:
    """``Optional[T]``, ``T | None``, ``Union[T, None]`` → ``T``."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).rsplit(".", 1)[-1] in {"Optional", "Union"}:
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        kept = [part for part in parts if not (isinstance(part, ast.Constant) and part.value is None)]
        return _strip_optional(kept[0]) if len(kept) == 1 else node
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, ast.Constant) and other.value is None:
                return _strip_optional(side)
    return node
