"""Host KV pool ``free``: releasing host slots given device-resident indices.

Mirrors sglang ``mem_cache/pool_host/base.py: HostKVCache.free``: the host pool keeps its slot state on the
CPU (``slot_used``, a list of released slot tensors) and starts with ``indices_cpu = indices.cpu()``. On
the "kernel" I/O backend ``move_indices`` moved the operation's host indices to the device
(``host_indices.to(device, non_blocking=True)``), so when the finished load or write-back frees them
(``cache_controller`` ack paths, ``hisparse_coordinator``), ``free`` receives a device tensor.

Why the bad variant syncs: ``indices.cpu()`` on a device tensor is a blocking device→host copy (rule
SH201); the scheduler waits for the copy and for all work queued before it on the stream.

The rewrite: free with the host-side copy of the indices that the operation already holds (the radix tree
produced them on the CPU before they were moved), so no copy is needed. Slot state and release list are
identical.

Which signal sees it where: on the CPU the device copy is a CPU tensor and ``.cpu()`` returns it as is,
so a CPU trace shows nothing (SH201-only: needs a device to observe in a trace). The runtime guard reports
the ``.cpu()`` call even on the CPU (a latent SH201) and the lint flags it; on CUDA the trace shows the DtoH
``aten::copy_`` with ``cudaStreamSynchronize``.

sglang's double-free assert reads ``slot_used[indices_cpu].all()``, a CPU tensor: a host read, not a device
sync. A CPU run cannot tell the two apart (the trace would show ``aten::_local_scalar_dense``, the guard a
latent read), so here the check uses NumPy views and sits behind ``check_double_free`` (off by default, as
under ``python -O``), keeping both variants' only difference the one that matters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, random_pages, resolve_device, seeded


@dataclass
class HostPoolFreeParams:
    variant: str = "bad"
    device: str = "cpu"
    host_slots: int = 65536
    num_tokens: int = 4096
    check_double_free: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


class HostSlotState:
    """The CPU-side bookkeeping of a host KV pool: which slots are in use and what was released."""

    def __init__(self, slot_used_cpu: torch.Tensor, *, check_double_free: bool) -> None:
        self.check_double_free = check_double_free
        self.initial_cpu = slot_used_cpu
        self.slot_used_cpu = slot_used_cpu.clone()
        self.release_slots: list[torch.Tensor] = []
        self.num_release_slots = 0

    def reset(self) -> None:
        self.slot_used_cpu.copy_(self.initial_cpu)
        self.release_slots = []
        self.num_release_slots = 0

    def release(self, indices_cpu: torch.Tensor) -> int:
        if indices_cpu.numel() == 0:
            return 0
        if self.check_double_free and not self.slot_used_cpu.numpy()[indices_cpu.numpy()].all():
            raise RuntimeError("double free: some host slots are not currently allocated")
        self.slot_used_cpu.index_fill_(0, indices_cpu, False)
        self.release_slots.append(indices_cpu)
        self.num_release_slots += indices_cpu.numel()
        return indices_cpu.numel()


@dataclass
class HostPoolFreeState:
    params: HostPoolFreeParams
    slots: HostSlotState
    host_indices_cpu: torch.Tensor
    host_indices_on_device: torch.Tensor = field(repr=False)


def setup(params: HostPoolFreeParams) -> HostPoolFreeState:
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    host_indices_cpu = random_pages(params.num_tokens, 0, params.host_slots, generator)
    slot_used_cpu = torch.zeros(params.host_slots, dtype=torch.bool)
    slot_used_cpu.index_fill_(0, host_indices_cpu, True)
    slots = HostSlotState(slot_used_cpu, check_double_free=params.check_double_free)
    return HostPoolFreeState(params=params, slots=slots, host_indices_cpu=host_indices_cpu,
                             host_indices_on_device=host_indices_cpu.to(device))


def free_from_device_indices(slots: HostSlotState, indices: torch.Tensor) -> int:
    indices_cpu = indices.cpu()
    return slots.release(indices_cpu)


def free_from_host_copy(slots: HostSlotState, indices_cpu: torch.Tensor) -> int:
    return slots.release(indices_cpu)


def step(state: HostPoolFreeState) -> HostSlotState:
    """Free one finished operation's host slots; the pool's state is restored first so steps repeat."""
    state.slots.reset()
    if state.params.variant == "bad":
        free_from_device_indices(state.slots, state.host_indices_on_device)
    else:
        free_from_host_copy(state.slots, state.host_indices_cpu)
    return state.slots


WORKLOAD = Workload(
    name="host-pool-free",
    summary="Host KV pool free: .cpu() of device-resident indices vs the operation's host copy",
    mirrors="sglang mem_cache/pool_host/base.py: HostKVCache.free",
    params=HostPoolFreeParams,
    setup=setup,
    step=step,
    expected_rules=("SH201",),
    small={"host_slots": 2048, "num_tokens": 256},
)
