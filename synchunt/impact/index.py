"""Device activities indexed once per trace: per stream and per device, sorted, for binary searches.

Every array is aligned to ``rows`` (the activities' rows in ``trace.events``), sorted by (stream lane, start).
A stream lane is one (device, stream) pair; a host lane one (pid, tid) pair. Launch times come from the runtime
call with the activity's correlation id (NaN, lane -1 when the trace does not have it).
"""

from __future__ import annotations

import itertools
from functools import cached_property
from typing import Any

import msgspec
import numpy as np

from synchunt.trace import Trace, vocab
from synchunt.trace.table import compact


class ActivityIndex(msgspec.Struct, frozen=True, eq=False, dict=True):
    rows: np.ndarray
    start: np.ndarray
    end: np.ndarray
    lane: np.ndarray  # stream lane code
    device: np.ndarray  # device code
    stream: np.ndarray
    correlation: np.ndarray
    launch_ts: np.ndarray
    launch_lane: np.ndarray  # host lane code of the launching thread
    lane_span: np.ndarray  # lane code → [lo, hi) in the sorted arrays
    lane_device: np.ndarray  # lane code → device code
    end_cummax: np.ndarray  # running max of `end` within each lane (ends are sorted on a serial stream)
    devices: tuple[Any, ...]  # device code → the trace's device id (the activities' pid)
    busy: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...]  # per device: merged busy (start, end, first pos)
    host_lane_of_row: np.ndarray  # every trace row → its host lane code (-1 for device rows)
    by_launch: dict[int, tuple[np.ndarray, np.ndarray]]  # host lane → (launch times sorted, positions)

    @classmethod
    def of(cls, trace: Trace) -> ActivityIndex:
        host_lane = _host_lanes(trace)
        device_rows = np.flatnonzero(trace.in_categories(vocab.DEVICE_ACTIVITY_CATEGORIES))
        device_code, devices = _sorted_codes(trace.column("pid")[device_rows])
        stream = trace.column("stream")[device_rows].astype(np.int64)
        start_raw = trace.column("ts")[device_rows]
        order = np.lexsort((start_raw, stream, device_code))
        rows = device_rows[order]
        device_code = device_code[order].astype(np.int64)
        stream = stream[order]
        start = start_raw[order]
        end = trace.column("end")[rows]
        correlation = trace.column("correlation")[rows].astype(np.int64)
        new_lane = np.ones(len(rows), dtype=bool)
        new_lane[1:] = (device_code[1:] != device_code[:-1]) | (stream[1:] != stream[:-1])
        lane = np.cumsum(new_lane) - 1
        firsts = np.flatnonzero(new_lane)
        lane_span = np.stack([firsts, np.append(firsts[1:], len(rows))], axis=1) if len(rows) else \
            np.zeros((0, 2), dtype=np.int64)
        end_cummax = _grouped_cummax(end, firsts)
        launch_ts, launch_lane = _launches(trace, host_lane, correlation)
        return cls(rows=rows, start=start, end=end, lane=lane, device=device_code, stream=stream,
                   correlation=correlation, launch_ts=launch_ts, launch_lane=launch_lane, lane_span=lane_span,
                   lane_device=device_code[firsts] if len(rows) else np.zeros(0, dtype=np.int64),
                   end_cummax=end_cummax, devices=tuple(_plain(d) for d in devices),
                   busy=tuple(_busy(start, end, np.flatnonzero(device_code == d)) for d in range(len(devices))),
                   host_lane_of_row=host_lane, by_launch=_by_launch(launch_ts, launch_lane))

    def __len__(self) -> int:
        return len(self.rows)

    @cached_property
    def by_correlation(self) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(self.correlation, kind="stable")
        return order, self.correlation[order]

    def lanes_of_device(self, device: int) -> list[int]:
        return np.flatnonzero(self.lane_device == device).tolist()

    def lane_of(self, device: int, stream: int) -> int | None:
        matches = np.flatnonzero((self.lane_device == device) & (self.stream[self.lane_span[:, 0]] == stream))
        return int(matches[0]) if len(matches) else None

    def device_code(self, device_id: Any) -> int | None:
        try:
            return self.devices.index(_plain(device_id))
        except ValueError:
            return None


