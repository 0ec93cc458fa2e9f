"""One intercepted aten call: its arguments bound by name, its tensors, and its description in a record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch

HOST_DEVICE_TYPES = frozenset({"cpu", "meta"})


Slots = dict[str, tuple[int, bool, Any]]


def schema_slots(func: torch._ops.OpOverload) -> Slots:
    """Argument name → (position, keyword-only, default) from the op's schema (computed once per kernel)."""
    return {argument.name: (position, argument.kwarg_only,
                            argument.default_value if argument.has_default_value() else None)
            for position, argument in enumerate(func._schema.arguments)}


_SLOTS: dict[str, Slots] = {}


def _slots_of(func: torch._ops.OpOverload) -> Slots:
    name = func._name + "." + func._overloadname  # a string key: OpOverload hashes in Python
    slots = _SLOTS.get(name)
    if slots is None:
        slots = _SLOTS[name] = schema_slots(func)
    return slots


class OpCall:
    """One intercepted aten call, with its arguments bound by name through the op's schema.

    ``memo`` lets predicates that share a derived fact (a copy's two ends) compute it once per call.
    """

    __slots__ = ("_slots", "args", "func", "kwargs", "memo")

    def __init__(self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: Mapping[str, Any],
                 slots: Slots | None = None) -> None:
        self.func, self.args, self.kwargs = func, args, kwargs
        self._slots = slots if slots is not None else _slots_of(func)
        self.memo: dict[str, Any] = {}

    def arg(self, name: str) -> Any:
        """A schema argument by name: passed by keyword, positionally, or its default."""
        kwargs = self.kwargs
        if kwargs and name in kwargs:
            return kwargs[name]
        slot = self._slots.get(name)
        if slot is None:
            return None
        position, kwarg_only, default = slot
        if not kwarg_only and position < len(self.args):
            return self.args[position]
        return default

    @property
    def bound(self) -> dict[str, Any]:
        """Every schema argument by name."""
        return {name: self.arg(name) for name in self._slots}

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
    """No tensor of the op is on a device, and it makes none there (``t.to(device)`` of a host tensor is not)."""
    if any(on_device(t) for t in call.tensors()):
        return False
    target = call.arg("device")
    return target is None or torch.device(target).type in HOST_DEVICE_TYPES
