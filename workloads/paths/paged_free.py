"""Paged allocator ``free`` of one request's kv-row segment.

Mirrors sglang ``mem_cache/allocator/paged.py: PagedTokenToKVPoolAllocator.free``: given the token slots of
a finished (or retracted) request's kv row, recover the page ids with
``torch.unique(free_index // page_size)`` and release them (staged, then merged and sorted when an
allocation runs short, with ``need_sort``). It runs on the scheduler thread when requests finish.

Why the bad variant syncs: ``torch.unique`` sizes its output by the number of distinct values, computed on
the device and copied to the host (``aten::_unique2``, rule SH105).

The rewrite is sglang's own sibling ``free_segment``: a kv-row segment starts on a page boundary and its
tokens are contiguous per page, so ``free_index[::page_size]`` hits every page exactly once —
a view, no dedup, no sync. The freed set is the same; after the merge the free list is identical.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from synchunt.capture.workload import Workload
from synchunt_workloads.paths._common import check_params, paged_slots, random_pages, resolve_device, seeded


@dataclass
class PagedFreeParams:
    variant: str = "bad"
    device: str = "cpu"
    page_size: int = 16
    num_pages: int = 8192
    request_tokens: int = 3000
    seed: int = 0

    def __post_init__(self) -> None:
        check_params(self)


@dataclass
class PagedAllocator:
    """The free-list part of a paged allocator with ``need_sort``: released pages wait, unsorted, until
    a merge sorts them into the free list."""

    page_size: int
    free_pages: torch.Tensor
    staged_pages: list[torch.Tensor] = field(default_factory=list)

    def release_page_ids(self, page_ids: torch.Tensor) -> None:
        self.staged_pages.append(page_ids)

    def merge_and_sort_free(self) -> None:
        if self.staged_pages:
            self.free_pages, _ = torch.sort(torch.cat((self.free_pages, *self.staged_pages)))
            self.staged_pages = []

    def free(self, free_index: torch.Tensor) -> None:
        if free_index.numel() == 0:
            return
        self.release_page_ids(torch.unique(free_index // self.page_size))

    def free_segment(self, free_index: torch.Tensor, *, start_pos: int) -> None:
        if free_index.numel() == 0:
            return
        if start_pos % self.page_size != 0:
            raise ValueError(f"segment start {start_pos} is not page-aligned")
        self.release_page_ids(free_index[::self.page_size] // self.page_size)


@dataclass
class PagedFreeState:
    params: PagedFreeParams
    initial_free_pages: torch.Tensor
    allocator: PagedAllocator
    free_index: torch.Tensor


def setup(params: PagedFreeParams) -> PagedFreeState:
    device = resolve_device(params.device)
    generator = seeded(params.seed)
    request_pages = -(-params.request_tokens // params.page_size)
    # Page 0 is the padding page; the request's pages are scattered over the pool, the rest is free.
    shuffled_pages = random_pages(params.num_pages, 1, params.num_pages + 1, generator)
    pages = shuffled_pages[:request_pages]
    free_pages = torch.sort(shuffled_pages[request_pages:]).values.to(device)
    free_index = paged_slots(params.request_tokens, pages, params.page_size).to(device)
    return PagedFreeState(params=params, initial_free_pages=free_pages,
                          allocator=PagedAllocator(page_size=params.page_size, free_pages=free_pages),
                          free_index=free_index)


def step(state: PagedFreeState) -> torch.Tensor:
    """Free the request's whole kv row (start 0) and merge; returns the sorted free list."""
    allocator = state.allocator
    allocator.free_pages, allocator.staged_pages = state.initial_free_pages, []
    if state.params.variant == "bad":
        allocator.free(state.free_index)
    else:
        allocator.free_segment(state.free_index, start_pos=0)
    allocator.merge_and_sort_free()
    return allocator.free_pages


WORKLOAD = Workload(
    name="paged-allocator-free",
    summary="Paged allocator free: torch.unique of page ids vs the strided free_segment",
    mirrors="sglang mem_cache/allocator/paged.py: PagedTokenToKVPoolAllocator.free",
    params=PagedFreeParams,
    setup=setup,
    step=step,
    expected_rules=("SH105",),
    small={"num_pages": 256, "request_tokens": 300, "page_size": 8},
)
