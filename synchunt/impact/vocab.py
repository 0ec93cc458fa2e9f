"""Trace vocabulary the impact measures need: what each blocking call waits on, and collective kernel names.

Kept here rather than in ``synchunt.trace.vocab`` because only the impact measures read it.
"""

from __future__ import annotations

import re

from synchunt.rules import WaitScope
from synchunt.rules.index import runtime_call

Scope = WaitScope  # the stream of the copy or of the thread's last launch, every stream, or an event's stream


# Kineto's `cuda_sync` kinds (CUPTI synchronization records) that name what the host waited on.
SYNC_KIND_SCOPES: dict[str, Scope] = {"Stream Sync": Scope.STREAM, "Context Sync": Scope.DEVICE,
                                      "Event Sync": Scope.EVENT}
def call_scope(call_name: str) -> Scope:
    """What a blocking runtime call waits on, as the catalogue says (a stream for calls it does not name)."""
    entry = runtime_call(call_name)
    return entry[0].waits_on if entry is not None else Scope.STREAM


# Collective kernels of NCCL (`ncclKernel_AllReduce_RING_LL_Sum_float`, `ncclDevKernel_AllGather_RING_LL`) and
# RCCL (`ncclDevKernel_Generic`, `rcclGenericKernel`, `mscclKernel_…`); case-insensitive.
COLLECTIVE_KERNEL = re.compile(r"^(?:void\s+)?(?:nccl|rccl|mscclKernel)", re.IGNORECASE)
# Point-to-point kernels (`ncclKernel_SendRecv_…`, `ncclDevKernel_SendRecv`): one peer each, not every rank, so
# their order on two ranks says nothing about which of them is the same transfer.
POINT_TO_POINT_KERNEL = re.compile(r"SendRecv|_Send_|_Recv_|_Send\(|_Recv\(", re.IGNORECASE)


def is_collective_kernel(name: str) -> bool:
    return COLLECTIVE_KERNEL.match(name) is not None and POINT_TO_POINT_KERNEL.search(name) is None
