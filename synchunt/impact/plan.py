"""Each confirmed sync's window and the stream lanes it waited on, for every sync at once.

The window runs from the start of the sync's first blocking call (``called``) to the end of its last
(``returned``). The lanes: a stream sync or blocking copy waits on the stream of its own copy or of the
``cuda_sync`` record Kineto wrote for it, else on the stream of the thread's last launch; an event sync on the
stream its record names, else the same fallback; a device-wide sync (device synchronize, free) on every stream
of the device its record names, else of the device of the thread's last launch (the current device), else of
all devices.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cache
from itertools import chain

import msgspec
import numpy as np

from synchunt.detect import DetectedSync
from synchunt.impact.index import ActivityIndex
from synchunt.impact.vocab import SYNC_KIND_SCOPES, Scope, call_scope
from synchunt.trace import Trace, vocab


class Plans(msgspec.Struct, frozen=True, eq=False):
    """Plan ``j`` is ``records[syncs[j]]``; ``own[j]`` the correlation ids of its blocking calls, and
    ``own_keys`` every (correlation id, plan) pair as ``correlation * len(syncs) + plan``, sorted."""

    syncs: np.ndarray
    called: np.ndarray
    returned: np.ndarray
    host_lane: np.ndarray
    scopes: list[Scope]
    lanes: list[list[int]]
    own: list[frozenset[int]]
    own_keys: np.ndarray

    def issued_by(self, correlation: np.ndarray, plan_of: np.ndarray) -> np.ndarray:
        """Whether each activity was launched by one of its plan's own blocking calls (the sync's copy)."""
        if not len(self.own_keys):
            return np.zeros(len(correlation), dtype=bool)
        keys = correlation * len(self.syncs) + plan_of
        k = np.minimum(np.searchsorted(self.own_keys, keys), len(self.own_keys) - 1)
        return (self.own_keys[k] == keys) & (correlation >= 0)


def plan(trace: Trace, records: Sequence[DetectedSync], index: ActivityIndex, names: np.ndarray,
         name_codes: np.ndarray) -> Plans:
    """Windows and lanes of the confirmed syncs among ``records`` (latent ones are left out)."""
    syncs = np.array([i for i, r in enumerate(records) if r.confirmed and r.runtime_events] if len(index) else [],
                     dtype=np.int64)
    counts = np.array([len(records[i].runtime_events) for i in syncs.tolist()], dtype=np.int64)
    calls = np.fromiter(chain.from_iterable(records[i].runtime_events for i in syncs.tolist()), dtype=np.int64,
                        count=int(counts.sum()))
    if not len(syncs):
        empty = np.zeros(0, dtype=np.int64)
        return Plans(syncs, empty.astype(float), empty.astype(float), empty, [], [], [], empty)
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    called = np.minimum.reduceat(trace.column("ts")[calls], firsts)
    returned = np.maximum.reduceat(trace.column("end")[calls], firsts)
    host_lane = index.host_lane_of_row[calls[firsts]]
    correlation = trace.column("correlation")[calls]
    plan_of_call = np.repeat(np.arange(len(syncs)), counts)
    own_lane = _own_lanes(index, correlation)
    last = _last_launches(index, host_lane, called)
    records_by_corr = _sync_records(trace, index)
    call_scopes = [_scope(str(names[c])) for c in name_codes[calls].tolist()]
    scopes: list[Scope] = []
    lanes: list[list[int]] = []
    for j, (lo, n) in enumerate(zip(firsts.tolist(), counts.tolist(), strict=True)):
        kinds = [entry for corr in correlation[lo:lo + n].tolist() for entry in records_by_corr.get(corr, ())]
        found = [SYNC_KIND_SCOPES[kind] for kind, _, _ in kinds if kind in SYNC_KIND_SCOPES] + call_scopes[lo:lo + n]
        scope = Scope.DEVICE if Scope.DEVICE in found else Scope.EVENT if Scope.EVENT in found else Scope.STREAM
        scopes.append(scope)
        lanes.append(_lanes(scope, kinds, own_lane[lo:lo + n].tolist(), int(last[j]), index))
    own = [frozenset(c for c in correlation[lo:lo + n].tolist() if c >= 0)
           for lo, n in zip(firsts.tolist(), counts.tolist(), strict=True)]
    valid = correlation >= 0
    own_keys = np.sort(correlation[valid] * len(syncs) + plan_of_call[valid])
    return Plans(syncs=syncs, called=called, returned=returned, host_lane=host_lane, scopes=scopes, lanes=lanes,
                 own=own, own_keys=own_keys)


def _lanes(scope: Scope, kinds: list[tuple[str, int | None, int | None]], own: list[int], last: int,
           index: ActivityIndex) -> list[int]:
    if scope is Scope.DEVICE:
        devices = {device for kind, device, _ in kinds
                   if SYNC_KIND_SCOPES.get(kind) is Scope.DEVICE and device is not None}
        if not devices and last >= 0:
            devices = {int(index.device[last])}
        return [lane for device in sorted(devices or range(len(index.devices)))
                for lane in index.lanes_of_device(device)]
    lanes = sorted({lane for _, _, lane in kinds if lane is not None} | {lane for lane in own if lane >= 0})
    return lanes or ([int(index.lane[last])] if last >= 0 else [])


@cache
def _scope(call_name: str) -> Scope:
    return call_scope(call_name)


def _own_lanes(index: ActivityIndex, correlation: np.ndarray) -> np.ndarray:
    """The lane of the activity each call launched itself (its copy), -1 when none."""
    order, ids = index.by_correlation
    if not len(ids):
        return np.full(len(correlation), -1, dtype=np.int64)
    k = np.minimum(np.searchsorted(ids, correlation), len(ids) - 1)
    found = (ids[k] == correlation) & (correlation >= 0)
    return np.where(found, index.lane[order[k]], -1)


def _last_launches(index: ActivityIndex, host_lane: np.ndarray, before: np.ndarray) -> np.ndarray:
    """Position of the last activity each sync's thread launched before the sync was called (-1: none)."""
    last = np.full(len(host_lane), -1, dtype=np.int64)
    for lane in sorted(set(host_lane.tolist())):  # np.unique would load numpy.ma (10 ms)
        entry = index.by_launch.get(int(lane))
        if entry is None:
            continue
        times, positions = entry
        mask = host_lane == lane
        k = np.searchsorted(times, before[mask], side="left") - 1
        last[mask] = np.where(k >= 0, positions[np.maximum(k, 0)], -1)
    return last


def _sync_records(trace: Trace, index: ActivityIndex) -> dict[int, list[tuple[str, int | None, int | None]]]:
    """Kineto's ``cuda_sync`` records by correlation id: (kind, device code, stream lane or None)."""
    rows = np.flatnonzero(trace.in_categories((vocab.CUDA_SYNC,)))
    out: dict[int, list[tuple[str, int | None, int | None]]] = defaultdict(list)
    kinds, names = trace.values("sync_kind", rows), trace.values("name", rows)
    correlations, pids, streams = trace.column("correlation"), trace.column("pid"), trace.column("stream")
    for k, row in enumerate(rows.tolist()):
        corr = int(correlations[row])
        if corr < 0:
            continue
        device = index.device_code(pids[row])
        stream = int(streams[row])
        lane = index.lane_of(device, stream) if device is not None and stream >= 0 else None
        out[corr].append((str(kinds[k] or names[k]), device, lane))
    return out

