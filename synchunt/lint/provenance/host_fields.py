"""Fields a module declares host-resident: ``name=MultiModalFieldConfig.batched("image", keep_on_cpu=True)``.

Serving stacks move a request's tensors to the device before the model runs, except the fields declared to
stay on the CPU (shape metadata such as ``image_grid_thw`` or ``num_crops``, read with ``.tolist()`` to split
batches). A field is declared by a call with ``keep_on_cpu=True`` (or ``pin_memory=False, device="cpu"``-style
keywords are not read) given as a keyword argument, a dict entry or an assignment; reading that name back
(``kwargs["num_crops"]``, ``kwargs.pop("num_crops")``, ``inputs.num_crops``, a variable named so) is a host
tensor.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

KEEP_ON_CPU = "keep_on_cpu"


def declared_host_fields(tree: ast.Module, source: str) -> frozenset[str]:
    """The names the module declares with ``keep_on_cpu=True`` (none when the source never says it)."""
    if KEEP_ON_CPU not in source:
        return frozenset()
    return frozenset(fields_declared(tree, declares_host))


def fields_declared(tree: ast.Module, declares: Callable[[ast.expr], bool]) -> set[str]:
    """The names the module gives to a value ``declares`` holds for: a keyword (``name=...``), a string dict key
    (``"name": ...``) or an assigned name (``name = ...``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            names.update(item.arg for item in node.keywords if item.arg and declares(item.value))
        elif isinstance(node, ast.Dict):
            names.update(key.value for key, value in zip(node.keys, node.values, strict=True)
                         if isinstance(key, ast.Constant) and isinstance(key.value, str) and declares(value))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and declares(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def declares_host(value: ast.expr) -> bool:
    """Whether ``value`` is a call given ``keep_on_cpu=True``."""
    return isinstance(value, ast.Call) and any(
        item.arg == KEEP_ON_CPU and isinstance(item.value, ast.Constant) and item.value.value is True
        for item in value.keywords)
