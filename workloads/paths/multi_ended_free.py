"""Multi-ended (unified sub-pool) allocator ``free``, eager path.

Mirrors sglang ``mem_cache/allocator/unified_sub_pool.py: MultiEndedAllocator.free``: free virtual token
ids by recovering their virtual pages (``torch.unique(free_index // page_size)``), looking up the physical
pages (``virtual_to_physical``), checking that none is stale with ``bool((freed_p_pages < 0).any().item())``,
tombstoning the mapping, recycling the virtual page ids and queueing the physical pages for compaction.
It runs on the scheduler thread whenever a request's KV is released.

Why the bad variant syncs twice: ``torch.unique`` reads the number of distinct pages back to the host
(``aten::_unique2``, rule SH105), and ``.item()`` reads the stale-page check (``aten::_local_scalar_dense``,
rule SH109) — sglang even wraps it in its own ``record_function("...sync_check")`` region.

The rewrite combines sglang's ``free_segment`` (a page-aligned kv-row segment gives one token per page with
``free_index[::page_size]``, the ``_pages`` fast path that skips the dedup) with a deferred check: the stale
test is OR-ed into a device-side flag that the caller reads once per step, at a point where it waits
anyway, instead of ``.item()`` on every free. The mapping, the recycled ids (as a set: the free list is
sorted on compaction) and the queued physical pages are identical; a stale free raises in the bad variant
and sets the flag in the fixed one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, paged_slots, random_pages, resolve_device, seeded


@dataclass
class MultiEndedFreeParams:
    variant: str = "bad"
    device: str = "cpu"
    page_size: int = 16
    virtual_pages: int = 8192
    request_tokens: int = 3000
    stale_pages: int = 0
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


class StalePageError(RuntimeError):
    """A freed virtual page had no physical page: a double free or a stale slot."""


@dataclass
class MultiEndedAllocator:
    page_size: int
    virtual_to_physical: torch.Tensor
    free_virtual_ids: torch.Tensor
    stale_flag: torch.Tensor
    pending_compaction: list[torch.Tensor] = field(default_factory=list)

    def _recycle(self, free_v_pages: torch.Tensor, freed_p_pages: torch.Tensor) -> None:
        self.virtual_to_physical.index_fill_(0, free_v_pages, -1)
        self.free_virtual_ids = torch.cat([self.free_virtual_ids, free_v_pages])
        self.pending_compaction.append(freed_p_pages)

    def free(self, free_index: torch.Tensor) -> None:
        if free_index.numel() == 0:
            return
        free_v_pages = torch.unique(free_index.to(torch.int64) // self.page_size)
        freed_p_pages = self.virtual_to_physical[free_v_pages]
        if bool((freed_p_pages < 0).any().item()):
            raise StalePageError("freeing virtual pages that have no physical page")
        self._recycle(free_v_pages, freed_p_pages)

    def free_segment(self, free_index: torch.Tensor, *, start_pos: int) -> None:
        if free_index.numel() == 0:
            return
        if start_pos % self.page_size != 0:
            raise ValueError(f"segment start {start_pos} is not page-aligned")
        free_v_pages = free_index[::self.page_size].to(torch.int64) // self.page_size
        freed_p_pages = self.virtual_to_physical[free_v_pages]
        # Deferred check: the flag is read once per step, where the scheduler waits anyway.
        self.stale_flag |= (freed_p_pages < 0).any()
        self._recycle(free_v_pages, freed_p_pages)


@dataclass
class MultiEndedFreeState:
    params: MultiEndedFreeParams
    initial_virtual_to_physical: torch.Tensor
    initial_free_virtual_ids: torch.Tensor
    allocator: MultiEndedAllocator
    free_index: torch.Tensor


@dataclass(frozen=True)
class FreeOutcome:
    virtual_to_physical: torch.Tensor
    free_virtual_ids: torch.Tensor
    pending_physical_pages: torch.Tensor
    stale_flag: torch.Tensor


def setup(params: MultiEndedFreeParams) -> MultiEndedFreeState:
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    request_pages = -(-params.request_tokens // params.page_size)
    if not 0 <= params.stale_pages <= request_pages:
        raise ValueError(f"stale_pages must be within 0..{request_pages}")
    if 2 * request_pages > params.virtual_pages:
        raise ValueError("virtual_pages must hold the request's pages twice over (other requests share it)")
    shuffled = random_pages(params.virtual_pages, 0, params.virtual_pages, generator)
    live_pages, free_ids = shuffled[:2 * request_pages], shuffled[2 * request_pages:]
    virtual_to_physical = torch.full((params.virtual_pages,), -1, dtype=torch.int64)
    virtual_to_physical[live_pages] = random_pages(live_pages.numel(), 1, params.virtual_pages + 1, generator)
    request_pages_ids = live_pages[:request_pages]  # the other live pages belong to other requests
    virtual_to_physical[request_pages_ids[:params.stale_pages]] = -1
    free_index = paged_slots(params.request_tokens, request_pages_ids, params.page_size)
    virtual_to_physical = virtual_to_physical.to(device)
    free_ids = free_ids.to(device)
    allocator = MultiEndedAllocator(page_size=params.page_size,
                                    virtual_to_physical=virtual_to_physical.clone(),
                                    free_virtual_ids=free_ids,
                                    stale_flag=torch.zeros((), dtype=torch.bool, device=device))
    return MultiEndedFreeState(params=params, initial_virtual_to_physical=virtual_to_physical,
                               initial_free_virtual_ids=free_ids, allocator=allocator,
                               free_index=free_index.to(torch.int32).to(device))


def step(state: MultiEndedFreeState) -> FreeOutcome:
    """Free the request's kv row (start 0) after restoring the allocator, so steps repeat."""
    allocator = state.allocator
    allocator.virtual_to_physical.copy_(state.initial_virtual_to_physical)
    allocator.free_virtual_ids = state.initial_free_virtual_ids
    allocator.pending_compaction = []
    allocator.stale_flag.zero_()
    if state.params.variant == "bad":
        allocator.free(state.free_index)
    else:
        allocator.free_segment(state.free_index, start_pos=0)
    return FreeOutcome(virtual_to_physical=allocator.virtual_to_physical,
                       free_virtual_ids=torch.sort(allocator.free_virtual_ids).values,
                       pending_physical_pages=torch.sort(torch.cat(allocator.pending_compaction)).values,
                       stale_flag=allocator.stale_flag)


WORKLOAD = Workload(
    name="multi-ended-free",
    summary="Unified sub-pool allocator free: unique + .any().item() vs strided pages + a device-side flag",
    mirrors="sglang mem_cache/allocator/unified_sub_pool.py: MultiEndedAllocator.free",
    params=MultiEndedFreeParams,
    setup=setup,
    step=step,
    expected_rules=("SH105", "SH109"),
    small={"virtual_pages": 256, "request_tokens": 300, "page_size": 8},
)
