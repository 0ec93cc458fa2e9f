"""Logical DCP slots → this rank's physical rows.

Decode context parallelism shares each physical KV row among ``dcp_size`` ranks: logical slot
``s = row * dcp_size + rank``, so rank ``s % dcp_size`` owns slot ``s`` at physical row ``s // dcp_size``.
A transfer is a run of whole widened pages (``page_size * dcp_size`` slots, in any page order), so every
page starts at a multiple of ``dcp_size`` and this rank's slots sit at positions ``rank, rank + dcp_size, …``.

Each implementation lives in its own function so that it is the innermost user frame of what it runs.
"""

from __future__ import annotations

import torch

IMPLS: tuple[str, ...] = ("masked", "sliced")


def dcp_kernel_indices_masked(indices: torch.Tensor, dcp_size: int, dcp_rank: int) -> torch.Tensor:
    """The pre-fix translation: select this rank's slots with a boolean mask.

    The mask read runs ``aten::nonzero``, which copies the selected count back to the host: a D2H sync
    when ``indices`` lives on the device.
    """
    local = indices[indices % dcp_size == dcp_rank] // dcp_size
    # The old equal-share check: metadata only (numel), it reads no tensor data.
    if local.numel() * dcp_size != indices.numel():
        raise ValueError(
            f"DCP rank {dcp_rank} owns {local.numel()} of {indices.numel()} slots; "
            f"expected an equal share of {dcp_size} ranks (runs must be whole widened pages)"
        )
    return local


def dcp_kernel_indices_sliced(indices: torch.Tensor, dcp_size: int, dcp_rank: int) -> torch.Tensor:
    """The fix: a strided view plus one elementwise kernel, no data-dependent size, no sync.

    Valid only when every run starts at a multiple of ``dcp_size`` (whole widened pages); the count check
    rejects ragged runs but cannot catch interleaving.
    """
    if indices.numel() % dcp_size != 0:
        raise ValueError(
            f"{indices.numel()} slots is not a multiple of dcp_size {dcp_size}; "
            "transfers must be runs of whole widened pages"
        )
    return indices[dcp_rank::dcp_size] // dcp_size


def maybe_dcp_kernel_indices(indices: torch.Tensor, dcp_size: int, dcp_rank: int, impl: str) -> torch.Tensor:
    """Translate with ``impl`` ("masked" or "sliced"); without DCP, the very same tensor object."""
    if dcp_size == 1:
        return indices
    if impl == "masked":
        return dcp_kernel_indices_masked(indices, dcp_size, dcp_rank)
    if impl == "sliced":
        return dcp_kernel_indices_sliced(indices, dcp_size, dcp_rank)
    raise ValueError(f"unknown DCP index translation {impl!r}; known: {', '.join(IMPLS)}")
