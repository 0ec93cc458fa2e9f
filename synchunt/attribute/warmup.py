"""Warm-up apart from steady state: initialization and first calls are not what a loop costs.

A sync is warm-up when its trace says so:

* it runs inside a ``record_function`` scope named as a warm-up (``warmup``, ``warm_up``, ``warm-up``, any case,
  as a word of the name: benchmark harnesses and training loops mark it so);
* the trace has two or more profiler steps (``ProfilerStep#N``), the sync is in the first, and no later step has a
  sync of the same rule at the same call site (a one-time cost of the first step: lazy initialization, a cache
  filled once);
* it is among the first calls of an op whose later calls do not sync: on its thread, the syncs of one rule under
  one op (the outermost op of the chain around the sync) all fall in that op's first few calls (at most
  :data:`FIRST_CALLS`), and at least three times as many calls of the op follow without one (an allocator or
  library initialization inside the first calls, such as a cuDNN convolution's first ``cudaFree``). A call is an
  outermost one: the op run inside another op is part of that op's call.

``synchunt profile`` runs its warm-up iterations before the recorded window, so its traces rarely hold any.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

import msgspec
import numpy as np

from synchunt.attribute.model import Sync
from synchunt.detect import DetectedSync
from synchunt.trace import Trace, vocab

FIRST_CALLS = 4  # an initialization inside an op's first calls: cuDNN tries a few algorithms per shape
WARMUP_SCOPE = re.compile(r"(?<![a-z0-9])warm[-_ ]?up(?![a-z0-9])", re.IGNORECASE)


def mark_warmup(records: Sequence[Sync], detected: Sequence[DetectedSync], trace: Trace) -> tuple[Sync, ...]:
    """``records`` (one per ``detected`` sync, in the same order) with ``phase="warm-up"`` where the trace shows
    initialization or a first step's one-time cost."""
    warm = [any(WARMUP_SCOPE.search(scope) for scope in record.scope_chain) for record in records]
    _first_step(records, warm)
    _first_calls(detected, trace, warm)
    return tuple(msgspec.structs.replace(record, phase="warm-up") if is_warm else record
                 for record, is_warm in zip(records, warm, strict=True))


def _first_step(records: Sequence[Sync], warm: list[bool]) -> None:
    steps = sorted({r.step for r in records if r.step is not None}, key=_step_number)
    if len(steps) < 2:
        return
    later = {(r.rule, r.site) for r in records if r.step is not None and r.step != steps[0]}
    for index, record in enumerate(records):
        if record.step == steps[0] and (record.rule, record.site) not in later:
            warm[index] = True


def _step_number(step: str) -> int:
    digits = step.rsplit("#", 1)[-1]
    return int(digits) if digits.isdigit() else 0


def _first_calls(detected: Sequence[DetectedSync], trace: Trace, warm: list[bool]) -> None:
    if not detected:
        return
    names = trace.name_codes
    parents = trace.column("parent")
    is_op = trace.in_categories((vocab.CPU_OP,))
    lane = trace.thread_lanes[0]
    # The call each sync happens under: the outermost op of the chain enclosing it (a user's `x.item()` is its own
    # call; a cudaFree inside a convolution belongs to that convolution's call).
    under: list[int] = []
    for sync in detected:
        row, top, steps = sync.event, -1, 0
        while row >= 0 and steps < 256:
            if is_op[row]:
                top = row
            elif top >= 0:
                break
            row = int(parents[row])
            steps += 1
        under.append(top)
    groups: dict[tuple[str, int, int], list[int]] = defaultdict(list)  # (rule, lane, op name) -> sync indices
    for index, (sync, row) in enumerate(zip(detected, under, strict=True)):
        if row >= 0:
            groups[(sync.rule, int(lane[row]), int(names[row]))].append(index)
    if not groups:
        return
    ts = trace.column("ts")
    # A call is a user's call of the op: an op with no op around it (the `aten::nonzero` inside every `x[mask]` is
    # part of that indexing, whose syncs are the mask's, not a later nonzero call that did not sync).
    parent_is_op = np.zeros(len(parents), dtype=bool)
    has_parent = parents >= 0
    parent_is_op[has_parent] = is_op[parents[has_parent]]
    outermost = is_op & ~parent_is_op
    for (_, lane_code, op), members in groups.items():
        calls = np.flatnonzero(outermost & (lane == lane_code) & (names == op))
        calls = calls[np.argsort(ts[calls], kind="stable")]
        order = {int(row): position for position, row in enumerate(calls)}
        synced = sorted({order.get(under[i], len(calls)) for i in members})
        # Only the op's first few calls synced (calls 0..k-1, k at most FIRST_CALLS), and three times as many
        # calls followed without a sync: a loop whose every call syncs is steady state however it starts.
        first = len(synced)
        if first <= FIRST_CALLS and synced[-1] == first - 1 and len(calls) - first >= 3 * first:
            for index in members:
                warm[index] = True
