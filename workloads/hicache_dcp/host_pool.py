"""The host side: HiCache's MLA host KV pool (layout ``layer_first``) with DCP index translation."""

from __future__ import annotations

import torch

from synchunt_workloads.hicache_dcp.device_pool import MLATokenToKVPool
from synchunt_workloads.hicache_dcp.translate import IMPLS, maybe_dcp_kernel_indices

IO_BACKENDS: tuple[str, ...] = ("kernel", "direct")

# Logical slot states (CPU bookkeeping, as sglang's host pool keeps them).
IDLE, RESERVED = 0, 1


class MLATokenToKVPoolHost:
    """``kv_buffer`` of shape ``[layer_num, size, 1, kv_dim]`` in host memory, pinned when the device is CUDA.

    It receives the widened page size and divides it by ``dcp_size``: ``size`` and ``page_size`` are this
    rank's physical rows, while the free list and slot state are logical (``size * dcp_size`` slots).

    The "kernel" backend gathers with device-resident indices. sglang's kernel reads pinned memory through
    UVA; plain torch cannot index pinned memory with device indices, so on an accelerator the pool keeps
    ``device_mirror``, a device copy of ``kv_buffer`` that every write through this class keeps coherent. On
    CPU the mirror is ``kv_buffer`` itself (``mirror_on_device=True`` forces a real copy, for tests).
    """

    def __init__(self, device_pool: MLATokenToKVPool, size: int, page_size: int, *, dcp_size: int = 1,
                 dcp_rank: int = 0, dcp_impl: str = "sliced", layout: str = "layer_first",
                 mirror_on_device: bool | None = None) -> None:
        if layout != "layer_first":
            raise ValueError(f"only the layer_first layout is modelled, not {layout!r}")
        if dcp_impl not in IMPLS:
            raise ValueError(f"unknown DCP index translation {dcp_impl!r}; known: {', '.join(IMPLS)}")
        if not 0 <= dcp_rank < dcp_size:
            raise ValueError(f"dcp_rank {dcp_rank} outside [0, {dcp_size})")
        if page_size % dcp_size != 0:
            raise ValueError(f"widened page size {page_size} is not a multiple of dcp_size {dcp_size}")
        self.dcp_size = dcp_size
        self.dcp_rank = dcp_rank
        self.dcp_impl = dcp_impl
        self.page_size = page_size // dcp_size  # physical rows per page on this rank
        if size % self.page_size != 0:
            raise ValueError(f"host pool size {size} is not a multiple of physical page size "
                             f"{self.page_size}")
        self.size = size
        self.layout = layout
        self.layer_num = device_pool.layer_num
        self.kv_dim = device_pool.kv_dim
        self.dtype = device_pool.dtype
        self.device = device_pool.device
        self.token_stride_size = self.kv_dim * self.dtype.itemsize  # bytes per row per layer
        pin = self.device.type == "cuda"
        self.kv_buffer = torch.zeros((self.layer_num, size, 1, self.kv_dim), dtype=self.dtype, pin_memory=pin)
        if mirror_on_device is None:
            mirror_on_device = self.device.type != "cpu"
        self._mirrored = mirror_on_device
        self.device_mirror = self.kv_buffer.to(self.device, copy=True) if mirror_on_device else self.kv_buffer
        # Logical bookkeeping on CPU.
        self.logical_size = size * dcp_size
        self.logical_page_size = page_size
        self.free_slots = torch.arange(self.logical_size, dtype=torch.int64)
        self.mem_state = torch.full((self.logical_size,), IDLE, dtype=torch.uint8)

    # --- allocation -------------------------------------------------------------------------------------
    def available_size(self) -> int:
        return self.free_slots.numel()

    def alloc(self, need_size: int) -> torch.Tensor | None:
        """Logical slots of whole widened pages (CPU tensor), or None when the pool is full."""
        if need_size % self.logical_page_size != 0:
            raise ValueError(f"cannot allocate {need_size} slots: host allocation is in whole widened pages "
                             f"of {self.logical_page_size}")
        if need_size > self.free_slots.numel():
            return None
        selected, self.free_slots = self.free_slots[:need_size], self.free_slots[need_size:]
        self.mem_state[selected] = RESERVED
        return selected

    # --- index translation ------------------------------------------------------------------------------
    def kernel_indices(self, indices: torch.Tensor) -> torch.Tensor:
        """This rank's physical rows for logical ``indices`` (same tensor object without DCP)."""
        return maybe_dcp_kernel_indices(indices, self.dcp_size, self.dcp_rank, self.dcp_impl)

    # --- data movement ----------------------------------------------------------------------------------
    def write_rows(self, rows: torch.Tensor, values: torch.Tensor) -> None:
        """Write ``values`` (``[layer_num, len(rows), 1, kv_dim]``) into physical ``rows`` of every layer."""
        self.kv_buffer[:, rows] = values.to(self.dtype)
        if self._mirrored:
            self.device_mirror.copy_(self.kv_buffer, non_blocking=True)

    def load_to_device_per_layer(self, device_pool: MLATokenToKVPool, host_indices: torch.Tensor,
                                 device_indices: torch.Tensor, layer_id: int, io_backend: str) -> None:
        """Copy one layer's rows host → device. Translates both index sets here, once per layer."""
        host_rows = self.kernel_indices(host_indices)
        device_rows = self.kernel_indices(device_indices)
        dst = device_pool.kv_buffer[layer_id]
        if io_backend == "kernel":
            # Indices on the device: one gather + one scatter, queued on the current (load) stream.
            dst.index_copy_(0, device_rows, self.device_mirror[layer_id].index_select(0, host_rows))
        elif io_backend == "direct":
            # Indices on the host: gather from host memory, then copy the rows in.
            rows = self.kv_buffer[layer_id].index_select(0, host_rows)
            dst.index_copy_(0, device_rows.to(dst.device, non_blocking=True),
                            rows.to(dst.device, non_blocking=True))
        else:
            raise ValueError(f"unknown io backend {io_backend!r}; known: {', '.join(IO_BACKENDS)}")

    def backup_from_device_all_layer(self, device_pool: MLATokenToKVPool, host_indices: torch.Tensor,
                                     device_indices: torch.Tensor, io_backend: str) -> None:
        """Write back every layer's rows device → host. Translates once, then copies all layers."""
        host_rows = self.kernel_indices(host_indices)
        device_rows = self.kernel_indices(device_indices)
        if io_backend == "kernel":
            for layer_id in range(self.layer_num):
                rows = device_pool.kv_buffer[layer_id].index_select(0, device_rows)
                self.device_mirror[layer_id].index_copy_(0, host_rows, rows)
            if self._mirrored:
                self.kv_buffer.copy_(self.device_mirror, non_blocking=True)
        elif io_backend == "direct":
            device_rows_on_device = device_rows.to(device_pool.device, non_blocking=True)
            host_rows_on_host = host_rows.cpu()
            for layer_id in range(self.layer_num):
                rows = device_pool.kv_buffer[layer_id].index_select(0, device_rows_on_device)
                self.kv_buffer[layer_id].index_copy_(0, host_rows_on_host, rows.cpu())
            if self._mirrored:
                self.device_mirror.copy_(self.kv_buffer, non_blocking=True)
        else:
            raise ValueError(f"unknown io backend {io_backend!r}; known: {', '.join(IO_BACKENDS)}")
