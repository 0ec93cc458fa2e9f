"""HiCache ``move_indices`` on the "direct" I/O backend.

Mirrors sglang ``managers/cache_controller.py: HiCacheController.move_indices``: before a host↔device KV
transfer with the "direct" backend and the ``layer_first`` host layout, the device slot indices are brought
to the host (``device_indices.cpu()``), the host indices are sorted, and the device indices are reordered
to keep each host/device pair together. It runs on the scheduler thread when a load or write-back starts.

Why the bad variant syncs: ``device_indices.cpu()`` is a blocking device→host copy into pageable memory
(rule SH201): the scheduler waits for the copy and for every kernel queued before it.

The rewrite: copy the device indices into a pinned staging buffer allocated once, with
``non_blocking=True``, record an event after the copy, and read the staged indices only when the transfer
consumes them (``StagedIndices.resolve``), after queueing other work. The sorted host indices and the
reordered device indices are identical.

Which signal sees it where: on the CPU, ``.cpu()`` of a CPU tensor is a no-op (``aten::to`` returns its
input), so a CPU trace shows nothing — the path is SH201-only and needs a device to observe in a trace. The
runtime guard reports the ``.cpu()`` call even on the CPU (a latent SH201), the static lint flags it, and on
CUDA the trace shows ``aten::to`` › ``aten::_to_copy`` › ``aten::copy_`` with a ``Memcpy DtoH`` and
``cudaStreamSynchronize``. The bad variant calls ``.cpu()`` on every device so that each signal can see it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, random_pages, resolve_device, seeded


@dataclass
class MoveIndicesParams:
    variant: str = "bad"
    device: str = "cpu"
    num_tokens: int = 4096
    host_slots: int = 65536
    device_slots: int = 32768
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class StagedIndices:
    """Sorted host indices plus the device indices as they will reach the host.

    ``resolve`` is where the transfer reads the staged device indices: it waits for the staging copy only
    (``ready`` is ``None`` when the copy was synchronous, as on the CPU) and applies the host sort's order
    (``None`` when already applied). The staging buffer is reused by the next step: resolve first.
    """

    host_indices: torch.Tensor
    staged_device_indices: torch.Tensor
    order: torch.Tensor | None = None
    ready: torch.cuda.Event | None = None

    def resolve(self) -> tuple[torch.Tensor, torch.Tensor]:
        if self.ready is not None:
            self.ready.synchronize()
        if self.order is None:
            return self.host_indices, self.staged_device_indices
        return self.host_indices, self.staged_device_indices.index_select(0, self.order)


@dataclass
class MoveIndicesState:
    params: MoveIndicesParams
    host_indices: torch.Tensor
    device_indices: torch.Tensor
    staging: torch.Tensor
    staged_event: torch.cuda.Event | None


def setup(params: MoveIndicesParams) -> MoveIndicesState:
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    # Host slots come from the radix tree's host nodes (CPU, unordered); device slots from the allocator.
    host_indices = random_pages(params.num_tokens, 0, params.host_slots, generator)
    device_indices = random_pages(params.num_tokens, 1, params.device_slots, generator)
    on_cuda = device.type == "cuda"
    staging = torch.empty(params.num_tokens, dtype=torch.int64, pin_memory=on_cuda)
    return MoveIndicesState(
        params=params,
        host_indices=host_indices,
        device_indices=device_indices.to(device),
        staging=staging,
        staged_event=torch.cuda.Event() if on_cuda else None,
    )


def move_indices_blocking(host_indices: torch.Tensor, device_indices: torch.Tensor) -> StagedIndices:
    device_indices = device_indices.cpu()
    host_indices, order = host_indices.sort()
    return StagedIndices(host_indices=host_indices,
                         staged_device_indices=device_indices.index_select(0, order))


def move_indices_staged(host_indices: torch.Tensor, device_indices: torch.Tensor, staging: torch.Tensor,
                        ready: torch.cuda.Event | None) -> StagedIndices:
    staged = staging[:device_indices.numel()]
    staged.copy_(device_indices, non_blocking=True)
    if ready is not None:
        ready.record()
    host_indices, order = host_indices.sort()
    return StagedIndices(host_indices=host_indices, order=order, staged_device_indices=staged, ready=ready)


def step(state: MoveIndicesState) -> StagedIndices:
    if state.params.variant == "bad":
        return move_indices_blocking(state.host_indices, state.device_indices)
    return move_indices_staged(state.host_indices, state.device_indices, state.staging, state.staged_event)


WORKLOAD = Workload(
    name="move-indices-direct",
    summary="HiCache direct-backend index move: blocking .cpu() vs pinned staging buffer + event",
    mirrors="sglang managers/cache_controller.py: HiCacheController.move_indices",
    params=MoveIndicesParams,
    setup=setup,
    step=step,
    expected_rules=("SH201",),
    small={"num_tokens": 256, "host_slots": 2048, "device_slots": 1024},
)
