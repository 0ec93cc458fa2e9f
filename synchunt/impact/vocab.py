"""Trace vocabulary the impact measures need: what each blocking call waits on, and collective kernel names.

Kept here rather than in ``synchunt.trace.vocab`` because only the impact measures read it.
"""

from __future__ import annotations

import re
from enum import Enum

from synchunt.rules.index import runtime_call


class Scope(str, Enum):
    STREAM = "stream"  # the stream of the copy or of the thread's last launch
    DEVICE = "device"  # every stream of the device
    EVENT = "event"  # the stream the event was recorded on (the trace rarely says which)


# Kineto's `cuda_sync` kinds (CUPTI synchronization records) that name what the host waited on.
SYNC_KIND_SCOPES: dict[str, Scope] = {"Stream Sync": Scope.STREAM, "Context Sync": Scope.DEVICE,
                                      "Event Sync": Scope.EVENT}
# Catalogue rules whose calls wait on a whole device: device synchronize, and frees (cudaFree synchronizes the
# device before releasing memory).
_DEVICE_WIDE_RULES = frozenset({"SH301", "SH304"})
_EVENT_RULES = frozenset({"SH302"})


def call_scope(call_name: str) -> Scope:
    """What a blocking runtime call waits on, by the catalogue rule that names it (streams otherwise)."""
    entry = runtime_call(call_name)
    code = entry[1].code if entry is not None else None
    if code in _DEVICE_WIDE_RULES:
        return Scope.DEVICE
    if code in _EVENT_RULES:
        return Scope.EVENT
    return Scope.STREAM


# Collective kernels of NCCL (`ncclKernel_AllReduce_RING_LL_Sum_float`, `ncclDevKernel_AllGather_RING_LL`) and
# RCCL (`ncclDevKernel_Generic`, `rcclGenericKernel`, `mscclKernel_…`); case-insensitive.
COLLECTIVE_KERNEL = re.compile(r"^(?:void\s+)?(?:nccl|rccl|mscclKernel)", re.IGNORECASE)
# Point-to-point kernels (`ncclKernel_SendRecv_…`, `ncclDevKernel_SendRecv`): one peer each, not every rank, so
# their order on two ranks says nothing about which of them is the same transfer.
POINT_TO_POINT_KERNEL = re.compile(r"SendRecv|_Send_|_Recv_|_Send\(|_Recv\(", re.IGNORECASE)


def is_collective_kernel(name: str) -> bool:
    return COLLECTIVE_KERNEL.match(name) is not None and POINT_TO_POINT_KERNEL.search(name) is None
