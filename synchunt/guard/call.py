"""One intercepted aten call: its arguments bound by name, its tensors, and its description in a record."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

HOST_DEVICE_TYPES = frozenset({"cpu", "meta"})


@cache
def _schema_slots(func: torch._ops.OpOverload) -> dict[str, tuple[int, bool, Any]]:
    """Argument name → (position, keyword-only, default) from the op's schema, computed once per overload."""
    return {argument.name: (position, argument.kwarg_only,
                            argument.default_value if argument.has_default_value() else None)
            for position, argument in enumerate(func._schema.arguments)}


@dataclass(frozen=True)
class OpCall:
    """One intercepted aten call, with its arguments bound by name through the op's schema."""

    func: torch._ops.OpOverload
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]

    def arg(self, name: str) -> Any:
        """A schema argument by name: passed by keyword, positionally, or its default."""
        if name in self.kwargs:
            return self.kwargs[name]
        slot = _schema_slots(self.func).get(name)
        if slot is None:
            return None
        position, kwarg_only, default = slot
        if not kwarg_only and position < len(self.args):
            return self.args[position]
        return default

    @property
    def bound(self) -> dict[str, Any]:
        """Every schema argument by name."""
        return {name: self.arg(name) for name in _schema_slots(self.func)}

    def tensors(self) -> list[torch.Tensor]:
        found: list[torch.Tensor] = []
        for value in (*self.args, *self.kwargs.values()):
            if isinstance(value, torch.Tensor):
                found.append(value)
            elif isinstance(value, (list, tuple)):
                found.extend(v for v in value if isinstance(v, torch.Tensor))
        return found


def on_device(tensor: torch.Tensor) -> bool:
    return tensor.device.type not in HOST_DEVICE_TYPES


def _describe_value(value: Any) -> str | None:
    if isinstance(value, torch.Tensor):
        shape = "×".join(str(n) for n in value.shape)
        return f"{str(value.dtype).removeprefix('torch.')}[{shape}] {value.device}"
    if isinstance(value, (list, tuple)):
        parts = [_describe_value(v) for v in value]
        return "[" + ", ".join(p if p is not None else "None" for p in parts) + "]"
    return None


def describe_call(call: OpCall, limit: int = 160) -> str:
    """Tensor arguments by schema name, e.g. ``self=float32[10] cpu, indices=[bool[10] cpu]``."""
    parts: list[str] = []
    for name, value in call.bound.items():
        text = _describe_value(value)
        if text is not None:
            parts.append(f"{name}={text}")
    text = ", ".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_latent(call: OpCall) -> bool:
    return not any(on_device(t) for t in call.tensors())
