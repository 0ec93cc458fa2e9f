# ruff: noqa
"""Copies whose pinning and non-blocking are computed flags (`pin_memory=self.use_pinned`,
`non_blocking=not is_cpu`) are asked for wherever they can be had; a factory given `**kwargs` may be built on
the device, so a copy into it is not a copy into host memory."""
import torch


class Batch:
    def __init__(self, size, device, kwargs):
        self.counts_gpu = torch.zeros(size, dtype=torch.int32, device=device)
        self.indices = torch.full((size,), -1, **kwargs)
        self.use_pinned = device != "cpu"

    def publish(self, counts):
        staged = torch.tensor(counts, pin_memory=self.use_pinned)
        self.counts_gpu.copy_(staged, non_blocking=self.use_pinned)
        self.indices.copy_(self.counts_gpu)
        return staged

    def publish_blocking(self, counts):
        staged = torch.tensor(counts)
        self.counts_gpu.copy_(staged)  # expect: SH202 high
        return staged

    def publish_unpinned(self, counts):
        staged = torch.tensor(counts, pin_memory=False)
        self.counts_gpu.copy_(staged, non_blocking=False)  # expect: SH202 high
        return staged