def _sorted_codes(values: np.ndarray) -> tuple[np.ndarray, list[Any]]:
    """A code per distinct value, in sorted order of the values (numbers first, then strings, when mixed)."""
    if values.dtype != object:
        distinct, codes = np.unique(values, return_inverse=True)
        return codes.reshape(-1).astype(np.int64), distinct.tolist()
    items = values.tolist()
    present = set(items)
    distinct = sorted(v for v in present if not isinstance(v, str)) + sorted(v for v in present if isinstance(v, str))
    index = {v: i for i, v in enumerate(distinct)}
    return np.fromiter(map(index.__getitem__, items), np.int64, len(items)), distinct


def _host_lanes(trace: Trace) -> np.ndarray:
    """(pid, tid) lane code of every host event (numbered by first appearance), -1 for the rest."""
    host = np.flatnonzero(trace.in_categories(vocab.HOST_CATEGORIES))
    codes = np.full(len(trace), -1, dtype=np.int64)
    if not len(host):
        return codes
    lanes = trace.thread_lanes[0][host]
    first = np.full(int(lanes.max()) + 1, len(lanes), dtype=np.int64)
    np.minimum.at(first, lanes, np.arange(len(lanes)))  # where each lane first appears
    seen = np.flatnonzero(first < len(lanes))
    rank = np.full(len(first), -1, dtype=np.int64)
    rank[seen[np.argsort(first[seen], kind="stable")]] = np.arange(len(seen))
    codes[host] = rank[lanes]
    return codes


def _launches(trace: Trace, host_lane: np.ndarray, correlation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start time and host lane of the runtime call that launched each activity (by correlation id)."""
    runtime = np.flatnonzero(trace.in_categories(vocab.RUNTIME_CATEGORIES))
    corr = trace.column("correlation")[runtime]
    runtime = runtime[corr >= 0]
    corr = corr[corr >= 0]
    order = np.argsort(corr, kind="stable")
    corr, runtime = corr[order], runtime[order]
    launch_ts = np.full(len(correlation), np.nan)
    launch_lane = np.full(len(correlation), -1, dtype=np.int64)
    if len(corr) and len(correlation):
        pos = np.minimum(np.searchsorted(corr, correlation), len(corr) - 1)
        found = (corr[pos] == correlation) & (correlation >= 0)
        launch_ts[found] = trace.column("ts")[runtime[pos[found]]]
        launch_lane[found] = host_lane[runtime[pos[found]]]
    return launch_ts, launch_lane


def _by_launch(launch_ts: np.ndarray, launch_lane: np.ndarray) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for lane in compact(launch_lane[launch_lane >= 0])[0].tolist():
        positions = np.flatnonzero(launch_lane == lane)
        order = np.argsort(launch_ts[positions], kind="stable")
        out[int(lane)] = (launch_ts[positions][order], positions[order])
    return out


def _grouped_cummax(values: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    out = values.copy()
    for lo, hi in itertools.pairwise([*firsts.tolist(), len(values)]):
        out[lo:hi] = np.maximum.accumulate(values[lo:hi])
    return out


def _busy(start: np.ndarray, end: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The device's activities merged into busy intervals (start, end, position of the interval's first
    activity), sorted by start: a gap between two intervals is the device idle."""
    order = positions[np.lexsort((end[positions], start[positions]))]
    s, e = start[order], end[order]
    running = np.maximum.accumulate(e)
    new = np.ones(len(order), dtype=bool)
    new[1:] = s[1:] > running[:-1]
    firsts = np.flatnonzero(new)
    ends = np.maximum.reduceat(e, firsts) if len(firsts) else e[:0]
    return s[firsts], ends, order[firsts]


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else value
