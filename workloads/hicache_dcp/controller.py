"""HiCache's cache controller: queued host→device loads, started layer by layer on a side stream."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.profiler import record_function

from synchunt_workloads.hicache_dcp.device_pool import MLATokenToKVPool, PagedTokenToKVPoolAllocator
from synchunt_workloads.hicache_dcp.host_pool import IO_BACKENDS, MLATokenToKVPoolHost


@dataclass
class CacheOperation:
    """One queued transfer: logical host slots and the logical device slots they go to, pairwise."""

    host_indices: torch.Tensor
    device_indices: torch.Tensor
    node_id: int = -1

    @staticmethod
    def merge_ops(ops: list[CacheOperation]) -> CacheOperation:
        """One operation for the whole queue: widened pages in arbitrary (queue) order."""
        if len(ops) == 1:
            return ops[0]
        return CacheOperation(
            host_indices=torch.cat([op.host_indices for op in ops]),
            device_indices=torch.cat([op.device_indices for op in ops]),
        )


class LayerLoadingEvent:
    """A start event on the scheduler's stream and one completion event per layer on the load stream."""

    def __init__(self, num_layers: int, device_module) -> None:
        self._device_module = device_module
        self.start_event = device_module.Event()
        self.load_events = [device_module.Event() for _ in range(num_layers)]

    def complete(self, layer_index: int) -> None:
        self.load_events[layer_index].record()

    def wait(self, layer_index: int) -> None:
        """Make the current stream wait for the layer's load; the host does not wait."""
        self._device_module.current_stream().wait_event(self.load_events[layer_index])

    @property
    def finish_event(self):
        return self.load_events[-1]


class LayerDoneCounter:
    """Three rotating sets of per-layer events, so a load can start while earlier ones are consumed.

    sglang also asserts ``finish_event.query()`` before reusing a set; that is left out because a
    stream wait captures the event's record at the time it is issued, so re-recording is safe here.
    """

    num_counters = 3

    def __init__(self, num_layers: int, device_module) -> None:
        self.num_layers = num_layers
        self.events = [LayerLoadingEvent(num_layers, device_module) for _ in range(self.num_counters)]
        self.producer_index = -1
        self.consumer_indices: list[int] = []

    def update_producer(self) -> int:
        self.producer_index = (self.producer_index + 1) % self.num_counters
        return self.producer_index

    def set_consumer(self, index: int | list[int]) -> None:
        self.consumer_indices = [index] if isinstance(index, int) else list(index)

    def wait_until(self, layer_index: int) -> None:
        for consumer_index in self.consumer_indices:
            self.events[consumer_index].wait(layer_index)

    def reset(self) -> None:
        self.producer_index = -1
        self.consumer_indices = []


class HiCacheController:
    """Moves KV rows between the host pool and the device pool (the load half of sglang's controller)."""

    def __init__(self, allocator: PagedTokenToKVPoolAllocator, mem_pool_host: MLATokenToKVPoolHost,
                 mem_pool_device: MLATokenToKVPool, io_backend: str = "kernel") -> None:
        if io_backend not in IO_BACKENDS:
            raise ValueError(f"unknown io backend {io_backend!r}; known: {', '.join(IO_BACKENDS)}")
        self.mem_pool_device_allocator = allocator
        self.mem_pool_host = mem_pool_host
        self.mem_pool_device = mem_pool_device
        self.io_backend = io_backend
        self.device = mem_pool_device.device
        self.device_module = torch.get_device_module(self.device)
        self.layer_num = mem_pool_device.layer_num
        self.load_stream = self.device_module.Stream()
        self.layer_done_counter = LayerDoneCounter(self.layer_num, self.device_module)
        mem_pool_device.register_layer_transfer_counter(self.layer_done_counter)
        self.load_queue: list[CacheOperation] = []

    def load(self, host_indices: torch.Tensor, node_id: int = -1) -> torch.Tensor | None:
        """Allocate device slots for ``host_indices`` and queue the transfer; None when the device is full."""
        device_indices = self.mem_pool_device_allocator.alloc(len(host_indices))
        if device_indices is None:
            return None
        self.load_queue.append(CacheOperation(host_indices, device_indices, node_id))
        return device_indices

    def move_indices(self, op: CacheOperation) -> tuple[torch.Tensor, torch.Tensor]:
        """Put the indices where the backend reads them."""
        host_indices, device_indices = op.host_indices, op.device_indices
        if self.io_backend == "kernel":
            if host_indices.device != self.device:
                host_indices = host_indices.to(self.device, non_blocking=True)
            return host_indices, device_indices
        # "direct": host-side indexing; sort the host slots (longer contiguous runs) and permute the
        # device slots alongside so every pair keeps its partner.
        device_indices = device_indices.cpu()
        host_indices, order = host_indices.sort()
        return host_indices, device_indices.index_select(0, order)

    def start_loading(self) -> int:
        """Start every queued load on the load stream, layer by layer; returns the producer id (-1: none)."""
        if not self.load_queue:
            return -1
        with record_function("start_loading"):
            producer_id = self.layer_done_counter.update_producer()
            op = CacheOperation.merge_ops(self.load_queue)
            host_indices, device_indices = self.move_indices(op)
            self.load_queue.clear()
            producer_event = self.layer_done_counter.events[producer_id]
            producer_event.start_event.record()

            with self.device_module.stream(self.load_stream):
                producer_event.start_event.wait(self.load_stream)
                for layer_id in range(self.layer_num):
                    with record_function(f"layer_{layer_id}"):
                        self.mem_pool_host.load_to_device_per_layer(
                            self.mem_pool_device, host_indices, device_indices, layer_id, self.io_backend
                        )
                        producer_event.complete(layer_id)
                # Keep the index tensors alive until the load stream has used them.
                if host_indices.device.type != "cpu":
                    host_indices.record_stream(self.load_stream)
                if device_indices.device.type != "cpu":
                    device_indices.record_stream(self.load_stream)
        return producer_id

    def write_backup(self, host_indices: torch.Tensor, device_indices: torch.Tensor) -> None:
        """Write device rows back to the host pool (all layers, one translation)."""
        host_indices, device_indices = self.move_indices(CacheOperation(host_indices, device_indices))
        self.mem_pool_host.backup_from_device_all_layer(
            self.mem_pool_device, host_indices, device_indices, self.io_backend
        )
