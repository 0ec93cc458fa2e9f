"""Confirmed syncs: host-blocking runtime calls in a trace with device activity, each charged to its cause."""

from __future__ import annotations

import numpy as np

from synchunt.detect.columns import Columns
from synchunt.detect.merge import Candidate, merge_by_anchor
from synchunt.detect.resolve import is_copy_op, resolve
from synchunt.rules import Blocking, Rule, catch_all_rule
from synchunt.rules.index import (
    non_blocking_call_names,
    non_blocking_sync_kinds,
    rule_for_sync_kind,
    runtime_call,
    trace_op_names,
)
from synchunt.trace import Trace, vocab


def confirmed_syncs(trace: Trace, columns: Columns) -> list[Candidate]:
    """One candidate per cause: the blocking calls under one catalogue op call are one sync."""
    memcpys = columns.activity_by_correlation(vocab.MEMCPY)
    sync_kinds = _sync_kinds(trace, columns)
    groups: dict[int, list[int]] = {}
    own_rule: dict[int, Rule] = {}
    op_names = trace_op_names()
    for i in _blocking_calls(columns, memcpys, sync_kinds):
        entry = runtime_call(columns.names[i])
        if entry is not None and entry[0].standalone:
            own_rule[i] = entry[1]
            groups.setdefault(i, []).append(i)
            continue
        cause = next((a for a in columns.chain(i)
                      if columns.cats[a] == vocab.CPU_OP and columns.names[a] in op_names), i)
        groups.setdefault(cause, []).append(i)
    issued = _copies_by_issuer(columns, memcpys, list(groups))
    candidates = []
    for cause, calls in groups.items():
        call_names = [columns.names[c] for c in calls]
        direction = _direction([memcpys.get(int(columns.correlation[c]), "") for c in calls] + issued.get(cause, []))
        rule, anchor = own_rule.get(cause), -1
        if rule is None:
            rule, anchor = _rule(columns, cause, calls, direction, sync_kinds)
        candidates.append(Candidate(
            event=cause, rule=rule.code, confirmed=True, op=columns.names[cause],
            runtime=list(dict.fromkeys(call_names)), runtime_events=list(calls),
            ts_us=float(columns.ts[calls[0]]), stall_us=float(columns.dur[calls].sum()), stall_source="runtime call",
            direction=direction, anchor=anchor))
    return merge_by_anchor(candidates)


def _rule(columns: Columns, cause: int, calls: list[int], direction: str | None,
          sync_kinds: dict[int, str]) -> tuple[Rule, int]:
    """The rule explaining the calls under ``cause`` (the catch-all rule when none does), and its anchor event."""
    only_async_copies = all(_blocks_only_into_pageable(columns.names[c]) for c in calls)
    if cause in calls:  # no catalogue op encloses the call: an explicit sync or a raw copy
        entry = runtime_call(columns.names[cause])
        rule = entry[1] if entry is not None else rule_for_sync_kind(sync_kinds.get(int(columns.correlation[cause])))
        return rule or catch_all_rule(), -1
    chain = columns.chain(cause)
    enclosing = columns.op_names(chain)
    if only_async_copies and is_copy_op(columns.names[cause]):
        # an asynchronous copy the driver made synchronous (pageable memory): the copy call's own rule
        entry = runtime_call(columns.names[calls[0]])
        if entry is not None:
            return entry[1], -1
    rule, under = resolve(columns.names[cause], enclosing, direction=direction)
    anchor = next((a for a in chain if columns.names[a] == under), -1) if under else -1
    return rule or catch_all_rule(), anchor


