"""HiSparse coordinator ``request_finished``: releasing a finished request's device-buffer slots.

Mirrors sglang ``managers/hisparse_coordinator.py: HiSparseCoordinator.request_finished``: the locations a
request owns in the hierarchical-sparse device buffer are the union over layers of
``req_device_buffer_token_locs[:, req, :cap]`` (speculative rotation moves them between layers and
scratch, so a location can repeat and unused entries are ``-1`` or ``0``). sglang frees
``all_hi = torch.unique(owned_locs[owned_locs > 0])`` through ``free_hisparse_indices``, which drops the
padding sink page with a second mask (``all_hi[all_hi >= page_size]``), then clears the request's rows. It
runs on the scheduler thread when a request finishes or is retracted.

Why the bad variant syncs three times: two boolean-mask reads (``aten::index`` › ``aten::nonzero``, rule
SH101) and ``torch.unique`` (``aten::_unique2``, rule SH105), each reading a count back to the host.

The rewrite frees through a presence update instead of a deduplicated list: the allocator's free state is a
slot bitmap (both variants use it; what differs is how the freed set is derived), and marking a slot free
twice is harmless, so ``index_fill_`` with every owned location — non-owned entries redirected to a trash
slot past the end — frees exactly the same set with fixed shapes. ``cap`` comes from
``req_device_buffer_size``, a CPU tensor in sglang (a host read, not a device sync); here it is a host int.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, random_pages, resolve_device, seeded


@dataclass
class HisparseRequestFinishedParams:
    variant: str = "bad"
    device: str = "cpu"
    num_layers: int = 16
    pool_requests: int = 32
    buffer_capacity: int = 512
    request_capacity: int = 384
    buffer_slots: int = 65536
    page_size: int = 64
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class HisparseState:
    params: HisparseRequestFinishedParams
    req_pool_idx: int
    current_cap: int
    initial_token_locs: torch.Tensor
    token_locs: torch.Tensor
    initial_free_slots: torch.Tensor
    free_slots: torch.Tensor


def setup(params: HisparseRequestFinishedParams) -> HisparseState:
    if params.request_capacity > params.buffer_capacity:
        raise ValueError("request_capacity cannot exceed buffer_capacity")
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    shape = (params.num_layers, params.pool_requests, params.buffer_capacity)
    # The request owns about one buffer's worth of slots (sink page excluded); layers share some of them.
    owned = random_pages(params.request_capacity * 2, params.page_size, params.buffer_slots, generator)
    token_locs = owned[torch.randint(0, owned.numel(), shape, generator=generator)]
    # Unused entries: tombstones (-1) and zeros left from clearing.
    unused = torch.randint(0, 10, shape, generator=generator)
    token_locs = torch.where(unused == 0, -1, torch.where(unused == 1, 0, token_locs))
    free_slots = torch.rand(params.buffer_slots + 1, generator=generator) < 0.5
    free_slots.index_fill_(0, owned, False)
    free_slots[params.buffer_slots] = False  # the trash slot the fixed variant writes to
    return HisparseState(
        params=params,
        req_pool_idx=int(torch.randint(0, params.pool_requests, (1,), generator=generator)),
        current_cap=params.request_capacity,
        initial_token_locs=token_locs.to(device),
        token_locs=token_locs.to(device).clone(),
        initial_free_slots=free_slots.to(device),
        free_slots=free_slots.to(device).clone(),
    )


def free_by_unique(state: HisparseState, owned_locs: torch.Tensor) -> None:
    all_hi = torch.unique(owned_locs[owned_locs > 0])
    if all_hi.numel() > 0:
        # free_hisparse_indices: page zero is the padding sink and is never owned by a request.
        state.free_slots.index_fill_(0, all_hi[all_hi >= state.params.page_size], True)


def free_by_presence(state: HisparseState, owned_locs: torch.Tensor) -> None:
    trash_slot = state.params.buffer_slots
    targets = torch.where(owned_locs >= state.params.page_size, owned_locs, trash_slot)
    state.free_slots.index_fill_(0, targets, True)
    # fill_ with a Python scalar: `t[i] = False` would wrap the value in a CPU tensor and read it back.
    state.free_slots.narrow(0, trash_slot, 1).fill_(False)


def step(state: HisparseState) -> tuple[torch.Tensor, torch.Tensor]:
    """Restore the buffers (so steps repeat), free the request's slots and clear its rows."""
    state.token_locs.copy_(state.initial_token_locs)
    state.free_slots.copy_(state.initial_free_slots)
    owned_locs = state.token_locs[:, state.req_pool_idx, :state.current_cap].reshape(-1)
    if state.params.variant == "bad":
        free_by_unique(state, owned_locs)
    else:
        free_by_presence(state, owned_locs)
    state.token_locs[:, state.req_pool_idx, :].fill_(-1)
    return state.free_slots[:state.params.buffer_slots], state.token_locs


WORKLOAD = Workload(
    name="hisparse-request-finished",
    summary="HiSparse request_finished: unique(x[x > 0]) + a sink mask vs a fixed-shape presence update",
    mirrors="sglang managers/hisparse_coordinator.py: HiSparseCoordinator.request_finished",
    params=HisparseRequestFinishedParams,
    setup=setup,
    step=step,
    expected_rules=("SH101", "SH105"),
    small={"num_layers": 2, "pool_requests": 4, "buffer_capacity": 32, "request_capacity": 24,
           "buffer_slots": 1024, "page_size": 8},
)
