"""Across ranks: how much later than its peers a rank entered its next collective after each sync.

A collective kernel (NCCL/RCCL) starts on each rank when that rank launches it and then waits inside for the
others, so a rank that a sync held back starts it late and every peer already inside waits that long: the
stall propagated to every rank. Collectives are matched across ranks by their order on each rank (the k-th
collective kernel of every rank is one collective); a position whose kernel names differ between ranks is not
matched. Ranks' clocks are compared as they are: traces from one host share a clock, traces from several hosts
may be skewed by their clock offsets.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synchunt.detect import Detection
from synchunt.impact.model import CollectiveDelay
from synchunt.impact.vocab import is_collective_kernel
from synchunt.trace import Trace, vocab
from synchunt.trace.table import compact


def collective_delays(traces: Sequence[Trace],
                      detections: Sequence[Detection]) -> tuple[tuple[CollectiveDelay | None, ...], ...]:
    """For each trace (one rank) and each of its ``detection.records``: the delay of that rank's first collective
    that started after the sync returned, or ``None`` (latent sync, no later collective, unmatched position)."""
    if len(traces) != len(detections):
        raise ValueError(f"{len(traces)} traces but {len(detections)} detections")
    ranks = [trace.rank if trace.rank is not None else number for number, trace in enumerate(traces)]
    collectives = [collective_kernels(trace) for trace in traces]
    earliest = earliest_collectives(collectives, ranks)
    out = []
    for trace, detection, rank, (starts, names) in zip(traces, detections, ranks, collectives, strict=True):
        ends = trace.events["end"].to_numpy()
        delays: list[CollectiveDelay | None] = []
        for record in detection.records:
            if not record.confirmed or not record.runtime_events or not len(starts):
                delays.append(None)
                continue
            returned = float(ends[list(record.runtime_events)].max())
            ordinal = int(np.searchsorted(starts, returned, side="left"))
            match = earliest.get(ordinal) if ordinal < len(starts) else None
            if match is None or match[0] != names[ordinal]:
                delays.append(None)
                continue
            _, first_start, first_rank, count = match
            delays.append(CollectiveDelay(rank=rank, collective=names[ordinal], ordinal=ordinal,
                                          start_us=float(starts[ordinal]), earliest_start_us=first_start,
                                          earliest_rank=first_rank, delay_us=float(starts[ordinal]) - first_start,
                                          ranks=count))
        out.append(tuple(delays))
    return tuple(out)


def collective_kernels(trace: Trace) -> tuple[np.ndarray, list[str]]:
    """Start times (sorted) and names of the rank's collective kernels (each distinct name tested once)."""
    kernels = np.flatnonzero(trace.in_categories((vocab.KERNEL,)))
    codes = trace.name_codes[kernels]
    collective = np.zeros(len(trace.names) + 1, dtype=bool)  # per name code; the last entry: code -1, no name
    for code in compact(codes[codes >= 0])[0].tolist():
        collective[code] = is_collective_kernel(str(trace.names[code]))
    rows = kernels[collective[codes]]
    ts = trace.column("ts")
    rows = rows[np.argsort(ts[rows], kind="stable")]
    return ts[rows].astype(np.float64), [str(trace.names[code]) for code in trace.name_codes[rows]]


def earliest_collectives(collectives: list[tuple[np.ndarray, list[str]]],
                         ranks: list[int]) -> dict[int, tuple[str, float, int, int]]:
    """Ordinal → (kernel name, earliest start, the rank that started first, ranks that have it), for the
    ordinals whose kernel name agrees on every rank that has that ordinal."""
    out: dict[int, tuple[str, float, int, int]] = {}
    longest = max((len(starts) for starts, _ in collectives), default=0)
    for ordinal in range(longest):
        entries = [(names[ordinal], float(starts[ordinal]), rank) for (starts, names), rank
                   in zip(collectives, ranks, strict=True) if ordinal < len(starts)]
        if len({name for name, _, _ in entries}) != 1 or len(entries) < 2:
            continue
        name, start, rank = min(entries, key=lambda e: (e[1], e[2]))
        out[ordinal] = (name, start, rank, len(entries))
    return out
