"""Per sync: the device work it waited for, the host stall, and the device idle it caused.

A confirmed sync blocks its thread from the start of its first blocking call (``called``) to the end of its last
(``returned``). It waited on one stream (a stream sync or a blocking copy: the copy's stream, else the stream of
the thread's last launch), on one event's stream, or on a whole device (a device synchronize, a free). The work
it waited for is every activity on those streams still in flight when it was called (ended after ``called``,
started before ``returned``, launched before the call or by the call itself). The idle it caused, on each
device: from the end of that work until the device's next activity, charged only when the device had nothing
else running at that end and the next activity was launched by the blocked thread after the sync returned (idle
that another thread's launch ends is not this sync's doing).

Searches run once per stream or device over every sync at a time (``numpy.searchsorted``), so the cost grows
with the number of syncs times log(activities), not with their product.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from synchunt.detect import DetectedSync, Detection
from synchunt.impact.index import ActivityIndex
from synchunt.impact.model import Activity, DeviceIdle, SyncImpact
from synchunt.impact.vocab import SYNC_KIND_SCOPES, Scope, call_scope
from synchunt.trace import Trace, vocab

MAX_WAITED_ON = 32  # activities kept per sync (the last ones: what it waited for longest); all are counted

CHARGED = "the blocked thread launched the next activity after the sync returned"
DEVICE_BUSY = "the device stayed busy with other work"
NO_NEXT = "no later device activity in the trace"
OTHER_THREAD = "the next activity was launched by another thread"
EARLY_LAUNCH = "the next activity was launched before the sync returned"
UNKNOWN_LAUNCH = "the trace does not say who launched the next activity"


@dataclass
class _Plan:
    """One confirmed sync's window and the stream lanes it waited on."""

    called: float
    returned: float
    host_lane: int
    scope: Scope
    lanes: list[int]
    own: np.ndarray  # correlation ids of its blocking calls


def measure(trace: Trace, detection: Detection) -> tuple[SyncImpact, ...]:
    """One :class:`SyncImpact` per ``detection.records`` entry, in the same order.

    Latent syncs (and confirmed ones in a trace without device activities) get only ``host_stall_us``.
    """
    records = detection.records
    if not records:
        return ()
    index = ActivityIndex.of(trace)
    events = _Columns(trace)
    sync_records = _SyncRecords(trace, index)
    plans = [_plan(record, events, index, sync_records) if record.confirmed and record.runtime_events and len(index)
             else None for record in records]
    waited = _waited(plans, index)
    ends = {(i, device): float(index.end[positions[index.device[positions] == device]].max())
            for i, positions in waited.items() for device in np.unique(index.device[positions]).tolist()}
    idle = _idle(ends, plans, index, events)
    impacts = []
    for i, record in enumerate(records):
        plan = plans[i]
        if plan is None:
            impacts.append(SyncImpact(host_stall_us=float(record.stall_us)))
            continue
        positions = waited.get(i, np.zeros(0, dtype=np.int64))
        gaps = tuple(idle[key] for key in sorted(k for k in idle if k[0] == i))
        impacts.append(SyncImpact(
            host_stall_us=float(record.stall_us),
            device_idle_us=float(sum(g.idle_us for g in gaps)),
            waited_on=tuple(_activity(int(p), index, events, plan.own) for p in positions[-MAX_WAITED_ON:]),
            waited_on_count=len(positions),
            waited_on_us=float((index.end[positions] - index.start[positions]).sum()),
            idle=gaps, scope=plan.scope.value, called_us=plan.called, returned_us=plan.returned))
    return tuple(impacts)


class _Columns:
    """The event columns the measures read; names decoded only for the rows asked for."""

    def __init__(self, trace: Trace) -> None:
        events = trace.events
        self.ts = events["ts"].to_numpy()
        self.end = events["end"].to_numpy()
        self.correlation = events["correlation"].to_numpy()
        self._name = events["name"]
        self._cat = events["cat"]

    def name(self, row: int) -> str:
        return str(self._name.iat[row])

    def category(self, row: int) -> str:
        return str(self._cat.iat[row])


class _SyncRecords:
    """Kineto's ``cuda_sync`` records by correlation id: (kind, device code, stream lane or None)."""

    def __init__(self, trace: Trace, index: ActivityIndex) -> None:
        events = trace.events
        rows = np.flatnonzero((events["cat"] == vocab.CUDA_SYNC).to_numpy())
        self.by_correlation: dict[int, list[tuple[str, int | None, int | None]]] = defaultdict(list)
        kinds = events["sync_kind"].to_numpy()
        names = events["name"].to_numpy()
        for row in rows.tolist():
            corr = int(events["correlation"].iat[row])
            if corr < 0:
                continue
            device = index.device_code(events["pid"].iat[row])
            stream = int(events["stream"].iat[row])
            lane = index.lane_of(device, stream) if device is not None and stream >= 0 else None
            self.by_correlation[corr].append((str(kinds[row] or names[row]), device, lane))


