# ruff: noqa
"""A parameter annotated as a numpy array holds numpy values all the way down: its rows, its elements and what
a mask selects from it are arrays on the host, whatever the mask is computed from."""
import numpy as np
import torch


def select_rows(slots: np.ndarray, starts: np.ndarray, counts: torch.Tensor):
    slots = slots[slots >= 0]
    offsets = slots - starts[0]
    valid = offsets >= 0
    kept = slots[valid]
    first = slots[0].item()
    return kept, first, counts[counts > 0]  # expect: SH101 medium
