"""Facts read across the files linted together, before any of them is linted (a cheap pre-pass).

One module rarely says everything about its values: a serving stack's processor declares in one file which
multimodal fields stay on the host (``MultiModalFieldConfig.batched("image", keep_on_cpu=True)``), and the
model reading ``kwargs["image_num_patches"].tolist()`` lives in another. With several files given, the names
every one of them declares ``keep_on_cpu`` are host evidence in all of them; the evidence is weak (a name
read elsewhere may be another value), so it only settles a tensor whose place is otherwise unknown, never
one with device evidence. With one file given the facts are that file's own: nothing else is read.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass

from synchunt.lint.provenance.host_fields import declared_host_fields

_KEYWORD = "keep_on_cpu"


@dataclass(frozen=True)
class PackageFacts:
    """What the files linted together declare: ``host_fields``, the names declared ``keep_on_cpu``."""

    host_fields: frozenset[str] = frozenset()


def index_package(sources: Iterable[tuple[str, str]]) -> PackageFacts:
    """The facts of ``(filename, text)`` pairs; a file that does not parse adds nothing (it is reported when
    it is linted). Only files that mention ``keep_on_cpu`` are parsed here."""
    fields: set[str] = set()
    for filename, text in sources:
        if _KEYWORD not in text:
            continue
        try:
            tree = ast.parse(text, filename=filename)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        fields.update(declared_host_fields(tree, text))
    return PackageFacts(frozenset(fields))
