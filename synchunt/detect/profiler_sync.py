"""The profiler's own device synchronize at the end of a recording window: set aside, not the target's."""

from __future__ import annotations

from functools import cache, cached_property

import numpy as np

from synchunt.detect.chains import ROOT
from synchunt.detect.columns import Columns
from synchunt.detect.merge import Candidate
from synchunt.rules import PROFILER_OWN_SYNC
from synchunt.sites import PROFILER_STEP
from synchunt.trace import vocab


def split_profiler_syncs(candidates: list[Candidate], columns: Columns) -> tuple[list[Candidate], list[Candidate]]:
    """(the target's syncs, the profiler's own) — by Python frames when the trace has them, else by shape: a
    device synchronize under no op or annotation, after the thread's last ``ProfilerStep#N``, and the thread's
    last runtime call."""
    kept, own = [], []
    lasts = _ThreadLasts(columns)
    frames = cache(lambda cls: _frames(columns.classes.links(cls)))  # what the chain's Python frames say
    events = np.fromiter((candidate.event for candidate in candidates), dtype=np.int64, count=len(candidates))
    for candidate, cls in zip(candidates, columns.classes.of(events).tolist(), strict=True):
        (own if _is_profilers(candidate, cls, *frames(cls), columns, lasts) else kept).append(candidate)
    return kept, own


def _frames(links: tuple[tuple[str, str], ...]) -> tuple[bool, bool]:
    """(the chain has Python frames, one of them is the profiler's own)."""
    frames = [n for n, c in links if c == vocab.PYTHON_FUNCTION]
    return bool(frames), any(frame.startswith(PROFILER_OWN_SYNC.frames) for frame in frames)


def _is_profilers(candidate: Candidate, cls: int, has_frames: bool, profiler_frame: bool, columns: Columns,
                  lasts: _ThreadLasts) -> bool:
    if profiler_frame:
        return True
    if candidate.rule != PROFILER_OWN_SYNC.calls_kind or cls != ROOT or has_frames:
        return False
    thread = int(columns.tid_codes[candidate.event])
    step_end = lasts.step_end[thread]
    return bool(np.isfinite(step_end)) and candidate.ts_us >= step_end \
        and candidate.ts_us >= lasts.runtime_start[thread]


class _ThreadLasts:
    """Per thread (tid code): the end of its last ``ProfilerStep#N`` and the start of its last runtime call
    (-inf when it has none), over the whole trace at once."""

    def __init__(self, columns: Columns) -> None:
        self._columns = columns

    @cached_property
    def step_end(self) -> np.ndarray:
        # ProfilerStep#N is a user annotation; traces of torch <= 1.9 record it as an operator.
        columns = self._columns
        rows = np.flatnonzero(columns.in_categories((vocab.USER_ANNOTATION, vocab.CPU_OP))
                              & columns.named(lambda name: PROFILER_STEP.match(name) is not None))
        return self._latest(rows, columns.ts[rows] + columns.dur[rows])

    @cached_property
    def runtime_start(self) -> np.ndarray:
        rows = np.flatnonzero(self._columns.in_categories(vocab.RUNTIME_CATEGORIES))
        return self._latest(rows, self._columns.ts[rows])

    def _latest(self, rows: np.ndarray, times: np.ndarray) -> np.ndarray:
        latest = np.full(len(self._columns.tid_values), -np.inf)
        np.maximum.at(latest, self._columns.tid_codes[rows], times)
        return latest
