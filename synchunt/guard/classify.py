"""Classify an aten call against the catalogue's ``guard_ops``: which rule, if any, it breaks.

Each ``GuardOp.when`` name maps to one predicate in :data:`PREDICATES`; an unknown name fails when the table
is built, not silently.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import torch

from synchunt.guard.call import OpCall, describe_call, is_latent, on_device
from synchunt.guard.predicates import OVERLOADS, PREDICATES, Predicate
from synchunt.rules import RULES

__all__ = ["PREDICATES", "OpCall", "Predicate", "build_table", "classify", "describe_call", "is_latent",
           "library_packets_loaded", "on_device"]


def _always(call: OpCall) -> bool:
    return True


def _split(packet_name: str) -> tuple[str, str]:
    """``("aten", "index")`` for ``"index"``; ``("torchvision", "nms")`` for ``"torchvision::nms"``."""
    namespace, _, name = packet_name.rpartition("::")
    return namespace or "aten", name


def library_packets_loaded() -> frozenset[str]:
    """The catalogue's library ops (outside ``aten``, e.g. ``torchvision::nms``) the dispatcher knows now.

    Nothing is imported here to make one exist: a library op is registered when its package loads its extension,
    so a namespace whose package is not imported is skipped at the cost of a dict look-up (this runs at every
    outermost guard entry, so the common case calls nothing), and the registry is asked only for the others. A
    table built before a library loaded lacks its ops (``install`` rebuilds it when this set grows)."""
    global _LOADED
    found = None
    for namespace, packets in _PENDING.items():
        if namespace in sys.modules:
            for packet in packets - _LOADED:
                if torch._C._dispatch_has_kernel(packet):
                    found = (found or set()) | {packet}
    if found:
        _LOADED = _LOADED | found  # a registered op stays registered: asked once
    return _LOADED


_LIBRARY_PACKETS = frozenset(guard_op.packet for rule in RULES for guard_op in rule.guard_ops
                             if "::" in guard_op.packet)
# namespace → its packets (a library op is looked for only once its package is imported)
_PENDING: dict[str, frozenset[str]] = {
    namespace: frozenset(packet for packet in _LIBRARY_PACKETS if _split(packet)[0] == namespace)
    for namespace in sorted({_split(packet)[0] for packet in _LIBRARY_PACKETS})}
_LOADED: frozenset[str] = frozenset()


def _overloads(packet_name: str, libraries: frozenset[str]) -> list[torch._ops.OpOverload]:
    """Every overload of a catalogue packet in this torch build (none if the op does not exist, or is a library's
    that is not loaded)."""
    namespace, name = _split(packet_name)
    if namespace != "aten" and packet_name not in libraries:
        return []
    packet = getattr(getattr(torch.ops, namespace), name, None)
    if packet is None:
        return []
    return [getattr(packet, overload_name) for overload_name in packet.overloads()]


def build_table(libraries: frozenset[str] | None = None,
                ) -> dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]:
    """Every overload the catalogue's ``guard_ops`` name → its (rule code, predicate) pairs, in catalogue order;
    of the library ops, those in ``libraries`` (default: those loaded now). An overload whose schema rules a
    predicate out (:data:`predicates.OVERLOADS`) has no pair for it."""
    if libraries is None:
        libraries = library_packets_loaded()
    table: dict[torch._ops.OpOverload, list[tuple[str, Predicate]]] = {}
    for rule in RULES:
        for guard_op in rule.guard_ops:
            if guard_op.when is not None and guard_op.when not in PREDICATES:
                raise KeyError(f"rule {rule.code}: no guard predicate named {guard_op.when!r}")
            predicate = PREDICATES[guard_op.when] if guard_op.when else _always
            can_hold = OVERLOADS.get(predicate)
            for func in _overloads(guard_op.packet, libraries):
                if can_hold is None or can_hold(func):
                    table.setdefault(func, []).append((rule.code, predicate))
    return {func: tuple(entries) for func, entries in table.items()}


def classify(call: OpCall, entries: Sequence[tuple[str, Predicate]]) -> str | None:
    """The code of the first rule whose predicate holds, or ``None``."""
    for code, predicate in entries:
        if predicate(call):
            return code
    return None
