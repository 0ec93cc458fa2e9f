"""A second pass of the profiled step under the runtime guard, for what a CPU trace cannot show.

On a CPU-only trace, ``.tolist()``, ``.cpu()``, ``.numpy()`` and friends dispatch no op that reads as a sync; the
guard sees them (and every dispatched sync) with its exact line. The pass runs after the profiler has stopped,
so the recorded trace stays free of the guard's own dispatch work.

The capture stores the records in the trace's ``synchunt`` metadata as ``guard``::

    {"iterations": 1, "error": null, "records": [
        {"rule": "SH109", "op": "aten::item", "file": "myserve/sched.py", "line": 34, "function": "maybe_evict",
         "stack": [{"file": "myserve/sched.py", "line": 34, "function": "maybe_evict"}, ...],
         "thread": "myserve.sched:step", "latent": true, "source": "dispatch", "confirmed": false,
         "allowed": false, "allow_reason": null, "detail": "...", "residency": "device", "shadow": false,
         "count": 500}],
     "sequence": [0, 0, 1, 0, ...]}

``residency`` is where the op's data was (``device`` or ``host``); ``shadow`` marks a pass under the shadow
device (``--device shadow-cuda``), whose host-resident records the same code never syncs on a GPU.

Identical records are stored once with their ``count``; ``sequence`` lists the record of each sync in the order
the syncs happened (so the analysis can meet the k-th sync of a rule in the trace with the k-th the guard saw);
files are named as the trace names them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synchunt.guard import SyncRecord



GUARD_PASS_STACK_DEPTH = 96


@dataclass(frozen=True)
class GuardPass:
    """What the guard saw over ``iterations`` steps (``error``: why the pass stopped early, if it did)."""

    iterations: int
    records: tuple[SyncRecord, ...]
    error: str | None = None


def run_guarded(step: Callable[[Any], Any], state: Any, iterations: int) -> GuardPass:
    """Run ``step(state)`` ``iterations`` times on the calling thread under :func:`synchunt.guard.watch`."""
    from synchunt.guard import watch

    # Deep stacks: a sync inside a library keeps the user's frame that led there (the analysis picks both).
    recorder = watch(stack_depth=GUARD_PASS_STACK_DEPTH)
    error = None
    try:
        with recorder:
            for _ in range(iterations):
                step(state)
    except Exception as failure:  # the profiled steps passed; a failure here must not lose the trace
        error = f"{type(failure).__name__}: {failure}"
    return GuardPass(iterations=iterations, records=tuple(recorder.syncs), error=error)


def guard_records_json(records: Sequence[SyncRecord], name: Callable[[str], str],
                       ) -> tuple[list[dict[str, Any]], list[int]]:
    """Plain-JSON records, identical ones once with a ``count``, files renamed by ``name`` (to the trace's names),
    and the sequence: for each record in the order given, the index of its stored row."""
    rows = [_record_json(record, name) for record in records]
    keys = [_freeze(row) for row in rows]
    counts = Counter(keys)
    index: dict[tuple[Any, ...], int] = {}
    for key in keys:
        index.setdefault(key, len(index))
    first = {}
    for key, row in zip(keys, rows, strict=True):
        first.setdefault(key, row)
    return [{**row, "count": counts[key]} for key, row in first.items()], [index[key] for key in keys]


def guard_json(result: GuardPass, name: Callable[[str], str]) -> dict[str, Any]:
    records, sequence = guard_records_json(result.records, name)
    return {"iterations": result.iterations, "error": result.error, "records": records, "sequence": sequence}


def _record_json(record: SyncRecord, name: Callable[[str], str]) -> dict[str, Any]:
    return {"rule": record.rule, "op": record.op, "file": name(record.file), "line": record.line,
            "function": record.function,
            "stack": [{"file": name(f.file), "line": f.line, "function": f.function} for f in record.stack],
            "thread": record.thread, "latent": record.latent, "source": record.source,
            "confirmed": record.confirmed, "allowed": record.allowed, "allow_reason": record.allow_reason,
            "detail": record.detail, "residency": record.residency, "shadow": record.shadow}


def _freeze(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple((k, tuple(tuple(f.items()) for f in v) if k == "stack" else v) for k, v in row.items())
