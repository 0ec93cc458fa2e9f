"""What a confirmed sync waited on: the last device activity on its stream before the blocking call returned."""

from __future__ import annotations

from typing import Any

import numpy as np

from synchunt.trace import Trace, vocab


class WaitedOn:
    """The last device activity on the synced stream that started before the blocking call returned.

    Activities are indexed once per stream (sorted by start), so each lookup is a binary search.
    """

    def __init__(self, trace: Trace, names: np.ndarray, cats: np.ndarray) -> None:
        events = trace.events
        self._correlation = events["correlation"].to_numpy()
        self._end = events["end"].to_numpy()
        device = np.flatnonzero(np.isin(cats, list(vocab.DEVICE_ACTIVITY_CATEGORIES)))
        streams = events["stream"].to_numpy()[device]
        tids = events["tid"].to_numpy()[device]
        keys = [int(s) if s >= 0 else t for s, t in zip(streams.tolist(), tids.tolist(), strict=True)]
        starts = events["ts"].to_numpy()[device]
        self._lanes: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
        for key in set(keys):
            members = device[np.asarray([k == key for k in keys], dtype=bool)]
            order = np.argsort(events["ts"].to_numpy()[members], kind="stable")
            self._lanes[key] = (events["ts"].to_numpy()[members][order], members[order])
        order = np.argsort(starts, kind="stable")
        self._all = (starts[order], device[order])
        self._names = names
        self._keys = dict(zip(device.tolist(), keys, strict=True))
        self._stream_of: dict[int, Any] = {}
        stream_column = events["stream"].to_numpy()
        for i in np.flatnonzero(cats == vocab.CUDA_SYNC).tolist():
            corr, stream = int(self._correlation[i]), int(stream_column[i])
            if corr >= 0 and stream >= 0:
                self._stream_of[corr] = stream
        for i in device.tolist():
            corr = int(self._correlation[i])
            if corr >= 0:
                self._stream_of.setdefault(corr, self._keys[i])

    def find(self, runtime_events: list[int]) -> str | None:
        if not runtime_events or not len(self._all[0]):
            return None
        corrs = {int(self._correlation[i]) for i in runtime_events}
        stream = next((self._stream_of[c] for c in sorted(corrs) if c in self._stream_of), None)
        end = float(self._end[runtime_events].max())
        starts, members = self._lanes.get(stream, self._all) if stream is not None else self._all
        position = int(np.searchsorted(starts, end, side="left")) - 1
        while position >= 0 and int(self._correlation[members[position]]) in corrs:
            position -= 1  # the sync's own copy is not what it waited on
        if position < 0:
            return None
        chosen = int(members[position])
        return f"{self._names[chosen]} (stream {self._keys[chosen]})"