def _blocking_calls(columns: Columns, memcpys: dict[int, str], sync_kinds: dict[int, str]) -> list[int]:
    """Runtime/driver calls that stalled the host: by the catalogue's runtime calls, or a blocking sync record.

    Decided per distinct call name, then per row only where the answer depends on the call's correlation id
    (the copy it issued, the sync record the runtime wrote)."""
    runtime = columns.in_categories(vocab.RUNTIME_CATEGORIES)
    skip = non_blocking_call_names()
    blocks: dict[str, object] = {}
    for name in columns.name_vocabulary.tolist():
        entry = runtime_call(name) if name not in skip else None
        blocks[name] = _SKIPPED if name in skip else _UNNAMED if entry is None else entry[0].blocks
    always = columns.named(lambda name: blocks[name] is Blocking.ALWAYS) & runtime
    pageable_copy = columns.named(lambda name: blocks[name] is Blocking.PAGEABLE_DEVICE_TO_HOST) & runtime
    unnamed = columns.named(lambda name: blocks[name] is _UNNAMED) & runtime
    into_pageable = [corr for corr, name in memcpys.items() if vocab.is_pageable_device_to_host(name)]
    # a call the catalogue does not name, yet the runtime recorded a host wait
    waited = [corr for corr, kind in sync_kinds.items() if kind not in non_blocking_sync_kinds()]
    found = always | (pageable_copy & _has_id(columns.correlation, into_pageable)) \
        | (unnamed & _has_id(columns.correlation, waited))
    return np.flatnonzero(found).tolist()


_SKIPPED, _UNNAMED = object(), object()  # a call known not to block; one the catalogue does not name


def _has_id(correlation: np.ndarray, ids: list[int]) -> np.ndarray:
    """Whether each value (a correlation id, a row) is one of ``ids`` (non-negative): a mark per id when their
    range is small, which is the usual case (Kineto numbers its correlation ids from 0; rows count from 0)."""
    if not ids:
        return np.zeros(np.shape(correlation), dtype=bool)
    wanted = np.asarray(ids, dtype=np.int64)
    top = int(wanted.max())
    if top > 8 * len(correlation) + (1 << 22):
        return np.isin(correlation, wanted)
    marks = np.zeros(top + 2, dtype=bool)  # the last mark, never set, answers for ids out of range
    marks[wanted] = True
    return marks[np.where((correlation >= 0) & (correlation <= top), correlation, top + 1)]


def _blocks_only_into_pageable(name: str) -> bool:
    entry = runtime_call(name)
    return entry is not None and entry[0].blocks is Blocking.PAGEABLE_DEVICE_TO_HOST


def _sync_kinds(trace: Trace, columns: Columns) -> dict[int, str]:
    """Correlation id → the ``cuda_sync`` kind recorded for that runtime call."""
    mask = columns.in_categories((vocab.CUDA_SYNC,))
    kinds = trace.values("sync_kind", mask)
    return {int(c): str(k) for c, k in zip(columns.correlation[mask], kinds, strict=True) if c >= 0 and k}


def _copies_by_issuer(columns: Columns, memcpys: dict[int, str], causes: list[int]) -> dict[int, list[str]]:
    """Each cause → the copy activities issued by runtime calls at most four levels below it, in the order of
    those calls (the four enclosing levels of every launching call at once, then only the pairs that name a
    cause)."""
    issued: dict[int, list[str]] = {}
    runtime = columns.in_categories(vocab.RUNTIME_CATEGORIES)
    launched = np.flatnonzero(runtime & _has_id(columns.correlation, [c for c, name in memcpys.items() if name]))
    if not len(launched) or not causes:
        return issued
    parent = columns.parent
    levels = [parent[launched]]
    for _ in range(3):
        above = levels[-1]
        levels.append(np.where(above >= 0, parent[np.maximum(above, 0)], -1))
    table = np.stack(levels, axis=1)
    names = [memcpys[c] for c in columns.correlation[launched].tolist()]
    for row, level in zip(*np.nonzero(_has_id(table, causes)), strict=True):  # -1 (no event) is no cause
        issued.setdefault(int(table[row, level]), []).append(names[row])
    return issued


def _direction(memcpy_names: list[str]) -> str | None:
    return next((d for d in (vocab.copy_direction(name) for name in memcpy_names) if d), None)
