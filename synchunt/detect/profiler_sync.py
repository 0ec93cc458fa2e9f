"""The profiler's own device synchronize at the end of a recording window: set aside, not the target's."""

from __future__ import annotations

import numpy as np

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
    last_runtime = _last_runtime_start(columns)
    for candidate in candidates:
        (own if _is_profilers(candidate, columns, last_runtime) else kept).append(candidate)
    return kept, own


def _is_profilers(candidate: Candidate, columns: Columns, last_runtime: dict[object, float]) -> bool:
    chain = columns.chain(candidate.event)
    frames = [columns.names[a] for a in chain if columns.cats[a] == vocab.PYTHON_FUNCTION]
    if any(frame.startswith(PROFILER_OWN_SYNC.frames) for frame in frames):
        return True
    if candidate.rule != PROFILER_OWN_SYNC.calls_kind or chain or frames:
        return False
    tid = columns.tid[candidate.event]
    steps = _step_ends(columns, tid)
    return bool(steps) and candidate.ts_us >= max(steps) and candidate.ts_us >= last_runtime.get(tid, -np.inf)


def _step_ends(columns: Columns, tid: object) -> list[float]:
    # ProfilerStep#N is a user annotation; traces of torch <= 1.9 record it as an operator.
    mask = np.isin(columns.cats, [vocab.USER_ANNOTATION, vocab.CPU_OP]) & (columns.tid == tid)
    return [float(columns.ts[i] + columns.dur[i]) for i in np.flatnonzero(mask).tolist()
            if PROFILER_STEP.match(columns.names[i])]


def _last_runtime_start(columns: Columns) -> dict[object, float]:
    runtime = np.flatnonzero(np.isin(columns.cats, list(vocab.RUNTIME_CATEGORIES)))
    last: dict[object, float] = {}
    for i in runtime.tolist():
        tid = columns.tid[i]
        last[tid] = max(last.get(tid, -np.inf), float(columns.ts[i]))
    return last
