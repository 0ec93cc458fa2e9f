"""Per sync: the device work it waited for, the host stall, and the device idle it caused.

A confirmed sync blocks its thread from the start of its first blocking call (``called``) to the end of its last
(``returned``), waiting on one stream, one event's stream or a whole device (``synchunt.impact.plan``). The work
it waited for is every activity on those streams still in flight when it was called (ended after ``called``,
started before ``returned``, launched before the call or by the call itself). The idle it caused, on each
device: from the end of that work until the device's next activity, charged only when the device had nothing
else running at that end and the next activity was launched by the blocked thread after the sync returned (idle
that another thread's launch ends is not this sync's doing).

Searches run once per stream or device over every sync at a time (``numpy.searchsorted``) and the in-flight
filter over all syncs' candidates at once, so the cost grows with the number of syncs times log(activities).
"""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

import numpy as np

from synchunt.detect import Detection
from synchunt.impact.index import ActivityIndex
from synchunt.impact.model import Activity, DeviceIdle, SyncImpact
from synchunt.impact.plan import Plans, plan
from synchunt.trace import Trace

MAX_WAITED_ON = 32  # activities kept per sync (the last ones: what it waited for longest); all are counted

CHARGED = "the blocked thread launched the next activity after the sync returned"
DEVICE_BUSY = "the device stayed busy with other work"
NO_NEXT = "no later device activity in the trace"
OTHER_THREAD = "the next activity was launched by another thread"
EARLY_LAUNCH = "the next activity was launched before the sync returned"
UNKNOWN_LAUNCH = "the trace does not say who launched the next activity"


def measure(trace: Trace, detection: Detection) -> tuple[SyncImpact, ...]:
    """One :class:`SyncImpact` per ``detection.records`` entry, in the same order.

    Latent syncs (and confirmed ones in a trace without device activities) get only ``host_stall_us``.
    """
    records = detection.records
    if not records:
        return ()
    if not any(r.confirmed and r.runtime_events for r in records):  # nothing waited on a device: no index needed
        return tuple(SyncImpact(host_stall_us=float(r.stall_us)) for r in records)
    index = ActivityIndex.of(trace)
    names = _Names(trace)
    plans = plan(trace, records, index, names.names, names.name_codes)
    waited = _waited(plans, index)
    idle = _idle(_device_ends(waited, index), plans, index, names)
    count = np.bincount(waited.plan_of, minlength=len(plans.syncs))
    busy = np.bincount(waited.plan_of, weights=index.end[waited.positions] - index.start[waited.positions],
                       minlength=len(plans.syncs))
    bounds = np.concatenate([[0], np.cumsum(count)]).tolist()
    kept = [range(max(bounds[j], bounds[j + 1] - MAX_WAITED_ON), bounds[j + 1]) for j in range(len(plans.syncs))]
    flat = [k for span in kept for k in span]
    activities = iter(_activities(waited.positions[flat], [plans.own[j] for j, span in enumerate(kept)
                                                         for _ in span], index, names))
    impacts = [SyncImpact(host_stall_us=float(r.stall_us)) for r in records]
    for j, i in enumerate(plans.syncs.tolist()):
        gaps = tuple(gap for _, gap in sorted(idle.get(j, ()), key=lambda pair: pair[0]))
        impacts[i] = SyncImpact(
            host_stall_us=float(records[i].stall_us), device_idle_us=float(sum(g.idle_us for g in gaps)),
            waited_on=tuple(next(activities) for _ in kept[j]),
            waited_on_count=int(count[j]), waited_on_us=float(busy[j]),
            idle=gaps, scope=plans.scopes[j].value, called_us=float(plans.called[j]),
            returned_us=float(plans.returned[j]))
    return tuple(impacts)


class _Names:
    """Event names and categories by row, gathered from the categorical codes."""

    def __init__(self, trace: Trace) -> None:
        self.name_codes, self.names = trace.name_codes, trace.names
        self._cat_codes, self._cats = trace.category_codes, trace.categories

    def names_of(self, rows: np.ndarray) -> list[str]:
        return [str(n) for n in self.names[self.name_codes[rows]].tolist()]

    def categories_of(self, rows: np.ndarray) -> list[str]:
        return [str(c) for c in self._cats[self._cat_codes[rows]].tolist()]


class _Waited(NamedTuple):
    """The activities each plan waited for: ``positions`` grouped by plan (``plan_of``, ascending), by start."""

    positions: np.ndarray
    plan_of: np.ndarray


