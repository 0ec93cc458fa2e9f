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
# "thw" and "grid": multimodal shape metadata (`image_grid_thw`), kept on the host by the processors.
HOST_NAME_TOKENS = frozenset({"cpu", "np", "numpy", "pinned", "list", "lst", "py", "thw", "grid"})
# Objects whose tensors are host tensors: request and pooling outputs (copied off the device for the API),
# processor outputs (made on the host from the request).
HOST_OUTPUT_TYPES = ("RequestOutput", "PoolingOutput", "ProcessorOutput", "ProcessorOutputs")
# numpy arrays and pandas / polars frames: host values whose rows, columns and selections are host values too
_ARRAYS = frozenset({"ndarray", "NDArray", "DataFrame", "LazyFrame", "Series"})
_PLAIN_ANNOTATIONS = frozenset({"int", "float", "bool", "str", "bytes"}) | _ARRAYS
ITER = "iter"  # the path step "one element of iterating it" (see synchunt.lint.scopes)
# A module's parameters and buffers: tensors that move with the module (`model.to(device)`), wherever built.
MODULE_TENSORS = frozenset({"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"})
_MAPPINGS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "DefaultDict", "OrderedDict", "defaultdict"})
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
    last = text.rsplit(".", 1)[-1]
    if last.endswith("Tensor") or last in MODULE_TENSORS:
        return Where.TENSOR
    if last.endswith(HOST_OUTPUT_TYPES):
        return Where.CPU  # what a serving API returns or a processor made: its tensors are host tensors
    head = node.value if isinstance(node, ast.Subscript) else node
    head_name = ast.unparse(head).rsplit(".", 1)[-1]
    if head_name in _PLAIN_ANNOTATIONS or head_name in _CONTAINERS:
        return Where.VALUE
    return None


def annotation_part_where(annotation: ast.expr | None, path: tuple[object, ...]) -> Where | None:
    """What the part of an annotated value that ``path`` reaches is: ``List[Tensor]`` + one element → tensor,
    ``Tuple[str, Tensor]`` + component 0 → value, ``Dict[str, Tensor]`` + an element → tensor (iterating: the
    keys). ``None`` when the annotation says nothing about that part."""
    node = annotation
    for index, step in enumerate(path):
        if node is None:
            return None
        node = _strip_optional(node)
        if _names(node, _ARRAYS):
            return Where.VALUE  # rows, elements and masked selections of an array or a frame are host values
        if not isinstance(node, ast.Subscript):
            return None
        head = ast.unparse(node.value).rsplit(".", 1)[-1]
        parts = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in _MAPPINGS and len(parts) == 2:
            node = parts[0] if step == ITER else parts[1]
        elif head in {"tuple", "Tuple"}:
            if len(parts) == 2 and isinstance(parts[1], ast.Constant) and parts[1].value is Ellipsis:
                node = parts[0]
            elif isinstance(step, int) and -len(parts) <= step < len(parts):
                node = parts[step]
            else:
                found = [annotation_part_where(part, path[index + 1:]) for part in parts]
                return join([item for item in found if item is not None]) if all(found) else None
        elif head in _CONTAINERS and head != "Callable":
            node = parts[0]
        else:
            return None
    return annotation_where(node) if node is not None else None


def _names(node: ast.expr, names: frozenset[str]) -> bool:
    """``node`` is one of ``names`` (``np.ndarray``, ``npt.NDArray[np.int64]``)."""
    head = node.value if isinstance(node, ast.Subscript) else node
    return ast.unparse(head).strip("'\"").rsplit(".", 1)[-1] in names


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
