# ruff: noqa
"""A module's parameters follow the module to its device (`model.to(device)`): `nn.Parameter(torch.empty(n))`
is a tensor of unknown device, not a host tensor, so moving it next to an activation is not a host-to-device
copy; one built with an explicit device is where that device says. Another library's `Parameter` or a class of
the module named `Buffer` is no module tensor."""
import inspect

import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, size):
        super().__init__()
        self.newline = nn.Parameter(torch.empty(size))
        self.marker = nn.Parameter(torch.zeros(size, device="cpu"), requires_grad=False)
        fan_in = nn.init._calculate_correct_fan(self.newline[None], "fan_in")
        self.bound = 1 / fan_in if fan_in > 0 else 0

    def forward(self, features):
        newline = self.newline[:, None].to(features.device, features.dtype)
        rows = self.marker.bool()
        if not rows.all():
            return newline
        return torch.cat([features, newline]), self.newline.sum().item()  # expect: SH109 medium


class Buffer:
    def __init__(self, size):
        self.size = size


def not_torch_parameters(sig, n: int):
    q = inspect.Parameter("y", inspect.Parameter.POSITIONAL_ONLY)
    buf = Buffer(n)
    while q:
        q = None
    return bool(buf)