def _plan(record: DetectedSync, events: _Columns, index: ActivityIndex, syncs: _SyncRecords) -> _Plan:
    calls = np.asarray(record.runtime_events, dtype=np.int64)
    called, returned = float(events.ts[calls].min()), float(events.end[calls].max())
    own = events.correlation[calls]
    own = own[own >= 0]
    host_lane = int(index.host_lane_of_row[calls[0]])
    records = [entry for corr in own.tolist() for entry in syncs.by_correlation.get(corr, ())]
    scopes = [SYNC_KIND_SCOPES[kind] for kind, _, _ in records if kind in SYNC_KIND_SCOPES]
    scopes += [call_scope(events.name(int(c))) for c in calls.tolist()]
    scope = Scope.DEVICE if Scope.DEVICE in scopes else Scope.EVENT if Scope.EVENT in scopes else Scope.STREAM
    last = _last_launch(index, host_lane, called)
    if scope is Scope.DEVICE:
        devices = {device for kind, device, _ in records if SYNC_KIND_SCOPES.get(kind) is Scope.DEVICE
                   and device is not None}
        if not devices and last is not None:
            devices = {int(index.device[last])}  # the thread's current device
        lanes = [lane for device in sorted(devices or range(len(index.devices)))
                 for lane in index.lanes_of_device(device)]
    else:
        lanes = sorted({lane for _, _, lane in records if lane is not None}
                       | set(index.lane[np.isin(index.correlation, own)].tolist()))
        if not lanes and last is not None:
            lanes = [int(index.lane[last])]
    return _Plan(called=called, returned=returned, host_lane=host_lane, scope=scope, lanes=lanes, own=own)


def _last_launch(index: ActivityIndex, host_lane: int, before: float) -> int | None:
    """Position of the last activity the thread launched before ``before``."""
    entry = index.by_launch.get(host_lane)
    if entry is None:
        return None
    times, positions = entry
    k = int(np.searchsorted(times, before, side="left")) - 1
    return int(positions[k]) if k >= 0 else None


def _waited(plans: list[_Plan | None], index: ActivityIndex) -> dict[int, np.ndarray]:
    """Sync number → positions (sorted by start) of the activities in flight on its lanes while it waited."""
    by_lane: dict[int, list[int]] = defaultdict(list)
    for i, plan in enumerate(plans):
        for lane in plan.lanes if plan is not None else ():
            by_lane[lane].append(i)
    found: dict[int, list[np.ndarray]] = defaultdict(list)
    for lane, syncs in by_lane.items():
        lo_lane, hi_lane = index.lane_span[lane]
        called = np.array([plans[i].called for i in syncs])  # type: ignore[union-attr]
        returned = np.array([plans[i].returned for i in syncs])  # type: ignore[union-attr]
        lo = lo_lane + np.searchsorted(index.end_cummax[lo_lane:hi_lane], called, side="right")
        hi = lo_lane + np.searchsorted(index.start[lo_lane:hi_lane], returned, side="left")
        for i, a, b in zip(syncs, lo.tolist(), hi.tolist(), strict=True):
            if b > a:
                found[i].append(np.arange(a, b))
    out = {}
    for i, ranges in found.items():
        plan = plans[i]
        positions = np.concatenate(ranges)
        launch = index.launch_ts[positions]
        keep = (index.end[positions] > plan.called) & (  # type: ignore[union-attr]
            np.isnan(launch) | (launch <= plan.called) | np.isin(index.correlation[positions], plan.own))  # type: ignore[union-attr]
        positions = positions[keep]
        if len(positions):
            out[i] = positions[np.argsort(index.start[positions], kind="stable")]
    return out


def _idle(ends: dict[tuple[int, int], float], plans: list[_Plan | None], index: ActivityIndex,
          events: _Columns) -> dict[tuple[int, int], DeviceIdle]:
    """(sync, device) → the device's gap after the waited-on work ended there, charged or not."""
    by_device: dict[int, list[tuple[int, float]]] = defaultdict(list)
    for (i, device), end in ends.items():
        by_device[device].append((i, end))
    out: dict[tuple[int, int], DeviceIdle] = {}
    for device, queries in by_device.items():
        busy_start, busy_end, first = index.busy[device]
        at = np.array([end for _, end in queries])
        k = np.searchsorted(busy_start, at, side="right") - 1
        for (i, end), interval in zip(queries, k.tolist(), strict=True):
            out[(i, device)] = _gap(end, interval, (busy_start, busy_end, first), plans[i], index, events,  # type: ignore[arg-type]
                                    device)
    return out


def _gap(end: float, interval: int, busy: tuple[np.ndarray, np.ndarray, np.ndarray], plan: _Plan,
         index: ActivityIndex, events: _Columns, device: int) -> DeviceIdle:
    busy_start, busy_end, first = busy
    device_id = index.devices[device]
    if interval >= 0 and busy_end[interval] > end:
        return DeviceIdle(device=device_id, start_us=end, end_us=None, idle_us=0.0, charged=False,
                          reason=DEVICE_BUSY)
    if interval + 1 >= len(busy_start):
        return DeviceIdle(device=device_id, start_us=end, end_us=None, idle_us=0.0, charged=False, reason=NO_NEXT)
    position = int(first[interval + 1])
    next_start = float(busy_start[interval + 1])
    launch_lane, launch_ts = int(index.launch_lane[position]), float(index.launch_ts[position])
    if launch_lane < 0:
        reason = UNKNOWN_LAUNCH
    elif launch_lane != plan.host_lane:
        reason = OTHER_THREAD
    elif launch_ts < plan.returned:
        reason = EARLY_LAUNCH
    else:
        reason = CHARGED
    charged = reason == CHARGED
    return DeviceIdle(device=device_id, start_us=end, end_us=next_start,
                      idle_us=next_start - end if charged else 0.0, charged=charged, reason=reason,
                      next_activity=_activity(position, index, events, plan.own))


def _activity(position: int, index: ActivityIndex, events: _Columns, own: np.ndarray) -> Activity:
    row = int(index.rows[position])
    corr = int(index.correlation[position])
    return Activity(event=row, name=events.name(row), category=events.category(row),
                    device=index.devices[int(index.device[position])], stream=int(index.stream[position]),
                    start_us=float(index.start[position]),
                    dur_us=float(index.end[position] - index.start[position]),
                    correlation=corr if corr >= 0 else None, issued_by_sync=bool(corr >= 0 and corr in own))
