"""Facts read across the files linted together, before any of them is linted (a cheap pre-pass).

One module rarely says everything about its values: a serving stack's processor declares in one file which
multimodal fields stay on the host (``MultiModalFieldConfig.batched("image", keep_on_cpu=True)``), and the
model reading ``kwargs["image_num_patches"].tolist()`` lives in another; an input batch declares
``num_scheduled_tokens: np.ndarray`` in one file and a model reads ``input_batch.num_scheduled_tokens.max()``
in another. With several files given, the names
one of them declares ``keep_on_cpu`` (and none declares moved to the device) are host evidence in all of
them; the evidence is weak (a name read elsewhere may be another value), so it only settles a tensor whose
place is otherwise unknown, never one with device evidence. With one file given the facts are that file's
own: nothing else is read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass

from synchunt.lint.provenance.host_fields import KEEP_ON_CPU, declared_host_fields, declares_host, fields_declared

_FIELD_CONFIG = "FieldConfig"  # vLLM's `MultiModalFieldConfig.batched(...)`, `.shared(...)`, `.flat_from_sizes(...)`


# `num_scheduled_tokens: np.ndarray` (a field, or `self.x: npt.NDArray[np.int32] = ...`): the annotation alone (or
# with `| None`) up to the line's end, a default or a comment: not `np.ndarray | torch.Tensor`, not a docstring's
# sentence. And any annotation that names a tensor (`Optional["torch.Tensor"]`, `np.ndarray | Tensor`), or a
# `torch.` assignment
_ARRAY_DECLARED = re.compile(
    r"^[ \t]*(?:self\.)?(\w+)[ \t]*:[ \t]*[\"']?(?:Optional\[)?(?:np|numpy|npt)\.(?:ndarray|NDArray)"
    r"(?:\[[^\]\n]*\])?[\"']?\]?(?:[ \t]*\|[ \t]*None)?[ \t]*(?:=|#|$)", re.M)
_TENSOR_DECLARED = re.compile(
    r"^[ \t]*(?:self\.)?(\w+)[ \t]*(?::[^=\n]*\b(?:Tensor|Parameter)\b|=[ \t]*torch\.)", re.M)


@dataclass(frozen=True)
class PackageFacts:
    """What the files linted together declare: ``host_fields``, the names declared ``keep_on_cpu``;
    ``array_fields``, the names annotated as numpy arrays and nowhere as (or assigned) a tensor."""

    host_fields: frozenset[str] = frozenset()
    array_fields: frozenset[str] = frozenset()


def index_package(sources: Iterable[tuple[str, str]]) -> PackageFacts:
    """The facts of ``(filename, text)`` pairs; a file that does not parse adds nothing (it is reported when
    it is linted). Only files that mention ``keep_on_cpu`` or ``FieldConfig`` are parsed here.

    A name one file keeps on the host and another declares without ``keep_on_cpu``
    (``feature_attention_mask=MultiModalFieldConfig.batched("audio")``: moved to the device) says nothing: it
    is left out."""
    kept: set[str] = set()
    moved: set[str] = set()
    arrays: set[str] = set()
    tensors: set[str] = set()
    for filename, text in sources:
        if "ndarray" in text or "NDArray" in text:
            arrays.update(_ARRAY_DECLARED.findall(text))
        if "torch" in text:
            tensors.update(_TENSOR_DECLARED.findall(text))
        if KEEP_ON_CPU not in text and _FIELD_CONFIG not in text:
            continue
        try:
            tree = ast.parse(text, filename=filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        kept.update(declared_host_fields(tree, text))
        if _FIELD_CONFIG in text:
            moved.update(_moved_fields(tree))
    return PackageFacts(frozenset(kept - moved), frozenset(arrays - tensors))


def _moved_fields(tree: ast.Module) -> set[str]:
    """The names declared by a ``...FieldConfig.<method>(...)`` call without ``keep_on_cpu=True``."""
    return fields_declared(tree, _moves)


def _moves(value: ast.expr) -> bool:
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return False
    owner = value.func.value
    owner_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
    return owner_name.endswith(_FIELD_CONFIG) and not declares_host(value)
