"""The timeline's device lanes: one per GPU stream, with the work each sync waited on and the idle gap it caused.

Activities outside the stretch of the host lanes are left out (but for the work a sync waited for and the
activity that ended its idle gap); beyond ``budget`` the shortest are dropped, never
the waited-on work or the activity that ended a gap. At most ``MAX_STREAMS`` lanes: the streams the syncs waited
on first, then the busiest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synchunt.attribute import Sync
from synchunt.trace import Trace, vocab

MAX_STREAMS = 12
_KINDS = {vocab.KERNEL: "kernel", vocab.MEMCPY: "memcpy", vocab.MEMSET: "memset"}
GAP_COLUMNS = ["lane", "start_ms", "dur_ms", "idle_us", "site", "rule", "next"]


@dataclass(frozen=True)
class DeviceLanes:
    """``bars``: lane, start_ms, dur_ms, name, kind ("kernel", "memcpy", "memset", "waited-on"), keep.
    ``gaps``: the idle each sync was charged with, on the lane of the work it waited for. ``streams`` counts
    every stream with activity in the stretch shown (``lanes`` may hold fewer)."""

    lanes: list[str]
    bars: pd.DataFrame
    gaps: pd.DataFrame
    streams: int
    total: int

    def lane_of(self, device: Any, stream: Any) -> str | None:
        name = lane_name(device, stream)
        return name if name in self.lanes else None


def lane_name(device: Any, stream: Any) -> str:
    return f"GPU {device} · stream {stream}"


def device_lanes(trace: Trace, records: Sequence[Sync], origin: float, until: float | None) -> DeviceLanes:
    """The device lanes between ``origin`` and ``until`` (µs; ``None``: to the end), times in ms from ``origin``."""
    events = trace.events
    cats = events["cat"].astype(str).to_numpy(dtype=object)
    rows = np.flatnonzero(np.isin(cats, list(_KINDS)))
    waited = {a.event for r in records if r.impact is not None for a in r.impact.waited_on}
    ends_gap = {g.next_activity.event for r in records if r.impact is not None for g in r.impact.idle
                if g.next_activity is not None}
    start, end = events["ts"].to_numpy()[rows], events["end"].to_numpy()[rows]
    inside = end >= origin if until is None else (end >= origin) & (start <= until)
    # The work a sync waited for and the activity that ended its gap are shown even past the host lanes' end.
    rows = rows[inside | np.isin(rows, list(waited | ends_gap))]
    frame = pd.DataFrame({
        "lane": [lane_name(d, s) for d, s in zip(events["pid"].to_numpy()[rows], events["stream"].to_numpy()[rows],
                                                   strict=True)],
        "start_ms": (events["ts"].to_numpy()[rows] - origin) / 1e3,
        "dur_ms": events["dur"].to_numpy()[rows] / 1e3,
        "name": events["name"].astype(str).to_numpy(dtype=object)[rows],
        "kind": [("waited-on" if row in waited else _KINDS[cats[row]]) for row in rows.tolist()],
        "keep": [row in waited or row in ends_gap for row in rows.tolist()],
    })
    busy = frame.groupby("lane", sort=False).agg(keep=("keep", "any"), busy=("dur_ms", "sum"))
    chosen = busy.sort_values(["keep", "busy"], ascending=False, kind="stable").index[:MAX_STREAMS]
    lanes = sorted(chosen, key=_lane_order(frame))
    frame = frame[frame["lane"].isin(lanes)].reset_index(drop=True)
    return DeviceLanes(lanes=lanes, bars=frame, gaps=_gaps(records, lanes, origin), streams=len(busy),
                       total=len(frame))


def _lane_order(frame: pd.DataFrame):  # type: ignore[no-untyped-def]
    """GPU by GPU, streams in number order (device and stream ids may be ints or strings)."""
    def key(lane: str) -> tuple[Any, ...]:
        device, _, stream = lane.removeprefix("GPU ").partition(" · stream ")
        return tuple((0, int(part), "") if part.lstrip("-").isdigit() else (1, 0, part) for part in (device, stream))

    return key


def _gaps(records: Sequence[Sync], lanes: list[str], origin: float) -> pd.DataFrame:
    """The charged gaps, each on the lane of the last work its sync waited for on that device."""
    rows = []
    for record in records:
        impact = record.impact
        if impact is None:
            continue
        for gap in impact.idle:
            if not gap.charged or gap.end_us is None or gap.idle_us <= 0:
                continue
            work = [a for a in impact.waited_on if a.device == gap.device] or (
                [gap.next_activity] if gap.next_activity is not None else [])
            lane = lane_name(work[-1].device, work[-1].stream) if work else None
            if lane not in lanes:
                continue
            rows.append({"lane": lane, "start_ms": (gap.start_us - origin) / 1e3,
                         "dur_ms": (gap.end_us - gap.start_us) / 1e3, "idle_us": gap.idle_us, "site": record.site,
                         "rule": record.rule, "next": gap.next_activity.name if gap.next_activity else ""})
    return pd.DataFrame(rows, columns=GAP_COLUMNS)
