# ruff: noqa
"""Elements of containers: literals, appends, item writes, dict values, annotations."""
from typing import Dict, List, Tuple

import torch


def literals(n: int):
    state = {"finished": torch.zeros(n, dtype=torch.bool, device="cuda"), "count": 3}
    alive = ~state["finished"]
    ids = torch.arange(n, device="cuda")
    kept = ids[alive]  # expect: SH101 high
    pair = (torch.ones(n, device="cuda"), n)
    first = pair[0].item()  # expect: SH109 high
    second = pair[1] + 1
    return kept, first, second


def appended(lens: torch.Tensor, n: int):
    scores = []
    for i in range(n):
        scores.append(lens[i])
    grouped = {}
    grouped.setdefault(0, []).append(lens[0])
    table = {}
    table[n] = lens.sum()
    host = []
    host.append(3)
    return (torch.tensor(scores),  # expect: SH109 medium
            table[n].item(),  # expect: SH109 medium
            torch.tensor(host))


def annotated(lengths: List[torch.Tensor], sizes: List[int], named: Dict[str, torch.Tensor],
              weights: List[Tuple[str, torch.Tensor]], ids):
    a = lengths[0].item()  # expect: SH109 medium
    b = sum(sizes)
    c = named["k"].tolist()  # expect: SH201 medium
    for name, weight in weights:
        if name.startswith("lm_head"):
            continue
        weight.cpu()  # expect: SH201 medium
    d = ids.get("x").item()  # expect: SH109 medium
    return a, b, c, d


class Pool:
    def __init__(self, n: int):
        self.free_pages = torch.arange(n, device="cuda")
        self.lengths = [torch.zeros(1, device="cuda")]
        self.host_counts = {}
        self.register_buffer("steps", torch.tensor(0))

    def record(self, k, v: torch.Tensor):
        self.host_counts[k] = v.cpu()  # expect: SH201 medium

    def read(self, i, limit: int):
        first = self.lengths[i].item()  # expect: SH109 high
        host = self.host_counts[i].tolist()
        if self.steps > limit:  # expect: SH110 medium
            pass
        return first, host
