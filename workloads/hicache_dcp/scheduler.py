"""Set-up and one scheduler iteration of the DCP HiCache load path.

The real iteration is ``get_new_batch_prefill → ready_to_load_host_cache → start_loading`` on the
scheduler thread, right before the forward launch; the forward then reads each layer's KV after waiting
for that layer's load event.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import torch
from torch.profiler import record_function

from synchunt_workloads.hicache_dcp.controller import CacheOperation, HiCacheController
from synchunt_workloads.hicache_dcp.device_pool import MLATokenToKVPool, PagedTokenToKVPoolAllocator
from synchunt_workloads.hicache_dcp.host_pool import IO_BACKENDS, MLATokenToKVPoolHost
from synchunt_workloads.hicache_dcp.translate import IMPLS, dcp_kernel_indices_sliced

T = TypeVar("T")


@dataclass
class HiCacheParams:
    """Options of the workload; defaults are DeepSeek-V2-Lite with ``--dcp-size 8`` on one rank."""

    impl: str = "masked"  # DCP index translation: "masked" (pre-fix) or "sliced" (the fix)
    backend: str = "kernel"  # io backend: "kernel" or "direct"
    device: str = "cpu"
    layers: int = 27
    kv_lora_rank: int = 512
    qk_rope_head_dim: int = 64
    dtype: str = "bfloat16"
    dcp_size: int = 8
    dcp_rank: int = 0
    page_size: int = 64  # physical rows per page on one rank; the widened page is page_size * dcp_size
    load_pages: int = 8  # widened pages per load, queued one op per page in shuffled order
    host_pages: int = 16  # widened pages in the host pool
    device_pages: int = 12  # widened pages in the device pool (plus one padding page)
    seed: int = 0

    def __post_init__(self) -> None:
        if self.impl not in IMPLS:
            raise ValueError(f"impl must be one of {', '.join(IMPLS)}, not {self.impl!r}")
        if self.backend not in IO_BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(IO_BACKENDS)}, not {self.backend!r}")
        if not isinstance(getattr(torch, self.dtype, None), torch.dtype):
            raise ValueError(f"dtype {self.dtype!r} is not a torch dtype name")
        for name in ("layers", "kv_lora_rank", "qk_rope_head_dim", "page_size", "load_pages", "dcp_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive")
        if not 0 <= self.dcp_rank < self.dcp_size:
            raise ValueError(f"dcp_rank {self.dcp_rank} outside [0, {self.dcp_size})")
        if self.load_pages > min(self.host_pages, self.device_pages):
            raise ValueError(f"load_pages {self.load_pages} exceeds the host ({self.host_pages}) or "
                             f"device ({self.device_pages}) pool")

    @property
    def kv_dim(self) -> int:
        return self.kv_lora_rank + self.qk_rope_head_dim

    @property
    def widened_page_size(self) -> int:
        return self.page_size * self.dcp_size


@dataclass
class HiCacheState:
    """Everything one scheduler iteration needs, built once by :func:`setup`."""

    params: HiCacheParams
    device: torch.device
    host_pool: MLATokenToKVPoolHost
    device_pool: MLATokenToKVPool
    controller: HiCacheController
    prepared_ops: list[CacheOperation]
    host_indices: torch.Tensor  # the load's logical host slots, queue order (CPU)
    device_indices: torch.Tensor  # their logical device slots, pairwise (device)
    forward_rows: torch.Tensor  # this rank's physical device rows of the load, read by the forward


def resolve_device(name: str) -> torch.device:
    """``name`` as a device with an explicit index for accelerators (so tensor devices compare equal)."""
    device = torch.device(name)
    if device.type != "cpu" and device.index is None:
        device = torch.device(device.type, torch.get_device_module(device).current_device())
    return device


def setup(params: HiCacheParams) -> HiCacheState:
    """Allocate the pools, fill the host pool, and queue-ready the load ops (none of this is profiled)."""
    device = resolve_device(params.device)
    dtype = getattr(torch, params.dtype)
    generator = torch.Generator().manual_seed(params.seed)
    device_pool = MLATokenToKVPool(params.device_pages * params.page_size, params.page_size, params.layers,
                                   params.kv_dim, dtype, device)
    allocator = PagedTokenToKVPoolAllocator(device_pool.size, params.page_size, params.dcp_size, device,
                                            generator=generator)
    host_pool = MLATokenToKVPoolHost(device_pool, params.host_pages * params.page_size,
                                     params.widened_page_size, dcp_size=params.dcp_size,
                                     dcp_rank=params.dcp_rank, dcp_impl=params.impl)
    host_pool.write_rows(torch.arange(host_pool.size),
                         torch.randn(host_pool.kv_buffer.shape, generator=generator))
    controller = HiCacheController(allocator, host_pool, device_pool, io_backend=params.backend)

    widened = params.widened_page_size
    host_slots = host_pool.alloc(params.host_pages * widened)
    pages = host_slots.view(params.host_pages, widened)
    chosen = torch.randperm(params.host_pages, generator=generator)[: params.load_pages]
    for node_id, page in enumerate(chosen.tolist()):
        if controller.load(pages[page].clone(), node_id=node_id) is None:
            raise RuntimeError("device pool too small for the load")
    prepared_ops = list(controller.load_queue)
    controller.load_queue.clear()
    device_indices = torch.cat([op.device_indices for op in prepared_ops])
    forward_rows = (device_indices if params.dcp_size == 1
                    else dcp_kernel_indices_sliced(device_indices, params.dcp_size, params.dcp_rank))
    return HiCacheState(params=params, device=device, host_pool=host_pool, device_pool=device_pool,
                        controller=controller, prepared_ops=prepared_ops,
                        host_indices=torch.cat([op.host_indices for op in prepared_ops]),
                        device_indices=device_indices, forward_rows=forward_rows)


def forward(state: HiCacheState) -> torch.Tensor:
    """Stand-in forward: each layer waits for its load, then reads the loaded rows (one sum per layer)."""
    sums = []
    with record_function("forward"):
        for layer_id in range(state.params.layers):
            with record_function(f"layer_{layer_id}"):
                kv = state.device_pool.get_key_buffer(layer_id)
                sums.append(kv.index_select(0, state.forward_rows).float().sum())
        return torch.stack(sums)


def step(state: HiCacheState) -> torch.Tensor:
    """One scheduler iteration: queue the prepared loads, ``start_loading()``, then the forward.

    Returns the forward's per-layer checksums (a device tensor; reading it is the caller's choice).
    """
    state.controller.load_queue.extend(state.prepared_ops)
    producer_id = state.controller.start_loading()
    state.controller.layer_done_counter.set_consumer(producer_id)
    return forward(state)


def run_on_scheduler_thread(fn: Callable[[], T], name: str = "scheduler") -> T:
    """Run ``fn`` on a fresh thread named ``name``; return its result or re-raise its exception."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["result"] = fn()
        except BaseException as error:  # handed back to the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=target, name=name)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["result"]  # type: ignore[return-value]
