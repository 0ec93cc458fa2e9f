"""Candidates before they become records: reads charged to one call of an op are one sync of the user's code."""

from __future__ import annotations

import msgspec


class Candidate(msgspec.Struct):
    """A sync found, before reads charged to one op call are merged (mutable: the merge adds up into the first).
    A Struct, not a dataclass: traces with thousands of syncs make one per sync (5x faster to create)."""

    event: int
    rule: str
    confirmed: bool
    op: str
    runtime: list[str]
    runtime_events: list[int]
    ts_us: float
    stall_us: float
    stall_source: str
    direction: str | None
    anchor: int = -1  # the enclosing op call this sync is charged to (-1: none)
    merged: list[int] = msgspec.field(default_factory=list)


def merge_by_anchor(candidates: list[Candidate]) -> list[Candidate]:
    """One sync per call of the op a read is charged to: ``repeat_interleave`` reads its repeats' sum and checks
    them (two host reads) but is one sync of the user's code; the stall adds up."""
    merged: list[Candidate] = []
    by_anchor: dict[int, Candidate] = {}
    for candidate in sorted(candidates, key=lambda c: c.ts_us):
        first = by_anchor.get(candidate.anchor) if candidate.anchor >= 0 else None
        if first is None:
            merged.append(candidate)
            if candidate.anchor >= 0:
                by_anchor[candidate.anchor] = candidate
            continue
        first.stall_us += candidate.stall_us
        first.runtime_events = first.runtime_events + candidate.runtime_events
        first.runtime = list(dict.fromkeys(first.runtime + candidate.runtime))
        first.merged.append(candidate.event)
    return merged
