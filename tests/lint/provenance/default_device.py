# ruff: noqa
"""A helper's device parameter read with what each call passes: left to its default `"cpu"`, the helper builds
on the host, and its upload is no upload at that call; a call that passes the tensor's device still copies."""
import numpy as np
import torch


class Resampler(torch.nn.Module):
    def __init__(self, size):
        super().__init__()
        self.size = size
        self._set_pos_cache(self.size)

    def _set_pos_cache(self, size, device="cpu"):
        table = torch.from_numpy(np.zeros((size, size))).float().to(device)  # expect: SH202 high
        self.register_buffer("pos", table, persistent=False)

    def forward(self, x):
        if x.shape[0] > self.size:
            self._set_pos_cache(x.shape[0], x.device)  # expect: SH202 medium
        return x + self.pos