def _waited(plans: Plans, index: ActivityIndex) -> _Waited:
    """The activities in flight on each plan's lanes while it waited."""
    by_lane: dict[int, list[int]] = defaultdict(list)
    for j, lanes in enumerate(plans.lanes):
        for lane in lanes:
            by_lane[lane].append(j)
    none = _Waited(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    lows, highs, owners = [], [], []
    for lane, members in by_lane.items():
        lo_lane, hi_lane = index.lane_span[lane]
        chosen = np.asarray(members, dtype=np.int64)
        lows.append(lo_lane + np.searchsorted(index.end_cummax[lo_lane:hi_lane], plans.called[chosen], side="right"))
        highs.append(lo_lane + np.searchsorted(index.start[lo_lane:hi_lane], plans.returned[chosen], side="left"))
        owners.append(chosen)
    if not owners:
        return none
    lo, hi, owner = np.concatenate(lows), np.concatenate(highs), np.concatenate(owners)
    lengths = np.maximum(hi - lo, 0)
    total = int(lengths.sum())
    if total == 0:
        return none
    # every candidate (plan, position) at once: the ranges [lo, hi) laid end to end
    positions = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths) + np.arange(total)
    plan_of = np.repeat(owner, lengths)
    launch = index.launch_ts[positions]
    keep = (index.end[positions] > plans.called[plan_of]) & (
        np.isnan(launch) | (launch <= plans.called[plan_of]) | plans.issued_by(index.correlation[positions], plan_of))
    positions, plan_of = positions[keep], plan_of[keep]
    order = np.lexsort((index.start[positions], plan_of))
    return _Waited(positions[order], plan_of[order])


def _device_ends(waited: _Waited, index: ActivityIndex) -> dict[tuple[int, int], float]:
    """(plan, device) → when the work it waited for ended on that device."""
    if not len(waited.positions):
        return {}
    devices = index.device[waited.positions]
    order = np.lexsort((devices, waited.plan_of))
    plan_of, devices, ends = waited.plan_of[order], devices[order], index.end[waited.positions][order]
    firsts = np.flatnonzero(np.concatenate([[True], (np.diff(plan_of) != 0) | (np.diff(devices) != 0)]))
    latest = np.maximum.reduceat(ends, firsts)
    return {(j, d): e for j, d, e in zip(plan_of[firsts].tolist(), devices[firsts].tolist(), latest.tolist(),
                                         strict=True)}


def _idle(ends: dict[tuple[int, int], float], plans: Plans, index: ActivityIndex,
          names: _Names) -> dict[int, list[tuple[int, DeviceIdle]]]:
    """Plan → (device, the device's gap after the waited-on work ended there, charged or not)."""
    by_device: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for (j, device), end in ends.items():
        by_device[device].append((j, end))
    found: list[tuple[int, int, _Gap]] = []
    for device, queries in by_device.items():
        busy = index.busy[device]
        at = np.array([end for _, end in queries])
        intervals = np.searchsorted(busy[0], at, side="right") - 1
        for (j, end), interval in zip(queries, intervals.tolist(), strict=True):
            found.append((j, device, _gap(end, interval, busy, plans, j, index)))
    nexts = [(gap.position, plans.own[j]) for j, _, gap in found if gap.position >= 0]
    activities = iter(_activities(np.array([p for p, _ in nexts], dtype=np.int64), [o for _, o in nexts], index,
                                  names))
    out: dict[int, list[tuple[int, DeviceIdle]]] = defaultdict(list)
    for j, device, gap in found:
        out[j].append((device, DeviceIdle(
            device=index.devices[device], start_us=gap.start, end_us=gap.end, idle_us=gap.idle,
            charged=gap.reason == CHARGED, reason=gap.reason,
            next_activity=next(activities) if gap.position >= 0 else None)))
    return out


class _Gap(NamedTuple):
    start: float
    end: float | None
    idle: float
    reason: str
    position: int  # the next activity's position, -1 when there is none to name


def _gap(end: float, interval: int, busy: tuple[np.ndarray, np.ndarray, np.ndarray], plans: Plans, j: int,
         index: ActivityIndex) -> _Gap:
    busy_start, busy_end, first = busy
    if interval >= 0 and busy_end[interval] > end:
        return _Gap(end, None, 0.0, DEVICE_BUSY, -1)
    if interval + 1 >= len(busy_start):
        return _Gap(end, None, 0.0, NO_NEXT, -1)
    position = int(first[interval + 1])
    next_start = float(busy_start[interval + 1])
    launch_lane, launch_ts = int(index.launch_lane[position]), float(index.launch_ts[position])
    if launch_lane < 0:
        reason = UNKNOWN_LAUNCH
    elif launch_lane != int(plans.host_lane[j]):
        reason = OTHER_THREAD
    elif launch_ts < float(plans.returned[j]):
        reason = EARLY_LAUNCH
    else:
        reason = CHARGED
    return _Gap(end, next_start, next_start - end if reason == CHARGED else 0.0, reason, position)


def _activities(positions: np.ndarray, owns: list[frozenset[int]], index: ActivityIndex,
                names: _Names) -> list[Activity]:
    """The activities at these positions, gathered column by column (``owns``: each one's sync's own calls)."""
    rows = index.rows[positions]
    correlation = index.correlation[positions].tolist()
    columns = zip(rows.tolist(), names.names_of(rows), names.categories_of(rows), index.device[positions].tolist(),
                  index.stream[positions].tolist(), index.start[positions].tolist(),
                  (index.end[positions] - index.start[positions]).tolist(), correlation, owns, strict=True)
    return [Activity(event=row, name=name, category=category, device=index.devices[device], stream=stream,
                     start_us=start, dur_us=dur, correlation=corr if corr >= 0 else None,
                     issued_by_sync=corr >= 0 and corr in own)
            for row, name, category, device, stream, start, dur, corr, own in columns]
