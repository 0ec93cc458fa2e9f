"""Fresh tensors for one corpus case, on the device under test (and host tensors where a case needs them)."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Inputs:
    device: torch.device
    x: torch.Tensor  # float[4], values in [0, 1)
    y: torch.Tensor  # a 0-dim float
    ind: torch.Tensor  # long[3] indices into x
    ind_host: torch.Tensor  # the same indices in host memory
    mask: torch.Tensor  # bool[4]
    repeats: torch.Tensor  # long[1] == [2], as in test_sync_warning
    counts: torch.Tensor  # long[4] repeat counts
    ints: torch.Tensor  # long[16] in [0, 8)
    grid: torch.Tensor  # float[4, 3]
    row_mask: torch.Tensor  # bool[4]
    row: torch.Tensor  # float[3]
    probs: torch.Tensor  # float[4], positive
    a: torch.Tensor  # float[3, 3], well conditioned
    spd: torch.Tensor  # float[3, 3], symmetric positive definite
    b: torch.Tensor  # float[3, 2]
    singular: torch.Tensor  # float[3, 3] of zeros
    host_buffer: torch.Tensor  # float[4] in pageable host memory

    def pinned(self, tensor: torch.Tensor) -> torch.Tensor:
        """A pinned host copy (pinning needs a CUDA build)."""
        return tensor.cpu().pin_memory()


def make_inputs(device: str | torch.device = "cpu", seed: int = 0) -> Inputs:
    device = torch.device(device)
    generator = torch.Generator().manual_seed(seed)

    def on(tensor: torch.Tensor) -> torch.Tensor:
        return tensor.to(device)

    x = torch.rand(4, generator=generator)
    ind = torch.tensor([0, 2, 3])
    a = torch.eye(3) * 2 + 0.1 * torch.rand(3, 3, generator=generator)
    return Inputs(
        device=device,
        x=on(x),
        y=on(torch.rand((), generator=generator)),
        ind=on(ind),
        ind_host=ind.clone(),
        mask=on(torch.tensor([True, False, True, True])),
        repeats=on(torch.full((1,), 2)),
        counts=on(torch.tensor([1, 0, 2, 1])),
        ints=on(torch.randint(0, 8, (16,), generator=generator)),
        grid=on(torch.rand(4, 3, generator=generator)),
        row_mask=on(torch.tensor([True, False, False, True])),
        row=on(torch.rand(3, generator=generator)),
        probs=on(x + 0.1),
        a=on(a),
        spd=on(a @ a.T + torch.eye(3)),
        b=on(torch.rand(3, 2, generator=generator)),
        singular=on(torch.zeros(3, 3)),
        host_buffer=torch.empty(4),
    )
