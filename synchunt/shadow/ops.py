"""What the emulation needs to know about an aten op, read once from its schema.

Where a result lives follows from the op's arguments the way CUDA decides it: an explicit ``device`` argument
wins; otherwise a result is on the device when any tensor argument is. A result that writes an argument
(in-place and ``out=`` ops) *is* that argument; a view of a pinned host tensor is pinned too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

Slot = tuple[int, str]  # (position, name) of a schema argument

# Ops whose CUDA kernels take host tensors beside device ones: the copies between the two, and indexing a
# device tensor with host indices (ATen copies them over, blocking). Any other op that mixes a host tensor
# of one or more dimensions with device tensors fails on a GPU ("Expected all tensors to be on the same
# device"): the emulation notes it and goes on.
ACCEPTS_HOST_OPERANDS = frozenset({
    "copy_", "copy", "_copy_from", "_copy_from_and_resize", "_to_copy", "lift_fresh", "set_",
    "index", "_unsafe_index", "index_put", "index_put_", "_index_put_impl_", "_unsafe_index_put",
    # CTC takes its lengths on the host (the tensor overloads read them there); cuDNN's, its targets too
    "_ctc_loss", "_cudnn_ctc_loss",
    # a packed sequence's lengths and batch sizes live on the host (torch refuses them elsewhere)
    "_pack_padded_sequence", "_pad_packed_sequence",
})

# Ops the emulation answers itself (synchunt.shadow.dispatch): no stream to record on, pinned-ness, pinning,
# the attention kernel choice (a GPU's fused kernels have no host implementation) and the CTC kernel choice.
SPECIAL_PACKETS = frozenset({"record_stream", "is_pinned", "_pin_memory", "_fused_sdp_choice",
                             "_use_cudnn_ctc_loss", "_use_miopen_ctc_loss"})

# Ops some of whose results CUDA leaves on the host, by position: a packed sequence's batch sizes.
HOST_RESULTS: dict[str, tuple[int, ...]] = {"_pack_padded_sequence": (1,)}

# Namespaces whose ops are torch's own (their CUDA semantics are the aten semantics emulated here).
TORCH_NAMESPACES = frozenset({"aten", "prims"})


@dataclass(frozen=True, slots=True)
class OpInfo:
    name: str  # "aten::index", "mylib::gather"
    packet: str  # "index"
    custom: bool
    device: Slot | None
    pin_memory: Slot | None
    non_blocking: Slot | None
    writes: tuple[Slot | None, ...] | None  # per return: the argument it writes; None when none does
    aliases: tuple[Slot | None, ...]  # per return: the argument it is a view of (not written)
    accepts_host: bool
    special: bool  # answered by the emulation itself (SPECIAL_PACKETS)
    may_pin: bool  # a result may be pinned host memory (a view, or a _to_copy)

    def value(self, slot: Slot | None, args: tuple[Any, ...] | list[Any], kwargs: dict[str, Any]) -> Any:
        if slot is None:
            return None
        position, name = slot
        if name in kwargs:
            return kwargs[name]
        return args[position] if position < len(args) else None


def _alias_sets(info: Any) -> frozenset[str]:
    return frozenset(info.before_set) if info is not None else frozenset()


def _build(func: torch._ops.OpOverload) -> OpInfo:
    schema = func._schema
    namespace, _, name = schema.name.partition("::")
    arguments = schema.arguments
    slots = {argument.name: (position, argument.name) for position, argument in enumerate(arguments)}
    writes: list[Slot | None] = []
    aliases: list[Slot | None] = []
    for returned in schema.returns:
        alias = returned.alias_info
        match = None
        if alias is not None:
            wanted = _alias_sets(alias)
            match = next(((position, argument.name) for position, argument in enumerate(arguments)
                          if _alias_sets(argument.alias_info) & wanted), None)
        writes.append(match if alias is not None and alias.is_write else None)
        aliases.append(match if alias is not None and not alias.is_write else None)
    packet = name
    return OpInfo(name=schema.name, packet=packet, custom=namespace not in TORCH_NAMESPACES,
                  device=slots.get("device"), pin_memory=slots.get("pin_memory"),
                  non_blocking=slots.get("non_blocking"),
                  writes=tuple(writes) if any(w is not None for w in writes) else None,
                  aliases=tuple(aliases), accepts_host=packet in ACCEPTS_HOST_OPERANDS,
                  special=packet in SPECIAL_PACKETS and namespace in TORCH_NAMESPACES,
                  may_pin=any(alias is not None for alias in aliases) or packet == "_to_copy")


_INFO: dict[int, tuple[OpInfo, Any]] = {}  # by id: OpOverload hashes in Python; the op is kept alive here


def op_info(func: torch._ops.OpOverload) -> OpInfo:
    known = _INFO.get(id(func))
    if known is None:
        known = _INFO[id(func)] = (_build(func), func)
    return known[0]
