"""The device side: an MLA KV pool (one buffer per layer) and its paged allocator of logical DCP slots."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from synchunt_workloads.hicache_dcp.controller import LayerDoneCounter


class MLATokenToKVPool:
    """Per layer ``kv_buffer[layer]`` of shape ``[size + page_size, 1, kv_dim]``; physical page 0 is padding.

    ``size`` and ``page_size`` are physical (this rank's rows); the allocator hands out logical slots.
    """

    def __init__(self, size: int, page_size: int, layer_num: int, kv_dim: int, dtype: torch.dtype,
                 device: torch.device) -> None:
        self.size = size
        self.page_size = page_size
        self.layer_num = layer_num
        self.kv_dim = kv_dim
        self.dtype = dtype
        self.device = device
        self.kv_buffer = [
            torch.zeros((size + page_size, 1, kv_dim), dtype=dtype, device=device) for _ in range(layer_num)
        ]
        self.layer_transfer_counter: LayerDoneCounter | None = None

    def register_layer_transfer_counter(self, counter: LayerDoneCounter) -> None:
        self.layer_transfer_counter = counter

    def get_key_buffer(self, layer_id: int) -> torch.Tensor:
        """The layer's buffer, after the current stream waits for that layer's load (no host wait)."""
        if self.layer_transfer_counter is not None:
            self.layer_transfer_counter.wait_until(layer_id)
        return self.kv_buffer[layer_id]


class PagedTokenToKVPoolAllocator:
    """Hands out logical slots in whole widened pages (``page_size * dcp_size``), page 0 reserved.

    The free page list lives on the device, as in sglang; ``generator`` shuffles it so that allocations
    come back in arbitrary page order, the way a long-running server's free list does.
    """

    def __init__(self, size: int, page_size: int, dcp_size: int, device: torch.device,
                 generator: torch.Generator | None = None) -> None:
        if size % page_size != 0:
            raise ValueError(f"device pool size {size} is not a multiple of page size {page_size}")
        self.page_size = page_size * dcp_size  # widened: logical slots per page
        self.num_pages = size // page_size
        pages = torch.arange(1, self.num_pages + 1, dtype=torch.int64)
        if generator is not None:
            pages = pages[torch.randperm(self.num_pages, generator=generator)]
        self.free_pages = pages.to(device)
        self.device = device

    def available_size(self) -> int:
        return self.free_pages.numel() * self.page_size

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """Logical slots of ``need_size // page_size`` whole pages, or None when the pool is full."""
        if need_size % self.page_size != 0:
            raise ValueError(f"cannot allocate {need_size} slots: not whole widened pages "
                             f"of {self.page_size}")
        num_pages = need_size // self.page_size
        if num_pages > self.free_pages.numel():
            return None
        pages, self.free_pages = self.free_pages[:num_pages], self.free_pages[num_pages:]
        offsets = torch.arange(self.page_size, dtype=torch.int64, device=self.device)
        return (pages[:, None] * self.page_size + offsets).reshape(-1)
