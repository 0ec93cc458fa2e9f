"""Classify an aten call as a (latent) device-to-host sync, from the catalogue's ``guard_ops``.

Whether an op syncs on a GPU depends on the op and its arguments, not on the device it runs on, so the same
predicates flag latent syncs in a CPU run. Each ``GuardOp.when`` name in ``synchunt.rules.catalogue`` maps to
one predicate in :data:`PREDICATES`; an unknown name fails at table-build time, not silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch

from synchunt.rules import RULES

_HOST_DEVICE_TYPES = frozenset({"cpu", "meta"})
_MASK_DTYPES = (torch.bool, torch.uint8)


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
    truthiness: bool = False

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
    return tensor.device.type not in _HOST_DEVICE_TYPES


def _device_type(value: Any) -> str | None:
    if value is None:
        return None
    return torch.device(value).type


def _mask_indices(indices: Sequence[Any] | None) -> list[torch.Tensor]:
    return [i for i in indices or () if isinstance(i, torch.Tensor) and i.dtype in _MASK_DTYPES]


def _mask_would_sync(mask: torch.Tensor, target: torch.Tensor) -> bool:
    # A device mask is counted on the device and read back; a host mask only syncs in an all-host run,
    # where it stands for the device mask the same code builds on a GPU.
    return on_device(mask) or not on_device(target)


def bool_index(call: OpCall) -> bool:
    target = call.arg("self")
    return any(_mask_would_sync(mask, target) for mask in _mask_indices(call.arg("indices")))


def _masked_fill_fast_path(call: OpCall) -> bool:
    """ATen's ``canDispatchToMaskedFill``: one mask on self's device and a one-element CPU value."""
    target, value = call.arg("self"), call.arg("values")
    if call.arg("accumulate") or not isinstance(value, torch.Tensor):
        return False
    if value.numel() != 1 or value.device.type != "cpu":
        return False
    indices = [i for i in call.arg("indices") or () if isinstance(i, torch.Tensor)]
    return (len(indices) == 1 and indices[0].dtype in _MASK_DTYPES
            and indices[0].device == target.device)


def bool_index_tensor_value(call: OpCall) -> bool:
    return bool_index(call) and not _masked_fill_fast_path(call)


def no_output_size(call: OpCall) -> bool:
    return isinstance(call.arg("repeats"), torch.Tensor) and call.arg("output_size") is None


def histc_min_eq_max(call: OpCall) -> bool:
    return call.arg("min") == call.arg("max")


def truthiness(call: OpCall) -> bool:
    return call.truthiness


def not_truthiness(call: OpCall) -> bool:
    return not call.truthiness


def _copy_ends(call: OpCall) -> tuple[torch.Tensor | None, str | None, torch.Tensor | None, str | None]:
    """(source, source device type, destination tensor if allocated, destination device type)."""
    if call.func.overloadpacket is torch.ops.aten._to_copy:
        source = call.arg("self")
        target = _device_type(call.arg("device")) or source.device.type
        return source, source.device.type, None, target
    destination, source = call.arg("self"), call.arg("src")
    if not isinstance(source, torch.Tensor):
        return None, None, None, None
    return source, source.device.type, destination, destination.device.type


def device_to_host(call: OpCall) -> bool:
    source, source_type, _, target_type = _copy_ends(call)
    if source is None or source_type in _HOST_DEVICE_TYPES or target_type != "cpu":
        return False
    # A non_blocking copy either lands in pinned memory (asynchronous) or is SH203's pageable case.
    return not call.arg("non_blocking")


def host_to_device_blocking(call: OpCall) -> bool:
    """A copy from host memory to a device without ``non_blocking``: ``memcpy_and_sync`` waits for the stream."""
    source, source_type, _, target_type = _copy_ends(call)
    if source is None or source_type != "cpu" or target_type in _HOST_DEVICE_TYPES or target_type is None:
        return False
    return not call.arg("non_blocking")


def multinomial_checks(call: OpCall) -> bool:
    """ATen validates the probabilities on the host when sampling without replacement or one sample."""
    return not call.arg("replacement") or call.arg("num_samples") == 1


def tensor_std(call: OpCall) -> bool:
    """``normal(mean, std)`` checks ``std >= 0`` on the host when ``std`` is a tensor."""
    return isinstance(call.arg("std"), torch.Tensor)


def _is_pinned(tensor: torch.Tensor | None) -> bool:
    return tensor is not None and tensor.is_pinned()


def pageable_non_blocking(call: OpCall) -> bool:
    if not call.arg("non_blocking"):
        return False
    source, source_type, destination, target_type = _copy_ends(call)
    if source is None or source_type is None or target_type is None:
        return False
    source_host, target_host = source_type == "cpu", target_type == "cpu"
    if source_host == target_host:
        return False
    if source_host:  # host → device: the source must be pinned
        return not _is_pinned(source)
    # device → host: _to_copy pins the buffer it allocates; copy_ writes into the caller's tensor
    return destination is not None and not _is_pinned(destination)


Predicate = Callable[[OpCall], bool]

PREDICATES: dict[str, Predicate] = {
    "bool-index": bool_index,
    "bool-index-tensor-value": bool_index_tensor_value,
    "no-output-size": no_output_size,
    "histc-min-eq-max": histc_min_eq_max,
    "not-truthiness": not_truthiness,
    "truthiness": truthiness,
    "device-to-host": device_to_host,
    "pageable-non-blocking": pageable_non_blocking,
    "host-to-device-blocking": host_to_device_blocking,
    "multinomial-checks": multinomial_checks,
    "tensor-std": tensor_std,
}


def _always(call: OpCall) -> bool:
    return True


def build_table() -> dict[torch._ops.OpOverload, tuple[tuple[str, Predicate], ...]]:
    """Every overload of every catalogue ``guard_ops`` packet → its (rule code, predicate) pairs, in order."""
    table: dict[torch._ops.OpOverload, list[tuple[str, Predicate]]] = {}
    for rule in RULES:
        for guard_op in rule.guard_ops:
            if guard_op.when is not None and guard_op.when not in PREDICATES:
                raise KeyError(f"rule {rule.code}: no guard predicate named {guard_op.when!r}")
            predicate = PREDICATES[guard_op.when] if guard_op.when else _always
            packet = getattr(torch.ops.aten, guard_op.packet, None)
            if packet is None:  # an op this torch build does not have
                continue
            for overload_name in packet.overloads():
                table.setdefault(getattr(packet, overload_name), []).append((rule.code, predicate))
    return {func: tuple(entries) for func, entries in table.items()}


def classify(call: OpCall, entries: Sequence[tuple[str, Predicate]]) -> str | None:
    """The code of the first rule whose predicate holds, or ``None``."""
    for code, predicate in entries:
        if predicate(call):
            return code
    return None


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
