# ruff: noqa
"""`self.projector(x, shapes)` runs the `forward` of the class `self.projector` was built from: its call sites
are the evidence for `forward`'s parameters."""
import torch
from torch import nn


class Projector(nn.Module):
    def _merge(self, features: torch.Tensor, shapes: torch.Tensor):
        lengths = (shapes[:, 0] * shapes[:, 1]).tolist()  # expect: SH201 low
        return features.split(lengths)

    def forward(self, features: torch.Tensor, shapes: torch.Tensor):
        return self._merge(features, shapes)


class Head(nn.Module):
    def _merge(self, features: torch.Tensor, shapes: torch.Tensor):
        lengths = (shapes[:, 0] * shapes[:, 1]).tolist()  # expect: SH201 medium
        return features.split(lengths)

    def forward(self, features: torch.Tensor, shapes: torch.Tensor):
        return self._merge(features, shapes)  # expect: SH201 low


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.projector = Projector()
        self.head = Head()

    def forward(self, features: torch.Tensor, items):
        shapes_cpu = torch.cat([item.shape_tensor for item in items])
        merged = self.projector(features, shapes_cpu)
        return self.head(merged, torch.zeros(len(items), 2, device="cuda"))
