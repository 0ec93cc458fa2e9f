"""One renderer shape and one registry per model: a format is one module that declares a ``RENDERER``.

A registry discovers the modules of its package, so adding a format means adding a module; the CLI builds its
``--format`` choices from the registry. Renderers take the model and options and return text (or bytes); they
compute nothing the model does not hold, and import heavy libraries (plotly) only when they run.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from functools import cached_property
from typing import Any, Generic, TypeVar

import msgspec

from synchunt.errors import UsageError

M = TypeVar("M")


class RenderOptions(msgspec.Struct, frozen=True):
    """``color``: ANSI styles in terminal text (only when writing to a terminal); ``width``: columns of text."""

    color: bool = False
    width: int = 120


class Renderer(msgspec.Struct, Generic[M], frozen=True):
    """``machine``: a document for tools to parse (nothing else may share its stream); ``extension``: the file
    suffix a written file gets by default."""

    name: str
    extension: str
    description: str
    render: Callable[[M, RenderOptions], str | bytes]
    binary: bool = False
    machine: bool = True

    def __call__(self, model: M, options: RenderOptions | None = None) -> str | bytes:
        return self.render(model, options or RenderOptions())


class Registry(Generic[M]):
    """The renderers of one model, discovered from the modules of ``package`` (each defines ``RENDERER``)."""

    def __init__(self, model: str, package: str, default: str = "text") -> None:
        self.model = model
        self.package = package
        self.default = default

    @cached_property
    def _table(self) -> dict[str, Renderer[Any]]:
        table: dict[str, Renderer[Any]] = {}
        module = importlib.import_module(self.package)
        for info in sorted(pkgutil.iter_modules(module.__path__), key=lambda i: i.name):
            renderer = getattr(importlib.import_module(f"{self.package}.{info.name}"), "RENDERER", None)
            if renderer is None:
                continue
            if renderer.name in table:
                raise ValueError(f"two {self.model} renderers are named {renderer.name!r}")
            table[renderer.name] = renderer
        return table

    def names(self) -> list[str]:
        """Format names, the default first."""
        names = sorted(self._table)
        return sorted(names, key=lambda name: name != self.default)

    def get(self, name: str) -> Renderer[M]:
        try:
            return self._table[name]
        except KeyError:
            raise UsageError(f"no {self.model} format {name!r}; formats: {', '.join(self.names())}") from None

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._table[name] for name in self.names())
