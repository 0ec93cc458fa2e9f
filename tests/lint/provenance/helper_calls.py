# ruff: noqa
"""A call of a private helper is read with what it passes: the helper's syncs that this call cannot reach are
not reported at it (a plain value or host tensor where the helper reads a tensor, a value where the helper
fills in a missing argument with `if arg is None:`)."""
from typing import List, Optional

import torch


class Rotary:
    def __init__(self, n: int):
        self._cached = torch.zeros(n, device="cuda")
        self._seq_len_cached = 0

    def _update(self, seqlen: torch.Tensor, device=None):  # annotated a tensor, though one caller passes ints
        if seqlen > self._seq_len_cached or self._cached.is_inference():  # expect: SH110 medium
            self._seq_len_cached = seqlen

    def forward(self, x: torch.Tensor, max_seqlen: Optional[int] = None):
        if max_seqlen is not None:
            self._update(max_seqlen, device=x.device)
        self._update(x.amax(), device=x.device)  # expect: SH110 low


class Pool:
    def __init__(self, n: int):
        self._free = torch.arange(n, device="cuda")

    def _absorb(self, holes: List[int]):
        return len(holes), holes[1:]

    def _survivor(self, start: int, *, holes_cpu: Optional[List[int]] = None):
        if holes_cpu is None:
            holes_cpu = self._free.tolist()  # expect: SH201 high
        return [h for h in holes_cpu if h > start]

    def flush(self, holes: List[int]):
        count, holes_cpu = self._absorb(holes)
        kept = self._survivor(0, holes_cpu=holes_cpu)
        again = self._survivor(count)  # expect: SH201 medium
        maybe = self._survivor(count, holes_cpu=holes if count else None)  # expect: SH201 medium
        return kept, again, maybe
