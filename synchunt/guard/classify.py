"""Classify an aten call against the catalogue's ``guard_ops``: which rule, if any, it breaks.

Each ``GuardOp.when`` name maps to one predicate in :data:`PREDICATES`; an unknown name fails when the table
is built, not silently.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from synchunt.guard.call import OpCall, describe_call, is_latent, on_device
from synchunt.guard.predicates import PREDICATES, Predicate
from synchunt.rules import RULES

__all__ = ["PREDICATES", "OpCall", "Predicate", "build_table", "classify", "describe_call", "is_latent",
           "on_device"]


def _always(call: OpCall) -> bool:
    return True


def _overloads(packet_name: str) -> list[torch._ops.OpOverload]:
    """Every overload of a catalogue packet in this torch build (none if the op does not exist)."""
    packet = getattr(torch.ops.aten, packet_name, None)
    if packet is None:
        return []
    return [getattr(packet, overload_name) for overload_name in packet.overloads()]


def build_table() -> dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]:
    """Every overload the catalogue's ``guard_ops`` name → its (rule code, predicate) pairs, in catalogue order."""
    table: dict[torch._ops.OpOverload, list[tuple[str, Predicate]]] = {}
    for rule in RULES:
        for guard_op in rule.guard_ops:
            if guard_op.when is not None and guard_op.when not in PREDICATES:
                raise KeyError(f"rule {rule.code}: no guard predicate named {guard_op.when!r}")
            predicate = PREDICATES[guard_op.when] if guard_op.when else _always
            for func in _overloads(guard_op.packet):
                table.setdefault(func, []).append((rule.code, predicate))
    return {func: tuple(entries) for func, entries in table.items()}


def classify(call: OpCall, entries: Sequence[tuple[str, Predicate]]) -> str | None:
    """The code of the first rule whose predicate holds, or ``None``."""
    for code, predicate in entries:
        if predicate(call):
            return code
    return None
